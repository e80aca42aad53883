package jit_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// The test binary doubles as the worker (the helper-process pattern): the
// pool runs `<test binary> worker --bundle=…` with DFD_JIT_HELPER set, and
// TestMain turns into a worker, a fake worker or a host before any test
// runs, so the testing package never writes to the frame stream.
const helperEnv = "DFD_JIT_HELPER"

// onceEnv names a file: the first helper process to create it acts as the
// fake given by DFD_JIT_HELPER, later ones as real workers. It lets a test
// see a pool recover from a bad worker.
const onceEnv = "DFD_JIT_FAKE_ONCE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helperMain(mode, os.Args[2:]))
	}
	code := m.Run()
	if dfdBuild.dir != "" {
		os.RemoveAll(dfdBuild.dir)
	}
	if code == 0 {
		if kids := workertest.Children(); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "leaked child processes after all tests: %v\n", kids)
			code = 1
		}
	}
	os.Exit(code)
}

func helperMain(mode string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if f := os.Getenv(onceEnv); f != "" {
		if fd, err := os.OpenFile(f, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			fd.Close()
		} else {
			mode = "worker"
		}
	}
	switch mode {
	case "worker":
		return jit.WorkerMain(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	case "host":
		return hostMain(ctx, args)
	}
	return fakeWorker(mode, args)
}

// fakeWorker misbehaves in the way mode names, for the pool's sake.
func fakeWorker(mode string, args []string) int {
	opts, err := jit.ParseWorkerArgs(args, os.Stderr)
	if err != nil {
		return 2
	}
	out := wire.NewWriter(os.Stdout)
	in := wire.NewReader(os.Stdin, 0)
	hello := func() {
		_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Hello{Hello: &wirepb.Hello{
			ProtocolVersion: wire.ProtocolVersion, CoreVersion: opts.CoreVersion, Pid: int32(os.Getpid()),
		}}})
	}
	// readRequest reads up to the first request, acknowledging it if accept.
	readRequest := func(accept bool) *wirepb.Request {
		for {
			f, err := in.Read()
			if err != nil {
				return nil
			}
			if r := f.GetRequest(); r != nil {
				if accept {
					_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Accepted{Accepted: &wirepb.Accepted{Id: r.GetId()}}})
				}
				return r
			}
		}
	}
	firstRequest := func() { readRequest(true) }
	drain := func() { _, _ = io.Copy(io.Discard, os.Stdin) } // stay alive until the host lets go
	junk := []byte{5, 0xff, 0xff, 0xff, 0xff, 0xff}          // a 5-byte frame that is no protobuf
	switch mode {
	case "print-env":
		for _, kv := range os.Environ() {
			fmt.Fprintln(os.Stderr, "env:", kv)
		}
		return 1
	case "junk-hello":
		fmt.Fprintln(os.Stderr, "about to write junk")
		os.Stdout.Write(junk)
		drain()
	case "junk-reply":
		hello()
		firstRequest()
		fmt.Fprintln(os.Stderr, "about to write junk")
		os.Stdout.Write(junk)
		drain()
	case "oversized-reply":
		hello()
		firstRequest()
		os.Stdout.Write(protowire.AppendVarint(nil, 1<<40))
		drain()
	case "text-reply":
		hello()
		firstRequest()
		fmt.Println("hello from a stray fmt.Println on stdout")
		drain()
	case "wrong-id":
		hello()
		firstRequest()
		_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Response{Response: &wirepb.Response{Id: 999}}})
		drain()
	case "crash":
		hello()
		firstRequest()
		fmt.Fprintln(os.Stderr, "panic: something went very wrong")
		fmt.Fprintln(os.Stderr, "goroutine 1 [running]:")
		return 2
	case "silent":
		drain()
	case "gone-before-accepting":
		// As a worker killed from outside just as the request reaches it.
		hello()
		readRequest(false)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "refuses-request":
		// As a worker that cannot read the request it was sent.
		hello()
		readRequest(false)
		return jit.ExitProtocol
	case "gone-after-accepting":
		hello()
		firstRequest()
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	case "unaccepted-reply":
		hello()
		r := readRequest(false)
		_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Response{Response: &wirepb.Response{
			Id: r.GetId(), Outcome: &wirepb.Response_Result{Result: []byte{}}, Stats: &wirepb.Stats{},
		}}})
		drain()
	case "accepts-another":
		hello()
		readRequest(false)
		_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Accepted{Accepted: &wirepb.Accepted{Id: 999}}})
		drain()
	case "echo":
		// The protocol with no engine behind it: for the transport's cost.
		hello()
		for {
			f, err := in.Read()
			if err != nil {
				return 0
			}
			if r := f.GetRequest(); r != nil {
				_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Accepted{Accepted: &wirepb.Accepted{Id: r.GetId()}}})
				// As many sequential adapter calls as the JiT request's
				// bytes say (jitJob's code is ignored).
				for i := 0; i < len(r.GetJit().GetRequest())%4; i++ {
					_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_AdapterCall{AdapterCall: &wirepb.AdapterCall{
						CallId: uint64(i + 1), RequestId: r.GetId(), Method: "ListTables",
					}}})
					if f, err := in.Read(); err != nil || f.GetAdapterResult() == nil {
						return 1
					}
				}
				_ = out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Response{Response: &wirepb.Response{
					Id: r.GetId(), Outcome: &wirepb.Response_Result{Result: []byte{}}, Stats: &wirepb.Stats{},
				}}})
			}
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	return 0
}

// hostMain plays a daemon: it prewarms a pool, prints its workers' pids and
// waits to be killed.
func hostMain(ctx context.Context, args []string) int {
	opts, err := jit.ParseWorkerArgs(args, os.Stderr)
	if err != nil {
		return 2
	}
	p, err := jit.NewPool(jit.PoolOptions{
		Root: opts.Root, BundlePath: opts.BundlePath, CoreVersion: opts.CoreVersion,
		Workers: 2, Command: []string{os.Args[0], "worker"}, Env: []string{helperEnv + "=worker"},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := p.Prewarm(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// One worker is stuck in native code, which no interrupt stops: only
	// the parent-death signal (or the worker's exit after stdin's EOF)
	// ends it when the host dies.
	go func() { _, _ = p.Jit(ctx, workertest.JitJob(workertest.JitCatastrophicRegexp), nil) }()
	time.Sleep(300 * time.Millisecond)
	for _, w := range p.Workers() {
		fmt.Println(w.PID)
	}
	os.Stdout.Close()
	<-ctx.Done()
	return 0
}

// gojaWorkers are workers of the goja engine: the test binary as
// `dfd worker`.
var gojaWorkers = workertest.Engine{
	Command: func(testing.TB, string, string) []string { return []string{os.Args[0], "worker"} },
	Env:     []string{helperEnv + "=worker"},
}
