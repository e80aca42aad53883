package jit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// exchange is how one request went, as call saw it.
type exchange struct {
	resp *wirepb.Response
	// interrupted is engine.ErrTimeout or the caller's context error when
	// the host sent Cancel for that reason.
	interrupted error
	// lost: the worker was gone before it accepted the request (its
	// output ended cleanly, or the request could not be written to it),
	// so it ran nothing of it and the request may run elsewhere.
	lost bool
}

// call sends req and conducts the conversation until its Response: adapter
// calls are answered by rpc on goroutines of their own (several may be in
// flight); the caller's cancellation and the deadline become a Cancel
// frame, and a worker that does not answer within grace after that is
// killed. A non-nil error means the worker is dead or killed; ex.lost then
// says whether that happened before the worker accepted the request.
func (w *hostWorker) call(ctx context.Context, poolDone <-chan struct{}, req *wirepb.Request, rpc engine.RPC, prefetched func(int) bool, timeout, grace time.Duration, onLog func(level, msg string)) (ex exchange, err error) {
	w.nextID++
	id := w.nextID
	req.Id = id
	w.served.Add(1)
	if onLog != nil {
		w.onLog.Store(&onLog)
		defer w.onLog.Store(nil)
	}

	// Adapter calls run on goroutines (started by readLoop) that are waited
	// for before returning.
	rpcCtx, cancelRPCs := context.WithCancel(ctx)
	var bg sync.WaitGroup
	st := &callState{id: id, ctx: rpcCtx, rpc: rpc, prefetched: prefetched, bg: &bg}
	w.cur.Store(st)
	defer bg.Wait()
	defer st.finish()
	defer w.cur.Store(nil)
	defer cancelRPCs()

	// Frames go out from this goroutine (a detour through another one
	// costs a scheduling hop of the warm path); a worker that stops reading
	// its stdin cannot hold them past the request's deadline and grace, and
	// is killed then.
	if timeout > 0 {
		_ = w.stdin.SetWriteDeadline(time.Now().Add(timeout + grace))
	} else {
		_ = w.stdin.SetWriteDeadline(time.Time{})
	}
	send := func(f *wirepb.Frame, cause error) error {
		if err := w.out.Write(f); err != nil {
			w.kill()
			return w.crash(fmt.Sprintf("could not be sent a frame (%v)", err), cause)
		}
		return nil
	}
	if err := w.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Request{Request: req}}); err != nil {
		// Not all of the request reached the worker (it is gone: a broken
		// pipe), so it cannot have run any of it; unless the write timed
		// out, which is a hung worker, not a lost one.
		w.kill()
		return exchange{lost: !errors.Is(err, os.ErrDeadlineExceeded)}, w.crash(fmt.Sprintf("could not be sent the request (%v)", err), nil)
	}

	var deadline, graceC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	done := ctx.Done()
	interrupt := func(why error) error {
		ex.interrupted = why
		deadline, done = nil, nil
		graceC = time.After(grace)
		if err := send(&wirepb.Frame{Kind: &wirepb.Frame_Cancel{Cancel: &wirepb.Cancel{Id: id}}}, why); err != nil {
			return err
		}
		if w.hello.GetInterruptedBySigint() && req.GetCompile() != nil {
			// It reads the Cancel frame only once the compile is over (a
			// compile of a big project takes seconds): the signal stops
			// it, so that the next compile need wait neither for it nor
			// for the grace period's kill.
			_ = w.cmd.Process.Signal(os.Interrupt)
		}
		return nil
	}
	for {
		select {
		case f := <-w.frames:
			switch k := f.Kind.(type) {
			case *wirepb.Frame_Response:
				if k.Response.GetId() != id {
					return ex, w.protocolFailure(fmt.Sprintf("answered request %d while %d was running", k.Response.GetId(), id))
				}
				if !st.accepted.Load() { // readLoop sets it before it passes on later frames
					return ex, w.protocolFailure(fmt.Sprintf("answered request %d without accepting it first", id))
				}
				ex.resp = k.Response
				return ex, nil
			default:
				return ex, w.protocolFailure(fmt.Sprintf("sent an unexpected %T frame", f.GetKind()))
			}
		case <-w.dead:
			ce := w.crash(reasonExited, nil)
			// readLoop stored accepted and deadErr before closing dead. A
			// worker that broke the protocol, or exited refusing what it
			// read (perhaps the request: another worker would refuse it
			// too), is not lost but failed.
			ex.lost = !st.accepted.Load() && !errors.Is(w.deadErr, wire.ErrProtocol) && ce.ExitCode != ExitProtocol
			return ex, ce
		case <-deadline:
			if err := interrupt(engine.ErrTimeout); err != nil {
				return ex, err
			}
		case <-done:
			why := ctx.Err()
			if errors.Is(why, context.DeadlineExceeded) {
				why = errors.Join(engine.ErrTimeout, why)
			}
			if err := interrupt(why); err != nil {
				return ex, err
			}
		case <-graceC:
			w.kill()
			return ex, w.crash(fmt.Sprintf("killed: no answer %s after the request was interrupted", grace), ex.interrupted)
		case <-poolDone:
			w.kill()
			return ex, w.crash("killed: the pool is closing", ErrClosed)
		}
	}
}

// reasonExited is the CrashError reason of a worker that died on its own
// (or was killed from outside) while serving a request.
const reasonExited = "exited during the request"

// callState is the request in flight, as readLoop needs it to record its
// acceptance and to start the goroutines that answer its adapter calls.
type callState struct {
	id uint64
	// accepted is set by readLoop when the worker's Accepted arrives.
	accepted atomic.Bool
	ctx      context.Context
	rpc      engine.RPC
	// prefetched is told which prefetched answer the worker used; false
	// means no such answer was sent.
	prefetched func(int) bool

	mu   sync.Mutex // guards done and the Add of bg
	done bool
	bg   *sync.WaitGroup
}

// start runs f on a goroutine that call waits for, unless call is done.
func (s *callState) start(f func(ctx context.Context, rpc engine.RPC)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return // the request is over: the worker waits for nothing
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f(s.ctx, s.rpc)
	}()
}

// finish stops start from starting more, before call waits for bg.
func (s *callState) finish() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// answer runs one adapter call and sends its result: exactly one
// AdapterResult per AdapterCall, whatever happens in rpc.
func (w *hostWorker) answer(ctx context.Context, call *wirepb.AdapterCall, rpc engine.RPC) {
	res := &wirepb.AdapterResult{CallId: call.GetCallId()}
	resp, err := safeRPC(ctx, rpc, call.GetMethod(), call.GetRequest())
	if err != nil {
		code := wirepb.Code_UNAVAILABLE
		switch {
		case errors.Is(err, context.Canceled):
			code = wirepb.Code_CANCELED
		case errors.Is(err, context.DeadlineExceeded):
			code = wirepb.Code_DEADLINE_EXCEEDED
		}
		res.Outcome = &wirepb.AdapterResult_Error{Error: &wirepb.Error{Code: code, Message: err.Error()}}
	} else {
		if resp == nil {
			resp = []byte{} // never absent: protobufjs would wait forever
		}
		res.Outcome = &wirepb.AdapterResult_Response{Response: resp}
	}
	_ = w.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_AdapterResult{AdapterResult: res}})
}

// safeRPC calls rpc, turning a panic into an error: adapter code runs in
// the daemon, and one bad call must not take it down.
func safeRPC(ctx context.Context, rpc engine.RPC, method string, req []byte) (resp []byte, err error) {
	if rpc == nil {
		return nil, fmt.Errorf("%s: no database adapter for this request", method)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: the adapter panicked: %v", method, p)
		}
	}()
	return rpc(ctx, method, req)
}
