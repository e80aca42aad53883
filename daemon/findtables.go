package daemon

import (
	"context"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/workspace"
)

var _ workspace.TableFinder = (*openProject)(nil)

// FindTables implements workspace.TableFinder: the tables named t.Name
// that the metadata source knows in the datasets t could be in — t's own
// when it names one, else those the project's graph uses and its default
// dataset. It asks the metadata source table by table (the snapshot, or
// BigQuery through the metadata cache of a connection already open: it
// never connects), within ctx.
func (op *openProject) FindTables(ctx context.Context, graph any, t workspace.Target) []workspace.Target {
	var a adapters.DbAdapter
	switch sourceKind(op.b.currentSettings()) {
	case SourceSnapshot:
		a = op.metadataSource().adapter
	case SourceBigQuery:
		if c := op.connected(); c != nil && c.b != nil {
			a = c.b.Cache
		}
	}
	if a == nil || t.Name == "" {
		return nil
	}
	defDB, defSchema := op.p.Settings.DefaultProject, op.p.Settings.DefaultDataset
	var datasets []cache.Dataset
	switch {
	case t.Schema != "":
		db := t.Database
		if db == "" {
			db = defDB
		}
		datasets = []cache.Dataset{{Database: db, Schema: t.Schema}}
	default:
		if defSchema != "" {
			datasets = append(datasets, cache.Dataset{Database: defDB, Schema: defSchema})
		}
		if g, ok := graph.(*dataformpb.CompiledGraph); ok && g != nil {
			datasets = append(datasets, connect.GraphDatasets(g, defDB)...)
		}
	}
	seen := map[cache.Dataset]bool{}
	var out []workspace.Target
	for _, ds := range datasets {
		if seen[ds] || ctx.Err() != nil {
			continue
		}
		seen[ds] = true
		tm, err := a.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: ds.Database, Schema: ds.Schema, Name: t.Name}})
		if err != nil || tm == nil {
			continue
		}
		out = append(out, workspace.Target{Database: ds.Database, Schema: ds.Schema, Name: t.Name})
	}
	return out
}
