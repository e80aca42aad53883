package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// `dfd metadata refresh` against a BigQuery that accepts connections and
// never answers ends after about one call limit (here 2 s through
// $DFD_BIGQUERY_TIMEOUT; 20 s by default, where it used to take 300 s),
// with a message that says so; the datasets after the first are not even
// asked.
func TestMetadataRefreshHangingBigQuery(t *testing.T) {
	rec := bqrecorder.Start(t, bqrecorder.Options{Fault: func(*http.Request, int) *bqrecorder.Fault { return bqrecorder.Hang() }})
	t.Setenv("DFD_BIGQUERY_TIMEOUT", "2s")
	cachePath := filepath.Join(t.TempDir(), "m.db")
	start := time.Now()
	res := runDFD(t, "metadata", "refresh", "--datasets", "a,b,c", "--endpoint", rec.URL, "--project", "p", "--cache", cachePath)
	elapsed := time.Since(start)
	if res.code != 1 {
		t.Errorf("exit %d, want 1:\n%s", res.code, res.stderr)
	}
	if elapsed > 12*time.Second {
		t.Errorf("took %v with a 2s call limit", elapsed)
	}
	stderr := string(res.stderr)
	for _, want := range []string{"refresh p.a: ", "no answer within 2s", "refresh p.b: ", "BigQuery is not answering"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, r := range rec.Requests() {
		if strings.Contains(r.Path, "/datasets/b/") || strings.Contains(r.Path, "/datasets/c/") {
			t.Errorf("asked BigQuery again after it was found unresponsive: %s", r.Path)
		}
	}
	if strings.Contains(stderr, "\r") {
		t.Errorf("progress drawn on stderr that is not a terminal:\n%q", stderr)
	}
}

// Interrupted (the context a signal cancels), `dfd metadata refresh` ends
// at once and says what it saved: the datasets whose listings were
// complete, which the cache then holds; the tables of 5,000-table
// listings come page by page.
func TestMetadataRefreshInterrupted(t *testing.T) {
	rec := bqrecorder.Start(t, bqrecorder.Options{
		Tables: func(ds string) int { return map[string]int{"a": 5000, "b": 3}[ds] },
		Fault: func(r *http.Request, _ int) *bqrecorder.Fault {
			if strings.Contains(r.URL.Path, "/datasets/b/") {
				return bqrecorder.Hang()
			}
			return nil
		},
	})
	cachePath := filepath.Join(t.TempDir(), "m.db")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Ctrl-C once dataset b is being asked for
		for ctx.Err() == nil {
			for _, r := range rec.Requests() {
				if strings.Contains(r.Path, "/datasets/b/") {
					cancel()
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := run(ctx, env, []string{"metadata", "refresh", "--datasets", "a,b,c", "--endpoint", rec.URL, "--project", "p", "--cache", cachePath})
	if code == 0 {
		t.Errorf("exit 0 although interrupted")
	}
	want := fmt.Sprintf("interrupted: 1 of 3 datasets (5000 tables) refreshed and saved in %s; the other 2 keep what the cache had.", cachePath)
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	lists := 0
	for _, r := range rec.Requests() {
		if strings.HasSuffix(r.Path, "/datasets/a/tables") {
			lists++
		}
	}
	if lists != 5 {
		t.Errorf("%d tables.list pages for 5,000 tables, want 5", lists)
	}
	// What it said it saved is in the cache file.
	c := cache.Open(nil, cache.Options{Path: cachePath, DefaultDatabase: "p"})
	defer c.Close()
	if st := c.Stats(); st.Tables != 5000 || st.Lists != 1 {
		t.Errorf("the cache holds %d tables and %d listings, want 5000 and 1", st.Tables, st.Lists)
	}
}

// On a terminal, the progress line is redrawn in place: which dataset of
// how many, tables listed and fetched; cleared before the final line.
func TestRefreshProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := &refreshProgress{w: &buf, total: 2}
	p.start(1, cache.Dataset{Database: "p", Schema: "b"})
	p.update(adapters.ListProgress{Database: "p", Schema: "b", Listed: 1000, Fetched: 0})
	p.update(adapters.ListProgress{Database: "p", Schema: "b", Listed: 1000, Fetched: 1000})
	p.clear()
	p.update(adapters.ListProgress{Database: "p", Schema: "b", Listed: 2000, Fetched: 1000}) // too late
	got := buf.String()
	for _, want := range []string{"\r\x1b[Krefresh: dataset 2/2, listing p.b", "\r\x1b[Krefresh: dataset 2/2, p.b: 1000 tables listed, 1000 fetched"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress %q lacks %q", got, want)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") || strings.Contains(got, "2000") || p.tables() != 1000 {
		t.Errorf("progress %q: not cleared last, or drawn after; tables %d", got, p.tables())
	}
}

// `dfd check` waits for an unresponsive BigQuery about one call limit in
// all (here 2 s through $DFD_BIGQUERY_TIMEOUT; it took 181 s with the
// earlier policy), whatever it reports then (exit codes: see check.go's
// own tests), and BigQuery is asked nothing once a call found it so.
// The same with 503 on every call: each call gives up after its four
// attempts, and the first that does stops the others.
func TestCheckUnresponsiveBigQueryIsBounded(t *testing.T) {
	dir := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), testenv.CoreVersion)
	for _, tt := range []struct {
		name  string
		fault *bqrecorder.Fault
	}{
		{"hang", bqrecorder.Hang()},
		{"503", bqrecorder.Status(503, 0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			t.Setenv("DFD_BIGQUERY_TIMEOUT", "2s")
			var (
				mu    sync.Mutex
				times []time.Time
			)
			rec := bqrecorder.Start(t, bqrecorder.Options{Fault: func(*http.Request, int) *bqrecorder.Fault {
				mu.Lock()
				times = append(times, time.Now())
				mu.Unlock()
				return tt.fault
			}})
			start := time.Now()
			res := runDFD(t, "check", dir, "--endpoint", rec.URL)
			elapsed := time.Since(start)
			if elapsed > 45*time.Second {
				t.Errorf("dfd check took %v against an unresponsive BigQuery with a 2s call limit", elapsed)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(times) == 0 {
				t.Fatalf("BigQuery was never asked (exit %d):\n%s", res.code, res.stderr)
			}
			// Every request falls within one call limit of the first (plus
			// slack for a loaded machine): after that, nothing is sent.
			if last := times[len(times)-1].Sub(times[0]); last > 6*time.Second {
				t.Errorf("requests went on for %v after the first (%d requests)", last, len(times))
			}
			t.Logf("exit %d after %v, %d requests", res.code, elapsed.Round(time.Millisecond), len(times))
		})
	}
}

// `dfd jit --bigquery-timeout` bounds each of the JiT code's database
// calls: against a hanging BigQuery, the call fails after the limit and
// the JiT code goes on (here it catches the error), well before the JiT
// deadline.
func TestJitBigQueryTimeoutFlag(t *testing.T) {
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/probe.js": `publish("probe", { type: "table" }).jitCode(async (jctx) => {
  try { await jctx.adapter.getTable({ target: { database: "test", schema: "d", name: "t" } }); } catch (e) {}
  return "SELECT 1 AS ok";
});
`,
	})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	rec := bqrecorder.Start(t, bqrecorder.Options{Fault: func(*http.Request, int) *bqrecorder.Fault { return bqrecorder.Hang() }})
	start := time.Now()
	res := runDFD(t, "jit", dir, "--action", "probe", "--endpoint", rec.URL, "--bigquery-timeout", "1s", "--jit-timeout", "60s")
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("took %v with a 1s call limit", elapsed)
	}
	if res.code != 0 || !strings.Contains(string(res.stdout), "SELECT 1 AS ok") {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(string(res.stderr), "no answer within 1s") {
		t.Errorf("the call list does not say the call timed out:\n%s", res.stderr)
	}
	if res := runDFD(t, "jit", dir, "--action", "probe", "--bigquery-timeout", "soon"); res.code != 2 || !strings.Contains(string(res.stderr), "--bigquery-timeout") {
		t.Errorf("a bad --bigquery-timeout: exit %d\n%s", res.code, res.stderr)
	}
}
