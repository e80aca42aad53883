package jit_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// rawWorker is a worker process driven frame by frame, without the pool:
// the protocol as a host written in another language would see it.
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
	args := append([]string{"worker"}, jit.WorkerArgs(jit.WorkerOptions{BundlePath: bundlePath(root), CoreVersion: testenv.CoreVersion, Root: root})...)
	cmd := exec.Command(os.Args[0], append(args, extra...)...)
	cmd.Env = []string{helperEnv + "=worker"}
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

// exit waits for the worker to exit and returns its status.
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
		rw := startRaw(t, root)
		h := rw.hello
		if h.GetProtocolVersion() != wire.ProtocolVersion || h.GetCoreVersion() != testenv.CoreVersion || int(h.GetPid()) != rw.cmd.Process.Pid || h.GetRoot() != root {
			t.Errorf("hello %v", h)
		}
		rw.in.Close()
		if code := rw.exit(t); code != jit.ExitOK {
			t.Errorf("exit status %d after stdin's EOF, want 0", code)
		}
	})

	t.Run("pipelined requests, cancels, adapter calls", func(t *testing.T) {
		rw := startRaw(t, root)
		// Request 1 waits on an adapter call; 2 and 3 queue behind it; 2 is
		// cancelled while queued; a Cancel for an unknown id is ignored.
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
		// A result for a call nobody waits for is ignored too.
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

	t.Run("stdin EOF mid-request", func(t *testing.T) {
		rw := startRaw(t, root)
		rw.send(t, jitRequest(1, jitCatastrophicRegexp))
		time.Sleep(200 * time.Millisecond)
		rw.in.Close()
		start := time.Now()
		rw.exit(t)
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
}
