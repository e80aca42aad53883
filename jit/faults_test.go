package jit_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
)

func TestJitFaults(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{
		Workers:     1,
		MemoryLimit: 200 << 20,
		Grace:       time.Second,
	})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		code    string
		timeout time.Duration
		adapter *workertest.Adapter
		// The error must match all of these.
		code_   jit.Code // for *jit.WorkerError; 0: the error is a *jit.CrashError
		is      error
		message string
		// The worker is replaced after the fault.
		replaced bool
	}{
		{name: "throws", code: "async (jctx) => { throw new Error('no partition column'); }", code_: jit.CodeScript, message: "Error: no partition column"},
		{name: "syntax error", code: "async (jctx) => { return 'x' +; }", code_: jit.CodeScript, message: "SyntaxError"},
		{name: "infinite recursion", code: "async (jctx) => { const f = n => f(n + 1) + 1; return f(0); }", code_: jit.CodeScript, message: "Maximum call stack size exceeded"},
		{name: "sync loop", code: "async (jctx) => { while (true) {} }", timeout: 500 * time.Millisecond, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout},
		{name: "loop of awaited adapter calls", code: "async (jctx) => { for (;;) { await jctx.adapter.listTables({database: 'p', schema: 'd'}); } }",
			timeout: 500 * time.Millisecond, adapter: &workertest.Adapter{}, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout},
		{name: "adapter that never answers", code: "async (jctx) => { await jctx.adapter.listTables({database: 'p', schema: 'd'}); return 'x'; }",
			timeout: 500 * time.Millisecond, adapter: &workertest.Adapter{Delay: time.Hour}, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout},
		{name: "allocates past the ceiling", code: "async (jctx) => { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }",
			code_: jit.CodeResourceExhausted, is: jit.ErrMemoryLimit, replaced: true},
		// goja's interrupt does not stop regexp2's backtracking: only the
		// kill after the grace period ends this one.
		{name: "catastrophic regexp", code: workertest.JitCatastrophicRegexp,
			timeout: 500 * time.Millisecond, is: engine.ErrTimeout, message: "killed: no answer", replaced: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			started := p.Started()
			job := workertest.JitJob(c.code)
			job.Timeout = c.timeout
			a := c.adapter
			if a == nil {
				a = &workertest.Adapter{}
			}
			start := time.Now()
			_, err := p.Jit(context.Background(), job, a.RPC)
			took := time.Since(start)
			t.Logf("after %s: %v", took.Round(time.Millisecond), err)
			if err == nil {
				t.Fatal("no error")
			}
			if c.code_ != 0 {
				var we *jit.WorkerError
				if !errors.As(err, &we) || we.Code != c.code_ {
					t.Errorf("err = %#v, want a *jit.WorkerError with code %s", err, c.code_)
				}
			} else {
				var ce *jit.CrashError
				if !errors.As(err, &ce) {
					t.Errorf("err = %#v, want a *jit.CrashError", err)
				}
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want it to wrap %v", err, c.is)
			}
			if c.message != "" && !strings.Contains(err.Error(), c.message) {
				t.Errorf("err = %v, want it to mention %q", err, c.message)
			}
			if c.timeout > 0 && took > c.timeout+3*time.Second {
				t.Errorf("took %s for a %s deadline", took, c.timeout)
			}
			workertest.ExpectOK(t, p)
			if replaced := p.Started() > started; replaced != c.replaced {
				t.Errorf("worker replaced: %v, want %v", replaced, c.replaced)
			}
		})
	}
}

func TestWorkerKilledMidRequest(t *testing.T) {
	root := workertest.Project(t, nil)
	workertest.KilledMidRequest(t, gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1}))
}

func TestCrashReportsStderr(t *testing.T) {
	root := workertest.Project(t, nil)
	once := filepath.Join(t.TempDir(), "once")
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=crash", onceEnv + "=" + once}})
	_, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
	var ce *jit.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %#v, want a *jit.CrashError", err)
	}
	if ce.ExitCode != 2 || len(ce.LastStderr) < 2 || ce.LastStderr[0] != "panic: something went very wrong" {
		t.Errorf("crash error %#v, want exit status 2 and the panic from stderr", ce)
	}
	t.Log(err)
	workertest.ExpectOK(t, p)
}

// TestBadFrames: a worker that writes what is not a frame is ended, its
// request fails with a reason, and the pool goes on with a new worker.
func TestBadFrames(t *testing.T) {
	root := workertest.Project(t, nil)
	cases := []struct{ mode, want string }{
		{"junk-hello", "malformed frame"},
		{"junk-reply", "malformed frame"},
		{"oversized-reply", "exceeds the 67108864-byte limit"},
		{"text-reply", "protocol error"},
		{"wrong-id", "answered request 999 while 1 was running"},
		{"unaccepted-reply", "answered request 1 without accepting it first"},
		{"accepts-another", "accepted request 999, which is not waiting to be"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			once := filepath.Join(t.TempDir(), "once")
			p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=" + c.mode, onceEnv + "=" + once}})
			_, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
			var ce *jit.CrashError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a *jit.CrashError mentioning %q", err, c.want)
			}
			t.Log(err)
			workertest.ExpectOK(t, p)
		})
	}
}

func TestStartFailures(t *testing.T) {
	root := workertest.Project(t, nil)
	t.Run("hung at start", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, StartTimeout: 500 * time.Millisecond, Env: []string{helperEnv + "=silent"}})
		err := p.Prewarm(context.Background())
		if err == nil || !strings.Contains(err.Error(), "no handshake within 500ms") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad bundle", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
		opts := p.Options()
		opts.BundlePath = filepath.Join(root, "missing.js")
		opts.Logger = nil
		p2, err := jit.NewPool(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer p2.Close()
		_, err = p2.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
		var ce *jit.CrashError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "missing.js") {
			t.Fatalf("err = %v, want a crash error quoting the worker's stderr", err)
		}
	})
	t.Run("truncated bundle", func(t *testing.T) {
		// An interrupted install: the worker says which file and what is
		// wrong with it, not just the engine's SyntaxError.
		src, err := os.ReadFile(workertest.BundlePath(root))
		if err != nil {
			t.Fatal(err)
		}
		truncated := filepath.Join(t.TempDir(), "bundle.js")
		if err := os.WriteFile(truncated, src[:len(src)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
		opts := p.Options()
		opts.BundlePath = truncated
		opts.Logger = nil
		p2, err := jit.NewPool(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer p2.Close()
		_, err = p2.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
		if err == nil || !strings.Contains(err.Error(), truncated+" looks truncated or corrupt") {
			t.Fatalf("err = %v, want the worker's word that %s is damaged", err, truncated)
		}
	})
	t.Run("environment", func(t *testing.T) {
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/secret/key.json")
		t.Setenv("DFD_SOMETHING", "x")
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=print-env"}})
		err := p.Prewarm(context.Background())
		var ce *jit.CrashError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v", err)
		}
		env := strings.Join(ce.LastStderr, "\n")
		if strings.Contains(env, "GOOGLE_") || strings.Contains(env, "DFD_SOMETHING") || !strings.Contains(env, "env: PATH=") {
			t.Errorf("worker environment:\n%s", env)
		}
	})
}

func TestCancel(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err := p.Jit(ctx, workertest.JitJob("async (jctx) => { while (true) {} }"), nil)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, engine.ErrCanceled) {
		t.Fatalf("err = %v, want it to wrap context.Canceled and engine.ErrCanceled", err)
	}
	var we *jit.WorkerError
	if !errors.As(err, &we) || we.Code != jit.CodeCanceled {
		t.Errorf("err = %#v, want the worker's CANCELED answer", err)
	}
	workertest.ExpectOK(t, p)
	if n := p.Started(); n != 1 {
		t.Errorf("%d workers started: a cancelled request must not cost the worker", n)
	}

	t.Run("caller deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := p.Jit(ctx, workertest.JitJob("async (jctx) => { while (true) {} }"), nil)
		if !errors.Is(err, engine.ErrTimeout) {
			t.Fatalf("err = %v, want it to wrap engine.ErrTimeout", err)
		}
	})

	t.Run("queued request honours its context", func(t *testing.T) {
		long, cancelLong := context.WithCancel(context.Background())
		defer cancelLong()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = p.Jit(long, workertest.JitJob("async (jctx) => { while (true) {} }"), nil)
		}()
		for busy := false; !busy; { // until the loop holds the only worker
			time.Sleep(10 * time.Millisecond)
			for _, w := range p.Workers() {
				busy = busy || w.Busy
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := p.Jit(ctx, workertest.JitJob(workertest.JitNoCalls), nil)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for a worker") {
			t.Errorf("err = %v, want the queue wait to end with the context", err)
		}
		cancelLong()
		wg.Wait()
		workertest.ExpectOK(t, p)
	})
}

func TestConcurrentRequests(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 2})
	const n = 100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitThreeCalls), (&workertest.Adapter{}).RPC)
			if err == nil && workertest.Query(t, res) != "select id, amount -- 2" {
				err = errors.New("wrong query " + workertest.Query(t, res))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s := p.Started(); s != 2 {
		t.Errorf("%d workers started, want 2", s)
	}
	total := 0
	for _, w := range p.Workers() {
		total += w.Requests
	}
	if total != n {
		t.Errorf("workers served %d requests, want %d", total, n)
	}
}

func TestRecycleAndIdle(t *testing.T) {
	root := workertest.Project(t, nil)
	t.Run("after MaxRequests", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, MaxRequests: 3})
		pids := map[int]bool{}
		for i := 0; i < 7; i++ {
			res, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
			if err != nil {
				t.Fatal(err)
			}
			pids[res.Stats.PID] = true
		}
		if len(pids) != 3 {
			t.Errorf("7 requests served by %d workers, want 3", len(pids))
		}
	})
	t.Run("after a request with a large heap", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, RecycleHeap: 1})
		a, _ := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
		b, _ := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
		if a == nil || b == nil || a.Stats.PID == b.Stats.PID {
			t.Errorf("the worker was not recycled")
		}
	})
	t.Run("idle workers stop", func(t *testing.T) {
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 3, MinWorkers: 1, IdleTimeout: 500 * time.Millisecond})
		if err := p.Prewarm(context.Background()); err != nil {
			t.Fatal(err)
		}
		// (One may already have idled out while the others started.)
		if n := p.Started(); n != 3 {
			t.Fatalf("%d workers started by Prewarm, want 3", n)
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(p.Workers()) > 1 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := len(p.Workers()); n != 1 {
			t.Errorf("%d workers after idling, want 1", n)
		}
		workertest.ExpectOK(t, p)
	})
}

func TestCloseDuringRequest(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 2})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Jit(context.Background(), workertest.JitJob("async (jctx) => { while (true) {} }"), nil)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	p.Close()
	if err := <-done; !errors.Is(err, jit.ErrClosed) {
		t.Errorf("running request: err = %v, want ErrClosed", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	if _, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil); !errors.Is(err, jit.ErrClosed) {
		t.Errorf("after Close: err = %v", err)
	}
}

// TestWorkersDieWithTheirHost kills a host process (the test binary in
// "host" mode, with a pool of two workers) with SIGKILL: it cannot close
// anything, yet its workers must go (parent-death signal, stdin EOF).
func TestWorkersDieWithTheirHost(t *testing.T) {
	root := workertest.Project(t, nil)
	host := exec.Command(os.Args[0], "host", "--bundle="+workertest.BundlePath(root), "--core-version="+testenv.CoreVersion, "--root="+root)
	host.Env = append(os.Environ(), helperEnv+"=host")
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		pid, _ := strconv.Atoi(sc.Text())
		pids = append(pids, pid)
	}
	if len(pids) != 2 {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("host reported workers %v", pids)
	}
	for _, pid := range pids {
		if workertest.PPID(pid) != host.Process.Pid {
			t.Errorf("worker %d is not the host's child", pid)
		}
	}
	_ = host.Process.Kill()
	_ = host.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for workertest.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if workertest.Alive(pid) {
			t.Errorf("worker %d outlived its host", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestIdleWorkerDied(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := p.Workers()[0].PID
	_ = syscall.Kill(pid, syscall.SIGKILL)
	// Wait until the pool has reaped it, as it does at once.
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	// The dead worker is noticed when taken from the idle list: the request
	// gets a new one instead of the corpse's error.
	workertest.ExpectOK(t, p)
}

// TestWorkerGoneBeforeAccepting: a worker that dies after reading a request
// but before accepting it has run none of it, and the request runs on
// another worker; one that dies after accepting fails its request.
func TestWorkerGoneBeforeAccepting(t *testing.T) {
	root := workertest.Project(t, nil)
	t.Run("before", func(t *testing.T) {
		once := filepath.Join(t.TempDir(), "once")
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=gone-before-accepting", onceEnv + "=" + once}})
		res, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitThreeCalls), (&workertest.Adapter{}).RPC)
		if err != nil {
			t.Fatalf("the request failed with its worker: %v", err)
		}
		if q := workertest.Query(t, res); q != "select id, amount -- 2" {
			t.Errorf("query %q", q)
		}
		if n := p.Started(); n != 2 {
			t.Errorf("%d workers started, want 2 (the one that died, the one that served)", n)
		}
	})
	t.Run("refusing it", func(t *testing.T) {
		// A worker that exits on a protocol error refused what it read,
		// perhaps the request itself: not run again.
		once := filepath.Join(t.TempDir(), "once")
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=refuses-request", onceEnv + "=" + once}})
		_, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
		var ce *jit.CrashError
		if !errors.As(err, &ce) || ce.ExitCode != jit.ExitProtocol {
			t.Fatalf("err = %v, want the worker's exit with status %d", err, jit.ExitProtocol)
		}
		workertest.ExpectOK(t, p)
	})
	t.Run("after", func(t *testing.T) {
		once := filepath.Join(t.TempDir(), "once")
		p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=gone-after-accepting", onceEnv + "=" + once}})
		_, err := p.Jit(context.Background(), workertest.JitJob(workertest.JitNoCalls), nil)
		var ce *jit.CrashError
		if !errors.As(err, &ce) || ce.Signal != "killed" || !strings.Contains(err.Error(), "exited during the request") {
			t.Fatalf("err = %v, want the worker's death during the request", err)
		}
		workertest.ExpectOK(t, p)
	})
}

// TestIdleWorkersKilled: requests sent right after every idle worker was
// killed from outside succeed.
func TestIdleWorkersKilled(t *testing.T) {
	root := workertest.Project(t, nil)
	workertest.IdleWorkersKilled(t, gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 2}))
}
