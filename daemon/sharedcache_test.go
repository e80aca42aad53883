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
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The editor's daemon and `dfd check` in a shell share the metadata cache:
// the daemon holds a project open with BigQuery (the recording stand-in)
// as its metadata source and caches the schemas of the two warehouse
// tables the project reads; BigQuery then goes down, and `dfd check` (the
// built binary, a process of its own) run on the project while the daemon
// still runs analyses both statements from what the daemon cached. The
// same check with an empty cache analyses none: the schemas can only have
// come from the daemon's cache.
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
	check := func(env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "check", root, "--endpoint", front.URL)
		cmd.Env = append(os.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run() // the exit status is not what this test is about
		if ctx.Err() != nil {
			t.Fatalf("dfd check did not end within 3 minutes:\n%s", stderr.String())
		}
		return stderr.String()
	}
	out := check()
	if !strings.Contains(out, "2 statement(s) analysed, 0 not") {
		t.Errorf("dfd check beside the daemon, BigQuery down, did not analyse both statements:\n%s", out)
	}
	if strings.Contains(out, "metadata cache") {
		t.Errorf("dfd check warned about the metadata cache:\n%s", out)
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
