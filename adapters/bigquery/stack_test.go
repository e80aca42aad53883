package bigquery

// The adapter stack the daemon runs — recorder → preview policy → cache →
// BigQuery — against the emulator.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/iterator"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// TestPreviewChangesNothing runs, in preview mode, every kind of call a JiT
// function could use to change data, and shows that nothing changed.
//
// How "nothing reached BigQuery" is shown: every HTTP request the adapter
// sends is recorded at the transport. The preview policy turns statements
// that may write into dry runs, and a dry run is harmless on BigQuery — but
// the emulator executes dry-run statements (a known difference), so a
// forwarded dry run would make the emulator, not dfd, decide the outcome.
// The transport therefore answers dry runs itself, the way BigQuery does
// (a DONE job with statistics, statement type SELECT for the queries and
// SCRIPT or DML for the rest, and nothing else), and forwards everything
// else. The test then asserts on the wire — no tables.delete at all, every
// job whose statement is not a read-only query was a dry run, and the only
// real jobs were the read-only queries — and reads every table and row back
// through the independent Go client.
func TestPreviewChangesNothing(t *testing.T) {
	emu := bqtest.Shared(t)
	client := emu.Client(t)
	ds := dataset(t, client, map[string]bigquery.Schema{"orders": nestedSchema, "scratch": {{Name: "x", Type: bigquery.StringFieldType}}})
	run(t, client, fmt.Sprintf("INSERT INTO %s.orders (id, tags) VALUES (1, ['a']), (2, []), (3, ['b', 'c'])", ds))
	run(t, client, fmt.Sprintf("INSERT INTO %s.scratch (x) VALUES ('keep me')", ds))
	before := readBack(t, client, ds)

	bqa, w := emulatorAdapter(t, Options{})
	dryRuns := 0
	w.intercept = func(r *request) *http.Response {
		if r.Method == http.MethodPost && r.DryRun {
			dryRuns++
			stype := "SCRIPT"
			if gsql.IsReadOnlyQuery(context.Background(), r.Statement) {
				stype = "SELECT"
			}
			return jsonResponse(200, map[string]any{
				"kind":          "bigquery#job",
				"jobReference":  map[string]any{"projectId": bqtest.Project},
				"configuration": r.Job["configuration"],
				"status":        map[string]any{"state": "DONE"},
				"statistics": map[string]any{"totalBytesProcessed": "0", "query": map[string]any{
					"totalBytesProcessed": "0", "statementType": stype}},
			})
		}
		return nil
	}
	c := cache.Open(bqa, cache.Options{Path: filepath.Join(t.TempDir(), "m.db"), DefaultDatabase: bqtest.Project, ReadOnly: gsql.IsReadOnlyQuery})
	defer c.Close()
	rec := adapters.NewRecorder(policy.Policy{Mode: policy.Preview, MaxBytesBilled: 1 << 30}.Wrap(c))

	orders := &dataformpb.Target{Database: bqtest.Project, Schema: ds, Name: "orders"}
	scratch := &dataformpb.Target{Database: bqtest.Project, Schema: ds, Name: "scratch"}
	writes := []string{
		"DELETE FROM %s.orders WHERE true",
		"DROP TABLE %s.orders",
		"DROP TABLE IF EXISTS %s.scratch",
		"INSERT INTO %s.orders (id) VALUES (99)",
		"CREATE OR REPLACE TABLE %s.orders AS SELECT 1 AS x",
		"CREATE TABLE %s.new_table (x INT64)",
		"TRUNCATE TABLE %s.scratch",
		"UPDATE %s.orders SET tags = [] WHERE true",
		"MERGE %s.orders o USING (SELECT 1 AS id) s ON o.id = s.id WHEN MATCHED THEN DELETE",
		"SELECT 1; DROP TABLE %s.scratch",
		"/* looks harmless */ (DELETE FROM %s.scratch WHERE true)",
		"WITH x AS (SELECT 1) DELETE FROM %s.orders WHERE true",
		"BEGIN DELETE FROM %s.orders WHERE true; END",
		"ALTER TABLE %s.orders DROP COLUMN tags",
		"EXPORT DATA OPTIONS (uri = 'gs://b/*.csv', format = 'CSV') AS SELECT * FROM %s.orders",
	}
	reads := []string{
		"SELECT COUNT(*) AS n FROM %s.orders",
		"WITH o AS (SELECT id FROM %s.orders) SELECT MAX(id) AS m FROM o",
	}
	ctx := context.Background()
	call := func(method string, req proto.Message) ([]byte, error) {
		b, _ := proto.Marshal(req)
		return adapters.Dispatch(ctx, rec, method, b)
	}
	// Warm the cache the way a preview would, then try to destroy things.
	if _, err := call(adapters.MethodGetTable, &dataformpb.GetTableRequest{Target: orders}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(adapters.MethodListTables, &dataformpb.ListTablesRequest{Database: bqtest.Project, Schema: ds}); err != nil {
		t.Fatal(err)
	}
	for _, tg := range []*dataformpb.Target{orders, scratch} {
		if _, err := call(adapters.MethodDeleteTable, &dataformpb.DeleteTableRequest{Target: tg}); adapters.CodeOf(err) != adapters.PermissionDenied {
			t.Errorf("DeleteTable(%s) in preview: %v", adapters.TargetString(tg), err)
		}
	}
	for _, s := range writes {
		stmt := fmt.Sprintf(s, ds)
		if _, err := call(adapters.MethodExecute, &dataformpb.ExecuteRequest{Statement: stmt, FetchResults: true}); err != nil {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	var counted []byte
	for i, s := range reads {
		resp, err := call(adapters.MethodExecute, &dataformpb.ExecuteRequest{Statement: fmt.Sprintf(s, ds), FetchResults: true})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if i == 0 {
			counted = resp
		}
	}
	// The metadata is still served, from the cache.
	if _, err := call(adapters.MethodGetTable, &dataformpb.GetTableRequest{Target: orders}); err != nil {
		t.Fatal(err)
	}

	// On the wire.
	realJobs := 0
	for _, r := range w.requests() {
		if r.Method == http.MethodDelete {
			t.Errorf("a DELETE request reached BigQuery: %s", r.Path)
		}
		if r.Method != http.MethodPost {
			continue
		}
		if !gsql.IsReadOnlyQuery(ctx, r.Statement) && !r.DryRun {
			t.Errorf("statement sent as a real job: %s", r.Statement)
		}
		if !r.DryRun {
			realJobs++
			if !strings.Contains(string(r.Body), `"dfd":"preview"`) || !strings.Contains(string(r.Body), `"maximumBytesBilled":"1073741824"`) {
				t.Errorf("preview job without label or byte cap: %s", r.Body)
			}
		}
	}
	// Every write is a dry run; every read is verified by one (BigQuery's
	// verdict) before it runs.
	if realJobs != len(reads) || dryRuns != len(writes)+len(reads) {
		t.Errorf("real jobs = %d (want %d), dry runs = %d (want %d)", realJobs, len(reads), dryRuns, len(writes)+len(reads))
	}

	// In the call record.
	executes := 0
	for _, cl := range rec.Calls() {
		if cl.Method != adapters.MethodExecute {
			continue
		}
		executes++
		isRead := slices.ContainsFunc(reads, func(s string) bool { return cl.Summary == fmt.Sprintf(s, ds) })
		if cl.DryRun == isRead || (!isRead && len(cl.Notes) == 0) {
			t.Errorf("call record: %+v", cl)
		}
	}
	if executes != len(reads)+len(writes) {
		t.Errorf("%d Execute calls recorded", executes)
	}
	last := rec.Calls()[len(rec.Calls())-1]
	if !last.Cached {
		t.Errorf("GetTable after the refused deletes not served from the cache: %+v", last)
	}

	// In BigQuery, read back through the Go client.
	after := readBack(t, client, ds)
	if after != before {
		t.Errorf("data changed by a preview:\nbefore %s\nafter  %s", before, after)
	}
	resp := new(dataformpb.ExecuteResponse)
	proto.Unmarshal(counted, resp)
	if n := resp.GetRows()[0].GetFields()["f"].GetListValue().GetValues()[0].GetStructValue().GetFields()["v"].GetStringValue(); n != "3" {
		t.Errorf("COUNT(*) = %q", n)
	}
}

// readBack describes the dataset's tables, schemas and rows, as the Go
// client sees them.
func readBack(t *testing.T, c *bigquery.Client, ds string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	it := c.Dataset(ds).Tables(ctx)
	var names []string
	for {
		tb, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tb.TableID)
	}
	slices.Sort(names)
	for _, name := range names {
		md, err := c.Dataset(ds).Table(name).Metadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s(", name)
		for _, f := range md.Schema {
			fmt.Fprintf(&b, "%s %s %v,", f.Name, f.Type, f.Repeated)
		}
		b.WriteString(") rows:")
		q := c.Query(fmt.Sprintf("SELECT TO_JSON_STRING(t) AS j FROM %s.%s AS t ORDER BY j", ds, name))
		rows, err := q.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for {
			var row []bigquery.Value
			if err := rows.Next(&row); err == iterator.Done {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " %v", row[0])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// N concurrent misses are one BigQuery call, counted on the wire.
func TestCacheSingleFlightOverHTTP(t *testing.T) {
	client := bqtest.Shared(t).Client(t)
	ds := dataset(t, client, map[string]bigquery.Schema{"a": nestedSchema, "b": nestedSchema})
	bqa, w := emulatorAdapter(t, Options{})
	// Hold every request a little, so the concurrent calls really overlap.
	w.intercept = func(*request) *http.Response { time.Sleep(50 * time.Millisecond); return nil }
	c := cache.Open(bqa, cache.Options{})
	defer c.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := c.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: bqtest.Project, Schema: ds, Name: "a"}}); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, err := c.ListTables(ctx, &dataformpb.ListTablesRequest{Database: bqtest.Project, Schema: ds}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := w.count("GET", "/datasets/"+ds+"/tables/a"); n > 2 { // GetTable's own fetch, and ListTables' fetch of each table
		t.Errorf("%d tables.get of a for 40 concurrent calls", n)
	}
	if n := w.count("GET", "/datasets/"+ds+"/tables"); n != w.count("GET", "/datasets/"+ds+"/tables/a")+w.count("GET", "/datasets/"+ds+"/tables/b")+1 {
		t.Errorf("%d listing requests: %v", n, w.requests())
	}
	total := len(w.requests())
	for range 50 {
		c.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: bqtest.Project, Schema: ds, Name: "b"}})
		c.ListTables(ctx, &dataformpb.ListTablesRequest{Database: bqtest.Project, Schema: ds})
	}
	if n := len(w.requests()); n != total {
		t.Errorf("warm calls sent %d requests", n-total)
	}
}

// A restarted daemon is warm at once; one that cannot reach BigQuery serves
// what it has, marked stale.
func TestCacheRestartAndOffline(t *testing.T) {
	client := bqtest.Shared(t).Client(t)
	ds := dataset(t, client, map[string]bigquery.Schema{"a": nestedSchema, "b": nestedSchema})
	path := filepath.Join(t.TempDir(), "m.db")
	ctx := context.Background()
	list := &dataformpb.ListTablesRequest{Database: bqtest.Project, Schema: ds}

	bqa, _ := emulatorAdapter(t, Options{})
	c := cache.Open(bqa, cache.Options{Path: path})
	want, err := c.ListTables(ctx, list)
	if err != nil || len(want.GetTables()) != 2 {
		t.Fatalf("%v %v", want, err)
	}
	c.Close()

	bqa, w := emulatorAdapter(t, Options{})
	c = cache.Open(bqa, cache.Options{Path: path})
	got, err := c.ListTables(ctx, list)
	if err != nil || !proto.Equal(got, want) || len(w.requests()) != 0 {
		t.Errorf("warm restart: %d requests, %v", len(w.requests()), err)
	}
	c.Close()

	// BigQuery unreachable, metadata a month old: served, marked stale.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	down := adapterAt(t, dead, Options{Retry: Retry{Attempts: 2, Initial: time.Millisecond}})
	month := time.Now().Add(30 * 24 * time.Hour)
	c = cache.Open(down, cache.Options{Path: path, Now: func() time.Time { return month }})
	defer c.Close()
	rec := adapters.NewRecorder(c)
	got, err = rec.ListTables(ctx, list)
	if err != nil || !proto.Equal(got, want) {
		t.Fatalf("offline: %v", err)
	}
	cl := rec.Calls()[0]
	if !cl.Cached || len(cl.Notes) != 1 || !strings.Contains(cl.Notes[0], "stale") || !strings.Contains(cl.Notes[0], "UNAVAILABLE") {
		t.Errorf("offline call record: %+v", cl)
	}
}

// Cold (BigQuery via the emulator) and warm (cache) metadata calls.
func BenchmarkEmulatorMetadata(b *testing.B) {
	client := bqtest.Shared(b).Client(b)
	tables := map[string]bigquery.Schema{}
	for i := range 10 {
		tables[fmt.Sprintf("t%d", i)] = nestedSchema
	}
	ds := dataset(b, client, tables)
	bqa, _ := emulatorAdapter(b, Options{})
	ctx := context.Background()
	get := &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: bqtest.Project, Schema: ds, Name: "t3"}}
	list := &dataformpb.ListTablesRequest{Database: bqtest.Project, Schema: ds}
	c := cache.Open(bqa, cache.Options{Path: filepath.Join(b.TempDir(), "m.db"), TTL: time.Hour})
	defer c.Close()
	for _, bc := range []struct {
		name string
		a    adapters.DbAdapter
	}{{"cold", bqa}, {"warm", c}} {
		b.Run("GetTable/"+bc.name, func(b *testing.B) {
			benchP50(b, func() error { _, err := bc.a.GetTable(ctx, get); return err })
		})
		b.Run("ListTables-10/"+bc.name, func(b *testing.B) {
			benchP50(b, func() error { _, err := bc.a.ListTables(ctx, list); return err })
		})
	}
}

func benchP50(b *testing.B, op func() error) {
	var durs []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "p50-µs")
}
