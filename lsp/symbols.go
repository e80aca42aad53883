package lsp

import (
	"context"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

func symbolKind(kind string) protocol.SymbolKind {
	switch kind {
	case workspace.KindTable:
		return protocol.SymbolKindStruct
	case workspace.KindView:
		return protocol.SymbolKindInterface
	case workspace.KindIncremental:
		return protocol.SymbolKindClass
	case workspace.KindOperation:
		return protocol.SymbolKindFunction
	case workspace.KindAssertion:
		return protocol.SymbolKindBoolean
	case workspace.KindDeclaration:
		return protocol.SymbolKindConstant
	case workspace.KindTest:
		return protocol.SymbolKindMethod
	}
	return protocol.SymbolKindObject
}

// DocumentSymbol implements protocol.Server: the actions a file defines
// and, in SQLX files, its blocks (config, js, pre_operations, …).
func (s *Server) DocumentSymbol(ctx context.Context, params *protocol.DocumentSymbolParams) (protocol.DocumentSymbolResult, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	var actions []*workspace.Action
	if f.snap != nil {
		actions = f.snap.ActionsIn(f.rel)
	}
	whole := source.Span{Start: 0, End: len(f.text)}
	var blocks []protocol.DocumentSymbol
	if f.sqlx {
		for _, b := range f.scan().Blocks {
			kw := source.Span{Start: b.Span.Start, End: min(b.Span.Start+len(b.Kind.String()), b.Span.End)}
			blocks = append(blocks, protocol.DocumentSymbol{
				Name: b.Kind.String(), Kind: protocol.SymbolKindNamespace,
				Range: f.rangeOf(b.Span), SelectionRange: f.rangeOf(kw),
			})
		}
	}
	if len(actions) == 0 {
		if !f.sqlx {
			return protocol.DocumentSymbolSlice{}, nil
		}
		name := strings.TrimSuffix(filepath.Base(f.path), ".sqlx")
		return protocol.DocumentSymbolSlice{{Name: name, Kind: protocol.SymbolKindFile,
			Range: f.rangeOf(whole), SelectionRange: f.rangeOf(source.Span{}), Children: blocks}}, nil
	}
	type placed struct {
		a   *workspace.Action
		sel source.Span
	}
	var ps []placed
	for _, a := range actions {
		sel, _ := definitionSpan(f.doc, a)
		ps = append(ps, placed{a, sel})
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].sel.Start < ps[j].sel.Start })
	var out protocol.DocumentSymbolSlice
	for i, p := range ps {
		rng := whole
		if !f.sqlx {
			// From the line of this definition to the line before the next.
			start := f.m.OffsetBytes(f.m.LineOf(p.sel.Start), 0)
			end := len(f.text)
			if i+1 < len(ps) {
				end = max(f.m.OffsetBytes(f.m.LineOf(ps[i+1].sel.Start), 0)-1, p.sel.End)
			}
			rng = source.Span{Start: start, End: end}
		}
		detail := p.a.Kind
		if p.a.Jit {
			detail += " (JiT)"
		}
		detail += " · " + p.a.Target.String()
		sym := protocol.DocumentSymbol{
			Name: p.a.Target.Name, Detail: &detail, Kind: symbolKind(p.a.Kind),
			Range: f.rangeOf(rng), SelectionRange: f.rangeOf(p.sel),
		}
		if f.sqlx && i == 0 {
			sym.Children = blocks
		}
		out = append(out, sym)
	}
	return out, nil
}

// maxWorkspaceSymbols bounds a workspace/symbol answer.
const maxWorkspaceSymbols = 500

// Symbols implements protocol.Server (workspace/symbol): actions of every
// project whose name or target contains the query (case-insensitive), or
// whose name contains its letters in order.
func (s *Server) Symbols(ctx context.Context, params *protocol.WorkspaceSymbolParams) (protocol.WorkspaceSymbolResult, error) {
	q := strings.ToLower(params.Query)
	type hit struct {
		root  string
		a     *workspace.Action
		score int
	}
	type latest struct {
		root string
		snap *workspace.Snapshot
	}
	var snaps []latest
	for _, p := range s.ws.Projects() {
		if snap := p.Latest(); snap != nil {
			snaps = append(snaps, latest{p.Root(), snap})
		}
	}
	Release(ctx) // the snapshots are read: what follows needs no order
	var hits []hit
	for _, ls := range snaps {
		for _, a := range ls.snap.Actions() {
			name := strings.ToLower(a.Target.Name)
			full := strings.ToLower(a.Target.String())
			switch {
			case q == "" || strings.HasPrefix(name, q):
				hits = append(hits, hit{ls.root, a, 0})
			case strings.Contains(full, q):
				hits = append(hits, hit{ls.root, a, 1})
			case subsequence(name, q):
				hits = append(hits, hit{ls.root, a, 2})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score < hits[j].score
		}
		return hits[i].a.Target.String() < hits[j].a.Target.String()
	})
	if len(hits) > maxWorkspaceSymbols {
		hits = hits[:maxWorkspaceSymbols]
	}
	out := protocol.SymbolInformationSlice{}
	for _, h := range hits {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		container := h.a.Target.Schema
		out = append(out, protocol.SymbolInformation{
			BaseSymbolInformation: protocol.BaseSymbolInformation{Name: h.a.Target.Name, Kind: symbolKind(h.a.Kind), ContainerName: &container},
			Location:              s.actionLocation(h.root, h.a),
		})
	}
	return out, nil
}

func subsequence(s, q string) bool {
	for _, r := range q {
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+len(string(r)):]
	}
	return true
}
