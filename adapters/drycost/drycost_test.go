package drycost_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
)

// service is a Service over the real BigQuery adapter pointed at rec,
// behind the check policy, as dfd builds it; metadata reads go to the
// adapter itself (no cache), so the wire shows every tables.get.
func service(t *testing.T, rec *bqrecorder.Server) *drycost.Service {
	return serviceWith(t, rec, drycost.Options{})
}

func serviceWith(t *testing.T, rec *bqrecorder.Server, opts drycost.Options) *drycost.Service {
	t.Helper()
	a, err := bigquery.New(context.Background(), bigquery.Options{
		Project:       "p",
		ClientOptions: []option.ClientOption{option.WithEndpoint(rec.URL), option.WithoutAuthentication()},
		Retry:         bigquery.Retry{Initial: time.Millisecond, Max: 4 * time.Millisecond},
		CallTimeout:   10 * time.Second,
		// A 5xx on every attempt holds BigQuery as down for this long
		// (every call fails at once meanwhile), as in the daemon.
		OutageHold: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ver := policy.Policy{Mode: policy.Check}.Wrap(a).(adapters.Verifier)
	opts.Verifier, opts.Metadata = ver, a
	s := drycost.New(opts)
	t.Cleanup(s.Close)
	return s
}

// Every figure is the stand-in's totalBytesProcessed; each distinct text
// is dry-run once however often it is asked for; nothing but dry runs
// reaches BigQuery, each with the preview's cap and label.
func TestFiguresAreBigQuerys(t *testing.T) {
	bytes := map[string]int64{"select 1": 0, "select a from p.ds.big": 14 << 30, "select a from p.ds.small": 300 << 20}
	rec := bqrecorder.Start(t, bqrecorder.Options{Bytes: func(s string) int64 { return bytes[s] }})
	s := service(t, rec)
	ctx := context.Background()
	for round := range 3 {
		for stmt, want := range bytes {
			e, err := s.Estimate(ctx, stmt, nil)
			if err != nil {
				t.Fatal(err)
			}
			if e.Kind != drycost.Estimated || e.Bytes != want {
				t.Errorf("%q: %+v, want %d bytes", stmt, e, want)
			}
			if e.Cached != (round > 0) {
				t.Errorf("round %d, %q: Cached = %v", round, stmt, e.Cached)
			}
		}
	}
	jobs := rec.Jobs()
	if len(jobs) != len(bytes) {
		t.Errorf("%d jobs sent for %d distinct statements", len(jobs), len(bytes))
	}
	for _, j := range jobs {
		if !j.DryRun || j.Labels[policy.PreviewLabelKey] != policy.PreviewLabelValue || j.MaximumBytesBilled != policy.DefaultMaxBytesBilled {
			t.Errorf("job %q: dryRun %v, labels %v, cap %d", j.Statement, j.DryRun, j.Labels, j.MaximumBytesBilled)
		}
	}
	if s.DryRuns() != len(bytes) {
		t.Errorf("DryRuns() = %d", s.DryRuns())
	}
}

// A kept figure lasts while the tables BigQuery said the statement reads
// are unchanged; a rebuilt table (lastModifiedTime moved) refreshes it.
func TestRebuiltTableRefreshes(t *testing.T) {
	var modified atomic.Int64
	modified.Store(1000)
	var size atomic.Int64
	size.Store(5 << 20)
	rec := bqrecorder.Start(t, bqrecorder.Options{
		Bytes:      func(string) int64 { return size.Load() },
		Referenced: func(string) []string { return []string{"p.ds.src"} },
		Table:      func(_, _, _ string) (int64, bool) { return modified.Load(), true },
	})
	s := service(t, rec)
	ctx := context.Background()
	const stmt = "select * from p.ds.src"
	est := func() drycost.Estimate {
		e, err := s.Estimate(ctx, stmt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	if e := est(); e.Bytes != 5<<20 || e.Cached {
		t.Fatalf("first: %+v", e)
	}
	size.Store(9 << 20) // the table grew, but was not rebuilt as far as its metadata says
	if e := est(); e.Bytes != 5<<20 || !e.Cached {
		t.Fatalf("unchanged table: %+v, want the kept figure", e)
	}
	modified.Store(2000)
	if e := est(); e.Bytes != 9<<20 || e.Cached {
		t.Fatalf("rebuilt table: %+v, want a new dry run's figure", e)
	}
	if n := len(rec.DryRuns()); n != 2 {
		t.Errorf("%d dry runs, want 2", n)
	}
}

// BigQuery's refusals, sorted: the SQL (with its position), a missing
// table of the project's (upstream not built) or not, and failures that
// are not the SQL, which are never kept: the next Estimate recovers.
func TestVerdicts(t *testing.T) {
	defined := func(table string) bool { return table == "p.ds.upstream" || table == "p.ds" }
	tests := []struct {
		name   string
		fault  *bqrecorder.Fault
		want   drycost.Estimate
		kept   bool
		prefix string // of Message
	}{
		{"syntax error", bqrecorder.SQLError("Syntax error: Unexpected identifier \"selec\"", 3, 5),
			drycost.Estimate{Kind: drycost.SQLError, Line: 3, Column: 5, Code: adapters.InvalidArgument}, true, "Syntax error: Unexpected identifier"},
		{"unknown column", bqrecorder.SQLError("Unrecognized name: nme; Did you mean name?", 1, 8),
			drycost.Estimate{Kind: drycost.SQLError, Line: 1, Column: 8, Code: adapters.InvalidArgument}, true, "Unrecognized name: nme"},
		{"project table not built", bqrecorder.TableNotFound("p.ds.upstream"),
			drycost.Estimate{Kind: drycost.UpstreamNotBuilt, Table: "p.ds.upstream", Code: adapters.NotFound}, true, "Not found: Table p:ds.upstream"},
		{"project dataset not created", &bqrecorder.Fault{Status: 404, Reason: "notFound", Message: "Not found: Dataset p:ds was not found in location US"},
			drycost.Estimate{Kind: drycost.UpstreamNotBuilt, Table: "p.ds", Code: adapters.NotFound}, false, "Not found: Dataset p:ds"},
		{"foreign table missing", bqrecorder.TableNotFound("p.raw.gone"),
			drycost.Estimate{Kind: drycost.SQLError, Table: "p.raw.gone", Code: adapters.NotFound}, true, "Not found: Table p:raw.gone"},
		{"429 rate limit", bqrecorder.Status(http.StatusTooManyRequests, 0),
			drycost.Estimate{Kind: drycost.Unavailable, Code: adapters.ResourceExhausted}, false, "bqrecorder fault: 429"},
		{"500", bqrecorder.Status(http.StatusInternalServerError, 0),
			drycost.Estimate{Kind: drycost.Unavailable, Code: adapters.Unavailable}, false, "bqrecorder fault: 500"},
		{"403 denied", bqrecorder.FaultForbidden,
			drycost.Estimate{Kind: drycost.Unavailable, Code: adapters.PermissionDenied}, false, "Access Denied"},
		{"quota", &bqrecorder.Fault{Status: 403, Reason: "quotaExceeded", Message: "Quota exceeded: Your project exceeded quota for free query bytes scanned."},
			drycost.Estimate{Kind: drycost.Unavailable, Code: adapters.ResourceExhausted}, false, "Quota exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fail atomic.Bool
			fail.Store(true)
			rec := bqrecorder.Start(t, bqrecorder.Options{
				DryRunError: func(string) *bqrecorder.Fault {
					if fail.Load() {
						return tt.fault
					}
					return nil
				},
				Bytes: func(string) int64 { return 42 },
				Table: func(_, ds, table string) (int64, bool) {
					return 1, !fail.Load() || (ds != "raw" && table != "upstream")
				},
			})
			s := service(t, rec)
			const stmt = "select name from p.ds.upstream"
			e, err := s.Estimate(context.Background(), stmt, defined)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(e.Message, tt.prefix) {
				t.Errorf("Message = %q, want it to start with %q", e.Message, tt.prefix)
			}
			e.Message = ""
			if e != tt.want {
				t.Errorf("got %+v\nwant %+v", e, tt.want)
			}
			sent := len(rec.DryRuns())
			again, _ := s.Estimate(context.Background(), stmt, defined)
			if again.Cached != tt.kept || (tt.kept && len(rec.DryRuns()) != sent) {
				t.Errorf("asked again: Cached = %v, %d more dry runs; want kept = %v", again.Cached, len(rec.DryRuns())-sent, tt.kept)
			}
			if again.Kind != tt.want.Kind {
				t.Errorf("asked again: %+v", again)
			}
			// BigQuery recovers (and the missing table is built).
			fail.Store(false)
			if tt.kept && tt.want.Table == "" {
				return // a SQL error is kept for its text: nothing to recover from
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				e, err = s.Estimate(context.Background(), stmt, defined)
				if err == nil && e.Kind == drycost.Estimated && e.Bytes == 42 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no recovery within 10s: %+v, %v", e, err)
				}
				time.Sleep(20 * time.Millisecond) // the adapter's outage hold
			}
			for _, j := range rec.Jobs() {
				if !j.DryRun {
					t.Errorf("a job that is not a dry run was sent: %q", j.Statement)
				}
			}
		})
	}
}

// Concurrent estimates of one text share one dry run; a caller whose
// context ends stops waiting at once, with its context's error, and the
// others are not disturbed.
func TestSharedAndCancellable(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	rec := bqrecorder.Start(t, bqrecorder.Options{
		DryRunError: func(string) *bqrecorder.Fault {
			<-release // hold every dry run until the test says
			return nil
		},
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	s := service(t, rec)
	ctx := context.Background()
	const n = 8
	var wg sync.WaitGroup
	results := make([]drycost.Estimate, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = s.Estimate(ctx, "select 1", nil) })
	}
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := s.Estimate(cctx, "select 1", nil)
		gaveUp <- err
	}()
	cancel()
	select {
	case err := <-gaveUp:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled caller: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled caller still waits for the dry run")
	}
	once.Do(func() { close(release) })
	wg.Wait()
	for i := range n {
		if errs[i] != nil || results[i].Kind != drycost.Estimated || results[i].Bytes != 1024 {
			t.Errorf("caller %d: %+v, %v", i, results[i], errs[i])
		}
	}
	if d := len(rec.DryRuns()); d != 1 {
		t.Errorf("%d dry runs for one text asked %d times at once", d, n+1)
	}
}

// An edit that supersedes an estimate leaves the dry runs already sent to
// finish (their answers are kept: the unchanged statement is not dry-run
// again) and drops those not sent yet: the stale text never reaches
// BigQuery.
func TestSupersededEstimates(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	var once sync.Once
	rec := bqrecorder.Start(t, bqrecorder.Options{
		DryRunError: func(stmt string) *bqrecorder.Fault {
			if stmt == "select 1" {
				arrived <- struct{}{}
				<-release
			}
			return nil
		},
	})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	s := serviceWith(t, rec, drycost.Options{Concurrency: 1})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = s.Estimate(ctx, "select 1", nil) })
	select {
	case <-arrived: // "select 1" is on the wire, and holds the one slot
	case <-time.After(10 * time.Second):
		t.Fatal("the first dry run was never sent")
	}
	wg.Go(func() { _, _ = s.Estimate(ctx, "select 2", nil) }) // waits for the slot
	cancel()
	wg.Wait()
	once.Do(func() { close(release) })
	e, err := s.Estimate(context.Background(), "select 1", nil)
	if err != nil || e.Kind != drycost.Estimated {
		t.Fatalf("select 1 after the edit: %+v, %v", e, err)
	}
	s.Close() // every flight is over: what was sent is on the wire
	var sent []string
	for _, r := range rec.DryRuns() {
		sent = append(sent, r.Statement)
	}
	if len(sent) != 1 || sent[0] != "select 1" {
		t.Errorf("dry runs sent: %q; want select 1 once (finished and kept) and never select 2", sent)
	}
}
