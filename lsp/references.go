package lsp

import (
	"context"
	"fmt"
	"path/filepath"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// References implements protocol.Server: the places that reference an
// action, i.e. the ref()s (or dependency lists) of the actions that depend
// on it. The action is the one named under the cursor, else the ones
// defined in the file.
func (s *Server) References(ctx context.Context, params *protocol.ReferenceParams) ([]protocol.Location, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	if f.snap == nil {
		return nil, nil
	}
	targets := s.actionsAt(f, f.offset(params.Position))
	var out []protocol.Location
	seen := map[string]bool{}
	add := func(l protocol.Location) {
		k := string(l.URI) + rangeKey(l.Range)
		if !seen[k] {
			seen[k] = true
			out = append(out, l)
		}
	}
	for _, a := range targets {
		if params.Context.IncludeDeclaration {
			add(s.actionLocation(f.p.Root(), a))
		}
		files := map[string]bool{}
		for _, dep := range f.snap.Dependents(a) {
			files[dep.File] = true
		}
		for file := range files {
			for _, l := range s.refsIn(f.p.Root(), file, a) {
				add(l)
			}
		}
	}
	return out, nil
}

// actionsAt are the actions a position is about: the one a ref or a name
// literal under the cursor names, else those the file defines.
func (s *Server) actionsAt(f *fileCtx, off int) []*workspace.Action {
	if r, ok := source.RefAt(f.refs(), off); ok {
		return f.snap.Lookup(r.Database.Value, r.Schema.Value, r.Name.Value)
	}
	if str, ok := source.StringAt(f.text, off); ok {
		if as := f.snap.Lookup("", "", str.Value); len(as) > 0 {
			return as
		}
	}
	return f.snap.ActionsIn(f.rel)
}

// refsIn finds where file refers to a: its ref()s naming a, else a
// whole-word mention of the name, else the file itself.
func (s *Server) refsIn(root, file string, a *workspace.Action) []protocol.Location {
	path := canonicalPath(filepath.Join(root, filepath.FromSlash(file)))
	u := s.uriFor(path)
	d, err := s.ws.View(path)
	if err != nil {
		return []protocol.Location{{URI: u}}
	}
	text, m := d.Text, d.Lines()
	var out []protocol.Location
	names := map[string]bool{a.Target.Name: true, a.CanonicalTarget.Name: true}
	for _, r := range d.Refs() {
		if !names[r.Name.Value] {
			continue
		}
		if r.Schema.Value != "" && r.Schema.Value != a.Target.Schema && r.Schema.Value != a.CanonicalTarget.Schema {
			continue
		}
		out = append(out, protocol.Location{URI: u, Range: rangeOf(m, r.NameSpan())})
	}
	if len(out) == 0 {
		if w := source.FindWord(text, a.Target.Name); len(w) > 0 {
			out = append(out, protocol.Location{URI: u, Range: rangeOf(m, w[0])})
		} else {
			out = append(out, protocol.Location{URI: u})
		}
	}
	return out
}

func rangeKey(r protocol.Range) string {
	return fmt.Sprintf(":%d:%d", r.Start.Line, r.Start.Character)
}
