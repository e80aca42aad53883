package daemon_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The editor's daemon, a second editor and commands in a shell share the
// metadata cache: the daemon holds a project open with BigQuery (the
// recording stand-in) as its metadata source and caches the schemas of
// the two warehouse tables the project reads; BigQuery then goes down,
// and while the daemon still runs, three `dfd check` and a `dfd metadata
// status` (the built binary, processes of their own) and a second daemon
// on the same project run at once: every check analyses both statements,
// status counts the tables, the second editor's hover shows the columns.
// The same check with an empty cache analyses none: the schemas can only
// have come from the daemon's cache.
func TestCheckUsesTheEditorsCache(t *testing.T) {
	bin := dfdBin(t)
	cacheHome := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cacheHome)
	t.Setenv("DFD_BIGQUERY_ENDPOINT", "")
	rec := bqrecorder.Start(t, bqrecorder.Options{})
	// BigQuery is reached through a front that the test can close, at an
	// address that then refuses connections (the cache file's name
	// depends on the endpoint, so the check must use the same one).
	up, err := url.Parse(rec.URL)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(httputil.NewSingleHostReverseProxy(up))
	t.Cleanup(front.Close)
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/sources.js": `declare({schema: "raw", name: "src1"});
declare({schema: "raw", name: "src2"});`,
		"definitions/a.sqlx": "config { type: \"view\" }\nSELECT id, name FROM ${ref(\"src1\")}\n",
		"definitions/b.sqlx": "config { type: \"view\" }\nSELECT id, UPPER(name) AS name FROM ${ref(\"src2\")}\n",
	})
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": front.URL},
	}})})
	s.init(t, root)

	// The daemon's SQL check fetches both tables; the test sees them in
	// the cache file as any other process would, while the daemon runs.
	path, err := cache.DefaultPath(front.URL, "test")
	if err != nil {
		t.Fatal(err)
	}
	for !cached(t, path, "src1", "src2") {
		select {
		case <-s.ctx.Done():
			t.Fatalf("the daemon did not cache test.raw.src1 and src2 in %s", path)
		case <-time.After(50 * time.Millisecond):
		}
	}

	front.Close() // BigQuery is down from now on
	if resp, err := http.Get(front.URL); err == nil {
		resp.Body.Close()
		t.Fatal("the closed endpoint still answers")
	}
	// run runs the dfd binary; it must end within 3 minutes.
	run := func(env []string, args ...string) (stdout, stderr string) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run() // the exit status is not what this test is about
		if ctx.Err() != nil {
			t.Errorf("dfd %s did not end within 3 minutes:\n%s", strings.Join(args, " "), errb.String())
		}
		return out.String(), errb.String()
	}
	check := func(env ...string) string {
		_, stderr := run(env, "check", root, "--endpoint", front.URL)
		return stderr
	}

	// Three checks and a `dfd metadata status` at once, beside the daemon.
	var (
		wg     sync.WaitGroup
		checks [3]string
		status string
	)
	for i := range checks {
		wg.Go(func() { checks[i] = check() })
	}
	wg.Go(func() {
		var stderr string
		status, stderr = run(nil, "metadata", "status", root, "--endpoint", front.URL, "--json")
		status += stderr
	})
	// A second editor opens the project meanwhile: its hover shows the
	// columns the first one cached.
	s2 := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": front.URL},
	}})})
	s2.init(t, root)
	s2.awaitPreviewChanged(t, 0, "") // compiled: hovers know the refs
	a := filepath.Join(root, "definitions", "a.sqlx")
	if err := s2.ed.Open(s2.ctx, a); err != nil {
		t.Fatal(err)
	}
	if h := hoverText(t, s2, a, `ref("src1")`, 6); !strings.Contains(h, "BigQuery") || !strings.Contains(h, "INTEGER") {
		t.Errorf("the second editor's hover lacks the cached schema:\n%s", h)
	}
	wg.Wait()
	for i, out := range checks {
		if !strings.Contains(out, "2 statement(s) analysed, 0 not") {
			t.Errorf("dfd check %d beside the daemon, BigQuery down, did not analyse both statements:\n%s", i, out)
		}
		if strings.Contains(out, "metadata cache") {
			t.Errorf("dfd check %d warned about the metadata cache:\n%s", i, out)
		}
	}
	if !strings.Contains(status, `"tables": 2`) || strings.Contains(status, "warning") {
		t.Errorf("dfd metadata status beside the daemon:\n%s", status)
	}
	if out := check("XDG_CACHE_HOME=" + t.TempDir()); !strings.Contains(out, "0 statement(s) analysed, 2 not") {
		t.Errorf("dfd check with an empty cache, BigQuery down, analysed something: the test shows nothing:\n%s", out)
	}
	if log := s.log.String(); strings.Contains(log, "memory only") {
		t.Errorf("the daemon stopped using its cache file:\n%s", lastLines(log, 40))
	}
}

// cached reports whether the cache file at path holds test.raw.<name> for
// each name.
func cached(t *testing.T, path string, names ...string) bool {
	t.Helper()
	c := cache.Open(nil, cache.Options{Path: path})
	defer c.Close()
	if w := c.Warnings(); len(w) > 0 {
		t.Fatalf("opening the daemon's cache: %q", w)
	}
	for _, n := range names {
		req := &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "test", Schema: "raw", Name: n}}
		if _, ok, err := c.CachedTable(context.Background(), req); !ok || err != nil {
			return false
		}
	}
	return true
}
