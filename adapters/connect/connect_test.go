package connect

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func TestOpen(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	cfg := Config{Config: credentials.Config{Endpoint: "http://127.0.0.1:1", Project: "p", DefaultProject: "wf", Getenv: func(string) string { return "" }}}
	b, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := filepath.Join(filepathCache(t), "dfd", "metadata", "http_127.0.0.1_1-p.db")
	if b.Cache.Path() != want || b.BigQuery.Project() != "p" || b.Credentials.DefaultDatabase != "wf" {
		t.Errorf("path %q (want %q), project %q, default db %q", b.Cache.Path(), want, b.BigQuery.Project(), b.Credentials.DefaultDatabase)
	}
	// The same file is what the cache-only opener finds (after the first
	// one lets go of it).
	b.Close()
	c, creds, err := OpenCacheOnly(ctx, cfg)
	if err != nil || c.Path() != want || creds.Project != "p" {
		t.Errorf("cache only: %v %v", c.Path(), err)
	}
	c.Close()

	cfg.CachePath = NoCache
	b2, err := Open(ctx, cfg)
	if err != nil || b2.Cache.Path() != "" {
		t.Errorf("no cache: %q %v", b2.Cache.Path(), err)
	}
	b2.Close()
	if _, _, err := OpenCacheOnly(ctx, cfg); err == nil {
		t.Error("cache-only open with the cache off")
	}
	if _, err := Open(ctx, Config{Config: credentials.Config{Endpoint: "http://x", Getenv: func(string) string { return "" }}}); err == nil {
		t.Error("no project accepted")
	}
}

func filepathCache(t *testing.T) string {
	t.Helper()
	return os.Getenv("XDG_CACHE_HOME")
}

func TestGraphDatasets(t *testing.T) {
	tg := func(db, schema string) *dataformpb.Target {
		return &dataformpb.Target{Database: db, Schema: schema, Name: "x"}
	}
	g := &dataformpb.CompiledGraph{
		Tables:       []*dataformpb.Table{{Target: tg("", "mart"), DependencyTargets: []*dataformpb.Target{tg("raw-p", "raw"), tg("", "mart")}}},
		Operations:   []*dataformpb.Operation{{Target: tg("p", "ops")}},
		Assertions:   []*dataformpb.Assertion{{Target: tg("", "checks"), DependencyTargets: []*dataformpb.Target{tg("p", "mart")}}},
		Declarations: []*dataformpb.Declaration{{Target: tg("other", "src")}, {Target: &dataformpb.Target{Name: "no-schema"}}},
	}
	got := GraphDatasets(g, "p")
	ds := func(db, schema string) cache.Dataset { return cache.Dataset{Database: db, Schema: schema} }
	want := []cache.Dataset{ds("other", "src"), ds("p", "checks"), ds("p", "mart"), ds("p", "ops"), ds("raw-p", "raw")}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// $DFD_BIGQUERY_TIMEOUT sets the limit of each BigQuery call unless the
// caller set one; a value that is not a duration is an error that names
// the variable.
func TestOpenCallTimeout(t *testing.T) {
	ctx := context.Background()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == TimeoutEnv {
				return v
			}
			return ""
		}
	}
	for _, tt := range []struct {
		env    string
		set    time.Duration
		want   time.Duration
		errHas string
	}{
		{"", 0, bigquery.DefaultCallTimeout, ""},
		{"5s", 0, 5 * time.Second, ""},
		{"1m30s", 0, 90 * time.Second, ""},
		{"5s", 7 * time.Second, 7 * time.Second, ""},
		{"20", 0, 0, "$DFD_BIGQUERY_TIMEOUT: \"20\" is not a time limit"},
		{"-1s", 0, 0, "is not a time limit"},
	} {
		cfg := Config{
			Config:    credentials.Config{Endpoint: "http://127.0.0.1:1", Project: "p", Getenv: env(tt.env)},
			CachePath: NoCache,
			BigQuery:  bigquery.Options{CallTimeout: tt.set},
		}
		b, err := Open(ctx, cfg)
		if tt.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("%q: err %v, want %q", tt.env, err, tt.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.env, err)
		}
		if got := b.BigQuery.CallTimeout(); got != tt.want {
			t.Errorf("%q (set %v): call timeout %v, want %v", tt.env, tt.set, got, tt.want)
		}
		b.Close()
	}
}
