package workspace

import (
	"context"
	"errors"
)

// RowsProvider is implemented by project backends that can preview an
// action's data (dfd/rows): its built table's rows, or its query's run
// now. It honours ctx: a cancelled request cancels the query job.
type RowsProvider interface {
	Rows(ctx context.Context, req RowsRequest) (*Rows, error)
}

// Sources of a data preview (RowsRequest.Source).
const (
	RowsFromQuery = "query"
	RowsFromTable = "table"
)

// RowsRequest asks for a data preview of one action.
type RowsRequest struct {
	Graph  any // CompileResult.Graph of the snapshot asked about
	Action *Action
	// Source is RowsFromQuery (default) or RowsFromTable.
	Source string
	// Incremental runs an incremental table's incremental query.
	Incremental bool
	Limit       int64
	// Confirmed runs the query even above the confirmation threshold.
	Confirmed bool
}

// Rows is a data preview: the columns and rows, what the query cost, or
// why there are none (Unavailable, Refused, NeedsConfirmation, Error).
type Rows struct {
	// Source is "query" or "table".
	Source string `json:"source"`
	// Target is the action's table, database.schema.name.
	Target string `json:"target"`
	// Statement is the query run (or that would run): the action's SQL,
	// a JiT action's as its code produced it.
	Statement string       `json:"statement,omitempty"`
	Columns   []RowsColumn `json:"columns"`
	// Rows are objects keyed by column name, keys in the columns' order;
	// values as docs/bigquery.md#data-previews says (null, objects for
	// STRUCT, arrays for ARRAY, numbers for INT64 within ±2^53 and
	// FLOAT64, text for the rest).
	Rows      []any `json:"rows"`
	TotalRows int64 `json:"totalRows"`
	Truncated bool  `json:"truncated,omitempty"`
	// EstimatedBytesProcessed is the dry run's estimate; TotalBytes* the
	// job's statistics.
	EstimatedBytesProcessed int64  `json:"estimatedBytesProcessed,omitempty"`
	TotalBytesProcessed     int64  `json:"totalBytesProcessed,omitempty"`
	TotalBytesBilled        int64  `json:"totalBytesBilled,omitempty"`
	JobID                   string `json:"jobId,omitempty"`
	Location                string `json:"location,omitempty"`
	// Cached: answered from dfd's query cache of an identical preview.
	Cached bool `json:"cached,omitempty"`
	// JobURL opens the query's job in BigQuery's console.
	JobURL string `json:"jobUrl,omitempty"`
	// TableURL opens the action's table in BigQuery's console.
	TableURL string `json:"tableUrl,omitempty"`
	// NeedsConfirmation: the query did not run because its dry run's
	// estimate is above Threshold; Confirmation says it for people.
	NeedsConfirmation bool   `json:"needsConfirmation,omitempty"`
	Confirmation      string `json:"confirmation,omitempty"`
	Threshold         int64  `json:"threshold,omitempty"`
	// Refused says why the query was not run (the preview policy).
	Refused string `json:"refused,omitempty"`
	// Unavailable says why there can be no data preview (no BigQuery
	// metadata source, a declaration has no query, …).
	Unavailable string `json:"unavailable,omitempty"`
	// Error is BigQuery's error (a missing table, a failed query).
	Error string `json:"error,omitempty"`
}

// RowsColumn is a column of a data preview: BigQuery's type name and
// mode (NULLABLE, REQUIRED, REPEATED), a RECORD's fields.
type RowsColumn struct {
	Name        string       `json:"name"`
	Type        string       `json:"type"`
	Mode        string       `json:"mode,omitempty"`
	Description string       `json:"description,omitempty"`
	Fields      []RowsColumn `json:"fields,omitempty"`
}

// ErrNoRows is the error of Snapshot.Rows when the project's backend
// cannot preview data at all.
var ErrNoRows = errors.New("this project's backend does not preview data")

// Rows asks the project's backend for a data preview of an action of this
// snapshot's graph.
func (s *Snapshot) Rows(ctx context.Context, req RowsRequest) (*Rows, error) {
	if s == nil || s.backend == nil || s.Result == nil {
		return nil, errNoCompile
	}
	rp, ok := s.backend.(RowsProvider)
	if !ok {
		return nil, ErrNoRows
	}
	req.Graph = s.Result.Graph
	var out *Rows
	run := func() error {
		var err error
		out, err = rp.Rows(ctx, req)
		return err
	}
	var err error
	if s.session != nil {
		err = s.session.recovered("data preview", run)
	} else {
		err = run()
	}
	return out, err
}
