package lsp

import (
	"path/filepath"
	"sort"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// diagnosticsState is what was published, so that a file's diagnostics
// are sent only when they change, and cleared when they disappear (fixed,
// file renamed or deleted, project removed). Several projects may report
// on one file (nested projects); a file's diagnostics are the union.
type diagnosticsState struct {
	mu        sync.Mutex // guards the maps; held while publishing, which keeps a file's publications in order
	byProject map[string]map[string][]protocol.Diagnostic
	published map[string]string // path → encoded diagnostics last sent
}

func (d *diagnosticsState) init() {
	d.byProject = map[string]map[string][]protocol.Diagnostic{}
	d.published = map[string]string{}
}

// setDiagnostics replaces one project's diagnostics (nil: clears them) and
// publishes the files whose diagnostics changed. versions are the document
// versions the diagnostics are about (files open when they were computed),
// sent with them so that a client can drop diagnostics of older text.
func (s *Server) setDiagnostics(root string, byPath map[string][]protocol.Diagnostic, versions map[string]int32) {
	d := &s.diags
	d.mu.Lock()
	defer d.mu.Unlock()
	affected := map[string]bool{}
	for p := range d.byProject[root] {
		affected[p] = true
	}
	for p := range byPath {
		affected[p] = true
	}
	if byPath == nil {
		delete(d.byProject, root)
	} else {
		d.byProject[root] = byPath
	}
	roots := make([]string, 0, len(d.byProject))
	for r := range d.byProject {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	paths := make([]string, 0, len(affected))
	for p := range affected {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		merged := []protocol.Diagnostic{}
		for _, r := range roots {
			merged = append(merged, d.byProject[r][p]...)
		}
		enc, err := protocol.Marshal(merged)
		if err != nil {
			s.log.Error("encoding diagnostics", "error", err)
			continue
		}
		key := string(enc)
		if len(merged) == 0 {
			key = ""
		}
		if d.published[p] == key {
			continue
		}
		if key == "" {
			delete(d.published, p)
		} else {
			d.published[p] = key
		}
		params := &protocol.PublishDiagnosticsParams{URI: s.uriFor(p), Diagnostics: merged}
		if v, ok := versions[p]; ok {
			params.Version = protocol.NewOptional(v)
		}
		s.notify(protocol.MethodTextDocumentPublishDiagnostics, params)
	}
}

// uriFor is the URI to use for path: the one the client opened it with,
// else a file URI.
func (s *Server) uriFor(path string) uri.URI {
	if d := s.ws.Document(path); d != nil {
		return uri.URI(d.URI)
	}
	return uri.File(path)
}

// convertDiagnostics turns backend diagnostics (UTF-8 byte columns) into
// LSP diagnostics (UTF-16) against the text that was compiled: the open
// buffer of that compile, else the file on disk. versions are the
// versions of the open buffers they are about.
func (s *Server) convertDiagnostics(snap *workspace.Snapshot, ds []workspace.Diagnostic) (map[string][]protocol.Diagnostic, map[string]int32) {
	out := map[string][]protocol.Diagnostic{}
	versions := map[string]int32{}
	// Every open buffer the compile saw gets its version, with diagnostics
	// or without: the publication that clears a fixed file is about that
	// text too, and a client that drops versionless ones or compares
	// versions must not keep the old errors.
	for _, doc := range snap.Docs {
		if doc != nil {
			versions[doc.Path] = doc.Version // canonical already, as the keys of out
		}
	}
	mappers := map[string]*source.Mapper{}
	mapperFor := func(path string) *source.Mapper {
		if m, ok := mappers[path]; ok {
			return m
		}
		var m *source.Mapper
		if rel, ok := workspace.RelSlash(snap.Root, path); ok && snap.Docs[rel] != nil {
			m = snap.Docs[rel].Lines()
		} else if b, err := regfile.ReadFile(path); err == nil {
			m = source.NewMapper(b)
		}
		mappers[path] = m
		return m
	}
	for _, d := range ds {
		path := d.Path
		if !filepath.IsAbs(path) {
			path = filepath.Join(snap.Root, filepath.FromSlash(path))
		}
		path = workspace.CanonicalPath(path)
		pd := protocol.Diagnostic{
			Severity: protocol.DiagnosticSeverity(max(d.Severity, workspace.SeverityError)),
			Message:  protocol.String(d.Message),
			Source:   protocol.NewOptional(orDefault(d.Source, "dataform")),
		}
		if d.Code != "" {
			pd.Code = protocol.String(d.Code)
		}
		if m := mapperFor(path); m != nil {
			sl, sc, el, ec := d.Range(m)
			pd.Range = protocol.Range{
				Start: protocol.Position{Line: uint32(sl), Character: uint32(sc)},
				End:   protocol.Position{Line: uint32(el), Character: uint32(ec)},
			}
		}
		if d.RelatedPath != "" {
			pd.RelatedInformation = []protocol.DiagnosticRelatedInformation{{
				Location: protocol.Location{URI: s.uriFor(workspace.CanonicalPath(d.RelatedPath)), Range: protocol.Range{
					Start: protocol.Position{Line: uint32(max(d.RelatedLine, 0))},
					End:   protocol.Position{Line: uint32(max(d.RelatedLine, 0))},
				}},
				Message: d.RelatedDescription,
			}}
		}
		pd.Data = s.diagnosticData(d, path, versions) // quick fixes (codeaction.go)
		out[path] = append(out[path], pd)
	}
	for p, list := range out {
		sort.SliceStable(list, func(i, j int) bool {
			a, b := list[i].Range.Start, list[j].Range.Start
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Character < b.Character
		})
		out[p] = list
	}
	return out, versions
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
