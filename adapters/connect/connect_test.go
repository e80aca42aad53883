package connect

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
