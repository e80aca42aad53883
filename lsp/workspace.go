package lsp

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/project"
)

// DidChangeWorkspaceFolders implements protocol.Server.
func (s *Server) DidChangeWorkspaceFolders(ctx context.Context, params *protocol.DidChangeWorkspaceFoldersParams) error {
	// Record additions first, so that a project inside both a removed and
	// an added folder is kept rather than closed and found again.
	var added []string
	for _, f := range params.Event.Added {
		if p := uriPath(f.URI); p != "" {
			p = canonicalPath(p)
			added = append(added, p)
			s.mu.Lock()
			s.folders = append(s.folders, p)
			s.mu.Unlock()
		}
	}
	for _, f := range params.Event.Removed {
		if p := uriPath(f.URI); p != "" {
			s.removeFolder(canonicalPath(p))
		}
	}
	for _, p := range added {
		s.addFolder(p)
	}
	return nil
}

// DidChangeWatchedFiles implements protocol.Server: files changed outside
// the editor (a git checkout, a generator, a rename in a terminal).
func (s *Server) DidChangeWatchedFiles(ctx context.Context, params *protocol.DidChangeWatchedFilesParams) error {
	touched := map[*projectState]changeFlags{}
	for _, ev := range params.Changes {
		path := uriPath(ev.URI)
		if path == "" {
			continue
		}
		path = canonicalPath(path)
		base := filepath.Base(path)
		dir := filepath.Dir(path)

		// A settings file appearing or disappearing adds or removes a project.
		if (base == project.WorkflowSettingsFile || base == project.DataformJSONFile) && !inNodeModules(path) {
			switch ev.Type {
			case protocol.FileChangeTypeCreated:
				if s.projects.get(dir) == nil && s.inWorkspace(dir) {
					s.addProject(dir)
					continue
				}
			case protocol.FileChangeTypeDeleted:
				if p := s.projects.get(dir); p != nil {
					if _, err := project.Open(dir); errors.Is(err, project.ErrNotProject) {
						// Neither settings file is left: no longer a project.
						s.removeProject(dir)
						continue
					}
				}
			}
		}

		p := s.owner(path)
		if p == nil {
			continue
		}
		flags := touched[p]
		if isProjectConfigFile(p.root, path) {
			flags |= changeReopen
		} else if inNodeModules(path) {
			continue // dependencies other than core do not change what we compile
		}
		// An open buffer overrides the disk: a change on disk does not
		// change what is compiled for it, but other files may need it.
		touched[p] = flags
	}
	for p, flags := range touched {
		p.changed(flags)
	}
	return nil
}

// owner is the registered project containing path (no discovery).
func (s *Server) owner(path string) *projectState {
	var best *projectState
	for _, p := range s.projects.all() {
		if _, ok := relSlash(p.root, path); ok && (best == nil || len(p.root) > len(best.root)) {
			best = p
		}
	}
	return best
}

func (s *Server) inWorkspace(dir string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.folders {
		if f == dir {
			return true
		}
		if _, ok := relSlash(f, dir); ok {
			return true
		}
	}
	return false
}

func inNodeModules(path string) bool {
	return strings.Contains(filepath.ToSlash(path), "/node_modules/")
}
