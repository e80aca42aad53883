package workertest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// Raw is a worker process driven frame by frame, without a pool: the
// protocol as a host written in another language would see it. Read holds
// the worker to the rule that it accepts a request before anything else
// about it.
type Raw struct {
	Cmd   *exec.Cmd
	In    io.WriteCloser // the worker's stdin
	Hello *wirepb.Hello

	w        *wire.Writer
	r        *wire.Reader
	stderr   syncBuffer
	accepted map[uint64]bool
}

// StartRaw starts one of e's workers for root with jit.WorkerArgs for the
// project's core and the extra arguments, and reads its Hello. The process
// is killed when the test ends.
func (e Engine) StartRaw(t testing.TB, root string, extra ...string) *Raw {
	t.Helper()
	c := e.Command(t, root, BundlePath(root))
	args := append(append([]string(nil), c[1:]...), jit.WorkerArgs(jit.WorkerOptions{BundlePath: BundlePath(root), CoreVersion: testenv.CoreVersion, Root: root})...)
	cmd := exec.Command(c[0], append(args, extra...)...)
	cmd.Env = e.env()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	rw := &Raw{Cmd: cmd, In: in, w: wire.NewWriter(in), r: wire.NewReader(out, 0), accepted: map[uint64]bool{}}
	cmd.Stderr = &rw.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	f, err := rw.r.Read()
	if err != nil || f.GetHello() == nil {
		t.Fatalf("first frame %v, %v; stderr:\n%s", f, err, rw.Stderr())
	}
	rw.Hello = f.GetHello()
	return rw
}

// env is the environment of a raw worker: as little as a pool's workers
// get, and e.Env.
func (e Engine) env() []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, e.Env...)
}

// Stderr is what the worker has written to its stderr so far.
func (rw *Raw) Stderr() string { return rw.stderr.String() }

// Send writes one frame to the worker.
func (rw *Raw) Send(t testing.TB, f *wirepb.Frame) {
	t.Helper()
	if err := rw.w.Write(f); err != nil {
		t.Fatal(err)
	}
}

// Read returns the worker's next frame other than Accepted, and fails the
// test if that frame concerns a request the worker has not accepted, or if
// a request is accepted twice.
func (rw *Raw) Read(t testing.TB) *wirepb.Frame {
	t.Helper()
	for {
		f, err := rw.r.Read()
		if err != nil {
			t.Fatalf("reading a frame: %v; stderr:\n%s", err, rw.Stderr())
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

// Exit waits (up to 10 s) for the worker to exit and returns its status.
func (rw *Raw) Exit(t testing.TB) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- rw.Cmd.Wait() }()
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

// JitRequest is a Request frame for JitJob(code).
func JitRequest(id uint64, code string) *wirepb.Frame {
	return &wirepb.Frame{Kind: &wirepb.Frame_Request{Request: &wirepb.Request{Id: id, Kind: &wirepb.Request_Jit{Jit: &wirepb.Jit{Request: JitJob(code).Request}}}}}
}

// Protocol is the worker protocol of package jit/wire, frame by frame, as
// every engine's worker must speak it, on a Project at root.
func Protocol(t *testing.T, e Engine, root string) {
	t.Run("hello", func(t *testing.T) {
		rw := e.StartRaw(t, root, "--memory-limit=123456789")
		h := rw.Hello
		if h.GetProtocolVersion() != wire.ProtocolVersion || h.GetCoreVersion() != testenv.CoreVersion || int(h.GetPid()) != rw.Cmd.Process.Pid ||
			h.GetRoot() != root || h.GetBundlePath() != BundlePath(root) || h.GetStartupMicros() <= 0 || h.GetMemoryLimitBytes() != 123456789 {
			t.Errorf("hello %v", h)
		}
		t.Logf("startup %s", time.Duration(h.GetStartupMicros())*time.Microsecond)
		rw.In.Close()
		if code := rw.Exit(t); code != jit.ExitOK {
			t.Errorf("exit status %d after stdin's EOF, want 0", code)
		}
	})

	t.Run("pipelined requests, cancels, adapter calls", func(t *testing.T) {
		rw := e.StartRaw(t, root)
		// Request 1 waits on an adapter call; 2 and 3 queue behind it; 2 is
		// cancelled while queued; a Cancel for an unknown id is ignored.
		rw.Send(t, JitRequest(1, "async (jctx) => { const t = await jctx.adapter.getTable({target: {name: 'known'}}); return 'select ' + t.fields.length; }"))
		rw.Send(t, JitRequest(2, JitNoCalls))
		rw.Send(t, JitRequest(3, JitNoCalls))
		rw.Send(t, &wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: 2}}})
		rw.Send(t, &wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: 42}}})
		call := rw.Read(t).GetAdapterCall()
		if call == nil || call.GetRequestId() != 1 || call.GetMethod() != "GetTable" {
			t.Fatalf("want request 1's GetTable call, got %v", call)
		}
		resp, err := (&Adapter{}).RPC(t.Context(), call.GetMethod(), call.GetRequest())
		if err != nil {
			t.Fatal(err)
		}
		rw.Send(t, &wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: call.GetCallId(), Outcome: &wirepb.AdapterResult_Response{Response: resp}}}})
		// A result for a call nobody waits for is ignored too.
		rw.Send(t, &wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: 999, Outcome: &wirepb.AdapterResult_Response{}}}})

		got := map[uint64]*wirepb.Response{}
		for len(got) < 3 {
			r := rw.Read(t).GetResponse()
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
		rw.In.Close()
		if code := rw.Exit(t); code != jit.ExitOK {
			t.Errorf("exit status %d", code)
		}
	})

	t.Run("cancel while waiting for the adapter", func(t *testing.T) {
		rw := e.StartRaw(t, root)
		rw.Send(t, JitRequest(7, JitThreeCalls))
		call := rw.Read(t).GetAdapterCall()
		if call == nil {
			t.Fatal("want an adapter call")
		}
		rw.Send(t, &wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: 7}}})
		r := rw.Read(t).GetResponse()
		if r.GetId() != 7 || r.GetError().GetCode() != jit.CodeCanceled {
			t.Fatalf("response %v", r)
		}
		// The late answer is ignored; the worker serves on.
		rw.Send(t, &wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: call.GetCallId(), Outcome: &wirepb.AdapterResult_Error{Error: &wirepb.Error{Message: "late"}}}}})
		rw.Send(t, JitRequest(8, JitNoCalls))
		if r := rw.Read(t).GetResponse(); r.GetId() != 8 || r.GetError() != nil {
			t.Fatalf("response %v", r)
		}
	})

	t.Run("stdin EOF while waiting for the adapter", func(t *testing.T) {
		rw := e.StartRaw(t, root)
		rw.Send(t, JitRequest(1, JitThreeCalls))
		if rw.Read(t).GetAdapterCall() == nil {
			t.Fatal("want an adapter call")
		}
		rw.In.Close()
		start := time.Now()
		if code := rw.Exit(t); code != jit.ExitOK {
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
		{"a hello from the host", []byte{2, 10, 0}, "unexpected"},
	} {
		t.Run("host sends "+c.name, func(t *testing.T) {
			rw := e.StartRaw(t, root, "--max-frame=1024")
			if _, err := rw.In.Write(c.bytes); err != nil {
				t.Fatal(err)
			}
			if code := rw.Exit(t); code != jit.ExitProtocol {
				t.Errorf("exit status %d, want %d", code, jit.ExitProtocol)
			}
			if !strings.Contains(rw.Stderr(), c.want) {
				t.Errorf("stderr does not say %q:\n%s", c.want, rw.Stderr())
			}
		})
	}

	t.Run("bad arguments", func(t *testing.T) {
		c := e.Command(t, root, BundlePath(root))
		cmd := exec.Command(c[0], append(append([]string(nil), c[1:]...), "--bundle=x")...)
		cmd.Env = e.env()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != jit.ExitUsage || !strings.Contains(stderr.String(), "--bundle, --core-version and --root are required") {
			t.Errorf("err %v, stderr %s", err, stderr.String())
		}
	})
}

// syncBuffer is a bytes.Buffer that a process's stderr copier writes while
// the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
