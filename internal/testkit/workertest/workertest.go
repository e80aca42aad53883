// Package workertest is the harness that the tests of package jit (goja
// workers: the test binary as `dfd worker`) and of jit/nodeworker (Node.js
// workers) share: scratch projects with a core, pools of workers of one
// engine that must leave no process behind, workers driven frame by frame,
// a fake DbAdapter with JiT code that calls it, the protocol and fault tests
// every engine must pass, and benchmark loops. Everything is parameterised
// by the worker's command (Engine). It is imported only by tests.
package workertest

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit"
)

// Engine is how to start workers of one engine.
type Engine struct {
	// Command is the worker's command for a project root and a core bundle
	// (jit.PoolOptions.Command): the pool, or StartRaw, appends
	// jit.WorkerArgs to it.
	Command func(t testing.TB, root, bundle string) []string
	// Env is added to the worker's environment (jit.PoolOptions.Env
	// unless a test sets its own).
	Env []string
}

// Settings is the workflow_settings.yaml of Project's projects.
const Settings = "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\ndefaultAssertionDataset: checks\n"

// Project writes a scratch project (Settings and files, slash paths to
// content) with core testenv.CoreVersion in node_modules, and returns its
// root.
func Project(t testing.TB, files map[string]string) string {
	t.Helper()
	all := map[string]string{"workflow_settings.yaml": Settings}
	for k, v := range files {
		all[k] = v
	}
	return testenv.WriteProject(t, testenv.CoreVersion, all)
}

// BundlePath is the core bundle of a Project.
func BundlePath(root string) string {
	return filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
}

// NewPool makes a pool of e's workers for root. Unset options default to
// the project's core (BundlePath(root), testenv.CoreVersion), e's command
// and environment, and Logger(t). The pool is closed when the test ends,
// which must take less than 5 s and leave no child process running.
func (e Engine) NewPool(t testing.TB, root string, opts jit.PoolOptions) *jit.Pool {
	t.Helper()
	opts.Root = root
	if opts.BundlePath == "" {
		opts.BundlePath = BundlePath(root)
	}
	if opts.CoreVersion == "" {
		opts.CoreVersion = testenv.CoreVersion
	}
	if opts.Command == nil {
		opts.Command = e.Command(t, root, opts.BundlePath)
	}
	if len(opts.Env) == 0 {
		opts.Env = e.Env
	}
	if opts.Logger == nil {
		opts.Logger = Logger(t)
	}
	p, err := jit.NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		start := time.Now()
		p.Close()
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Close took %s", d)
		}
		if kids := Children(); len(kids) > 0 {
			t.Errorf("processes left after Close: %v", kids)
		}
	})
	return p
}

// Logger logs to t at warning level and above (the workers' re-logged
// stderr included), so that failures come with the workers' words.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Children lists the pids of this process's child processes, zombies
// included (a child nobody waited for is a leak too). It reads /proc.
func Children() []int {
	me := os.Getpid()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ppid, ok := stat(pid); ok && ppid == me {
			out = append(out, pid)
		}
	}
	return out
}

// PPID is the parent of pid, -1 when pid is gone.
func PPID(pid int) int {
	if _, ppid, ok := stat(pid); ok {
		return ppid
	}
	return -1
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	state, _, ok := stat(pid)
	return ok && state != "Z"
}

// CPUTime is the user+system CPU time process pid has used so far, all its
// threads together (0 when it is gone).
func CPUTime(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	// After the command: state(0) ppid … utime(11) stime(12), in clock
	// ticks (100 per second on Linux).
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func stat(pid int) (state string, ppid int, ok bool) {
	f := statFields(pid)
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return f[0], ppid, err == nil
}

// statFields are the fields of /proc/<pid>/stat after the command name,
// which is in parentheses and may itself hold spaces and parentheses.
func statFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
