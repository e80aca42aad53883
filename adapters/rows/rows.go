// Package rows previews the data of an action: the rows of its built
// table, read with BigQuery's tabledata.list (free: no query runs), and
// the rows of its query as written now, run for real under the preview
// policy. `dfd rows` and the daemon's dfd/rows request both use it.
//
// # A query's rows
//
// Query runs a statement only when every gate of the preview policy
// (package policy) says yes, in this order, and says which gate refused
// otherwise (Result.Refused) — a refused statement is never sent as a
// query:
//
//  1. GoogleSQL parses it as one read-only query (gsql.Classify): nothing
//     reaches BigQuery otherwise, not even a dry run.
//  2. BigQuery's dry run (adapters.Verifier; the metadata cache keeps its
//     verdict per statement) says it is a SELECT, calls no routine and
//     stays under the preview's byte cap.
//  3. Above QueryRequest.Threshold bytes (the dry run's estimate) it runs
//     only when the user confirmed (QueryRequest.Confirmed); else the
//     Result asks for confirmation with the estimate.
//
// The query then runs through the same policy wrapper as a JiT preview's
// queries, so it carries the same byte cap (maximumBytesBilled) and the
// label dfd=preview; its job id starts with "dfd-rows-".
//
// # Values
//
// Rows are decoded from BigQuery's raw {"f":[{"v":…}]} form with the
// schema: NULL is null, a STRUCT (RECORD) an object whose keys keep the
// schema's order (Record), an ARRAY a list (BigQuery has no NULL arrays:
// an empty one), BOOL a boolean, INT64 a number when a double holds it
// exactly (|n| ≤ 2^53) and else its decimal text, FLOAT64 a number (NaN
// and ±Infinity as BigQuery's text), TIMESTAMP BigQuery's canonical text
// ("2024-01-02 03:04:05.123456 UTC"), and everything else — NUMERIC and
// BIGNUMERIC (exact decimals), DATE, TIME, DATETIME, BYTES (base64),
// GEOGRAPHY (WKT), JSON (its text), INTERVAL, RANGE — the text BigQuery
// sends.
package rows

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Sources of rows.
const (
	SourceTable = "table" // the built table, tabledata.list
	SourceQuery = "query" // the action's query, run now
)

// DefaultLimit is how many rows a preview shows when not told.
const DefaultLimit = 100

// DefaultThreshold is the dry-run estimate above which a query preview
// needs the user's confirmation: 1 GiB (about $0.006 at on-demand prices).
const DefaultThreshold int64 = 1 << 30

// JobPrefix is the prefix of row previews' job ids (after dfd's own):
// "dfd-rows-…".
const JobPrefix = "rows"

// Result is a data preview, or why there is none to show yet.
type Result struct {
	Source string `json:"source"`
	// Target is the table read (source table), database.schema.name.
	Target string `json:"target,omitempty"`
	// Statement is the query run (source query).
	Statement string             `json:"statement,omitempty"`
	Columns   []*adapters.Column `json:"columns"`
	// Rows are objects whose keys are the columns' names, in the
	// columns' order (see Record), values decoded as the package says.
	Rows []Record `json:"rows"`
	// TotalRows is how many rows the table holds (source table), or how
	// many the query returned when all were read.
	TotalRows int64 `json:"totalRows"`
	// Truncated: there are more rows than shown (the limit).
	Truncated bool `json:"truncated,omitempty"`
	// EstimatedBytes is the dry run's totalBytesProcessed (source query).
	EstimatedBytes int64 `json:"estimatedBytesProcessed,omitempty"`
	// TotalBytesProcessed and TotalBytesBilled are the job's (source
	// query): BigQuery's statistics, never estimated.
	TotalBytesProcessed int64 `json:"totalBytesProcessed,omitempty"`
	TotalBytesBilled    int64 `json:"totalBytesBilled,omitempty"`
	// JobID is the query's job id (source query; empty when the answer
	// came from dfd's query cache of an earlier identical preview, which
	// Cached says, or when nothing ran).
	JobID  string `json:"jobId,omitempty"`
	Cached bool   `json:"cached,omitempty"`
	// Location is where the job ran or the table lives, when known.
	Location string `json:"location,omitempty"`
	// ConsoleURL opens the table, or the query's job, in BigQuery's
	// console (set by the caller, which knows the billing project).
	ConsoleURL string `json:"consoleUrl,omitempty"`
	// NeedsConfirmation: the dry run's estimate is above the threshold and
	// the query did not run; ask again with confirmation.
	NeedsConfirmation bool `json:"needsConfirmation,omitempty"`
	// Refused says why the statement was not run (no rows then).
	Refused string `json:"refused,omitempty"`
}

// Field is one key and value of a Record.
type Field struct {
	Name  string
	Value any
}

// Record is a row or a STRUCT value: its fields in the schema's order,
// encoded in JSON as an object with its keys in that order.
type Record []Field

// Get is the value of the field named name (nil when there is none).
func (r Record) Get(name string) any {
	for _, f := range r {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// Table reads up to limit rows of target's table with r (tabledata.list:
// no query, nothing billed).
func Table(ctx context.Context, r adapters.RowReader, target *dataformpb.Target, limit int64) (*Result, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	tr, err := r.TableRows(ctx, target, limit)
	if err != nil {
		return nil, err
	}
	out := &Result{Source: SourceTable, Target: adapters.TargetString(tr.Target), Columns: tr.Columns, TotalRows: tr.TotalRows, Location: tr.Location}
	if out.Columns == nil {
		out.Columns = []*adapters.Column{}
	}
	if out.Rows, err = decodeRows(tr.Rows, tr.Columns); err != nil {
		return nil, fmt.Errorf("rows of %s: %w", out.Target, err)
	}
	out.Truncated = int64(len(out.Rows)) < tr.TotalRows
	return out, nil
}

// QueryRequest asks for a query's rows.
type QueryRequest struct {
	Statement string
	// Limit caps the rows returned (DefaultLimit when 0). The query
	// itself is not changed: BigQuery bills what it reads, whatever the
	// limit.
	Limit int64
	// Policy is the preview policy (its byte cap, labels, location); its
	// Mode is forced to preview.
	Policy policy.Policy
	// Threshold is the dry-run estimate above which the query needs
	// Confirmed; 0 means DefaultThreshold, a negative value none.
	Threshold int64
	Confirmed bool
}

// ErrNoDryRun is the error of Query when the backend cannot dry-run a
// statement (an offline snapshot): no query runs without one first.
var ErrNoDryRun = errors.New("the metadata source cannot dry-run queries: query previews need the BigQuery metadata source")

// Query runs req's statement for its rows, if the preview policy lets it
// and it is under the threshold or confirmed (see the package comment).
// backend is the BigQuery backend (the metadata cache in front of it);
// it must be an adapters.Verifier.
func Query(ctx context.Context, backend adapters.DbAdapter, req QueryRequest) (*Result, error) {
	out := &Result{Source: SourceQuery, Statement: req.Statement, Columns: []*adapters.Column{}, Rows: []Record{}}
	ver, ok := backend.(adapters.Verifier)
	if !ok {
		return nil, ErrNoDryRun
	}
	if strings.TrimSpace(req.Statement) == "" {
		out.Refused = "the action has no query"
		return out, nil
	}
	// The policy would turn anything but a read-only query into a dry
	// run; a data preview has no use for that, so nothing is sent.
	if v := gsql.Classify(ctx, req.Statement); !v.ReadOnly() {
		out.Refused = "only read-only queries are previewed, and GoogleSQL reads this as a " + v.Reason
		return out, nil
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	p := req.Policy
	p.Mode = policy.Preview
	threshold := req.Threshold
	if threshold == 0 {
		threshold = DefaultThreshold
	}
	g := &gate{DbAdapter: backend, ver: ver, cap: p.Cap(), threshold: threshold, confirmed: req.Confirmed}
	rec := adapters.NewRecorder(p.Wrap(g))
	resp, err := rec.Execute(ctx, &dataformpb.ExecuteRequest{
		Statement: req.Statement,
		RowLimit:  limit,
		BigQueryOptions: &dataformpb.BigQueryExecuteOptions{
			JobPrefix:   JobPrefix,
			Interactive: true, // someone is waiting for it
		},
	})
	if g.verdict != nil {
		out.EstimatedBytes = g.verdict.Bytes
	}
	var confirm *needsConfirmation
	switch {
	case errors.As(err, &confirm):
		out.NeedsConfirmation = true
		return out, nil
	case err != nil:
		return nil, err
	}
	if calls := rec.Calls(); len(calls) > 0 {
		c := calls[0]
		if c.DryRun {
			out.Refused = strings.Join(c.Notes, "; ")
			if out.Refused == "" {
				out.Refused = "the preview policy answered with a dry run"
			}
			return out, nil
		}
		out.Cached = c.Cached
	}
	out.Columns = fromFields(resp.GetSchemaFields())
	if out.Rows, err = decodeRows(resp.GetRows(), out.Columns); err != nil {
		return nil, fmt.Errorf("rows of the query: %w", err)
	}
	md := resp.GetExecutionMetadata().GetBigquery()
	out.JobID = md.GetJobId()
	out.TotalBytesProcessed = md.GetTotalBytesProcessed()
	out.TotalBytesBilled = md.GetTotalBytesBilled()
	out.Location = p.Location
	out.TotalRows = int64(len(out.Rows))
	out.Truncated = int64(len(out.Rows)) >= limit
	return out, nil
}

// gate is the backend as the policy sees it during a row preview: its dry
// run's verdict is kept (the estimate the Result shows), and a query the
// policy would run is stopped there when the estimate is above the
// threshold and nobody confirmed.
type gate struct {
	adapters.DbAdapter
	ver       adapters.Verifier
	cap       int64
	threshold int64
	confirmed bool

	verdict *adapters.Verdict // the policy asks once per Execute
}

func (g *gate) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	v, err := g.ver.Verify(ctx, req)
	if err != nil {
		return nil, err
	}
	g.verdict = v
	runs := v.StatementType == "SELECT" && len(v.Routines) == 0 && (g.cap <= 0 || v.Bytes <= g.cap)
	if runs && !g.confirmed && g.threshold > 0 && v.Bytes > g.threshold {
		return nil, &needsConfirmation{bytes: v.Bytes, threshold: g.threshold}
	}
	return v, nil
}

type needsConfirmation struct{ bytes, threshold int64 }

func (e *needsConfirmation) Error() string {
	return fmt.Sprintf("the query would process %s, more than the %s a preview runs without asking", FormatBytes(e.bytes), FormatBytes(e.threshold))
}

// FormatBytes is n in binary units, as BigQuery's console shows sizes:
// "512 B", "1.5 KiB", "1.2 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// fromFields is the schema of a query's answer as columns. The DbAdapter
// reports Dataform's field types, whose names are BigQuery's (INTEGER,
// FLOAT, BOOLEAN, …) but fold BIGNUMERIC into NUMERIC and JSON and
// INTERVAL into STRING; the values are BigQuery's all the same.
func fromFields(in []*dataformpb.Field) []*adapters.Column {
	out := make([]*adapters.Column, 0, len(in))
	for _, f := range in {
		c := &adapters.Column{Name: f.GetName(), Mode: "NULLABLE", Description: f.GetDescription()}
		for _, fl := range f.GetFlags() {
			if fl == dataformpb.Field_REPEATED {
				c.Mode = "REPEATED"
			}
		}
		if s := f.GetStruct(); s != nil {
			c.Type = "RECORD"
			c.Fields = fromFields(s.GetFields())
		} else {
			c.Type = f.GetPrimitive().String()
		}
		out = append(out, c)
	}
	return out
}
