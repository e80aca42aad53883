package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	text []byte
	m    *source.Mapper
	sqlx bool
}

// fileAt loads the context of a request about u. Files that do not exist
// (deleted while open and closed since) are an error the client can show.
func (s *Server) fileAt(u uri.URI) (*fileCtx, error) {
	path := uriPath(u)
	if path == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd: not a file URI: %q", u))
	}
	path = canonicalPath(path)
	f := &fileCtx{uri: u, path: path, sqlx: strings.HasSuffix(path, ".sqlx")}
	if d := s.ws.Document(path); d != nil {
		f.text, f.m = d.Text, d.Lines()
	} else {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("dfd: %w", err)
		}
		f.text, f.m = b, source.NewMapper(b)
	}
	if p := s.ws.ProjectFor(path); p != nil {
		f.p = p
		f.rel, _ = relSlash(p.Root(), path)
		f.snap = p.Latest()
	}
	return f, nil
}

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
	text, err := s.readFile(path)
	if err != nil {
		return loc
	}
	m := source.NewMapper(text)
	if sp, ok := definitionSpan(path, text, a); ok {
		loc.Range = rangeOf(m, sp)
	}
	return loc
}

func definitionSpan(path string, text []byte, a *workspace.Action) (source.Span, bool) {
	name := a.CanonicalTarget.Name
	if name == "" {
		name = a.Target.Name
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sqlx":
		x := source.ScanSQLX(text)
		if b, ok := x.Config(); ok {
			return source.Span{Start: b.Span.Start, End: b.Span.Start + len("config")}, true
		}
		return source.Span{}, true
	case ".js":
		re := regexp.MustCompile(`\(\s*["'\x60](` + regexp.QuoteMeta(name) + `)["'\x60]`)
		if m := re.FindSubmatchIndex(text); m != nil {
			return source.Span{Start: m[2], End: m[3]}, true
		}
		re = regexp.MustCompile(`\bname\s*:\s*["'\x60](` + regexp.QuoteMeta(name) + `)["'\x60]`)
		if m := re.FindSubmatchIndex(text); m != nil {
			return source.Span{Start: m[2], End: m[3]}, true
		}
	case ".yaml", ".yml":
		re := regexp.MustCompile(`(?m)\bname:\s*["']?(` + regexp.QuoteMeta(name) + `)\b`)
		if m := re.FindSubmatchIndex(text); m != nil {
			return source.Span{Start: m[2], End: m[3]}, true
		}
	}
	if w := source.FindWord(text, name); len(w) > 0 {
		return w[0], true
	}
	return source.Span{}, false
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
