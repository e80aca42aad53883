package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/regfile"
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

// resolveRequire finds the file require(spec) in the module from loads,
// in the order the engine's loader resolves it (engine/loader.go):
// a relative or absolute spec against from's directory; a bare one in the
// node_modules directories from there up to the root, then against the
// root (the CLI's fallback). Each candidate is tried as a file (as it is,
// then with each of source.RequireExtensions), then as a directory (its
// package.json's main, then its index with those extensions). Nothing
// outside the root is looked at. exists reports a file (on disk or open).
func resolveRequire(root, from, spec string, exists func(path string) bool) (string, bool) {
	inside := func(p string) bool { return p == root || strings.HasPrefix(p, root+string(filepath.Separator)) }
	isDir := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
	asFile := func(p string) (string, bool) {
		if exists(p) {
			return p, true
		}
		for _, ext := range source.RequireExtensions {
			if exists(p + ext) {
				return p + ext, true
			}
		}
		return "", false
	}
	asFileOrDir := func(p string) (string, bool) {
		if f, ok := asFile(p); ok {
			return f, true
		}
		if !isDir(p) {
			return "", false
		}
		if b, err := regfile.ReadFile(filepath.Join(p, "package.json")); err == nil {
			var pkg struct {
				Main string `json:"main"`
			}
			if json.Unmarshal(b, &pkg) == nil && pkg.Main != "" {
				m := filepath.Join(p, filepath.FromSlash(pkg.Main))
				if f, ok := asFile(m); ok {
					return f, true
				}
				if f, ok := asFile(filepath.Join(m, "index")); ok {
					return f, true
				}
			}
		}
		return asFile(filepath.Join(p, "index"))
	}
	if spec == "" {
		return "", false
	}
	if spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") {
		target := filepath.FromSlash(spec)
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(from), target)
		}
		if !inside(target) {
			return "", false
		}
		return asFileOrDir(target)
	}
	if !inside(filepath.Join(root, filepath.FromSlash(spec))) {
		return "", false
	}
	for d := filepath.Dir(from); inside(d); d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			if f, ok := asFileOrDir(filepath.Join(d, "node_modules", filepath.FromSlash(spec))); ok {
				return f, true
			}
		}
		if d == root {
			break
		}
	}
	return asFileOrDir(filepath.Join(root, filepath.FromSlash(spec)))
}

// fileExists reports a regular file on disk or a buffer open in the
// editor (a new file not saved yet, which the compile sees too).
func (s *Server) fileExists(path string) bool {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().IsRegular()
	}
	return s.ws.Document(canonicalPath(path)) != nil
}
