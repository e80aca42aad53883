package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The transpile cache must be invisible: a compile served from it equals
// one that ran core's compiler, edits are seen at once, compiler errors are
// core's every time, and a damaged disk entry is never run.
func TestTranspileCache(t *testing.T) {
	t.Cleanup(func() { engine.SetTranspileCacheDir(""); engine.ResetTranspileCache() })
	engine.SetTranspileCacheDir("")
	engine.ResetTranspileCache()

	tag := strings.ReplaceAll(t.Name(), "/", "_") + time.Now().Format("150405.000000000")
	files := map[string]string{
		"definitions/a.sqlx":      "config { type: \"view\" }\n-- " + tag + "\nSELECT 1 AS one\n",
		"definitions/b.sqlx":      "config { type: \"table\" }\nSELECT * FROM ${ref(\"a\")}\n",
		"definitions/broken.sqlx": "config { type: \"view\" \nSELECT 2\n",
	}
	files["workflow_settings.yaml"] = settings
	root := testenv.WriteProject(t, testenv.CoreVersion, files)
	var paths []string
	for name := range files {
		paths = append(paths, name)
	}
	compile := func(t *testing.T) (*dataformpb.CompiledGraph, error) {
		t.Helper()
		return compileAt(t, root, paths, time.Minute)
	}
	g1, err := compile(t)
	if err != nil {
		t.Fatal(err)
	}
	first := engine.TranspileCacheStats()
	if first.Misses < 2 || first.Hits != 0 {
		t.Fatalf("first compile: %+v, want misses and no hits", first)
	}
	brokenErr := errorsByFile(g1)["definitions/broken.sqlx"]
	if brokenErr == "" {
		t.Fatalf("broken.sqlx compiled without an error: %v", errorsByFile(g1))
	}

	g2, err := compile(t)
	if err != nil {
		t.Fatal(err)
	}
	second := engine.TranspileCacheStats()
	if second.Hits < 2 {
		t.Errorf("second compile: %+v, want hits for a.sqlx and b.sqlx", second)
	}
	if got := errorsByFile(g2)["definitions/broken.sqlx"]; got != brokenErr {
		t.Errorf("compiler error changed with the cache:\n%s\nvs\n%s", got, brokenErr)
	}
	if !sameGraph(g1, g2) {
		t.Errorf("graph served from the cache differs from the first one")
	}

	if err := os.WriteFile(filepath.Join(root, "definitions/a.sqlx"), []byte("config { type: \"view\" }\n-- "+tag+"\nSELECT 2 AS two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g3, err := compile(t)
	if err != nil {
		t.Fatal(err)
	}
	if q := tableQuery(g3, "a"); !strings.Contains(q, "SELECT 2 AS two") {
		t.Errorf("edited a.sqlx compiled to %q", q)
	}

	// Disk layer: a new process (the memory layer reset) reads entries
	// back; a damaged entry is dropped and recomputed.
	dir := t.TempDir()
	engine.SetTranspileCacheDir(dir)
	engine.ResetTranspileCache()
	g4, err := compile(t)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*", "*.js"))
	if len(entries) < 2 {
		t.Fatalf("disk layer holds %d entries, want ≥ 2", len(entries))
	}
	engine.ResetTranspileCache()
	g5, err := compile(t)
	if err != nil {
		t.Fatal(err)
	}
	if s := engine.TranspileCacheStats(); s.DiskHits < 2 {
		t.Errorf("after a reset: %+v, want disk hits", s)
	}
	if !sameGraph(g4, g5) {
		t.Errorf("graph from disk entries differs")
	}
	for _, e := range entries {
		b, _ := os.ReadFile(e)
		if err := os.WriteFile(e, append(b[:len(b)-3], []byte("(){")...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	engine.ResetTranspileCache()
	g6, err := compile(t)
	if err != nil {
		t.Fatal(err)
	}
	if s := engine.TranspileCacheStats(); s.DiskHits != 0 {
		t.Errorf("damaged entries were used: %+v", s)
	}
	if !sameGraph(g4, g6) {
		t.Errorf("graph after damaged disk entries differs: %v", errorsByFile(g6))
	}
}

func tableQuery(g *dataformpb.CompiledGraph, name string) string {
	for _, tb := range g.GetTables() {
		if tb.GetTarget().GetName() == name {
			return tb.GetQuery()
		}
	}
	return ""
}

// sameGraph compares what the files compiled to: every table (with its
// query) and every error message.
func sameGraph(a, b *dataformpb.CompiledGraph) bool {
	if len(a.GetTables()) != len(b.GetTables()) {
		return false
	}
	for i, ta := range a.GetTables() {
		if !proto.Equal(ta, b.GetTables()[i]) {
			return false
		}
	}
	ea, eb := errorsByFile(a), errorsByFile(b)
	if len(ea) != len(eb) {
		return false
	}
	for k, v := range ea {
		if eb[k] != v {
			return false
		}
	}
	return true
}
