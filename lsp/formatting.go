package lsp

import (
	"context"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
)

// Formatting implements protocol.Server (textDocument/formatting): the SQL
// of a .sqlx file formatted by the backend (GoogleSQL), as one edit
// covering what changed. Parts the backend left as written (a comment in
// the SQL, a placeholder it cannot place) are said in one message; the
// rest is still formatted. Other files: no edits.
func (s *Server) Formatting(ctx context.Context, params *protocol.DocumentFormattingParams) ([]protocol.TextEdit, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	return s.format(ctx, f, 0, len(f.text))
}

// RangeFormatting implements protocol.Server: the SQL parts the range
// touches.
func (s *Server) RangeFormatting(ctx context.Context, params *protocol.DocumentRangeFormattingParams) ([]protocol.TextEdit, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	start := f.m.OffsetUTF16(int(params.Range.Start.Line), int(params.Range.Start.Character))
	end := f.m.OffsetUTF16(int(params.Range.End.Line), int(params.Range.End.Character))
	if end < start {
		start, end = end, start
	}
	return s.format(ctx, f, start, end)
}

func (s *Server) format(ctx context.Context, f *fileCtx, start, end int) ([]protocol.TextEdit, error) {
	edits := []protocol.TextEdit{}
	if !f.sqlx {
		return edits, nil
	}
	res, err := s.ws.FormatSQLX(ctx, f.text, start, end)
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", f.rel, err)
	}
	if len(res.Problems) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "dfd left %d part(s) of %s as written:", len(res.Problems), f.rel)
		for i, p := range res.Problems {
			if i == 3 {
				fmt.Fprintf(&b, " …")
				break
			}
			fmt.Fprintf(&b, " line %d: %s;", p.Line, p.Message)
		}
		s.showMessage(protocol.MessageTypeInfo, strings.TrimSuffix(b.String(), ";"))
	}
	if !res.Changed {
		return edits, nil
	}
	// One edit: the changed middle between the common prefix and suffix,
	// so that the editor keeps its cursor and marks outside it.
	old, neu := f.text, res.Text
	p := 0
	for p < len(old) && p < len(neu) && old[p] == neu[p] {
		p++
	}
	for p > 0 && !isBoundary(old, p) { // never split a UTF-8 sequence
		p--
	}
	sfx := 0
	for sfx < len(old)-p && sfx < len(neu)-p && old[len(old)-1-sfx] == neu[len(neu)-1-sfx] {
		sfx++
	}
	for sfx > 0 && !isBoundary(old, len(old)-sfx) {
		sfx--
	}
	edits = append(edits, protocol.TextEdit{
		Range:   f.rangeOf(source.Span{Start: p, End: len(old) - sfx}),
		NewText: string(neu[p : len(neu)-sfx]),
	})
	return edits, nil
}

// isBoundary reports whether offset i of b starts a UTF-8 sequence (or is
// its end).
func isBoundary(b []byte, i int) bool { return i >= len(b) || b[i]&0xC0 != 0x80 }
