package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/workspace"
)

// DidChangeWorkspaceFolders implements protocol.Server.
func (s *Server) DidChangeWorkspaceFolders(ctx context.Context, params *protocol.DidChangeWorkspaceFoldersParams) error {
	var added, removed []string
	for _, f := range params.Event.Added {
		if p := uriPath(f.URI); p != "" {
			added = append(added, canonicalPath(p))
		}
	}
	for _, f := range params.Event.Removed {
		if p := uriPath(f.URI); p != "" {
			removed = append(removed, canonicalPath(p))
		}
	}
	s.ws.ChangeFolders(added, removed)
	return nil
}

// DidChangeWatchedFiles implements protocol.Server: files changed outside
// the editor (a git checkout, a generator, a rename in a terminal).
func (s *Server) DidChangeWatchedFiles(ctx context.Context, params *protocol.DidChangeWatchedFilesParams) error {
	var changes []workspace.FileChange
	for _, ev := range params.Changes {
		path := uriPath(ev.URI)
		if path == "" {
			continue
		}
		kind := workspace.FileChanged
		switch ev.Type {
		case protocol.FileChangeTypeCreated:
			kind = workspace.FileCreated
		case protocol.FileChangeTypeDeleted:
			kind = workspace.FileDeleted
		}
		changes = append(changes, workspace.FileChange{Path: canonicalPath(path), Kind: kind})
	}
	s.ws.FilesChanged(changes)
	return nil
}
