package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
	"github.com/dfdtools/dfd/workspace"
)

const trustAfter = 3

// incrementalOn is the editor's configuration that asks for incremental
// compiles (dfd.incremental, on by default).
func incrementalOn() fakeeditor.Config {
	return fakeeditorConfig(map[string]any{"dfd": map[string]any{"incremental": true}})
}

// Edits of one definitions file compile incrementally, by default: the
// first 3 results are compared with full compiles (published: the full
// ones), then the project is trusted; the previews show each edit.
func TestIncrementalCompilesBecomeTrusted(t *testing.T) {
	for name, editor := range map[string]fakeeditor.Config{"true": incrementalOn(), "default": {}} {
		t.Run(name, func(t *testing.T) { incrementalBecomesTrusted(t, editor, daemon.BackendOptions{}) })
	}
	t.Run("Node.js workers", func(t *testing.T) { incrementalBecomesTrusted(t, fakeeditor.Config{}, nodeBackend(t)) })
}

// nodeBackend compiles on Node.js workers (JiT previews on goja workers:
// this test binary as `dfd worker`), as dfd serve --engine=node does.
func nodeBackend(t *testing.T) daemon.BackendOptions {
	t.Helper()
	if _, _, err := nodeworker.FindNode(); err != nil {
		t.Fatalf("the Node.js engine needs Node.js %d or newer: %v", nodeworker.MinNodeMajor, err)
	}
	cache := t.TempDir()
	pools := jit.NewPools(jit.PoolOptions{
		Command: []string{os.Args[0], "worker"},
		Env:     []string{benchWorkerEnv + "=1"},
		Engines: map[string]jit.EngineCommand{jit.EngineNode: func(root, bundle string) ([]string, error) {
			return nodeworker.Command(cache, root, bundle)
		}},
	})
	t.Cleanup(func() { _ = pools.Close() })
	return daemon.BackendOptions{NewRunner: daemon.NewPooledWith(pools, daemon.PooledOptions{Engine: daemon.EngineNode})}
}

func incrementalBecomesTrusted(t *testing.T, editor fakeeditor.Config, backend daemon.BackendOptions) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{debounce: 10 * time.Millisecond, editor: editor, backend: backend})
	s.init(t, ws)
	stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
	if err := s.ed.Open(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	s.preview(t, stats)
	prev := "COUNT(*) AS n"
	for i := range 6 {
		next := fmt.Sprintf("COUNT(*) AS n%d", i)
		if err := s.ed.Replace(s.ctx, stats, prev, next); err != nil {
			t.Fatal(err)
		}
		prev = next
		res := s.preview(t, stats)
		if len(res.Actions) != 1 || !strings.Contains(res.Actions[0].SQL.Query, next) {
			t.Fatalf("edit %d: preview %+v", i, res.Actions)
		}
		st := projectStatus(t, s.status(t), "/shop").Incremental
		if st == nil {
			t.Fatalf("edit %d: no incremental status", i)
		}
		// The 3rd match makes it trusted. (A compile the editor's own
		// requests cause, such as the one after opening the file, may be
		// a rerun that matches too: the count, not the edit, decides.)
		want := workspace.IncrementalLearning
		if st.Matched >= trustAfter {
			want = workspace.IncrementalTrusted
		}
		if st.State != want || st.Mismatched != 0 || (i >= trustAfter-1 && st.State != workspace.IncrementalTrusted) {
			t.Errorf("edit %d: incremental status %+v, want state %s", i, st, want)
		}
	}
	st := projectStatus(t, s.status(t), "/shop").Incremental
	if st.Incremental < 6 || st.Matched < 3 {
		t.Errorf("after 6 edits of one file: %+v", st)
	}
}

// A definitions file that changes an object of includes, which its own
// action then reads, breaks the assumption of incremental compiles: its
// rerun sees what its previous run left. The verification catches it, the
// full result is what the user sees, the project falls back to full
// compiles (kept across restarts), and the log says which file.
func TestIncrementalFallsBackWhenAFileMutatesIncludes(t *testing.T) {
	t.Run("goja", func(t *testing.T) { incrementalFallsBack(t, daemon.BackendOptions{}) })
	t.Run("Node.js workers", func(t *testing.T) { incrementalFallsBack(t, nodeBackend(t)) })
}

func incrementalFallsBack(t *testing.T, backend daemon.BackendOptions) {
	ws := txtarWorkspace(t, "shop.txtar")
	root := filepath.Join(ws, "shop")
	for name, text := range map[string]string{
		"includes/registry.js":   "module.exports = { seen: [] };\n",
		"definitions/counter.js": "registry.seen.push(1);\npublish(\"counter_\" + registry.seen.length, { type: \"view\" }).query(\"SELECT 1 AS x\");\n",
	} {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := startServer(t, serverConfig{debounce: 10 * time.Millisecond, editor: incrementalOn(), backend: backend})
	s.init(t, ws)
	counter := filepath.Join(root, "definitions", "counter.js")
	if err := s.ed.Open(s.ctx, counter); err != nil {
		t.Fatal(err)
	}
	s.preview(t, counter)
	if err := s.ed.Replace(s.ctx, counter, "SELECT 1 AS x", "SELECT 2 AS x"); err != nil {
		t.Fatal(err)
	}
	res := s.preview(t, counter)
	if len(res.Actions) != 1 || !strings.HasSuffix(res.Actions[0].Target.Name, "counter_1") || !strings.Contains(res.Actions[0].SQL.Query, "SELECT 2") {
		t.Fatalf("preview after the edit: %+v (want the full compile's counter_1)", res.Actions)
	}
	st := projectStatus(t, s.status(t), "/shop").Incremental
	if st == nil || st.State != workspace.IncrementalFellBack || st.Mismatched != 1 || !strings.Contains(st.Detail, "definitions/counter.js") {
		t.Fatalf("incremental status after the mismatch: %+v", st)
	}
	if !strings.Contains(s.log.String(), "incremental compiles off for this project") {
		t.Errorf("no log line says why incremental compiles stopped")
	}
	// Full compiles from now on, also after a restart.
	if err := s.ed.Replace(s.ctx, counter, "SELECT 2 AS x", "SELECT 3 AS x"); err != nil {
		t.Fatal(err)
	}
	if res := s.preview(t, counter); !strings.HasSuffix(res.Actions[0].Target.Name, "counter_1") {
		t.Errorf("after falling back: %+v", res.Actions)
	}
	s2 := startServer(t, serverConfig{debounce: 10 * time.Millisecond, editor: incrementalOn(), backend: backend})
	s2.init(t, ws)
	if err := s2.ed.Open(s2.ctx, counter); err != nil {
		t.Fatal(err)
	}
	s2.preview(t, counter)
	if st := projectStatus(t, s2.status(t), "/shop").Incremental; st == nil || st.State != workspace.IncrementalFellBack {
		t.Errorf("after a restart: %+v", st)
	}
}

// dfd.incremental false: every compile is a full one.
func TestIncrementalSettingOff(t *testing.T) {
	for name, editor := range map[string]fakeeditor.Config{
		"false": fakeeditorConfig(map[string]any{"dfd": map[string]any{"incremental": false}}),
	} {
		t.Run(name, func(t *testing.T) {
			ws := txtarWorkspace(t, "shop.txtar")
			s := startServer(t, serverConfig{debounce: 10 * time.Millisecond, editor: editor})
			s.init(t, ws)
			stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
			if err := s.ed.Open(s.ctx, stats); err != nil {
				t.Fatal(err)
			}
			s.preview(t, stats)
			if err := s.ed.Replace(s.ctx, stats, "COUNT(*) AS n", "COUNT(*) AS m"); err != nil {
				t.Fatal(err)
			}
			s.preview(t, stats)
			st := projectStatus(t, s.status(t), "/shop").Incremental
			if st == nil || st.State != workspace.IncrementalOff || st.Incremental != 0 {
				t.Errorf("incremental status with dfd.incremental %s: %+v", name, st)
			}
		})
	}
}
