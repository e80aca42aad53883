package adapters_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

const sample = "../testdata/metadata/clickstream.json"

func snapshot(t testing.TB) *offline.Adapter {
	t.Helper()
	a, err := offline.Load(sample, offline.Options{DefaultDatabase: "acme-clickstream"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var rawClicks = &dataformpb.Target{Database: "acme-collector", Schema: "landing", Name: "raw_clicks"}

func TestDispatch(t *testing.T) {
	a := snapshot(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		method   string
		req      []byte
		wantCode adapters.Code
		check    func(t *testing.T, resp []byte)
	}{
		{
			name:   "GetTable",
			method: "GetTable",
			req:    mustMarshal(t, &dataformpb.GetTableRequest{Target: rawClicks}),
			check: func(t *testing.T, resp []byte) {
				m := new(dataformpb.TableMetadata)
				if err := proto.Unmarshal(resp, m); err != nil || m.GetTarget().GetName() != "raw_clicks" || len(m.GetFields()) != 9 {
					t.Errorf("metadata = %v, err = %v", m, err)
				}
			},
		},
		{
			name:     "GetTable missing",
			method:   "GetTable",
			req:      mustMarshal(t, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "p", Schema: "d", Name: "t"}}),
			wantCode: adapters.NotFound,
		},
		{name: "GetTable without target", method: "GetTable", req: nil, wantCode: adapters.InvalidArgument},
		{
			name:     "GetTable without name",
			method:   "GetTable",
			req:      mustMarshal(t, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Schema: "d"}}),
			wantCode: adapters.InvalidArgument,
		},
		{
			name:   "ListTables",
			method: "ListTables",
			req:    mustMarshal(t, &dataformpb.ListTablesRequest{Database: "acme-clickstream", Schema: "clicks_assertions"}),
			check: func(t *testing.T, resp []byte) {
				m := new(dataformpb.ListTablesResponse)
				if err := proto.Unmarshal(resp, m); err != nil || len(m.GetTables()) != 1 {
					t.Errorf("tables = %v, err = %v", m, err)
				}
			},
		},
		{
			name:   "ListTables with nothing found is empty, not nil",
			method: "ListTables",
			req:    mustMarshal(t, &dataformpb.ListTablesRequest{Database: "nope"}),
			check: func(t *testing.T, resp []byte) {
				if resp == nil || len(resp) != 0 {
					t.Errorf("resp = %#v", resp)
				}
			},
		},
		{
			name:   "Execute",
			method: "Execute",
			req: mustMarshal(t, &dataformpb.ExecuteRequest{
				Statement: "SELECT COUNT(*) AS n FROM `acme-clickstream.clicks.click_sessions`", FetchResults: true, RowLimit: 1}),
			check: func(t *testing.T, resp []byte) {
				m := new(dataformpb.ExecuteResponse)
				if err := proto.Unmarshal(resp, m); err != nil || len(m.GetRows()) != 1 {
					t.Fatalf("resp = %v, err = %v", m, err)
				}
				v := m.GetRows()[0].GetFields()["f"].GetListValue().GetValues()[0].GetStructValue().GetFields()["v"]
				if v.GetStringValue() != "48213" {
					t.Errorf("n = %v", v)
				}
			},
		},
		{name: "Execute empty statement", method: "Execute", req: mustMarshal(t, &dataformpb.ExecuteRequest{Statement: " \n"}), wantCode: adapters.InvalidArgument},
		{name: "Execute unknown statement", method: "Execute", req: mustMarshal(t, &dataformpb.ExecuteRequest{Statement: "SELECT 2"}), wantCode: adapters.FailedPrecondition},
		{
			name:     "DeleteTable refused by the snapshot",
			method:   "DeleteTable",
			req:      mustMarshal(t, &dataformpb.DeleteTableRequest{Target: rawClicks}),
			wantCode: adapters.PermissionDenied,
		},
		{name: "unknown method", method: "Drop", req: nil, wantCode: adapters.Unimplemented},
		{name: "lower-case method", method: "getTable", req: nil, wantCode: adapters.Unimplemented},
		{name: "garbage bytes", method: "GetTable", req: []byte{0xff, 0xff, 0xff}, wantCode: adapters.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := adapters.Dispatch(ctx, a, tt.method, tt.req)
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if err != nil {
				var ae *adapters.Error
				if !errors.As(err, &ae) || ae != err {
					t.Errorf("error is %T, want *adapters.Error", err)
				}
				if resp != nil {
					t.Errorf("resp = %v with an error", resp)
				}
				return
			}
			if resp == nil {
				t.Fatal("nil response bytes: protobufjs would never settle the promise")
			}
			if tt.check != nil {
				tt.check(t, resp)
			}
		})
	}
}

// fake is a DbAdapter built from functions; unset ones are UNIMPLEMENTED.
type fake struct {
	adapters.UnimplementedAdapter
	getTable    func(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error)
	deleteTable func(context.Context, *dataformpb.DeleteTableRequest) error
	execute     func(context.Context, *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error)
}

func (f *fake) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	if f.getTable == nil {
		return f.UnimplementedAdapter.GetTable(ctx, req)
	}
	return f.getTable(ctx, req)
}

func (f *fake) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	if f.deleteTable == nil {
		return f.UnimplementedAdapter.DeleteTable(ctx, req)
	}
	return f.deleteTable(ctx, req)
}

func (f *fake) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	if f.execute == nil {
		return f.UnimplementedAdapter.Execute(ctx, req)
	}
	return f.execute(ctx, req)
}

func TestDispatchEdgeCases(t *testing.T) {
	ctx := context.Background()
	getReq := mustMarshal(t, &dataformpb.GetTableRequest{Target: rawClicks})
	delReq := mustMarshal(t, &dataformpb.DeleteTableRequest{Target: rawClicks})
	execReq := mustMarshal(t, &dataformpb.ExecuteRequest{Statement: "SELECT 1"})

	t.Run("DeleteTable answers empty non-nil bytes", func(t *testing.T) {
		a := &fake{deleteTable: func(context.Context, *dataformpb.DeleteTableRequest) error { return nil }}
		resp, err := adapters.Dispatch(ctx, a, "DeleteTable", delReq)
		if err != nil || resp == nil || len(resp) != 0 {
			t.Errorf("resp = %#v, err = %v", resp, err)
		}
	})
	t.Run("nil metadata is NOT_FOUND", func(t *testing.T) {
		a := &fake{getTable: func(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) { return nil, nil }}
		_, err := adapters.Dispatch(ctx, a, "GetTable", getReq)
		if err == nil || err.Error() != "NOT_FOUND: table acme-collector.landing.raw_clicks not found" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("nil execute response is empty bytes", func(t *testing.T) {
		a := &fake{execute: func(context.Context, *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
			return nil, nil
		}}
		resp, err := adapters.Dispatch(ctx, a, "Execute", execReq)
		if err != nil || resp == nil || len(resp) != 0 {
			t.Errorf("resp = %#v, err = %v", resp, err)
		}
	})
	t.Run("panic becomes INTERNAL", func(t *testing.T) {
		a := &fake{getTable: func(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
			var m map[string]int
			m["x"] = 1 // nil map write
			return nil, nil
		}}
		_, err := adapters.Dispatch(ctx, a, "GetTable", getReq)
		if adapters.CodeOf(err) != adapters.Internal || !strings.Contains(err.Error(), "adapter panicked in GetTable") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("panic through a recorder is recorded and still recovered", func(t *testing.T) {
		rec := adapters.NewRecorder(&fake{execute: func(context.Context, *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
			panic("boom")
		}})
		_, err := adapters.Dispatch(ctx, rec, "Execute", execReq)
		if adapters.CodeOf(err) != adapters.Internal {
			t.Errorf("err = %v", err)
		}
		calls := rec.Calls()
		if len(calls) != 1 || calls[0].Code != adapters.Internal || !strings.Contains(calls[0].Error, "boom") {
			t.Errorf("calls = %+v", calls)
		}
	})
	t.Run("unimplemented method of a partial adapter", func(t *testing.T) {
		_, err := adapters.Dispatch(ctx, &fake{}, "ListTables", nil)
		if adapters.CodeOf(err) != adapters.Unimplemented {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("plain errors are classified", func(t *testing.T) {
		a := &fake{getTable: func(context.Context, *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
			return nil, errors.New("socket closed")
		}}
		_, err := adapters.Dispatch(ctx, a, "GetTable", getReq)
		if err == nil || err.Error() != "INTERNAL: socket closed" {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := adapters.Dispatch(cctx, &fake{}, "GetTable", getReq)
		if adapters.CodeOf(err) != adapters.Canceled {
			t.Errorf("err = %v", err)
		}
	})
}

// The full preview stack: recorder → policy → offline snapshot.
func TestPreviewStack(t *testing.T) {
	rec := adapters.NewRecorder(policy.Policy{Mode: policy.Preview, MaxBytesBilled: 1 << 30}.Wrap(snapshot(t)))
	ctx := context.Background()
	calls := []struct {
		method string
		req    proto.Message
	}{
		{"ListTables", &dataformpb.ListTablesRequest{Database: "acme-clickstream", Schema: "clicks"}},
		{"DeleteTable", &dataformpb.DeleteTableRequest{Target: &dataformpb.Target{Database: "acme-clickstream", Schema: "clicks", Name: "scratch_dedupe"}}},
		{"Execute", &dataformpb.ExecuteRequest{Statement: "SELECT COUNT(*) AS n FROM `acme-clickstream.clicks.click_sessions`", FetchResults: true}},
		{"Execute", &dataformpb.ExecuteRequest{Statement: "INSERT INTO `acme-clickstream.clicks.housekeeping_log` (ran_at) VALUES (CURRENT_TIMESTAMP())"}},
		{"GetTable", &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "acme-clickstream", Schema: "clicks", Name: "refresh_campaign_cache"}}},
	}
	for _, c := range calls {
		adapters.Dispatch(ctx, rec, c.method, mustMarshal(t, c.req))
	}
	got := rec.Calls()
	type row struct {
		method, summary string
		code            adapters.Code
		dryRun          bool
	}
	want := []row{
		{"ListTables", "acme-clickstream.clicks", "", false},
		{"DeleteTable", "acme-clickstream.clicks.scratch_dedupe", adapters.PermissionDenied, false},
		{"Execute", "SELECT COUNT(*) AS n FROM `acme-clickstream.clicks.click_sessions`", "", false},
		{"Execute", "INSERT INTO `acme-clickstream.clicks.housekeeping_log` (ran_at) VALUES (CURRENT_TIMESTAMP())", "", true},
		{"GetTable", "acme-clickstream.clicks.refresh_campaign_cache", adapters.NotFound, false},
	}
	if len(got) != len(want) {
		t.Fatalf("calls = %+v", got)
	}
	for i, c := range got {
		if (row{c.Method, c.Summary, c.Code, c.DryRun}) != want[i] || c.Seq != i+1 {
			t.Errorf("call %d = %+v\nwant %+v", i, c, want[i])
		}
	}
	if n := got[3].Notes; len(n) != 2 || !strings.HasPrefix(n[0], "preview: INSERT statement") || !strings.HasPrefix(n[1], "offline: statement not in snapshot") {
		t.Errorf("INSERT notes = %q", n)
	}
}

// cacheish pretends to be a cache layer: it reports hits through the context.
type cacheish struct{ adapters.DbAdapter }

func (c cacheish) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	adapters.MarkCached(ctx)
	adapters.Note(ctx, "stale: %s", "BigQuery unavailable")
	return c.DbAdapter.GetTable(ctx, req)
}

func TestRecorderAnnotations(t *testing.T) {
	inner := adapters.NewRecorder(cacheish{snapshot(t)})
	outer := adapters.NewRecorder(inner) // nested recorders both hear the annotations
	outer.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: rawClicks})
	for name, r := range map[string]*adapters.Recorder{"inner": inner, "outer": outer} {
		calls := r.Calls()
		if len(calls) != 1 || !calls[0].Cached || !slices.Equal(calls[0].Notes, []string{"stale: BigQuery unavailable"}) || calls[0].Duration <= 0 {
			t.Errorf("%s: calls = %+v", name, calls)
		}
	}
	// Without a recorder the annotations are no-ops.
	cacheish{snapshot(t)}.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: rawClicks})
	adapters.MarkDryRun(context.Background(), "x")
}

func TestRecorderSummaries(t *testing.T) {
	rec := adapters.NewRecorder(&fake{})
	ctx := context.Background()
	long := strings.Repeat("x", 150)
	rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "\n\n   -- first line\nSELECT 1"})
	rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: long, BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true}})
	rec.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "p"})
	rec.DeleteTable(ctx, &dataformpb.DeleteTableRequest{Target: &dataformpb.Target{Schema: "d", Name: "t"}})
	rec.GetTable(ctx, &dataformpb.GetTableRequest{})
	want := []string{"-- first line …", strings.Repeat("x", 100) + " …", "p.", "d.t", "<no target>"}
	calls := rec.Calls()
	for i, c := range calls {
		if c.Summary != want[i] || c.Code != adapters.Unimplemented {
			t.Errorf("call %d: %+v, want summary %q", i, c, want[i])
		}
	}
	if !calls[1].DryRun {
		t.Error("request dry_run not recorded")
	}
	if calls[1].Statement != long || calls[0].Statement != "\n\n   -- first line\nSELECT 1" {
		t.Errorf("statements %q, %q", calls[0].Statement, calls[1].Statement)
	}
	// What a terminal would hide is shown.
	rec.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1 --\r; DROP TABLE `d.t`\n"})
	last := rec.Calls()[len(rec.Calls())-1]
	if last.Summary != "SELECT 1 --␍; DROP TABLE `d.t`" || last.Statement != "SELECT 1 --␍; DROP TABLE `d.t`\n" {
		t.Errorf("carriage return not shown: %+v", last)
	}
}

func TestRecorderConcurrent(t *testing.T) {
	rec := adapters.NewRecorder(&fake{getTable: func(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
		if req.GetTarget().GetName() == "t3" {
			adapters.MarkCached(ctx)
		}
		time.Sleep(time.Millisecond)
		return &dataformpb.TableMetadata{}, nil
	}})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			name := "t" + string(rune('0'+i%10))
			rec.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: &dataformpb.Target{Schema: "d", Name: name}})
		})
	}
	wg.Wait()
	calls := rec.Calls()
	if len(calls) != 50 {
		t.Fatalf("%d calls", len(calls))
	}
	cached := 0
	for i, c := range calls {
		if c.Seq != i+1 {
			t.Errorf("calls not in start order: %d at %d", c.Seq, i)
		}
		if c.Cached != (c.Summary == "d.t3") {
			t.Errorf("cached flag leaked between calls: %+v", c)
		}
		if c.Cached {
			cached++
		}
	}
	if cached != 5 {
		t.Errorf("cached = %d", cached)
	}
}

func BenchmarkDispatchGetTable(b *testing.B) {
	ctx := context.Background()
	req := mustMarshal(b, &dataformpb.GetTableRequest{Target: rawClicks})
	snap := snapshot(b)
	stacks := []struct {
		name string
		make func() adapters.DbAdapter
	}{
		{"offline", func() adapters.DbAdapter { return snap }},
		{"recorder+policy+offline", func() adapters.DbAdapter { return adapters.NewRecorder(policy.Policy{}.Wrap(snap)) }},
	}
	for _, s := range stacks {
		b.Run(s.name, func(b *testing.B) {
			a := s.make()
			durs := make([]time.Duration, 0, 1<<16)
			for b.Loop() {
				start := time.Now()
				if _, err := adapters.Dispatch(ctx, a, "GetTable", req); err != nil {
					b.Fatal(err)
				}
				if len(durs) < cap(durs) {
					durs = append(durs, time.Since(start))
				}
			}
			sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
			if len(durs) > 0 {
				b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
			}
		})
	}
}
