package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// InlayHint implements protocol.Server (textDocument/inlayHint): after
// each output column of a .sqlx file's action, its type as the last SQL
// check inferred it (": INT64"), where the column's place in the SQL is
// certain (source.OutputColumnEnds). Nothing before a check, and nothing
// is waited for.
func (s *Server) InlayHint(ctx context.Context, params *protocol.InlayHintParams) ([]protocol.InlayHint, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	hints := []protocol.InlayHint{}
	if !f.sqlx || f.snap == nil {
		return hints, nil
	}
	for _, a := range f.snap.ActionsIn(f.rel) {
		if a.Kind == workspace.KindAssertion || a.Kind == workspace.KindOperation {
			continue
		}
		l, err := f.snap.ColumnTypes(ctx, a)
		if err != nil || l == nil || l.Reason != "" {
			continue
		}
		types := map[string]string{}
		var names []string
		for _, c := range l.Columns {
			types[c.Name], names = c.Type, append(names, c.Name)
		}
		for name, end := range f.scan().OutputColumnEnds(f.text, names) {
			pos := f.rangeOf(source.Span{Start: end, End: end}).Start
			if !inRange(pos, params.Range) {
				continue
			}
			yes := true
			hints = append(hints, protocol.InlayHint{
				Position:    pos,
				Label:       protocol.String(": " + types[name]),
				Kind:        protocol.InlayHintKindType,
				PaddingLeft: &yes,
			})
		}
		break // the file's table, view or incremental table
	}
	return hints, nil
}

func inRange(p protocol.Position, r protocol.Range) bool {
	before := func(a, b protocol.Position) bool {
		return a.Line < b.Line || a.Line == b.Line && a.Character <= b.Character
	}
	return before(r.Start, p) && before(p, r.End)
}
