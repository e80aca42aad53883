package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/rows"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/workspace"
)

var _ workspace.RowsProvider = (*openProject)(nil)

// Rows implements workspace.RowsProvider (dfd/rows): an action's data from
// the project's BigQuery connection, through package rows — the built
// table's rows with tabledata.list, or the action's query (a JiT action's:
// the SQL its code produces in a preview) under the preview policy, with
// dfd.preview.rowsConfirmBytes as the confirmation threshold. There are
// no rows without the BigQuery metadata source: a snapshot has none, and
// the answer says so rather than invent any. BigQuery's errors are in the
// answer (Error), for the editor to show beside the request.
func (op *openProject) Rows(ctx context.Context, req workspace.RowsRequest) (*workspace.Rows, error) {
	h, ok := req.Graph.(*graphHandle)
	if !ok || h == nil || req.Action == nil {
		return nil, errors.New("no compiled graph to preview")
	}
	a := req.Action
	out := &workspace.Rows{Source: req.Source, Columns: []workspace.RowsColumn{}, Rows: []any{}}
	if out.Source == "" {
		out.Source = workspace.RowsFromQuery
	}
	t := a.Target
	if t.Database == "" {
		t.Database = h.graph.GetProjectConfig().GetDefaultDatabase()
	}
	out.Target = t.String()

	ms := op.metadataSource()
	switch {
	case ms.kind != SourceBigQuery:
		out.Unavailable = "data previews read BigQuery: set dfd.metadata.source to \"bigquery\" (a snapshot has no rows)"
		return out, nil
	case ms.err != nil:
		out.Unavailable = "BigQuery cannot be used: " + ms.err.Error()
		return out, nil
	}
	conn := ms.bq.b
	billing := conn.Credentials.Project
	if t.Schema != "" && t.Name != "" {
		out.TableURL = rows.ConsoleTableURL(billing, t.Database, t.Schema, t.Name)
	}
	s := op.b.currentSettings()

	var res *rows.Result
	var err error
	if out.Source == workspace.RowsFromTable {
		if a.Kind == workspace.KindOperation || a.Kind == workspace.KindTest {
			out.Unavailable = "a " + a.Kind + " has no table of its own to read"
			return out, nil
		}
		res, err = rows.Table(ctx, conn.BigQuery, &dataformpb.Target{Database: t.Database, Schema: t.Schema, Name: t.Name}, req.Limit)
	} else {
		sql := a.SQL
		if a.Jit {
			jr, jerr := op.JitPreview(ctx, workspace.JitRequest{Graph: h, Target: a.Target})
			if jerr != nil {
				out.Error = jerr.Error()
				return out, nil
			}
			sql = jr.SQL
		}
		stmt, why := actionQuery(a.Kind, sql, req.Incremental)
		out.Statement = stmt
		if why != "" {
			out.Unavailable = why
			return out, nil
		}
		res, err = rows.Query(ctx, conn.Cache, rows.QueryRequest{
			Statement: stmt, Limit: req.Limit, Policy: previewPolicy(s),
			Threshold: s.PreviewRowsConfirmBytes, Confirmed: req.Confirmed,
		})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out.Error = err.Error()
		ms.bq.noteCalls([]workspace.AdapterCall{{Error: err.Error()}})
		return out, nil
	}
	fillRows(out, res)
	if !res.Cached {
		ms.bq.noteCalls([]workspace.AdapterCall{{}}) // BigQuery answered
	}
	if res.Source == rows.SourceQuery {
		if out.Location == "" {
			out.Location = conn.Credentials.Location
		}
		if res.JobID != "" {
			out.JobURL = rows.ConsoleJobURL(billing, out.Location, res.JobID)
		}
		if res.NeedsConfirmation {
			threshold := s.PreviewRowsConfirmBytes
			if threshold <= 0 {
				threshold = rows.DefaultThreshold
			}
			out.Threshold = threshold
			out.Confirmation = fmt.Sprintf("BigQuery's dry run says this query would process ≈ %s, more than the %s a preview runs without asking (dfd.preview.rowsConfirmBytes).",
				rows.FormatBytes(res.EstimatedBytes), rows.FormatBytes(threshold))
		}
	}
	return out, nil
}

// actionQuery is the statement whose rows an action previews, or why
// there is none: a table's or view's query (an incremental table's
// incremental one when asked), an assertion's, an operation's only one.
func actionQuery(kind string, sql workspace.SQL, incremental bool) (stmt, why string) {
	switch kind {
	case workspace.KindDeclaration:
		return "", "a declaration has no query: preview its table's rows instead"
	case workspace.KindTest:
		return "", "a unit test's rows are not previewed"
	case workspace.KindOperation:
		var kept []string
		for _, q := range sql.Queries {
			if strings.TrimSpace(q) != "" {
				kept = append(kept, q)
			}
		}
		if len(kept) != 1 {
			return "", fmt.Sprintf("an operation of %d statements: a data preview runs one query", len(kept))
		}
		return kept[0], ""
	}
	if incremental {
		if kind != workspace.KindIncremental {
			return "", "only an incremental table has an incremental query"
		}
		return sql.IncrementalQuery, ""
	}
	return sql.Query, ""
}

// fillRows copies a preview of package rows into the workspace's type.
func fillRows(out *workspace.Rows, r *rows.Result) {
	out.Columns = rowsColumns(r.Columns)
	out.Rows = make([]any, len(r.Rows))
	for i, row := range r.Rows {
		out.Rows[i] = row
	}
	out.TotalRows, out.Truncated = r.TotalRows, r.Truncated
	out.EstimatedBytesProcessed, out.TotalBytesProcessed, out.TotalBytesBilled = r.EstimatedBytes, r.TotalBytesProcessed, r.TotalBytesBilled
	out.JobID, out.Location, out.Cached = r.JobID, r.Location, r.Cached
	out.NeedsConfirmation, out.Refused = r.NeedsConfirmation, r.Refused
	if r.Statement != "" {
		out.Statement = r.Statement
	}
}

func rowsColumns(in []*adapters.Column) []workspace.RowsColumn {
	out := make([]workspace.RowsColumn, 0, len(in))
	for _, c := range in {
		out = append(out, workspace.RowsColumn{Name: c.Name, Type: c.Type, Mode: c.Mode, Description: c.Description, Fields: rowsColumns(c.Fields)})
	}
	return out
}
