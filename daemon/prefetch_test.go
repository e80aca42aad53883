package daemon_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/jit"
)

// A JiT action's second preview gets its metadata reads answered in the
// worker from what the daemon read before the run (the reads of the first
// preview), with the same SQL and the same calls listed, marked as such.
func TestJitPreviewPrefetchesReads(t *testing.T) {
	root := jitWorkspace(t)
	poolLog := &logBuffer{}
	pools := jit.NewPools(jit.PoolOptions{
		Workers: 1,
		Command: []string{os.Args[0], "worker"},
		Env:     []string{benchWorkerEnv + "=1"},
		Logger:  slog.New(slog.NewTextHandler(poolLog, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(func() {
		_ = pools.Close()
		if t.Failed() {
			t.Logf("pool log:\n%s", lastLines(poolLog.String(), 40))
		}
	})
	s := startServer(t, serverConfig{
		editor:  fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}}),
		backend: daemon.BackendOptions{NewRunner: daemon.NewPooled(pools)},
	})
	s.init(t, root)
	file := filepath.Join(root, "definitions", "jit", "daily_clicks.js")

	first := s.preview(t, file)
	if len(first.Actions) != 1 || first.Actions[0].JitPreview == nil || first.Actions[0].JitPreview.Error != "" {
		t.Fatalf("first preview: %+v", first.Actions)
	}
	jp1 := first.Actions[0].JitPreview
	if len(jp1.Calls) == 0 {
		t.Fatal("the JiT code of daily_clicks made no adapter call; the test needs one")
	}
	for _, c := range jp1.Calls {
		if hasNote(c.Notes, "answered in the worker") {
			t.Errorf("first preview: call %s %s marked as prefetched", c.Method, c.Summary)
		}
	}

	// A new compile, so that the JiT code runs again (results are cached
	// per compile).
	if err := s.ed.Open(s.ctx, file); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.SetText(s.ctx, file, s.ed.Text(file)+"\n// edited\n"); err != nil {
		t.Fatal(err)
	}
	second := s.preview(t, file)
	if second.Version <= first.Version {
		t.Fatalf("second preview is from version %d, the first from %d", second.Version, first.Version)
	}
	jp2 := second.Actions[0].JitPreview
	if jp2 == nil || jp2.Error != "" {
		t.Fatalf("second preview: %+v", second.Actions[0])
	}
	if jp2.SQL.Query != jp1.SQL.Query || !slices.Equal(jp2.SQL.PreOps, jp1.SQL.PreOps) {
		t.Errorf("SQL changed with prefetched answers:\n%s\nvs\n%s", jp2.SQL.Query, jp1.SQL.Query)
	}
	if len(jp2.Calls) != len(jp1.Calls) {
		t.Fatalf("second preview lists %d calls, the first %d", len(jp2.Calls), len(jp1.Calls))
	}
	for i, c := range jp2.Calls {
		if c.Method != jp1.Calls[i].Method || c.Summary != jp1.Calls[i].Summary {
			t.Errorf("call %d: %s %s, first preview %s %s", i, c.Method, c.Summary, jp1.Calls[i].Method, jp1.Calls[i].Summary)
		}
		read := c.Method == "GetTable" || c.Method == "ListTables"
		if read && jp1.Calls[i].Error == "" && !hasNote(c.Notes, "answered in the worker") {
			t.Errorf("call %d (%s %s) was not answered in the worker: notes %q", i, c.Method, c.Summary, c.Notes)
		}
		if !read && hasNote(c.Notes, "answered in the worker") {
			t.Errorf("call %d (%s) is not a read but was answered in the worker", i, c.Method)
		}
	}
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}
