package nodeworker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
)

func TestJitFaults(t *testing.T) {
	root := workertest.Project(t, nil)
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Grace: time.Second})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		code    string
		timeout time.Duration
		adapter *workertest.Adapter
		code_   jit.Code // 0: a *jit.CrashError
		is      error
		message string
		// replaced: the worker must be replaced; nil: either way.
		replaced *bool
	}{
		{name: "throws", code: "async (jctx) => { throw new Error('no partition column'); }", code_: jit.CodeScript, message: "Error: no partition column", replaced: ptr(false)},
		{name: "syntax error", code: "async (jctx) => { return 'x' +; }", code_: jit.CodeScript, message: "SyntaxError", replaced: ptr(false)},
		{name: "infinite recursion", code: "async (jctx) => { const f = n => f(n + 1) + 1; return f(0); }", code_: jit.CodeScript, message: "Maximum call stack size exceeded", replaced: ptr(false)},
		// vm's timeout stops a synchronous loop in the worker itself.
		{name: "sync loop", code: "async (jctx) => { while (true) {} }", timeout: 500 * time.Millisecond, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		{name: "loop of awaited adapter calls", code: "async (jctx) => { for (;;) { await jctx.adapter.listTables({database: 'p', schema: 'd'}); } }",
			timeout: 500 * time.Millisecond, adapter: &workertest.Adapter{}, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		{name: "adapter that never answers", code: "async (jctx) => { await jctx.adapter.listTables({database: 'p', schema: 'd'}); return 'x'; }",
			timeout: 500 * time.Millisecond, adapter: &workertest.Adapter{Delay: time.Hour}, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		{name: "timers forever", code: "async (jctx) => { await new Promise(() => setInterval(() => {}, 1)); }",
			timeout: 500 * time.Millisecond, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		// V8 interrupts its regular expressions too.
		{name: "catastrophic regexp", code: workertest.JitCatastrophicRegexp, timeout: 500 * time.Millisecond, is: engine.ErrTimeout},
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
			replaced := p.Started() > started
			if c.replaced != nil && replaced != *c.replaced {
				t.Errorf("worker replaced: %v, want %v", replaced, *c.replaced)
			}
			t.Logf("worker replaced: %v", replaced)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// loopProject is a project whose one definitions file, definitions/loop.js,
// is code, and the request that compiles it.
func loopProject(t *testing.T, code string) (root string, req []byte) {
	t.Helper()
	root = workertest.Project(t, map[string]string{"definitions/loop.js": code})
	req, err := compile.Request(root, []string{"definitions/loop.js", "workflow_settings.yaml"}, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return root, req
}

// TestCompileInfiniteLoop: a compile stuck in project code ends at its
// deadline and the worker serves the next request.
func TestCompileInfiniteLoop(t *testing.T) {
	root, req := loopProject(t, "while (true) {}")
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Grace: time.Second})
	start := time.Now()
	_, err := p.Compile(context.Background(), jit.CompileJob{Request: req, Timeout: 700 * time.Millisecond})
	if !errors.Is(err, engine.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
	workertest.ExpectOK(t, p)
}

// TestCompileCanceledWhileItRuns: a compile canceled while core runs
// (here, project code that never yields) ends as canceled at once, and
// the same worker serves the next request. The worker reads no frame
// while its JavaScript runs; without the host's SIGINT the Cancel would
// wait for the grace period and the worker be killed.
func TestCompileCanceledWhileItRuns(t *testing.T) {
	root, req := loopProject(t, "console.log('looping'); while (true) {}")
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Grace: time.Minute})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	started := p.Started()
	// Cancel when the project's code says it is in its loop, not on a timer.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := func(level, msg string) {
		if strings.Contains(msg, "looping") {
			cancel()
		}
	}
	_, err := p.Compile(ctx, jit.CompileJob{Request: req, Timeout: 10 * time.Minute, Log: log})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the compile canceled", err)
	}
	var ce *jit.CrashError
	if errors.As(err, &ce) {
		t.Fatalf("err = %v: the worker was killed, not interrupted", err)
	}
	workertest.ExpectOK(t, p)
	if p.Started() != started {
		t.Errorf("the worker was replaced (%d started, %d before)", p.Started(), started)
	}
}

// TestHeapCeiling: with HeapFlag, a request that allocates without bound
// kills its worker (V8's own out-of-memory abort); the pool replaces it.
func TestHeapCeiling(t *testing.T) {
	root := workertest.Project(t, nil)
	cmd := command(t, root, workertest.BundlePath(root))
	cmd = append(append(append([]string(nil), cmd[:len(cmd)-1]...), nodeworker.HeapFlag(200<<20)), cmd[len(cmd)-1])
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Command: cmd, MemoryLimit: 200 << 20})
	started := p.Started()
	job := workertest.JitJob("async (jctx) => { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }")
	job.Timeout = 30 * time.Second
	_, err := p.Jit(context.Background(), job, (&workertest.Adapter{}).RPC)
	var ce *jit.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a crash", err)
	}
	t.Log(err)
	workertest.ExpectOK(t, p)
	if p.Started() == started {
		t.Error("the worker was not replaced")
	}
}

func TestWorkerKilledMidRequest(t *testing.T) {
	root := workertest.Project(t, nil)
	workertest.KilledMidRequest(t, nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1}))
}

// TestIdleWorkersKilled: requests sent right after every idle worker was
// killed from outside succeed.
func TestIdleWorkersKilled(t *testing.T) {
	root := workertest.Project(t, nil)
	workertest.IdleWorkersKilled(t, nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 2}))
}

func TestWorkerProtocol(t *testing.T) {
	workertest.Protocol(t, nodeWorkers, workertest.Project(t, nil))
}

// TestCompileInterruptedByAStraySigint: a SIGINT the host did not send
// for this compile (one meant for the previous compile that landed late,
// or a terminal's Ctrl-C) stops it as canceled; nobody canceled it, so
// the pool runs it again and the caller gets its result, not "canceled".
func TestCompileInterruptedByAStraySigint(t *testing.T) {
	root, req := loopProject(t, "console.log('looping'); const t0 = Date.now(); while (Date.now() - t0 < 1500) {}")
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, Grace: time.Minute})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	ws := p.Workers()
	if len(ws) != 1 {
		t.Fatalf("workers %+v", ws)
	}
	var once sync.Once
	signalled := false
	log := func(level, msg string) {
		if strings.Contains(msg, "looping") {
			once.Do(func() {
				signalled = syscall.Kill(ws[0].PID, syscall.SIGINT) == nil
			})
		}
	}
	res, err := p.Compile(context.Background(), jit.CompileJob{Request: req, Timeout: time.Minute, Log: log})
	if !signalled {
		t.Fatal("the worker was not signalled")
	}
	if err != nil {
		t.Fatalf("err = %v, want the compile's result", err)
	}
	if len(res.Response) == 0 {
		t.Error("no compile result")
	}
	workertest.ExpectOK(t, p)
}
