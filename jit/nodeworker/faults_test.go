package nodeworker_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

func TestJitFaults(t *testing.T) {
	root := project(t, nil)
	p := newPool(t, root, "", jit.PoolOptions{Workers: 1, Grace: time.Second})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		code    string
		timeout time.Duration
		adapter *adapter
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
			timeout: 500 * time.Millisecond, adapter: &adapter{}, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		{name: "adapter that never answers", code: "async (jctx) => { await jctx.adapter.listTables({database: 'p', schema: 'd'}); return 'x'; }",
			timeout: 500 * time.Millisecond, adapter: &adapter{delay: time.Hour}, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		{name: "timers forever", code: "async (jctx) => { await new Promise(() => setInterval(() => {}, 1)); }",
			timeout: 500 * time.Millisecond, code_: jit.CodeDeadlineExceeded, is: engine.ErrTimeout, replaced: ptr(false)},
		// V8 interrupts its regular expressions too.
		{name: "catastrophic regexp", code: jitCatastrophicRegexp, timeout: 500 * time.Millisecond, is: engine.ErrTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			started := p.Started()
			job := jitJob(c.code)
			job.Timeout = c.timeout
			a := c.adapter
			if a == nil {
				a = &adapter{}
			}
			start := time.Now()
			_, err := p.Jit(context.Background(), job, a.rpc)
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
			expectOK(t, p)
			replaced := p.Started() > started
			if c.replaced != nil && replaced != *c.replaced {
				t.Errorf("worker replaced: %v, want %v", replaced, *c.replaced)
			}
			t.Logf("worker replaced: %v", replaced)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestCompileInfiniteLoop: a compile stuck in project code ends at its
// deadline and the worker serves the next request.
func TestCompileInfiniteLoop(t *testing.T) {
	root := project(t, map[string]string{"definitions/loop.js": "while (true) {}"})
	p := newPool(t, root, "", jit.PoolOptions{Workers: 1, Grace: time.Second})
	req, err := compile.Request(root, []string{"definitions/loop.js", "workflow_settings.yaml"}, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Compile(context.Background(), jit.CompileJob{Request: req, Timeout: 700 * time.Millisecond})
	if !errors.Is(err, engine.ErrTimeout) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
	expectOK(t, p)
}

// TestHeapCeiling: with HeapFlag, a request that allocates without bound
// kills its worker (V8's own out-of-memory abort); the pool replaces it.
func TestHeapCeiling(t *testing.T) {
	root := project(t, nil)
	cmd := command(t, root, bundlePath(root))
	cmd = append(append(append([]string(nil), cmd[:len(cmd)-1]...), nodeworker.HeapFlag(200<<20)), cmd[len(cmd)-1])
	p := newPool(t, root, "", jit.PoolOptions{Workers: 1, Command: cmd, MemoryLimit: 200 << 20})
	started := p.Started()
	job := jitJob("async (jctx) => { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }")
	job.Timeout = 30 * time.Second
	_, err := p.Jit(context.Background(), job, (&adapter{}).rpc)
	var ce *jit.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a crash", err)
	}
	t.Log(err)
	expectOK(t, p)
	if p.Started() == started {
		t.Error("the worker was not replaced")
	}
}

func TestWorkerKilledMidRequest(t *testing.T) {
	root := project(t, nil)
	p := newPool(t, root, "", jit.PoolOptions{Workers: 1})
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	rpc := func(ctx context.Context, method string, req []byte) ([]byte, error) {
		for _, w := range p.Workers() {
			if w.Busy {
				_ = syscall.Kill(w.PID, syscall.SIGKILL)
			}
		}
		return (&adapter{}).rpc(ctx, method, req)
	}
	_, err := p.Jit(context.Background(), jitJob(jitThreeCalls), rpc)
	var ce *jit.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %#v, want a *jit.CrashError", err)
	}
	if ce.Signal != "killed" {
		t.Errorf("err = %v, want the worker killed during the request", err)
	}
	expectOK(t, p)
}

// --- The protocol, frame by frame ---------------------------------------------

type rawWorker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	w      *wire.Writer
	r      *wire.Reader
	stderr *bytes.Buffer
	hello  *wirepb.Hello
	// accepted: requests the worker has sent Accepted for.
	accepted map[uint64]bool
}

func startRaw(t *testing.T, root string, extra ...string) *rawWorker {
	t.Helper()
	c := command(t, root, bundlePath(root))
	args := append(append([]string(nil), c[1:]...), jit.WorkerArgs(jit.WorkerOptions{BundlePath: bundlePath(root), CoreVersion: testenv.CoreVersion, Root: root})...)
	cmd := exec.Command(c[0], append(args, extra...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rw := &rawWorker{cmd: cmd, in: in, w: wire.NewWriter(in), r: wire.NewReader(out, 0), stderr: stderr, accepted: map[uint64]bool{}}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	f, err := rw.r.Read()
	if err != nil || f.GetHello() == nil {
		t.Fatalf("first frame %v, %v; stderr:\n%s", f, err, stderr)
	}
	rw.hello = f.GetHello()
	return rw
}

func (rw *rawWorker) send(t *testing.T, f *wirepb.Frame) {
	t.Helper()
	if err := rw.w.Write(f); err != nil {
		t.Fatal(err)
	}
}

// read returns the next frame other than Accepted, failing the test if
// the frame concerns a request the worker has not accepted.
func (rw *rawWorker) read(t *testing.T) *wirepb.Frame {
	t.Helper()
	for {
		f, err := rw.r.Read()
		if err != nil {
			t.Fatalf("reading a frame: %v; stderr:\n%s", err, rw.stderr)
		}
		if a := f.GetAccepted(); a != nil {
			if rw.accepted[a.GetId()] {
				t.Fatalf("request %d accepted twice", a.GetId())
			}
			rw.accepted[a.GetId()] = true
			continue
		}
		id, ok := f.GetResponse().GetId(), f.GetResponse() != nil
		if c := f.GetAdapterCall(); c != nil {
			id, ok = c.GetRequestId(), true
		}
		if ok && !rw.accepted[id] {
			t.Fatalf("%T frame of request %d before its Accepted", f.GetKind(), id)
		}
		return f
	}
}

func (rw *rawWorker) exit(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- rw.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not exit")
		return -1
	}
}

func jitRequest(id uint64, code string) *wirepb.Frame {
	return &wirepb.Frame{Kind: &wirepb.Frame_Request{Request: &wirepb.Request{Id: id, Kind: &wirepb.Request_Jit{Jit: &wirepb.Jit{Request: jitJob(code).Request}}}}}
}

func TestWorkerProtocol(t *testing.T) {
	root := project(t, nil)

	t.Run("hello", func(t *testing.T) {
		rw := startRaw(t, root, "--memory-limit=123456789")
		h := rw.hello
		if h.GetProtocolVersion() != wire.ProtocolVersion || h.GetCoreVersion() != testenv.CoreVersion || int(h.GetPid()) != rw.cmd.Process.Pid ||
			h.GetRoot() != root || h.GetBundlePath() != bundlePath(root) || h.GetStartupMicros() <= 0 || h.GetMemoryLimitBytes() != 123456789 {
			t.Errorf("hello %v", h)
		}
		t.Logf("startup %s", time.Duration(h.GetStartupMicros())*time.Microsecond)
		rw.in.Close()
		if code := rw.exit(t); code != jit.ExitOK {
			t.Errorf("exit status %d after stdin's EOF, want 0", code)
		}
	})

	t.Run("pipelined requests, cancels, adapter calls", func(t *testing.T) {
		rw := startRaw(t, root)
		rw.send(t, jitRequest(1, "async (jctx) => { const t = await jctx.adapter.getTable({target: {name: 'known'}}); return 'select ' + t.fields.length; }"))
		rw.send(t, jitRequest(2, jitNoCalls))
		rw.send(t, jitRequest(3, jitNoCalls))
		rw.send(t, &wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: 2}}})
		rw.send(t, &wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: 42}}})
		call := rw.read(t).GetAdapterCall()
		if call == nil || call.GetRequestId() != 1 || call.GetMethod() != "GetTable" {
			t.Fatalf("want request 1's GetTable call, got %v", call)
		}
		resp, err := (&adapter{}).rpc(t.Context(), call.GetMethod(), call.GetRequest())
		if err != nil {
			t.Fatal(err)
		}
		rw.send(t, &wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: call.GetCallId(), Outcome: &wirepb.AdapterResult_Response{Response: resp}}}})
		rw.send(t, &wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: 999, Outcome: &wirepb.AdapterResult_Response{}}}})
		got := map[uint64]*wirepb.Response{}
		for len(got) < 3 {
			r := rw.read(t).GetResponse()
			if r == nil {
				t.Fatal("want only responses now")
			}
			if got[r.GetId()] != nil {
				t.Fatalf("two responses for request %d", r.GetId())
			}
			got[r.GetId()] = r
		}
		if got[1].GetError() != nil || got[3].GetError() != nil {
			t.Errorf("requests 1 and 3 failed: %v, %v", got[1].GetError(), got[3].GetError())
		}
		if got[2].GetError().GetCode() != jit.CodeCanceled {
			t.Errorf("request 2 (cancelled while queued): %v", got[2])
		}
		if s := got[3].GetStats(); s.GetRequestsServed() != 3 || s.GetRunMicros() <= 0 || s.GetPeakHeapBytes() == 0 {
			t.Errorf("stats %v", s)
		}
		rw.in.Close()
		if code := rw.exit(t); code != jit.ExitOK {
			t.Errorf("exit status %d", code)
		}
	})

	t.Run("cancel while waiting for the adapter", func(t *testing.T) {
		rw := startRaw(t, root)
		rw.send(t, jitRequest(7, jitThreeCalls))
		call := rw.read(t).GetAdapterCall()
		if call == nil {
			t.Fatal("want an adapter call")
		}
		rw.send(t, &wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: 7}}})
		r := rw.read(t).GetResponse()
		if r.GetId() != 7 || r.GetError().GetCode() != jit.CodeCanceled {
			t.Fatalf("response %v", r)
		}
		// The late answer is ignored; the worker serves on.
		rw.send(t, &wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: call.GetCallId(), Outcome: &wirepb.AdapterResult_Error{Error: &wirepb.Error{Message: "late"}}}}})
		rw.send(t, jitRequest(8, jitNoCalls))
		if r := rw.read(t).GetResponse(); r.GetId() != 8 || r.GetError() != nil {
			t.Fatalf("response %v", r)
		}
	})

	t.Run("stdin EOF mid-request", func(t *testing.T) {
		rw := startRaw(t, root)
		rw.send(t, jitRequest(1, jitThreeCalls))
		if rw.read(t).GetAdapterCall() == nil {
			t.Fatal("want an adapter call")
		}
		rw.in.Close()
		start := time.Now()
		if code := rw.exit(t); code != jit.ExitOK {
			t.Errorf("exit status %d", code)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("exited %s after stdin's EOF", d)
		}
	})

	for _, c := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"junk", []byte{4, 0xff, 0xff, 0xff, 0xff}, "malformed frame"},
		{"oversized", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, "exceeds the 1024-byte limit"},
		{"empty frame", []byte{0}, "a frame with no content"},
		{"a hello from the host", []byte{2, 10, 0}, "unexpected frame"},
	} {
		t.Run("host sends "+c.name, func(t *testing.T) {
			rw := startRaw(t, root, "--max-frame=1024")
			if _, err := rw.in.Write(c.bytes); err != nil {
				t.Fatal(err)
			}
			if code := rw.exit(t); code != jit.ExitProtocol {
				t.Errorf("exit status %d, want %d", code, jit.ExitProtocol)
			}
			if !strings.Contains(rw.stderr.String(), c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, rw.stderr)
			}
		})
	}

	t.Run("bad arguments", func(t *testing.T) {
		c := command(t, root, bundlePath(root))
		cmd := exec.Command(c[0], append(append([]string(nil), c[1:]...), "--bundle=x")...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != jit.ExitUsage || !strings.Contains(stderr.String(), "--bundle, --core-version and --root are required") {
			t.Errorf("err %v, stderr %s", err, stderr.String())
		}
	})
}
