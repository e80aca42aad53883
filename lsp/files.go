package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// fileCtx is what a request about one file needs: its text as the editor
// sees it, its project and that project's latest snapshot.
type fileCtx struct {
	uri  uri.URI
	path string
	rel  string // root-relative; "" outside a project
	p    *workspace.Project
	snap *workspace.Snapshot // nil before the first compile
	doc  *workspace.Document // the open buffer, or the file on disk
	text []byte
	m    *source.Mapper
	sqlx bool
}

// fileAt loads the context of a read-only request about u, and then
// releases the ordered handler chain (Release): what the request reads —
// the document and the snapshot — is fixed from here, so the messages
// after it are handled while it computes its answer. Files that do not
// exist (deleted while open and closed since) are an error the client can
// show.
func (s *Server) fileAt(ctx context.Context, u uri.URI) (*fileCtx, error) {
	defer Release(ctx)
	path := uriPath(u)
	if path == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd: not a file URI: %q", u))
	}
	path = canonicalPath(path)
	f := &fileCtx{uri: u, path: path, sqlx: strings.HasSuffix(path, ".sqlx")}
	d, err := s.ws.View(path)
	if err != nil {
		// A document that is neither open nor on disk.
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "dfd: "+err.Error())
	}
	f.doc, f.text, f.m = d, d.Text, d.Lines()
	if p := s.ws.ProjectFor(path); p != nil {
		f.p = p
		f.rel, _ = relSlash(p.Root(), path)
		f.snap = p.Latest()
	}
	return f, nil
}

// scan is the SQLX structure of the file (computed once per text).
func (f *fileCtx) scan() *source.SQLX { return f.doc.SQLX() }

// refs are the file's ref()/resolve() calls (computed once per text).
func (f *fileCtx) refs() []source.RefCall { return f.doc.Refs() }

func (f *fileCtx) offset(pos protocol.Position) int {
	return f.m.OffsetUTF16(int(pos.Line), int(pos.Character))
}

func rangeOf(m *source.Mapper, sp source.Span) protocol.Range {
	sl, sc := m.PositionUTF16(sp.Start)
	el, ec := m.PositionUTF16(sp.End)
	return protocol.Range{
		Start: protocol.Position{Line: uint32(sl), Character: uint32(sc)},
		End:   protocol.Position{Line: uint32(el), Character: uint32(ec)},
	}
}

func (f *fileCtx) rangeOf(sp source.Span) protocol.Range { return rangeOf(f.m, sp) }

// actionLocation is where action a is defined: for SQLX files the config
// keyword (or the start of the file), for JavaScript the name literal of
// the call that defines it, for YAML the name.
func (s *Server) actionLocation(root string, a *workspace.Action) protocol.Location {
	path := canonicalPath(filepath.Join(root, filepath.FromSlash(a.File)))
	loc := protocol.Location{URI: s.uriFor(path)}
	d, err := s.ws.View(path)
	if err != nil {
		return loc
	}
	if sp, ok := definitionSpan(d, a); ok {
		loc.Range = rangeOf(d.Lines(), sp)
	}
	return loc
}

// definitionSpan is where document d defines action a.
func definitionSpan(d *workspace.Document, a *workspace.Action) (source.Span, bool) {
	name := a.CanonicalTarget.Name
	if name == "" {
		name = a.Target.Name
	}
	return d.DefinitionSpan(name)
}

// includeModules are the project's includes/*.js files by global name:
// core exposes each top-level file of includes/ to SQLX and JavaScript as
// a global named after the file.
func (s *Server) includeModules(root string) map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(filepath.Join(root, "includes"))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".js") {
			out[strings.TrimSuffix(e.Name(), ".js")] = filepath.Join(root, "includes", e.Name())
		}
	}
	for rel, d := range s.ws.Documents(filepath.Join(root, "includes")) {
		if !strings.Contains(rel, "/") && strings.HasSuffix(rel, ".js") {
			out[strings.TrimSuffix(rel, ".js")] = d.Path
		}
	}
	return out
}

// resolveRequire finds the file a require() names, the way the engine's
// loader does for project files: relative to the requiring file, else to
// the project root; with ".js" or "/index.js" added when needed.
func resolveRequire(root, from, spec string) (string, bool) {
	var bases []string
	if strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") {
		bases = []string{filepath.Join(filepath.Dir(from), filepath.FromSlash(spec))}
	} else {
		bases = []string{filepath.Join(root, filepath.FromSlash(spec)), filepath.Join(root, "node_modules", filepath.FromSlash(spec))}
	}
	for _, b := range bases {
		for _, c := range []string{b, b + ".js", b + ".json", filepath.Join(b, "index.js")} {
			if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
				return c, true
			}
		}
	}
	return "", false
}
