package daemon

import (
	"context"

	"github.com/dfdtools/dfd/sqlxfmt"
	"github.com/dfdtools/dfd/workspace"
)

var _ workspace.SQLXFormatter = (*Backend)(nil)

// FormatSQLX implements workspace.SQLXFormatter with sqlxfmt (GoogleSQL's
// printer, checked token by token; see dfd format).
func (b *Backend) FormatSQLX(ctx context.Context, src []byte, start, end int) (workspace.FormatResult, error) {
	if err := ctx.Err(); err != nil {
		return workspace.FormatResult{}, err
	}
	res, err := sqlxfmt.FormatRange(src, start, end)
	if err != nil {
		return workspace.FormatResult{}, err
	}
	out := workspace.FormatResult{Text: res.Text, Changed: res.Changed}
	for _, p := range res.Problems {
		out.Problems = append(out.Problems, workspace.FormatProblem{Line: p.Line, Message: p.Message})
	}
	return out, nil
}
