package daemon_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/lsp"
)

// workerProcs lists the children of this test process whose command line
// has "worker" (the pool's `<test binary> worker …`), with their CPU time
// (utime+stime, clock ticks).
func workerProcs(t *testing.T) map[int]int64 {
	t.Helper()
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state ppid … utime(14) stime(15).
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat)[i+1:])
		if len(f) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != self {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmd), "worker") {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = ut + st
	}
	return out
}

// A JiT preview whose code loops forever runs on a warm worker; killing
// the worker processes (SIGKILL) makes the preview answer at once (an
// error), and the pool's replacement workers serve the next preview.
func TestPreviewSurvivesWorkerKilled(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	root := jitWorkspace(t)
	loop := filepath.Join(root, "definitions", "jit", "forever.js")
	normal := filepath.Join(root, "definitions", "jit", "plain.js")
	if err := os.WriteFile(loop, []byte(`publish("jit_forever", { type: "table" }).jitCode(async (jctx) => {
  while (true) {}
});
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(normal, []byte(`publish("jit_plain", { type: "table" }).jitCode(async (jctx) => {
  return { query: "SELECT 42 AS answer" };
});
`), 0o644); err != nil {
		t.Fatal(err)
	}

	poolLog := &logBuffer{}
	pools := jit.NewPools(jit.PoolOptions{
		Workers: 2,
		Command: []string{os.Args[0], "worker"},
		Env:     []string{benchWorkerEnv + "=1"},
		Timeout: 2 * time.Minute,
		Logger:  slog.New(slog.NewTextHandler(poolLog, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(func() {
		_ = pools.Close()
		if t.Failed() {
			t.Logf("pool log:\n%s", lastLines(poolLog.String(), 40))
		}
	})
	s := startServer(t, serverConfig{
		editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}}),
		// A JiT deadline far beyond the test's wait: only the kill can end the loop in time.
		backend: daemon.BackendOptions{NewRunner: daemon.NewPooled(pools), JitTimeout: 2 * time.Minute},
	})
	s.init(t, root)
	if err := s.ed.Await(s.ctx, "first compile", func(st *fakeeditor.State) bool { return len(st.PreviewChanged) > 0 }); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		res lsp.PreviewResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		params := map[string]any{"textDocument": map[string]any{"uri": uri.File(loop)}}
		a.err = s.ed.Call(s.ctx, lsp.MethodPreview, params, &a.res)
		done <- a
	}()

	// Wait until a worker spins (a fifth of a CPU or more in two polls in a
	// row; more on a quiet machine, but CI may be busy): the
	// looping JiT code is running on it.
	var killed []int
	deadline := time.Now().Add(30 * time.Second)
	prev := workerProcs(t)
	busyPolls := map[int]int{}
	for len(killed) == 0 {
		select {
		case a := <-done:
			t.Fatalf("the looping preview answered before any worker was killed: err %v, %+v", a.err, a.res.Actions)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no busy worker process found; workers: %v", prev)
		}
		cur := workerProcs(t)
		busy := false
		for pid, ticks := range cur {
			if old, ok := prev[pid]; ok && ticks-old >= 4 { // a fifth of a CPU: the machine may be busy
				busyPolls[pid]++
			} else {
				busyPolls[pid] = 0
			}
			// Busy in two polls in a row: the worker accepted the
			// request and is running it, so this kill is the request's
			// failure (the pool retries only requests not yet accepted).
			if busyPolls[pid] >= 2 {
				busy = true
			}
		}
		if busy {
			for pid := range cur {
				if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
					killed = append(killed, pid)
				}
			}
		}
		prev = cur
	}
	t.Logf("killed worker processes %v", killed)

	start := time.Now()
	var a answer
	select {
	case a = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("dfd/preview of the looping action did not answer within 10s of killing its worker")
	}
	t.Logf("looping preview answered %s after the kill", time.Since(start).Round(time.Millisecond))
	if a.err != nil {
		t.Logf("looping preview: error response: %v", a.err)
	} else {
		var found bool
		for _, act := range a.res.Actions {
			if act.Target.Name != "jit_forever" {
				continue
			}
			found = true
			if act.JitPreview == nil || act.JitPreview.Error == "" {
				t.Errorf("looping preview answered without an error: %+v", act.JitPreview)
			} else {
				t.Logf("looping preview: JiT error %q", act.JitPreview.Error)
			}
		}
		if !found {
			t.Errorf("looping preview has no jit_forever action: %+v", a.res.Actions)
		}
	}

	// Right away: a killed idle worker may still be an unreaped zombie
	// whose pipes look open; the pool must not hand it the next request.
	// The pool replaced the killed workers: a normal JiT preview succeeds.
	res := s.preview(t, normal)
	if len(res.Actions) != 1 || res.Actions[0].JitPreview == nil {
		t.Fatalf("preview of the normal action: %+v", res.Actions)
	}
	if jp := res.Actions[0].JitPreview; jp.Error != "" || !strings.Contains(jp.SQL.Query, "SELECT 42 AS answer") {
		t.Fatalf("normal JiT preview: error %q, query %q", jp.Error, jp.SQL.Query)
	}
}
