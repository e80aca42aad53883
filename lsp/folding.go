package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
)

// FoldingRanges implements protocol.Server (textDocument/foldingRange): a
// SQLX file's blocks and the indented runs of its SQL (source.SQLXFolds).
// Other files get none: JavaScript is folded by the editor's own
// JavaScript support, whose ranges editors merge with these. (None goes
// out as [], not null: go.lsp.dev/protocol encodes a nil slice so.)
func (s *Server) FoldingRanges(ctx context.Context, params *protocol.FoldingRangeParams) ([]protocol.FoldingRange, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	if !f.sqlx {
		return nil, nil
	}
	folds := source.SQLXFolds(f.text, f.scan())
	out := make([]protocol.FoldingRange, 0, len(folds))
	for _, r := range folds {
		out = append(out, protocol.FoldingRange{
			StartLine: uint32(r.StartLine), EndLine: uint32(r.EndLine), Kind: protocol.FoldingRangeKindRegion,
		})
	}
	return out, nil
}
