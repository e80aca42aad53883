package cache

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// backend is a fake BigQuery: a set of tables, call counters, and a switch
// to make it fail or stall.
type backend struct {
	mu     sync.Mutex
	tables map[tkey]*dataformpb.TableMetadata
	fail   error         // every call fails with this when set
	gate   chan struct{} // calls wait for it when set

	gets, lists, execs, deletes atomic.Int64
}

func newBackend(n int) *backend {
	b := &backend{tables: map[tkey]*dataformpb.TableMetadata{}}
	for i := range n {
		b.add("p", "ds", fmt.Sprintf("t%02d", i), "v1")
	}
	return b
}

func (b *backend) add(db, schema, name, desc string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tables[tkey{db, schema, name}] = &dataformpb.TableMetadata{
		Target:      &dataformpb.Target{Database: db, Schema: schema, Name: name},
		Type:        dataformpb.TableMetadata_TABLE,
		Description: desc,
		Fields: []*dataformpb.Field{
			{Name: "id", Type: &dataformpb.Field_Primitive_{Primitive: dataformpb.Field_INTEGER}},
			{Name: "tags", Flags: []dataformpb.Field_Flag{dataformpb.Field_REPEATED}, Type: &dataformpb.Field_Primitive_{Primitive: dataformpb.Field_STRING}},
		},
	}
}

func (b *backend) setFail(err error) {
	b.mu.Lock()
	b.fail = err
	b.mu.Unlock()
}

func (b *backend) wait(ctx context.Context) error {
	b.mu.Lock()
	gate, fail := b.gate, b.fail
	b.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fail
}

func (b *backend) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	b.gets.Add(1)
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.tables[tkeyOf(req.GetTarget())]
	if !ok {
		return nil, adapters.Errorf(adapters.NotFound, "no table %s", adapters.TargetString(req.GetTarget()))
	}
	return proto.Clone(m).(*dataformpb.TableMetadata), nil
}

func (b *backend) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	b.lists.Add(1)
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := &dataformpb.ListTablesResponse{}
	for k, m := range b.tables {
		if k.db == req.GetDatabase() && (req.GetSchema() == "" || k.schema == req.GetSchema()) {
			out.Tables = append(out.Tables, proto.Clone(m).(*dataformpb.TableMetadata))
		}
	}
	slices.SortFunc(out.Tables, func(a, b *dataformpb.TableMetadata) int {
		return strings.Compare(adapters.TargetString(a.GetTarget()), adapters.TargetString(b.GetTarget()))
	})
	return out, nil
}

func (b *backend) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	b.execs.Add(1)
	if err := b.wait(ctx); err != nil {
		return nil, err
	}
	return &dataformpb.ExecuteResponse{Errors: []string{fmt.Sprintf("run %d", b.execs.Load())}}, nil
}

func (b *backend) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	b.deletes.Add(1)
	if err := b.wait(ctx); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tables, tkeyOf(req.GetTarget()))
	return nil
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func target(name string) *dataformpb.Target {
	return &dataformpb.Target{Database: "p", Schema: "ds", Name: name}
}

func get(t *testing.T, c adapters.DbAdapter, name string) (*adapters.Call, *dataformpb.TableMetadata, error) {
	t.Helper()
	rec := adapters.NewRecorder(c)
	m, err := rec.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target(name)})
	calls := rec.Calls()
	return &calls[0], m, err
}

func openTest(t *testing.T, b adapters.DbAdapter, opts Options) *Cache {
	t.Helper()
	c := Open(b, opts)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func TestGetTableHitMissTTL(t *testing.T) {
	b := newBackend(3)
	clk := newClock()
	c := openTest(t, b, Options{TTL: time.Minute, MaxStale: time.Hour, Now: clk.Now})

	call, m, err := get(t, c, "t01")
	if err != nil || m.GetDescription() != "v1" || call.Cached {
		t.Fatalf("first get: %v %v %+v", m, err, call)
	}
	call, m, err = get(t, c, "t01")
	if err != nil || m.GetDescription() != "v1" || !call.Cached || b.gets.Load() != 1 {
		t.Fatalf("second get: %v %v %+v gets=%d", m, err, call, b.gets.Load())
	}
	// A returned message belongs to the caller.
	m.Description = "scribbled"
	if _, m, _ := get(t, c, "t01"); m.GetDescription() != "v1" {
		t.Fatal("cache entry changed through a returned message")
	}

	// Older than TTL: served at once, refreshed in the background.
	b.add("p", "ds", "t01", "v2")
	clk.Add(2 * time.Minute)
	call, m, _ = get(t, c, "t01")
	if m.GetDescription() != "v1" || !call.Cached {
		t.Fatalf("stale-while-revalidate served %v cached=%v", m.GetDescription(), call.Cached)
	}
	waitFor(t, func() bool { _, m, _ := get(t, c, "t01"); return m.GetDescription() == "v2" })
	if n := b.gets.Load(); n != 2 {
		t.Errorf("backend gets = %d, want 2", n)
	}

	// Older than MaxStale: fetched before answering.
	b.add("p", "ds", "t01", "v3")
	clk.Add(2 * time.Hour)
	call, m, _ = get(t, c, "t01")
	if m.GetDescription() != "v3" || call.Cached {
		t.Fatalf("expired entry served %v cached=%v", m.GetDescription(), call.Cached)
	}
}

func TestGetTableNotFoundIsCached(t *testing.T) {
	b := newBackend(1)
	c := openTest(t, b, Options{})
	for i := range 3 {
		call, _, err := get(t, c, "nope")
		if adapters.CodeOf(err) != adapters.NotFound {
			t.Fatalf("err = %v", err)
		}
		if call.Cached != (i > 0) {
			t.Errorf("call %d cached = %v", i, call.Cached)
		}
	}
	if b.gets.Load() != 1 {
		t.Errorf("gets = %d", b.gets.Load())
	}
	// A run creates it: Invalidate makes the next call look again.
	b.add("p", "ds", "nope", "now here")
	c.Invalidate(target("nope"))
	if _, m, err := get(t, c, "nope"); err != nil || m.GetDescription() != "now here" {
		t.Errorf("after invalidate: %v %v", m, err)
	}
}

func TestStaleOnError(t *testing.T) {
	b := newBackend(2)
	clk := newClock()
	c := openTest(t, b, Options{TTL: time.Minute, MaxStale: time.Hour, Now: clk.Now})
	get(t, c, "t00")
	c.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})

	b.setFail(adapters.Errorf(adapters.Unavailable, "connection refused"))
	clk.Add(3 * time.Hour) // past MaxStale: a synchronous refresh is needed, and fails
	call, m, err := get(t, c, "t00")
	if err != nil || m.GetDescription() != "v1" || !call.Cached {
		t.Fatalf("stale get: %v %v %+v", m, err, call)
	}
	if len(call.Notes) != 1 || !strings.HasPrefix(call.Notes[0], "stale: metadata of p.ds.t00 fetched 3h0m0s ago; BigQuery: UNAVAILABLE: connection refused") {
		t.Errorf("notes = %q", call.Notes)
	}
	// Within RetryAfter of that failure, the stale value is served at once.
	gets := b.gets.Load()
	call, m, err = get(t, c, "t00")
	if err != nil || m.GetDescription() != "v1" || b.gets.Load() != gets || len(call.Notes) != 1 || !strings.Contains(call.Notes[0], "last refresh failed: UNAVAILABLE") {
		t.Errorf("second stale get: %v %+v, backend asked %d times", err, call, b.gets.Load()-gets)
	}
	rec := adapters.NewRecorder(c)
	resp, err := rec.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	if err != nil || len(resp.GetTables()) != 2 || !rec.Calls()[0].Cached || !strings.HasPrefix(rec.Calls()[0].Notes[0], "stale: table list of p.ds") {
		t.Errorf("stale list: %v %v %+v", resp, err, rec.Calls())
	}

	// Errors that are answers, not outages, are not papered over.
	clk.Add(time.Minute) // past RetryAfter: BigQuery is asked again
	b.setFail(adapters.Errorf(adapters.PermissionDenied, "access denied"))
	if _, _, err := get(t, c, "t00"); adapters.CodeOf(err) != adapters.PermissionDenied {
		t.Errorf("err = %v", err)
	}
	// Refused credentials (expired, revoked) are an outage of who we are,
	// not an answer about the table: the stale value, with what BigQuery said.
	clk.Add(time.Minute)
	b.setFail(adapters.Errorf(adapters.Unauthenticated, "Request had invalid authentication credentials (HTTP 401)"))
	call, m, err = get(t, c, "t00")
	if err != nil || m.GetDescription() != "v1" || len(call.Notes) == 0 || !strings.Contains(call.Notes[0], "BigQuery: UNAUTHENTICATED: Request had invalid") {
		t.Errorf("stale get with refused credentials: %v %+v", err, call)
	}
	// Nothing cached, backend down: the error.
	b.setFail(adapters.Errorf(adapters.Unavailable, "down"))
	if _, _, err := get(t, c, "t99"); adapters.CodeOf(err) != adapters.Unavailable {
		t.Errorf("err = %v", err)
	}
	if s := c.Stats(); s.Stale != 4 {
		t.Errorf("stale = %d", s.Stale)
	}
}

func TestBackgroundRefreshFailureMarksStale(t *testing.T) {
	b := newBackend(1)
	clk := newClock()
	c := openTest(t, b, Options{TTL: time.Minute, RetryAfter: time.Minute, Now: clk.Now})
	get(t, c, "t00")
	b.setFail(adapters.Errorf(adapters.DeadlineExceeded, "slow"))
	clk.Add(2 * time.Minute)
	get(t, c, "t00") // triggers a background refresh that fails
	waitFor(t, func() bool {
		call, _, _ := get(t, c, "t00")
		return len(call.Notes) > 0 && strings.Contains(call.Notes[0], "last refresh failed: DEADLINE_EXCEEDED: slow")
	})
	// Within RetryAfter, hits do not hammer the failing backend.
	n := b.gets.Load()
	for range 10 {
		get(t, c, "t00")
	}
	time.Sleep(20 * time.Millisecond)
	if b.gets.Load() != n {
		t.Errorf("gets went from %d to %d within RetryAfter", n, b.gets.Load())
	}
}

func TestSingleFlight(t *testing.T) {
	b := newBackend(5)
	b.gate = make(chan struct{})
	c := openTest(t, b, Options{})
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for range n {
		wg.Go(func() {
			_, err := c.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target("t03")})
			errs <- err
		})
		wg.Go(func() {
			_, err := c.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
			errs <- err
		})
	}
	// Every caller must have joined a fetch before it may finish: a late
	// caller would find the fetch over and legitimately start its own.
	waitFor(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		g := c.flights[tkey{db: "p", schema: "ds", name: "t03"}.flightKey()]
		l := c.flights[lkey{db: "p", schema: "ds"}.flightKey()]
		return g != nil && l != nil && g.waiters == n && l.waiters == n
	})
	close(b.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b.gets.Load() != 1 || b.lists.Load() != 1 {
		t.Errorf("gets = %d, lists = %d; want 1 and 1", b.gets.Load(), b.lists.Load())
	}
}

// A caller that gives up does not fail the fetch the others wait for.
func TestSingleFlightCallerCancels(t *testing.T) {
	b := newBackend(1)
	b.gate = make(chan struct{})
	c := openTest(t, b, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.GetTable(ctx, &dataformpb.GetTableRequest{Target: target("t00")})
		done <- err
	}()
	waitFor(t, func() bool { return b.gets.Load() == 1 })
	other := make(chan error)
	go func() {
		_, err := c.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target("t00")})
		other <- err
	}()
	// Cancel only once the other caller has joined the fetch.
	waitFor(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		f := c.flights[tkey{db: "p", schema: "ds", name: "t00"}.flightKey()]
		return f != nil && f.waiters == 2
	})
	cancel()
	if err := <-done; adapters.CodeOf(err) != adapters.Canceled {
		t.Errorf("cancelled caller: %v", err)
	}
	close(b.gate)
	if err := <-other; err != nil {
		t.Errorf("other caller: %v", err)
	}
	if b.gets.Load() != 1 {
		t.Errorf("gets = %d", b.gets.Load())
	}
}

func TestListTablesComposesFromTables(t *testing.T) {
	b := newBackend(3)
	c := openTest(t, b, Options{DefaultDatabase: "p"})
	ctx := context.Background()
	resp, err := c.ListTables(ctx, &dataformpb.ListTablesRequest{Schema: "ds"}) // default database
	if err != nil || len(resp.GetTables()) != 3 {
		t.Fatalf("%v %v", resp, err)
	}
	// Tables listed are cached for GetTable too.
	if call, _, err := get(t, c, "t02"); err != nil || !call.Cached || b.gets.Load() != 0 {
		t.Errorf("get after list: cached=%v gets=%d err=%v", call.Cached, b.gets.Load(), err)
	}
	// Invalidating one table makes the listing a miss (a run may have
	// created or dropped tables in the dataset).
	b.add("p", "ds", "t09", "new")
	c.Invalidate(target("t00"))
	resp, err = c.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	if err != nil || len(resp.GetTables()) != 4 || b.lists.Load() != 2 {
		t.Errorf("after invalidate: %d tables, %d lists, %v", len(resp.GetTables()), b.lists.Load(), err)
	}
}

func TestDeleteTableInvalidates(t *testing.T) {
	b := newBackend(2)
	c := openTest(t, b, Options{})
	get(t, c, "t00")
	if err := c.DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: target("t00")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := get(t, c, "t00"); adapters.CodeOf(err) != adapters.NotFound {
		t.Errorf("after delete: %v", err)
	}
	// A refused delete (the preview policy, permissions) keeps the entry.
	get(t, c, "t01")
	b.setFail(adapters.Errorf(adapters.PermissionDenied, "no"))
	c.DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: target("t01")})
	b.setFail(nil)
	if call, _, err := get(t, c, "t01"); err != nil || !call.Cached {
		t.Errorf("after refused delete: cached=%v err=%v", call.Cached, err)
	}
	// An outcome-unknown failure forgets it.
	b.setFail(adapters.Errorf(adapters.Unavailable, "reset"))
	c.DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: target("t01")})
	b.setFail(nil)
	if call, _, _ := get(t, c, "t01"); call.Cached {
		t.Error("entry kept after a delete with unknown outcome")
	}
}

// A fetch that began before an invalidation must not store its older answer
// after it.
func TestInvalidateDuringFetch(t *testing.T) {
	b := newBackend(1)
	b.gate = make(chan struct{})
	c := openTest(t, b, Options{})
	done := make(chan struct{})
	go func() {
		c.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target("t00")})
		close(done)
	}()
	waitFor(t, func() bool { return b.gets.Load() == 1 })
	c.Invalidate(target("t00"))
	close(b.gate)
	<-done
	if call, _, _ := get(t, c, "t00"); call.Cached {
		t.Error("answer fetched before the invalidation was cached")
	}
}

func TestRefreshAndPrefetch(t *testing.T) {
	b := newBackend(3)
	b.add("p", "other", "x", "v1")
	c := openTest(t, b, Options{TTL: time.Hour})
	ctx := context.Background()
	if err := c.Prefetch(ctx, []Dataset{{"p", "ds"}, {"p", "other"}, {"p", "ds"}}); err != nil {
		t.Fatal(err)
	}
	if b.lists.Load() != 2 {
		t.Errorf("lists = %d", b.lists.Load())
	}
	// Fresh: nothing to do.
	c.Prefetch(ctx, []Dataset{{"p", "ds"}})
	if b.lists.Load() != 2 {
		t.Errorf("lists = %d after a fresh prefetch", b.lists.Load())
	}
	// A cached "missing" in a dataset never listed.
	if _, err := c.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "p", Schema: "unlisted", Name: "zz"}}); adapters.CodeOf(err) != adapters.NotFound {
		t.Fatal(err)
	}
	b.add("p", "ds", "t00", "v2")
	n, err := c.Refresh(ctx, Scope{})
	if err != nil || n != 3 { // 2 listings + the table no listing covers
		t.Errorf("refresh all: n=%d err=%v", n, err)
	}
	if _, m, _ := get(t, c, "t00"); m.GetDescription() != "v2" {
		t.Errorf("t00 = %v after refresh", m.GetDescription())
	}
	n, err = c.Refresh(ctx, Scope{Database: "p", Schema: "ds", Name: "t01"})
	if err != nil || n != 1 {
		t.Errorf("refresh one: n=%d err=%v", n, err)
	}
	b.setFail(adapters.Errorf(adapters.Unavailable, "down"))
	if _, err := c.Refresh(ctx, Scope{Database: "p"}); err == nil || !strings.Contains(err.Error(), "refresh p.ds: UNAVAILABLE: down") {
		t.Errorf("refresh while down: %v", err)
	}
}

// selectsOnly stands in for gsql.IsReadOnlyQuery in unit tests.
func selectsOnly(_ context.Context, stmt string) bool { return strings.HasPrefix(stmt, "SELECT") }

func TestExecuteCache(t *testing.T) {
	b := newBackend(0)
	clk := newClock()
	c := openTest(t, b, Options{QueryTTL: time.Minute, Now: clk.Now, ReadOnly: selectsOnly})
	ctx := context.Background()
	exec := func(stmt string, dry bool, rowLimit int64) (*adapters.Call, *dataformpb.ExecuteResponse) {
		rec := adapters.NewRecorder(c)
		resp, err := rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: stmt, RowLimit: rowLimit,
			BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: dry}})
		if err != nil {
			t.Fatal(err)
		}
		return &rec.Calls()[0], resp
	}
	exec("SELECT 1", false, 0)
	if call, resp := exec("SELECT 1", false, 0); !call.Cached || resp.GetErrors()[0] != "run 1" {
		t.Errorf("repeat select: %+v %v", call, resp)
	}
	if call, _ := exec("SELECT 1", false, 5); call.Cached {
		t.Error("a different row limit was served from the cache")
	}
	exec("INSERT INTO t VALUES (1)", false, 0)
	if call, _ := exec("INSERT INTO t VALUES (1)", false, 0); call.Cached {
		t.Error("an INSERT was served from the cache")
	}
	exec("INSERT INTO t VALUES (1)", true, 0)
	if call, _ := exec("INSERT INTO t VALUES (1)", true, 0); !call.Cached {
		t.Error("a dry run was not cached")
	}
	clk.Add(2 * time.Minute)
	if call, _ := exec("SELECT 1", false, 0); call.Cached {
		t.Error("expired query result served")
	}
	if b.execs.Load() != 6 {
		t.Errorf("execs = %d", b.execs.Load())
	}
}

func TestExecuteCacheWithoutClassifier(t *testing.T) {
	b := newBackend(0)
	c := openTest(t, b, Options{QueryTTL: time.Minute})
	ctx := context.Background()
	for range 2 {
		if _, err := c.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1"}); err != nil {
			t.Fatal(err)
		}
	}
	if b.execs.Load() != 2 {
		t.Errorf("without Options.ReadOnly a real execution was kept: execs = %d", b.execs.Load())
	}
	if _, ok := c.CachedExecute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1"}); ok {
		t.Error("CachedExecute answered without Options.ReadOnly")
	}
}

func TestCachedExecute(t *testing.T) {
	b := newBackend(0)
	c := openTest(t, b, Options{QueryTTL: time.Minute, ReadOnly: selectsOnly})
	ctx := context.Background()
	req := &dataformpb.ExecuteRequest{Statement: "SELECT 1"}
	if _, ok := c.CachedExecute(ctx, req); ok {
		t.Fatal("answered before anything was kept")
	}
	if b.execs.Load() != 0 {
		t.Fatal("CachedExecute reached the backend")
	}
	c.Execute(ctx, req)
	resp, ok := c.CachedExecute(ctx, req)
	if !ok || resp.GetErrors()[0] != "run 1" || b.execs.Load() != 1 {
		t.Fatalf("kept answer: %v %v, execs %d", resp, ok, b.execs.Load())
	}
	if _, ok := c.CachedExecute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: 5}); ok {
		t.Error("a different request was answered")
	}
}

// verifyingBackend is a backend with BigQuery's dry-run verdicts.
type verifyingBackend struct {
	*backend
	verifies atomic.Int64
}

func (v *verifyingBackend) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	v.verifies.Add(1)
	if err := v.wait(ctx); err != nil {
		return nil, err
	}
	if strings.Contains(req.GetStatement(), "bad") {
		return nil, adapters.Errorf(adapters.InvalidArgument, "Syntax error")
	}
	return &adapters.Verdict{StatementType: "SELECT", Routines: []string{"p.d.f"}, Bytes: 42,
		Response: &dataformpb.ExecuteResponse{Errors: []string{"dry"}}}, nil
}

func TestVerify(t *testing.T) {
	ctx := context.Background()
	plain := openTest(t, newBackend(0), Options{})
	if _, err := plain.Verify(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1"}); adapters.CodeOf(err) != adapters.Unimplemented {
		t.Errorf("Verify without a verifying backend: %v", err)
	}

	vb := &verifyingBackend{backend: newBackend(0)}
	vb.gate = make(chan struct{})
	clk := newClock()
	c := openTest(t, vb, Options{QueryTTL: time.Minute, Now: clk.Now})
	req := &dataformpb.ExecuteRequest{Statement: "SELECT x", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true}}
	// Concurrent askers share one dry run.
	var wg sync.WaitGroup
	verdicts := make([]*adapters.Verdict, 3)
	for i := range verdicts {
		wg.Go(func() {
			v, err := c.Verify(ctx, req)
			if err != nil {
				t.Error(err)
			}
			verdicts[i] = v
		})
	}
	waitFor(t, func() bool { return vb.verifies.Load() == 1 })
	close(vb.gate)
	wg.Wait()
	if vb.verifies.Load() != 1 {
		t.Errorf("verifies = %d, want 1", vb.verifies.Load())
	}
	v, err := c.Verify(ctx, req)
	if err != nil || v.StatementType != "SELECT" || v.Bytes != 42 || v.Routines[0] != "p.d.f" || vb.verifies.Load() != 1 {
		t.Fatalf("kept verdict %+v %v (verifies %d)", v, err, vb.verifies.Load())
	}
	v.Routines[0] = "changed"
	if again, _ := c.Verify(ctx, req); again.Routines[0] != "p.d.f" {
		t.Error("a caller changed the kept verdict")
	}
	if _, err := c.Verify(ctx, &dataformpb.ExecuteRequest{Statement: "bad"}); adapters.CodeOf(err) != adapters.InvalidArgument {
		t.Errorf("failing verdict: %v", err)
	}
	clk.Add(2 * time.Minute)
	c.Verify(ctx, req)
	if vb.verifies.Load() != 3 {
		t.Errorf("expired verdict served: verifies = %d", vb.verifies.Load())
	}
}

func TestLRU(t *testing.T) {
	l := newLRU(10_000, responseSize)
	now := time.Now()
	resp := &dataformpb.ExecuteResponse{Errors: []string{strings.Repeat("x", 1000)}}
	for i := range 20 {
		l.put(fmt.Sprint(i), resp, now.Add(time.Hour))
		l.get("0", now) // keep 0 recently used
	}
	n, bytes := l.stats()
	if bytes > 10_000 || n < 5 {
		t.Errorf("n=%d bytes=%d", n, bytes)
	}
	if _, ok := l.get("0", now); !ok {
		t.Error("recently used entry evicted")
	}
	if _, ok := l.get("1", now); ok {
		t.Error("least recently used entry kept")
	}
	l.put("big", &dataformpb.ExecuteResponse{Errors: []string{strings.Repeat("x", 5000)}}, now.Add(time.Hour))
	if _, ok := l.get("big", now); ok {
		t.Error("oversized entry kept")
	}
}

func TestClose(t *testing.T) {
	b := newBackend(1)
	b.gate = make(chan struct{}) // never opens: Close must not wait for it
	clk := newClock()
	c := Open(b, Options{Path: filepath.Join(t.TempDir(), "m.db"), TTL: time.Minute, Now: clk.Now})
	go c.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target("t00")})
	waitFor(t, func() bool { return b.gets.Load() == 1 })
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := c.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target("t00")}); !errors.Is(err, errClosed) {
		t.Errorf("after close: %v", err)
	}
	c.Close() // twice is fine
}

func TestOfflineCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	b := newBackend(2)
	c := Open(b, Options{Path: path})
	c.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	c.Close()

	// No backend at all (e.g. no credentials, no network): cached answers.
	clk := &clock{t: time.Now().Add(365 * 24 * time.Hour)} // everything is far past MaxStale
	off := openTest(t, nil, Options{Path: path, Now: clk.Now})
	call, m, err := get(t, off, "t01")
	if err != nil || m.GetDescription() != "v1" || !call.Cached || len(call.Notes) != 1 || !strings.Contains(call.Notes[0], "offline") {
		t.Errorf("offline get: %v %v %+v", m, err, call)
	}
	if _, _, err := get(t, off, "t77"); adapters.CodeOf(err) != adapters.Unavailable {
		t.Errorf("offline miss: %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	p, err := DefaultPath("http://127.0.0.1:9050", "my-project")
	if err != nil || p != "/cache/dfd/metadata/http_127.0.0.1_9050-my-project.db" {
		t.Errorf("%q %v", p, err)
	}
	p, _ = DefaultPath(strings.Repeat("a", 300))
	if len(filepath.Base(p)) > 110 {
		t.Errorf("long id: %q", p)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// CachedTable answers from what the cache has and never asks the backend,
// even when the backend would take forever; PrefetchTables fetches what it
// lacks, for the next CachedTable.
func TestCachedTableNeverFetches(t *testing.T) {
	b := newBackend(2)
	b.gate = make(chan struct{}) // the backend never answers until opened
	clk := newClock()
	c := openTest(t, b, Options{TTL: time.Minute, MaxStale: time.Hour, Now: clk.Now})
	req := &dataformpb.GetTableRequest{Target: target("t01")}
	if m, ok, err := c.CachedTable(context.Background(), req); ok || m != nil || err != nil {
		t.Fatalf("CachedTable of an unknown table: %v %v %v", m, ok, err)
	}
	if n := b.gets.Load(); n != 0 {
		t.Fatalf("CachedTable asked the backend %d times", n)
	}

	// A prefetch waits for the backend; its context bounds it.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := c.PrefetchTables(ctx, []*dataformpb.Target{target("t01")})
	cancel()
	if err == nil {
		t.Fatal("PrefetchTables returned without its answer")
	}
	close(b.gate) // the fetch it started (shared, owned by the cache) finishes
	if err := c.PrefetchTables(context.Background(), []*dataformpb.Target{target("t01"), target("t01"), target("missing")}); err != nil {
		t.Fatal(err)
	}
	m, ok, err := c.CachedTable(context.Background(), req)
	if !ok || err != nil || m.GetDescription() != "v1" {
		t.Fatalf("CachedTable after the prefetch: %v %v %v", m, ok, err)
	}
	if _, ok, err := c.CachedTable(context.Background(), &dataformpb.GetTableRequest{Target: target("missing")}); !ok || adapters.CodeOf(err) != adapters.NotFound {
		t.Fatalf("a table known to be missing: %v %v", ok, err)
	}
	gets := b.gets.Load()
	// Fresh: a second prefetch fetches nothing.
	if err := c.PrefetchTables(context.Background(), []*dataformpb.Target{target("t01")}); err != nil || b.gets.Load() != gets {
		t.Fatalf("prefetch of a fresh table: %v, gets %d → %d", err, gets, b.gets.Load())
	}

	// Older than TTL, even than MaxStale: still served at once, and
	// refreshed in the background.
	b.add("p", "ds", "t01", "v2")
	clk.Add(2 * time.Hour)
	if m, ok, _ := c.CachedTable(context.Background(), req); !ok || m.GetDescription() != "v1" {
		t.Fatalf("an old entry: %v %v", m, ok)
	}
	waitFor(t, func() bool { m, _, _ := c.CachedTable(context.Background(), req); return m.GetDescription() == "v2" })

	// Closed, it answers nothing.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.CachedTable(context.Background(), req); ok {
		t.Error("a closed cache answered")
	}
}

// CachedTable reads the on-disk store: a restarted daemon's hovers have
// what the last one fetched.
func TestCachedTableFromStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	b := newBackend(1)
	c := Open(b, Options{Path: path})
	if err := c.PrefetchTables(context.Background(), []*dataformpb.Target{target("t00")}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b2 := newBackend(0)
	c2 := openTest(t, b2, Options{Path: path})
	if m, ok, err := c2.CachedTable(context.Background(), &dataformpb.GetTableRequest{Target: target("t00")}); !ok || err != nil || m.GetDescription() != "v1" {
		t.Fatalf("from the store: %v %v %v", m, ok, err)
	}
	if b2.gets.Load() != 0 {
		t.Errorf("the backend was asked %d times", b2.gets.Load())
	}
}

// A real query's flight is called off once every caller has given up (its
// job would run on for nobody): not while one still waits; the last
// caller returns only once the wrapped adapter has wound up; and a caller
// after that starts a flight of its own. A dry run's flight goes
// on (it costs nothing, and its answer serves the next check).
func TestAbandonedQueryFlight(t *testing.T) {
	b := newBackend(0)
	b.gate = make(chan struct{})
	c := openTest(t, b, Options{ReadOnly: selectsOnly})
	req := &dataformpb.ExecuteRequest{Statement: "SELECT 1"}
	flight := func() *flight {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, f := range c.flights {
			return f
		}
		return nil
	}
	first, cancelFirst := context.WithCancel(context.Background())
	second, cancelSecond := context.WithCancel(context.Background())
	defer cancelSecond()
	errs := make(chan error, 2)
	go func() { _, err := c.Execute(first, req); errs <- err }()
	go func() { _, err := c.Execute(second, req); errs <- err }()
	waitFor(t, func() bool { f := flight(); return f != nil && f.waiters == 2 })
	f := flight()
	cancelFirst()
	if err := <-errs; adapters.CodeOf(err) != adapters.Canceled {
		t.Fatalf("first caller: %v", err)
	}
	c.mu.Lock()
	left := f.left
	c.mu.Unlock()
	select {
	case <-f.done:
		t.Fatal("the flight ended while a caller still waited")
	default:
	}
	if left != 1 {
		t.Fatalf("left = %d", left)
	}
	// The last caller gives up: the flight's context ends, and the caller
	// returns once the wrapped adapter has.
	cancelSecond()
	err := <-errs
	if adapters.CodeOf(err) != adapters.Canceled || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("last caller: %v", err)
	}
	select {
	case <-f.done:
	default:
		t.Fatal("the last caller returned before the flight ended")
	}
	if b.execs.Load() != 1 {
		t.Fatalf("execs = %d", b.execs.Load())
	}
	// The next caller starts afresh.
	close(b.gate)
	if _, err := c.Execute(context.Background(), req); err != nil || b.execs.Load() != 2 {
		t.Fatalf("next caller: %v, execs = %d", err, b.execs.Load())
	}

	// A dry run is not called off.
	b2 := newBackend(0)
	b2.gate = make(chan struct{})
	c2 := openTest(t, b2, Options{ReadOnly: selectsOnly})
	dry := &dataformpb.ExecuteRequest{Statement: "SELECT 2", BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := c2.Execute(ctx, dry); errs <- err }()
	waitFor(t, func() bool { return b2.execs.Load() == 1 })
	cancel()
	<-errs
	close(b2.gate)
	// The flight goes on and keeps its answer: the next ask is a hit.
	waitFor(t, func() bool { c2.mu.Lock(); defer c2.mu.Unlock(); return len(c2.flights) == 0 })
	if _, err := c2.Execute(context.Background(), dry); err != nil || b2.execs.Load() != 1 {
		t.Errorf("dry run after its caller left: %v, execs = %d", err, b2.execs.Load())
	}
}
