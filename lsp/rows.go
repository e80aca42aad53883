package lsp

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/workspace"
)

// MethodRows is dfd/rows: a data preview of an action — its query's rows,
// run now under the preview policy, or its built table's.
const MethodRows = "dfd/rows"

// RowsParams are the params of dfd/rows.
type RowsParams struct {
	TextDocument struct {
		URI uri.URI `json:"uri"`
	} `json:"textDocument"`
	// Position picks the action in a file that defines several.
	Position *protocol.Position `json:"position,omitempty"`
	// Action names the action instead: name, schema.name or
	// database.schema.name, of the file or else of the project.
	Action string `json:"action,omitempty"`
	// Source is "query" (default: the action's SQL, run now) or "table"
	// (the built table's rows, tabledata.list: no query, free).
	Source string `json:"source,omitempty"`
	// Incremental runs an incremental table's incremental query.
	Incremental bool `json:"incremental,omitempty"`
	// Limit is how many rows to return (default 100, at most 10000).
	Limit int64 `json:"limit,omitempty"`
	// Confirmed runs the query although its dry run's estimate is above
	// the threshold (dfd.preview.rowsConfirmBytes): send it after the
	// user said yes to a result with needsConfirmation.
	Confirmed bool `json:"confirmed,omitempty"`
}

// RowsResult is the result of dfd/rows. When there are no rows to show,
// one of unavailable, refused, needsConfirmation or error says why.
type RowsResult struct {
	URI     uri.URI `json:"uri"`
	Project uri.URI `json:"project"`
	Version int64   `json:"version"`
	// Action is the action's target as the project names it ("" when
	// none was found).
	Action string `json:"action"`
	workspace.Rows
}

func (s *Server) rows(ctx context.Context, raw []byte) (*RowsResult, error) {
	var params RowsParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	switch params.Source {
	case "", workspace.RowsFromQuery, workspace.RowsFromTable:
	default:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd/rows: source %q is not \"query\" or \"table\"", params.Source))
	}
	if params.Limit < 0 || params.Limit > 10000 {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd/rows: limit %d is not between 1 and 10000", params.Limit))
	}
	// The rows are those of the SQL as the editor has it when asking;
	// later messages go on while BigQuery answers.
	r, err := s.awaitDocument(ctx, "dfd/rows", params.TextDocument.URI, true)
	if err != nil {
		return nil, err
	}
	p, d, rel, snap := r.p, r.doc, r.rel, r.snap
	res := &RowsResult{URI: params.TextDocument.URI, Project: uri.File(p.Root()), Version: snap.Version}
	res.Source = params.Source
	if res.Source == "" {
		res.Source = workspace.RowsFromQuery
	}
	res.Columns, res.Rows.Rows = []workspace.RowsColumn{}, []any{}
	if snap.Result == nil {
		res.Unavailable = "the project has not compiled: " + errString(snap.Err)
		return res, nil
	}
	off := -1
	if params.Position != nil {
		off = d.Lines().OffsetUTF16(int(params.Position.Line), int(params.Position.Character))
	}
	a, reason := lineageAction(snap, d, rel, params.Action, off)
	if a == nil {
		res.Unavailable = reason
		return res, nil
	}
	res.Action = a.Target.String()
	rows, err := snap.Rows(ctx, workspace.RowsRequest{
		Action: a, Source: res.Source, Incremental: params.Incremental, Limit: params.Limit, Confirmed: params.Confirmed,
	})
	if err != nil {
		if errors.Is(err, workspace.ErrNoRows) {
			res.Unavailable = err.Error()
			return res, nil
		}
		return nil, err
	}
	res.Rows = *rows
	if res.Columns == nil {
		res.Columns = []workspace.RowsColumn{}
	}
	if res.Rows.Rows == nil {
		res.Rows.Rows = []any{}
	}
	return res, nil
}
