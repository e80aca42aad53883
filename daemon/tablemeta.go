package daemon

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/workspace"
)

// TableMetadata implements workspace.ProjectBackend: what the metadata
// source has of a table now. Hovers and column completion ask it on the
// editor's request path, so it never waits for I/O:
//
//   - snapshot: the snapshot as loaded; when the file changed on disk it
//     is read again in the background, for the next request;
//   - bigquery: the metadata cache, in memory or in its store, at any age
//     (cache.CachedTable). A table the cache does not know yet is fetched
//     in the background — work the project owns, which Close stops — so
//     that the next hover has it; a connection being opened is not waited
//     for either.
//
// A table the source does not have that is one of the project's actions
// has the schema the last SQL check inferred (sqlcheck.go): columns of
// tables that do not exist yet.
func (op *openProject) TableMetadata(ctx context.Context, t workspace.Target) (*workspace.TableInfo, bool) {
	if info, ok := op.warehouseTable(ctx, t); ok {
		return info, true
	}
	// Not in the warehouse (or not known yet): the project's own action,
	// with the schema the SQL analysis inferred.
	if info := op.sql.inferredTable(t); info != nil {
		return info, true
	}
	return nil, false
}

// warehouseTable is the table as the metadata source has it.
func (op *openProject) warehouseTable(ctx context.Context, t workspace.Target) (*workspace.TableInfo, bool) {
	s := op.b.currentSettings()
	req := &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: t.Database, Schema: t.Schema, Name: t.Name}}
	switch sourceKind(s) {
	case SourceSnapshot:
		if s.MetadataSnapshot == "" {
			return nil, false
		}
		file := resolveSnapshotPath(s.MetadataSnapshot, op.p.Root)
		a := op.loadedSnapshot(file)
		if a == nil {
			return nil, false
		}
		tm, err := a.GetTable(ctx, req)
		if err != nil || tm == nil {
			return nil, false
		}
		return tableInfo(tm, "snapshot "+filepath.Base(file)), true
	case SourceBigQuery:
		c := op.connected()
		if c == nil || c.b == nil {
			return nil, false
		}
		tm, ok, err := c.b.Cache.CachedTable(ctx, req)
		if !ok {
			op.fetchTable(c, req.GetTarget())
			return nil, false
		}
		if err != nil || tm == nil {
			return nil, false
		}
		return tableInfo(tm, "BigQuery"), true
	}
	return nil, false
}

// loadedSnapshot is the snapshot file as loaded (nil when it was never
// loaded or cannot be read); when the file changed since, it is loaded
// again in the background.
func (op *openProject) loadedSnapshot(file string) *offline.Adapter {
	db := op.p.Settings.DefaultProject
	e, current := op.b.meta.peek(file, db)
	if !current {
		op.bg.do("snapshot\x00"+file, func(context.Context) { _, _ = op.b.meta.entry(file, db) })
	}
	if e == nil {
		return nil
	}
	return e.a
}

// fetchTable fetches a table's metadata into the BigQuery cache in the
// background, once at a time per table.
func (op *openProject) fetchTable(c *bqConn, t *dataformpb.Target) {
	op.bg.do("table\x00"+adapters.TargetString(t), func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		err := c.b.Cache.PrefetchTables(ctx, []*dataformpb.Target{t})
		switch {
		case err == nil:
			c.noteFetch(nil)
		case ctx.Err() == nil:
			c.noteFetch(err)
			op.b.log.Debug("fetching a table's metadata for a hover failed", "project", op.p.Root, "table", adapters.TargetString(t), "error", err)
		}
	})
}

// maxProjectWork bounds the background goroutines of one project: beyond
// it a request starts nothing (the next one will ask again).
const maxProjectWork = 8

// projectWork is background work a project owns — what its request path
// starts instead of waiting for — one goroutine per key at a time. stop
// cancels it and waits for it.
type projectWork struct {
	mu      sync.Mutex // guards the fields below; held when adding to wg
	ctx     context.Context
	cancel  context.CancelFunc
	running map[string]bool
	wg      sync.WaitGroup
}

func (w *projectWork) init(parent context.Context) {
	w.ctx, w.cancel = context.WithCancel(parent)
	w.running = map[string]bool{}
}

// do runs f on a goroutine of w unless one runs for key already, w is
// stopped, or maxProjectWork run.
func (w *projectWork) do(key string, f func(ctx context.Context)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx == nil || w.ctx.Err() != nil || w.running[key] || len(w.running) >= maxProjectWork {
		return
	}
	w.running[key] = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() {
			w.mu.Lock()
			delete(w.running, key)
			w.mu.Unlock()
		}()
		f(w.ctx)
	}()
}

// stop cancels w's work and waits for it; do starts nothing after.
func (w *projectWork) stop() {
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
}
