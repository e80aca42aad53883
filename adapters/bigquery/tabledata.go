package bigquery

import (
	"context"
	"strings"

	bq "google.golang.org/api/bigquery/v2"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

var _ adapters.RowReader = (*Adapter)(nil)

// TableRows implements adapters.RowReader: tables.get for the table's
// type, schema, size and location, then tabledata.list (paged) for up to
// limit rows (at most Options.MaxRows; 0 means MaxRows). Neither is a
// query: nothing is billed. Views and other tables without stored rows
// are FAILED_PRECONDITION, said before tabledata.list is asked.
func (a *Adapter) TableRows(ctx context.Context, target *dataformpb.Target, limit int64) (*adapters.TableRows, error) {
	if target.GetSchema() == "" || target.GetName() == "" {
		return nil, adapters.Errorf(adapters.InvalidArgument, "TableRows needs a schema and a name, got %s", adapters.TargetString(target))
	}
	t := &dataformpb.Target{Database: target.GetDatabase(), Schema: target.GetSchema(), Name: target.GetName()}
	if t.Database == "" {
		t.Database = a.opts.DefaultDatabase
	}
	name := adapters.TargetString(t)
	var table *bq.Table
	err := a.read(ctx, func(ctx context.Context) error {
		var err error
		table, err = a.svc.Tables.Get(t.Database, t.Schema, t.Name).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, classify(err, "BigQuery tables.get %s", name)
	}
	out := &adapters.TableRows{Target: t, Type: table.Type, Location: table.Location, TotalRows: int64(table.NumRows)}
	if table.Schema != nil {
		out.Columns = columns(table.Schema.Fields)
	}
	switch table.Type {
	case "", "TABLE", "SNAPSHOT", "CLONE":
	default:
		return nil, adapters.Errorf(adapters.FailedPrecondition, "%s is a %s: it has no stored rows to list (preview its query instead)",
			name, strings.ToLower(strings.ReplaceAll(table.Type, "_", " ")))
	}
	if limit <= 0 || limit > a.opts.MaxRows {
		limit = a.opts.MaxRows
	}
	token := ""
	for int64(len(out.Rows)) < limit {
		page := min(limit-int64(len(out.Rows)), int64(a.opts.PageSize))
		var res *bq.TableDataList
		err := a.read(ctx, func(ctx context.Context) error {
			call := a.svc.Tabledata.List(t.Database, t.Schema, t.Name).MaxResults(page).Context(ctx)
			if token != "" {
				call = call.PageToken(token)
			}
			var err error
			res, err = call.Do()
			return err
		})
		if err != nil {
			return nil, classify(err, "BigQuery tabledata.list %s", name)
		}
		if res.TotalRows > 0 {
			out.TotalRows = res.TotalRows
		}
		for _, r := range res.Rows {
			if int64(len(out.Rows)) >= limit {
				break
			}
			s, err := rowStruct(r)
			if err != nil {
				return nil, adapters.Errorf(adapters.Internal, "BigQuery tabledata.list %s: row %d: %v", name, len(out.Rows), err)
			}
			out.Rows = append(out.Rows, s)
		}
		if res.PageToken == "" || res.PageToken == token || len(res.Rows) == 0 {
			break
		}
		token = res.PageToken
	}
	return out, nil
}

// columns is a schema as BigQuery names its types (see adapters.Column).
func columns(in []*bq.TableFieldSchema) []*adapters.Column {
	if len(in) == 0 {
		return nil
	}
	out := make([]*adapters.Column, 0, len(in))
	for _, f := range in {
		c := &adapters.Column{Name: f.Name, Type: strings.ToUpper(f.Type), Mode: strings.ToUpper(f.Mode), Description: f.Description}
		if c.Mode == "" {
			c.Mode = "NULLABLE"
		}
		c.Fields = columns(f.Fields)
		out = append(out, c)
	}
	return out
}
