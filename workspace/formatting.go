package workspace

import (
	"context"
	"errors"
)

// SQLXFormatter is implemented by backends that format SQLX text (the
// daemon's, with GoogleSQL): the workspace and the LSP server know no SQL
// formatter of their own.
type SQLXFormatter interface {
	// FormatSQLX formats the SQL parts of src that the byte range
	// [start, end) touches (the whole file: 0, len(src)). Parts it cannot
	// format safely are left as written, each with a Problem.
	FormatSQLX(ctx context.Context, src []byte, start, end int) (FormatResult, error)
}

// FormatResult is formatted text and what was left as written, and why.
type FormatResult struct {
	Text     []byte
	Changed  bool
	Problems []FormatProblem
}

// FormatProblem is a part of the file left as written: its line (1-based)
// and why.
type FormatProblem struct {
	Line    int
	Message string
}

// ErrNoFormatter: the session's backend formats nothing.
var ErrNoFormatter = errors.New("this dfd formats no SQLX")

// FormatSQLX formats src with the session's backend.
func (s *Session) FormatSQLX(ctx context.Context, src []byte, start, end int) (FormatResult, error) {
	f, ok := s.backend.(SQLXFormatter)
	if !ok {
		return FormatResult{}, ErrNoFormatter
	}
	return f.FormatSQLX(ctx, src, start, end)
}
