// Package cache is a DbAdapter that remembers table metadata (in memory and
// in a bbolt file on disk) and recent read-only query results (in memory),
// so previews do not wait for BigQuery and keep working when it cannot be
// reached.
//
// # Metadata: GetTable and ListTables
//
// Every answer is kept with the time it was fetched; "table not found" is
// kept too (JiT code often asks whether a table exists yet).
//
//   - Younger than Options.TTL: served from the cache.
//   - Older than TTL but younger than Options.MaxStale: still served at
//     once, and refreshed in the background (stale-while-revalidate): the
//     editor never waits for a value it already has.
//   - Older than MaxStale, or not cached: fetched from the wrapped adapter.
//     Concurrent callers of the same key share one fetch (single-flight).
//     If the fetch fails because BigQuery is unreachable or slow
//     (UNAVAILABLE, DEADLINE_EXCEEDED) and an old value exists, the old
//     value is served with a "stale" note on the call record.
//
// Cached answers are marked with adapters.MarkCached; a value whose last
// refresh failed carries an adapters.Note saying it is stale and why.
// ListTables answers are kept as the list of table names plus each table's
// own entry, so a GetTable that refreshed a table also refreshes it in
// listings.
//
// The on-disk store makes a restarted daemon warm at once and lets it work
// offline. It is written in bbolt transactions, so a crash or kill mid-write
// leaves the previous state; a file that is corrupt or unreadable is moved
// aside and the cache starts empty, with a warning (Warnings, Options.Log),
// never an error.
//
// Every dfd process on the machine (editors' daemons, `dfd check` in a
// shell) shares the store: it is opened for each read or write and closed
// at once, so no process locks the others out (see store). What another
// process wrote is seen at once for entries this one does not hold in
// memory, and before this one would fetch an entry again: a fetch looks at
// the store first (see fetchTable).
//
// # Changes: DeleteTable, Invalidate, Refresh
//
// DeleteTable forgets the table (and its dataset's listing) once the wrapped
// adapter ran it — or may have run it (its outcome is unknown). Invalidate
// does the same for "a run changed this table". Refresh re-fetches cached
// entries on request; Prefetch warms the datasets a project uses,
// PrefetchTables single tables. CachedTable answers from the cache alone,
// never waiting for the wrapped adapter (the editor's hovers).
//
// # Execute
//
// Results of read-only queries (as Options.ReadOnly decides; without it,
// none) and of dry runs (which change nothing) are kept in memory for
// Options.QueryTTL, keyed by the whole request (statement, parameters,
// limits, options), in an LRU bounded by Options.QueryBytes. Any other
// statement goes straight through. CachedExecute answers from those kept
// results only (the after-compile checks, which must not bill anything).
//
// Verify (adapters.Verifier, when the wrapped adapter has it) keeps
// BigQuery's dry-run verdicts the same way, so the preview policy's gate
// costs one dry run per distinct statement.
//
// # Goroutines
//
// Fetches run in goroutines owned by the Cache (so a caller that gives up
// does not cancel the fetch other callers wait for); Close cancels and waits
// for all of them.
package cache

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Options configure a Cache. Zero values pick the defaults.
type Options struct {
	// Path is the bbolt file; empty keeps everything in memory. Every
	// process that opens the same path shares its entries.
	Path string
	// LockWait bounds how long a read or write of the file waits while
	// another process writes it (default 10s); past it the cache keeps
	// metadata in memory only, with a warning.
	LockWait time.Duration
	// DefaultDatabase is the project that targets and ListTables requests
	// without one mean, so "ds.t" and "p.ds.t" share an entry.
	DefaultDatabase string

	// TTL is how long metadata counts as fresh (default 10m).
	TTL time.Duration
	// MaxStale is how old metadata may be and still be served without
	// asking BigQuery first (default 7 days). Older entries are refreshed
	// before they are served, unless BigQuery cannot be reached.
	MaxStale time.Duration
	// RetryAfter is how long a failed background refresh of an entry is not
	// tried again (default 30s), so an unreachable BigQuery is not asked on
	// every keystroke.
	RetryAfter time.Duration
	// FetchTimeout bounds each fetch from the wrapped adapter (default 2m).
	FetchTimeout time.Duration
	// Workers is how many background refreshes run at a time (default 4).
	Workers int

	// QueryTTL is how long Execute results are kept (default 5m).
	QueryTTL time.Duration
	// QueryBytes caps the memory of kept Execute results (default 32 MiB),
	// and separately of kept verdicts.
	QueryBytes int64
	// ReadOnly says which statements only read, so that their results may
	// be kept and shared (dfd passes gsql.IsReadOnlyQuery). Nil: results
	// of real executions are never kept, only those of dry runs.
	ReadOnly adapters.ReadOnlyFunc

	// Log receives warnings (corrupt store, failed background refresh).
	Log func(format string, args ...any)
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.TTL <= 0 {
		o.TTL = 10 * time.Minute
	}
	if o.MaxStale <= 0 {
		o.MaxStale = 7 * 24 * time.Hour
	}
	if o.MaxStale < o.TTL {
		o.MaxStale = o.TTL
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 30 * time.Second
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = 2 * time.Minute
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.QueryTTL <= 0 {
		o.QueryTTL = 5 * time.Minute
	}
	if o.QueryBytes <= 0 {
		o.QueryBytes = 32 << 20
	}
	if o.LockWait <= 0 {
		o.LockWait = defaultLockWait
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// tkey names a table; lkey a listing (schema "" lists every dataset).
type (
	tkey struct{ db, schema, name string }
	lkey struct{ db, schema string }
)

func tkeyOf(t *dataformpb.Target) tkey {
	return tkey{t.GetDatabase(), t.GetSchema(), t.GetName()}
}

func (k tkey) target() *dataformpb.Target {
	return &dataformpb.Target{Database: k.db, Schema: k.schema, Name: k.name}
}

func (k tkey) String() string { return adapters.TargetString(k.target()) }

func (k tkey) flightKey() string { return "t\x00" + k.db + "\x00" + k.schema + "\x00" + k.name }
func (k lkey) flightKey() string { return "l\x00" + k.db + "\x00" + k.schema }

// tableEntry is one table's metadata; meta nil means BigQuery said the
// table does not exist. Entries are replaced, never modified, once shared.
type tableEntry struct {
	meta    *dataformpb.TableMetadata
	fetched time.Time
	failure *failure // the last refresh failed (nil: it did not)
}

type listEntry struct {
	tables  []tkey
	fetched time.Time
	failure *failure
}

type failure struct {
	err error
	at  time.Time
}

// Cache is a caching DbAdapter. It is safe for concurrent use.
type Cache struct {
	inner adapters.DbAdapter
	opts  Options
	store *store // nil: memory only

	ctx    context.Context // cancelled by Close; parent of every fetch
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the Cache started
	sem    chan struct{}  // background refresh slots

	// wmu serialises changes (a fetch storing its answer, Invalidate,
	// Clear) so memory and disk change together and in order; epoch counts
	// invalidations, so a fetch that started before one does not store its
	// older answer after it.
	wmu   sync.Mutex
	epoch atomic.Uint64

	mu       sync.Mutex // guards the fields below
	closed   bool
	tables   map[tkey]*tableEntry
	lists    map[lkey]*listEntry
	flights  map[string]*flight
	pending  map[string]bool // keys with a background refresh queued or running
	warnings []string

	queries  *lru[*dataformpb.ExecuteResponse]
	verdicts *lru[*adapters.Verdict]

	hits, misses, stale, fetches, refreshes atomic.Uint64
}

var _ adapters.DbAdapter = (*Cache)(nil)

// Open returns a Cache in front of inner. A nil inner is an offline cache:
// it serves what it has (stale entries included, with a note) and answers
// UNAVAILABLE otherwise. Open does not fail because of the store: see
// Warnings.
func Open(inner adapters.DbAdapter, opts Options) *Cache {
	opts.defaults()
	if inner == nil {
		inner = unreachable{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		inner:    inner,
		opts:     opts,
		ctx:      ctx,
		cancel:   cancel,
		sem:      make(chan struct{}, opts.Workers),
		tables:   map[tkey]*tableEntry{},
		lists:    map[lkey]*listEntry{},
		flights:  map[string]*flight{},
		pending:  map[string]bool{},
		queries:  newLRU(opts.QueryBytes, responseSize),
		verdicts: newLRU(opts.QueryBytes, verdictSize),
	}
	if opts.Path != "" {
		c.store = openStore(opts.Path, opts.LockWait, c.warn)
	}
	return c
}

func (c *Cache) warn(msg string) {
	c.mu.Lock()
	c.warnings = append(c.warnings, msg)
	c.mu.Unlock()
	c.opts.Log("%s", msg)
}

// Warnings are the problems the cache worked around (an unreadable store
// file moved aside, a store turned off after an I/O error, …).
func (c *Cache) Warnings() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.warnings)
}

// Path is the store file, or "" when the cache is in memory only (by choice
// or because the file could not be used).
func (c *Cache) Path() string {
	if c.store == nil {
		return ""
	}
	return c.store.path
}

// Close stops background work, waits for it, and closes the store. Calls
// after Close fail with FAILED_PRECONDITION.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return c.store.close()
}

var errClosed = adapters.Errorf(adapters.FailedPrecondition, "metadata cache is closed")

// normDB fills in the default database.
func (c *Cache) normDB(db string) string {
	if db == "" {
		return c.opts.DefaultDatabase
	}
	return db
}

// --- GetTable -------------------------------------------------------------

func (c *Cache) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	t := req.GetTarget()
	if t.GetSchema() == "" || t.GetName() == "" {
		return c.inner.GetTable(ctx, req) // let the backend word the error
	}
	k := tkey{c.normDB(t.GetDatabase()), t.GetSchema(), t.GetName()}
	e, err := c.lookupTable(k, true)
	if err != nil {
		return nil, err
	}
	now := c.opts.Now()
	if e != nil {
		age := now.Sub(e.fetched)
		// Too old to serve without asking BigQuery — unless asking just
		// failed: then the stale value is served at once (with its note)
		// instead of every call waiting on an outage.
		if age <= c.opts.MaxStale || c.failedRecently(e.failure, now) {
			if age > c.opts.TTL {
				c.refreshTableLater(k, e)
			}
			if age > c.opts.MaxStale {
				c.stale.Add(1)
			}
			c.hits.Add(1)
			return c.serveTable(ctx, k, e)
		}
	}
	c.misses.Add(1)
	fresh, err := c.fetchTable(ctx, k, false)
	if err != nil {
		if e != nil && staleOK(err) {
			c.stale.Add(1)
			adapters.Note(ctx, "stale: metadata of %s fetched %s ago; BigQuery: %v", k, age(now, e.fetched), err)
			return c.serveTable(ctx, k, e)
		}
		return nil, err
	}
	if fresh.meta == nil {
		return nil, notFound(k)
	}
	return cloneTable(fresh.meta), nil
}

// CachedTable answers a GetTable from what the cache holds — in memory or
// in its store, of any age — and never waits for the wrapped adapter, nor
// for another process writing the store (the store then counts as not
// holding the table), so it returns at once (hovers and completion ask it
// on the editor's request path). ok is false when the cache knows nothing
// of the table (PrefetchTables fetches it for next time); a table known
// not to exist is ok with a NOT_FOUND error. An entry older than TTL is
// refreshed in the background, as GetTable does, unless its last refresh
// failed less than RetryAfter ago.
func (c *Cache) CachedTable(ctx context.Context, req *dataformpb.GetTableRequest) (meta *dataformpb.TableMetadata, ok bool, err error) {
	t := req.GetTarget()
	if t.GetSchema() == "" || t.GetName() == "" {
		return nil, false, nil
	}
	k := tkey{c.normDB(t.GetDatabase()), t.GetSchema(), t.GetName()}
	e, err := c.lookupTable(k, false)
	if err != nil || e == nil {
		return nil, false, nil
	}
	if age := c.opts.Now().Sub(e.fetched); age > c.opts.TTL {
		c.refreshTableLater(k, e)
		if age > c.opts.MaxStale {
			c.stale.Add(1)
		}
	}
	c.hits.Add(1)
	meta, err = c.serveTable(ctx, k, e)
	return meta, true, err
}

// PrefetchTables makes sure the metadata of targets is cached and fresh
// (younger than TTL): the others are fetched, up to Options.Workers at a
// time, each in one fetch shared with every other caller of that table
// (as GetTable's are). It returns when they are fetched or ctx ends, with
// the failures; a table that does not exist is an answer (cached as
// such), not a failure.
func (c *Cache) PrefetchTables(ctx context.Context, targets []*dataformpb.Target) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, c.opts.Workers)
	seen := map[tkey]bool{}
	for _, t := range targets {
		k := tkey{c.normDB(t.GetDatabase()), t.GetSchema(), t.GetName()}
		if k.schema == "" || k.name == "" || seen[k] {
			continue
		}
		seen[k] = true
		e, err := c.lookupTable(k, true)
		if err != nil {
			return err
		}
		if e != nil && c.opts.Now().Sub(e.fetched) <= c.opts.TTL {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			c.misses.Add(1)
			if _, err := c.fetchTable(ctx, k, false); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("prefetch %s: %w", k, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Cache) serveTable(ctx context.Context, k tkey, e *tableEntry) (*dataformpb.TableMetadata, error) {
	adapters.MarkCached(ctx)
	if f := e.failure; f != nil {
		adapters.Note(ctx, "stale: metadata of %s fetched %s ago; last refresh failed: %v", k, age(c.opts.Now(), e.fetched), f.err)
	}
	if e.meta == nil {
		return nil, notFound(k)
	}
	return cloneTable(e.meta), nil
}

func notFound(k tkey) error {
	return adapters.Errorf(adapters.NotFound, "table %s not found", k)
}

// lookupTable finds k in memory, else in the store. Unless wait, it does
// not wait while another process writes the store (a large listing takes
// a while), and then finds nothing: the editor's request path asks so.
func (c *Cache) lookupTable(k tkey, wait bool) (*tableEntry, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	e, ok := c.tables[k]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	return c.loadTables([]tkey{k}, wait)[k], nil
}

// loadTables reads keys from the store (in one transaction) into memory,
// where memory does not hold them already, and returns what it found:
// memory's entry for a key that is in both. Nothing is found when the
// store is off (metadata is fetched instead), or is being written and
// wait is false.
func (c *Cache) loadTables(keys []tkey, wait bool) map[tkey]*tableEntry {
	if c.store == nil {
		return nil
	}
	found, err := c.store.getTables(keys, wait)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	for k, e := range found {
		if cur, ok := c.tables[k]; ok {
			found[k] = cur // someone fetched it meanwhile
		} else {
			c.tables[k] = e
		}
	}
	c.mu.Unlock()
	return found
}

// storedTable is a fresh (younger than TTL) entry for k that another
// process wrote to the store since this one read it, or nil. Fetches ask
// it first, so that two processes do not both fetch what one already did.
func (c *Cache) storedTable(k tkey) *tableEntry {
	if c.store == nil {
		return nil
	}
	ep := c.epoch.Load()
	se, err := c.store.getTable(k)
	if err != nil || se == nil || c.opts.Now().Sub(se.fetched) > c.opts.TTL {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.epoch.Load() != ep {
		return nil // invalidated here since it was read
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.tables[k]; ok && !cur.fetched.Before(se.fetched) {
		return nil // not newer than what this process has
	}
	c.tables[k] = se
	return se
}

// fetchTable gets k from the wrapped adapter (one fetch for all concurrent
// callers) and stores the answer. Unless force is set, a fresh entry that
// another process stored meanwhile is the answer instead.
func (c *Cache) fetchTable(ctx context.Context, k tkey, force bool) (*tableEntry, error) {
	key := k.flightKey()
	if force {
		key += "\x00force" // not answered by a flight that may read the store
	}
	v, err := c.do(ctx, key, false, func(fctx context.Context) (any, error) {
		if !force {
			if e := c.storedTable(k); e != nil {
				return e, nil
			}
		}
		c.fetches.Add(1)
		ep := c.epoch.Load()
		m, err := c.inner.GetTable(fctx, &dataformpb.GetTableRequest{Target: k.target()})
		now := c.opts.Now()
		switch {
		case err == nil && m == nil, adapters.CodeOf(err) == adapters.NotFound:
			// Missing (a backend's nil answer means missing too): remember it.
			e := &tableEntry{fetched: now}
			c.putTables(ep, map[tkey]*tableEntry{k: e})
			return e, nil
		case err != nil:
			c.tableFailed(k, err, now)
			return nil, err
		}
		e := &tableEntry{meta: m, fetched: now}
		c.putTables(ep, map[tkey]*tableEntry{k: e})
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*tableEntry), nil
}

// putTables stores fetched table entries, unless an invalidation happened
// since the fetch began (epoch ep).
func (c *Cache) putTables(ep uint64, entries map[tkey]*tableEntry) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.epoch.Load() != ep {
		return
	}
	c.mu.Lock()
	for k, e := range entries {
		c.tables[k] = e
	}
	c.mu.Unlock()
	c.store.put(entries, lkey{}, nil)
}

// tableFailed remembers that refreshing k failed, for the stale note and to
// hold off the next background attempt.
func (c *Cache) tableFailed(k tkey, err error, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.tables[k]; ok {
		c.tables[k] = &tableEntry{meta: e.meta, fetched: e.fetched, failure: &failure{err: err, at: now}}
	}
}

// failedRecently reports whether a refresh failed less than RetryAfter ago.
func (c *Cache) failedRecently(f *failure, now time.Time) bool {
	return f != nil && now.Sub(f.at) < c.opts.RetryAfter
}

func (c *Cache) refreshTableLater(k tkey, e *tableEntry) {
	if c.failedRecently(e.failure, c.opts.Now()) {
		return
	}
	c.later(k.flightKey(), func(ctx context.Context) error {
		_, err := c.fetchTable(ctx, k, false)
		return err
	})
}

// --- ListTables -----------------------------------------------------------

func (c *Cache) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	k := lkey{c.normDB(req.GetDatabase()), req.GetSchema()}
	if k.db == "" {
		return c.inner.ListTables(ctx, req) // the backend decides (and words the error)
	}
	resp, e, err := c.lookupList(k)
	if err != nil {
		return nil, err
	}
	now := c.opts.Now()
	if resp != nil {
		age := now.Sub(e.fetched)
		if age <= c.opts.MaxStale || c.failedRecently(e.failure, now) {
			if age > c.opts.TTL {
				c.refreshListLater(k, e)
			}
			if age > c.opts.MaxStale {
				c.stale.Add(1)
			}
			c.hits.Add(1)
			return c.serveList(ctx, k, e, resp), nil
		}
	}
	c.misses.Add(1)
	fresh, err := c.fetchList(ctx, k, false)
	if err != nil {
		if resp != nil && staleOK(err) {
			c.stale.Add(1)
			adapters.Note(ctx, "stale: table list of %s.%s fetched %s ago; BigQuery: %v", k.db, k.schema, age(now, e.fetched), err)
			return c.serveList(ctx, k, e, resp), nil
		}
		return nil, err
	}
	out := &dataformpb.ListTablesResponse{Tables: make([]*dataformpb.TableMetadata, len(fresh.GetTables()))}
	for i, m := range fresh.GetTables() {
		out.Tables[i] = cloneTable(m)
	}
	return out, nil
}

func (c *Cache) serveList(ctx context.Context, k lkey, e *listEntry, resp *dataformpb.ListTablesResponse) *dataformpb.ListTablesResponse {
	adapters.MarkCached(ctx)
	if f := e.failure; f != nil {
		adapters.Note(ctx, "stale: table list of %s.%s fetched %s ago; last refresh failed: %v", k.db, k.schema, age(c.opts.Now(), e.fetched), f.err)
	}
	return resp
}

// lookupList assembles a cached listing from its table entries. It is a
// miss when the listing or any of its tables is not cached (a table was
// invalidated since).
func (c *Cache) lookupList(k lkey) (*dataformpb.ListTablesResponse, *listEntry, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, errClosed
	}
	e, ok := c.lists[k]
	c.mu.Unlock()
	if !ok && c.store != nil {
		if se, err := c.store.getList(k); err == nil && se != nil {
			c.mu.Lock()
			if cur, ok := c.lists[k]; ok {
				se = cur
			} else {
				c.lists[k] = se
			}
			c.mu.Unlock()
			e = se
		}
	}
	if e == nil {
		return nil, nil, nil
	}
	// One lock for the whole listing (it is on the hot path); tables not
	// in memory yet come from the store.
	entries := make([]*tableEntry, len(e.tables))
	c.mu.Lock()
	for i, tk := range e.tables {
		entries[i] = c.tables[tk]
	}
	c.mu.Unlock()
	var absent []tkey
	for i, te := range entries {
		if te == nil {
			absent = append(absent, e.tables[i])
		}
	}
	if len(absent) > 0 {
		loaded := c.loadTables(absent, true)
		for i, te := range entries {
			if te == nil {
				if entries[i] = loaded[e.tables[i]]; entries[i] == nil {
					return nil, nil, nil // invalidated since the listing
				}
			}
		}
	}
	resp := &dataformpb.ListTablesResponse{Tables: make([]*dataformpb.TableMetadata, 0, len(e.tables))}
	for _, te := range entries {
		if te.meta == nil {
			continue // found missing since the listing: leave it out
		}
		resp.Tables = append(resp.Tables, cloneTable(te.meta))
	}
	return resp, e, nil
}

// fetchList gets listing k from the wrapped adapter, as fetchTable does a
// table.
func (c *Cache) fetchList(ctx context.Context, k lkey, force bool) (*dataformpb.ListTablesResponse, error) {
	key := k.flightKey()
	if force {
		key += "\x00force"
	}
	v, err := c.do(ctx, key, false, func(fctx context.Context) (any, error) {
		if !force {
			if resp := c.storedList(k); resp != nil {
				return resp, nil
			}
		}
		c.fetches.Add(1)
		ep := c.epoch.Load()
		resp, err := c.inner.ListTables(fctx, &dataformpb.ListTablesRequest{Database: k.db, Schema: k.schema})
		now := c.opts.Now()
		if err != nil {
			c.listFailed(k, err, now)
			return nil, err
		}
		if resp == nil {
			resp = &dataformpb.ListTablesResponse{}
		}
		c.putList(ep, k, resp, now)
		return resp, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*dataformpb.ListTablesResponse), nil
}

// putList stores a listing and each of its tables, in one transaction,
// unless an invalidation happened since the fetch began (epoch ep).
func (c *Cache) putList(ep uint64, k lkey, resp *dataformpb.ListTablesResponse, now time.Time) {
	l := &listEntry{fetched: now}
	tables := make(map[tkey]*tableEntry, len(resp.GetTables()))
	for _, m := range resp.GetTables() {
		tk := tkeyOf(m.GetTarget())
		tk.db = c.normDB(tk.db)
		l.tables = append(l.tables, tk)
		tables[tk] = &tableEntry{meta: m, fetched: now}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.epoch.Load() != ep {
		return
	}
	c.mu.Lock()
	c.lists[k] = l
	for tk, e := range tables {
		c.tables[tk] = e
	}
	c.mu.Unlock()
	c.store.put(tables, k, l)
}

// storedList is a fresh listing of k, with every table in it, that another
// process wrote to the store since this one read it, or nil (as
// storedTable).
func (c *Cache) storedList(k lkey) *dataformpb.ListTablesResponse {
	if c.store == nil {
		return nil
	}
	ep := c.epoch.Load()
	l, tables, err := c.store.getListTables(k)
	if err != nil || l == nil || c.opts.Now().Sub(l.fetched) > c.opts.TTL {
		return nil
	}
	resp := &dataformpb.ListTablesResponse{Tables: make([]*dataformpb.TableMetadata, 0, len(l.tables))}
	for _, tk := range l.tables {
		e, ok := tables[tk]
		if !ok {
			return nil // a table was invalidated since the listing
		}
		if e.meta != nil {
			resp.Tables = append(resp.Tables, e.meta)
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.epoch.Load() != ep {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.lists[k]; ok && !cur.fetched.Before(l.fetched) {
		return nil
	}
	c.lists[k] = l
	for tk, e := range tables {
		if cur, ok := c.tables[tk]; !ok || cur.fetched.Before(e.fetched) {
			c.tables[tk] = e
		}
	}
	return resp
}

func (c *Cache) listFailed(k lkey, err error, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.lists[k]; ok {
		c.lists[k] = &listEntry{tables: e.tables, fetched: e.fetched, failure: &failure{err: err, at: now}}
	}
}

func (c *Cache) refreshListLater(k lkey, e *listEntry) {
	if c.failedRecently(e.failure, c.opts.Now()) {
		return
	}
	c.later(k.flightKey(), func(ctx context.Context) error {
		_, err := c.fetchList(ctx, k, false)
		return err
	})
}

// --- DeleteTable, Invalidate ----------------------------------------------

// DeleteTable deletes through the wrapped adapter and forgets the table when
// the delete ran, or may have run.
func (c *Cache) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	err := c.inner.DeleteTable(ctx, req)
	switch adapters.CodeOf(err) {
	case adapters.InvalidArgument, adapters.PermissionDenied, adapters.Unauthenticated, adapters.Unimplemented, adapters.FailedPrecondition:
		// Refused before anything happened.
	default:
		if t := req.GetTarget(); t.GetSchema() != "" && t.GetName() != "" {
			c.Invalidate(t)
		}
	}
	return err
}

// Invalidate forgets what the cache knows about target (a run changed or
// dropped it): its metadata, its dataset's listings, and every kept query
// result (any of them may have read it).
func (c *Cache) Invalidate(target *dataformpb.Target) {
	k := tkey{c.normDB(target.GetDatabase()), target.GetSchema(), target.GetName()}
	lists := []lkey{{k.db, k.schema}, {k.db, ""}}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.epoch.Add(1)
	c.mu.Lock()
	delete(c.tables, k)
	for _, l := range lists {
		delete(c.lists, l)
	}
	c.mu.Unlock()
	c.queries.clear()
	c.verdicts.clear()
	c.store.remove([]tkey{k}, lists)
}

// Clear forgets everything, in memory and on disk.
func (c *Cache) Clear() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.epoch.Add(1)
	c.mu.Lock()
	c.tables = map[tkey]*tableEntry{}
	c.lists = map[lkey]*listEntry{}
	c.mu.Unlock()
	c.queries.clear()
	c.verdicts.clear()
	if c.store == nil {
		return nil
	}
	if err := c.store.clear(); err != nil && !errors.Is(err, errStoreOff) {
		return fmt.Errorf("clear metadata cache %s: %w", c.store.path, err)
	}
	return nil
}

// --- Refresh, Prefetch ----------------------------------------------------

// Scope selects cache entries: everything (zero value), one project
// (Database), one dataset (Database and Schema) or one table (all three).
type Scope struct {
	Database, Schema, Name string
}

func (s Scope) String() string {
	switch {
	case s.Database == "" && s.Schema == "" && s.Name == "":
		return "everything"
	case s.Name != "":
		return adapters.TargetString(&dataformpb.Target{Database: s.Database, Schema: s.Schema, Name: s.Name})
	case s.Schema != "":
		return s.Database + "." + s.Schema
	}
	return s.Database
}

// Refresh re-fetches the cached entries in scope now: their listings (which
// also refresh the tables listed) and then the tables no refreshed listing
// covered. A table or dataset scope is fetched even when it is not cached
// yet. It returns how many entries it fetched and every failure.
func (c *Cache) Refresh(ctx context.Context, scope Scope) (int, error) {
	if scope.Database != "" || scope.Schema != "" || scope.Name != "" {
		scope.Database = c.normDB(scope.Database)
	}
	var (
		lists  []lkey
		tables []tkey
	)
	switch {
	case scope.Name != "":
		tables = []tkey{{scope.Database, scope.Schema, scope.Name}}
	case scope.Schema != "":
		lists = []lkey{{scope.Database, scope.Schema}}
	default:
		ls, ts, err := c.keys()
		if err != nil {
			return 0, err
		}
		for _, l := range ls {
			if scope.Database == "" || l.db == scope.Database {
				lists = append(lists, l)
			}
		}
		for _, t := range ts {
			if scope.Database == "" || t.db == scope.Database {
				tables = append(tables, t)
			}
		}
	}
	n := 0
	var errs []error
	covered := map[lkey]bool{}
	for _, l := range lists {
		if _, err := c.fetchList(ctx, l, true); err != nil {
			errs = append(errs, fmt.Errorf("refresh %s.%s: %w", l.db, l.schema, err))
			continue
		}
		n++
		covered[l] = true
	}
	for _, t := range tables {
		if covered[lkey{t.db, t.schema}] || covered[lkey{t.db, ""}] {
			continue
		}
		if _, err := c.fetchTable(ctx, t, true); err != nil {
			errs = append(errs, fmt.Errorf("refresh %s: %w", t, err))
			continue
		}
		n++
	}
	c.refreshes.Add(uint64(n))
	return n, errors.Join(errs...)
}

// keys lists every cached listing and table, in memory and on disk.
func (c *Cache) keys() ([]lkey, []tkey, error) {
	ls, ts := map[lkey]bool{}, map[tkey]bool{}
	c.mu.Lock()
	for k := range c.lists {
		ls[k] = true
	}
	for k := range c.tables {
		ts[k] = true
	}
	c.mu.Unlock()
	if c.store != nil {
		c.store.scan(func(s storedKey) {
			if s.list != nil {
				ls[*s.list] = true
			} else {
				ts[*s.table] = true
			}
		})
	}
	lout := make([]lkey, 0, len(ls))
	for k := range ls {
		lout = append(lout, k)
	}
	tout := make([]tkey, 0, len(ts))
	for k := range ts {
		tout = append(tout, k)
	}
	slices.SortFunc(lout, func(a, b lkey) int { return strings.Compare(a.db+"\x00"+a.schema, b.db+"\x00"+b.schema) })
	slices.SortFunc(tout, func(a, b tkey) int { return strings.Compare(a.String(), b.String()) })
	return lout, tout, nil
}

// Dataset names a BigQuery dataset.
type Dataset struct {
	Database, Schema string
}

// Prefetch makes sure the listings of datasets (and so the metadata of
// their tables) are cached and fresh, fetching up to Options.Workers at a
// time. It is meant to run in the background when a project opens, for the
// datasets its graph references.
func (c *Cache) Prefetch(ctx context.Context, datasets []Dataset) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, c.opts.Workers)
	seen := map[lkey]bool{}
	for _, d := range datasets {
		k := lkey{c.normDB(d.Database), d.Schema}
		if k.db == "" || k.schema == "" || seen[k] {
			continue
		}
		seen[k] = true
		if resp, e, err := c.lookupList(k); err == nil && resp != nil && c.opts.Now().Sub(e.fetched) <= c.opts.TTL {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := c.fetchList(ctx, k, false); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("prefetch %s.%s: %w", k.db, k.schema, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// --- Execute --------------------------------------------------------------

// Execute answers read-only queries and dry runs from the query cache when
// it can; every other statement goes straight to the wrapped adapter.
func (c *Cache) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	if !c.keepable(ctx, req) {
		return c.inner.Execute(ctx, req)
	}
	key, err := queryKey(req)
	if err != nil {
		return c.inner.Execute(ctx, req)
	}
	if resp, ok := c.queries.get(key, c.opts.Now()); ok {
		c.hits.Add(1)
		adapters.MarkCached(ctx)
		return proto.Clone(resp).(*dataformpb.ExecuteResponse), nil
	}
	c.misses.Add(1)
	// A real query is a job BigQuery bills: once nobody waits for its
	// answer any more, it is called off (the adapter cancels the job)
	// rather than run on for the cache. A dry run costs nothing and its
	// verdict serves the next check.
	abandon := !req.GetBigQueryOptions().GetDryRun()
	v, err := c.do(ctx, "q\x00"+key, abandon, func(fctx context.Context) (any, error) {
		// Looked up again: a flight for the same query may have ended, and
		// kept its answer, between the lookup above and this flight; a
		// query must not run twice for that.
		if resp, ok := c.queries.get(key, c.opts.Now()); ok {
			return resp, nil
		}
		c.fetches.Add(1)
		ep := c.epoch.Load()
		resp, err := c.inner.Execute(fctx, req)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			resp = &dataformpb.ExecuteResponse{}
		}
		c.wmu.Lock()
		if c.epoch.Load() == ep {
			c.queries.put(key, resp, c.opts.Now().Add(c.opts.QueryTTL))
		}
		c.wmu.Unlock()
		return resp, nil
	})
	if err != nil {
		return nil, err
	}
	return proto.Clone(v.(*dataformpb.ExecuteResponse)).(*dataformpb.ExecuteResponse), nil
}

// keepable: the result of req may be kept and shared — a dry run, or a
// statement Options.ReadOnly says only reads.
func (c *Cache) keepable(ctx context.Context, req *dataformpb.ExecuteRequest) bool {
	if req.GetBigQueryOptions().GetDryRun() {
		return true
	}
	return c.opts.ReadOnly != nil && c.opts.ReadOnly(ctx, req.GetStatement())
}

// CachedExecute implements adapters.QueryCache: the kept result of req,
// if there is one. Nothing is fetched.
func (c *Cache) CachedExecute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, bool) {
	if !c.keepable(ctx, req) {
		return nil, false
	}
	key, err := queryKey(req)
	if err != nil {
		return nil, false
	}
	resp, ok := c.queries.get(key, c.opts.Now())
	if !ok {
		return nil, false
	}
	c.hits.Add(1)
	adapters.MarkCached(ctx)
	return proto.Clone(resp).(*dataformpb.ExecuteResponse), true
}

// Verify implements adapters.Verifier when the wrapped adapter does: its
// verdicts are kept like query results (concurrent askers share one dry
// run). Without a verifying backend it answers UNIMPLEMENTED.
func (c *Cache) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	ver, ok := c.inner.(adapters.Verifier)
	if !ok {
		return nil, adapters.Errorf(adapters.Unimplemented, "this backend cannot verify statements")
	}
	key, err := queryKey(req)
	if err != nil {
		return ver.Verify(ctx, req)
	}
	if v, ok := c.verdicts.get(key, c.opts.Now()); ok {
		c.hits.Add(1)
		adapters.MarkCached(ctx)
		return cloneVerdict(v), nil
	}
	c.misses.Add(1)
	v, err := c.do(ctx, "v\x00"+key, false, func(fctx context.Context) (any, error) {
		if v, ok := c.verdicts.get(key, c.opts.Now()); ok { // as in Execute
			return v, nil
		}
		c.fetches.Add(1)
		ep := c.epoch.Load()
		v, err := ver.Verify(fctx, req)
		if err != nil {
			return nil, err
		}
		c.wmu.Lock()
		if c.epoch.Load() == ep {
			c.verdicts.put(key, v, c.opts.Now().Add(c.opts.QueryTTL))
		}
		c.wmu.Unlock()
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	return cloneVerdict(v.(*adapters.Verdict)), nil
}

func cloneVerdict(v *adapters.Verdict) *adapters.Verdict {
	out := *v
	out.Routines = slices.Clone(v.Routines)
	out.Tables = slices.Clone(v.Tables)
	if v.Response != nil {
		out.Response = proto.Clone(v.Response).(*dataformpb.ExecuteResponse)
	}
	return &out
}

// queryKey identifies a request by everything in it: two requests that
// differ in any parameter, limit or option are different queries.
func queryKey(req *dataformpb.ExecuteRequest) (string, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), nil
}

// --- fetch machinery ------------------------------------------------------

// flight is one fetch that every concurrent caller of its key waits for.
type flight struct {
	done    chan struct{}
	val     any
	err     error
	waiters int // callers that joined, under Cache.mu (tests watch it)
	// left counts the waiters that gave up, and cancel ends the fetch:
	// an abandonable flight is cancelled when the last waiter leaves.
	left        int
	abandonable bool
	cancel      context.CancelFunc
}

// do runs fn once for all concurrent callers of key, in a goroutine the
// Cache owns. fn gets a context that keeps ctx's values (so the first
// caller's call record hears the backend's notes) but not its cancellation:
// a caller that gives up does not fail the others. Close cancels it, and
// Options.FetchTimeout bounds it. An abandonable flight (a query job) is
// cancelled as well once every caller waiting for it has given up — the
// last one waits for it to end, and gets its error with its own code —
// and callers that come after that start a flight of their own.
func (c *Cache) do(ctx context.Context, key string, abandonable bool, fn func(context.Context) (any, error)) (any, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errClosed
	}
	f, ok := c.flights[key]
	if !ok {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.FetchTimeout)
		f = &flight{done: make(chan struct{}), abandonable: abandonable, cancel: cancel}
		c.flights[key] = f
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			stop := context.AfterFunc(c.ctx, cancel)
			defer func() {
				stop()
				cancel()
			}()
			func() {
				defer func() {
					if p := recover(); p != nil {
						f.err = adapters.Errorf(adapters.Internal, "adapter panicked: %v", p)
					}
				}()
				f.val, f.err = fn(fctx)
			}()
			c.mu.Lock()
			if c.flights[key] == f { // an abandoned flight is no longer there
				delete(c.flights, key)
			}
			c.mu.Unlock()
			close(f.done)
		}()
	}
	f.waiters++
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		c.mu.Lock()
		f.left++
		last := f.abandonable && f.left == f.waiters
		if last {
			f.cancel()
			if c.flights[key] == f {
				delete(c.flights, key)
			}
		}
		c.mu.Unlock()
		err := adapters.AsError(ctx.Err())
		if last {
			// Called off for this caller: it waits for the wrapped
			// adapter to wind the fetch up (for BigQuery, to cancel the
			// job, within its own bound), so that it hears how that went
			// and nothing is left running when it returns.
			<-f.done
			if f.err != nil {
				err = &adapters.Error{Code: err.Code, Message: adapters.AsError(f.err).Message}
			}
		}
		return nil, err
	}
}

// later runs a background refresh for key unless one is running, at most
// Options.Workers at a time. Failures are logged (and remembered on the
// entry by the fetch itself).
func (c *Cache) later(key string, refresh func(context.Context) error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	if _, busy := c.flights[key]; busy || c.pending[key] {
		c.mu.Unlock()
		return
	}
	c.pending[key] = true
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			delete(c.pending, key)
			c.mu.Unlock()
		}()
		select {
		case c.sem <- struct{}{}:
		case <-c.ctx.Done():
			return
		}
		defer func() { <-c.sem }()
		if err := refresh(c.ctx); err != nil && c.ctx.Err() == nil {
			c.opts.Log("metadata cache: background refresh failed: %v", err)
		} else {
			c.refreshes.Add(1)
		}
	}()
}

// staleOK reports whether err means "BigQuery could not answer now", when an
// old value is better than none.
func staleOK(err error) bool {
	switch adapters.CodeOf(err) {
	// Refused credentials too: what BigQuery said before they expired
	// is better than nothing, and the caller is told it is stale.
	case adapters.Unavailable, adapters.DeadlineExceeded, adapters.ResourceExhausted, adapters.Unauthenticated:
		return true
	}
	return false
}

func age(now, then time.Time) time.Duration {
	return now.Sub(then).Round(time.Second)
}

// unreachable is the backend of an offline cache.
type unreachable struct{ adapters.UnimplementedAdapter }

func (unreachable) err() error {
	return adapters.Errorf(adapters.Unavailable, "offline: no BigQuery connection; only cached metadata is available")
}

func (u unreachable) Execute(context.Context, *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	return nil, u.err()
}

func (u unreachable) ListTables(context.Context, *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	return nil, u.err()
}

func (u unreachable) GetTable(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	return nil, u.err()
}

func (u unreachable) DeleteTable(context.Context, *dataformpb.DeleteTableRequest) error {
	return u.err()
}

// DefaultPath is where dfd keeps the metadata cache of one BigQuery
// backend: <user cache dir>/dfd/metadata/<id>.db, with id made of the
// parts given (e.g. the endpoint and the project), so an emulator's metadata
// and production's never mix.
func DefaultPath(parts ...string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("metadata cache: %w", err)
	}
	id := unsafeName.ReplaceAllString(strings.Join(parts, "-"), "_")
	id = strings.Trim(id, "_-.")
	if id == "" {
		id = "default"
	}
	if len(id) > 100 {
		sum := sha256.Sum256([]byte(id))
		id = fmt.Sprintf("%s-%x", id[:80], sum[:6])
	}
	return filepath.Join(dir, "dfd", "metadata", id+".db"), nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)
