package jit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// CompileJob is a compilation of the pool's project.
type CompileJob struct {
	// Request is an encoded dataform.CoreExecutionRequest, as
	// compile.Request builds it.
	Request []byte
	// Overlay holds unsaved editor buffers: root-relative slash paths to
	// content, read instead of the files on disk.
	Overlay map[string][]byte
	// Timeout overrides the pool's.
	Timeout time.Duration
	// Log receives console output of the project's JavaScript.
	Log func(level, msg string)
	// Mode is how the compile uses a worker's kept context (see
	// engine.Mode); the zero value is a plain full compile.
	Mode engine.Mode
	// Paths are the project's files of Request (root-relative, slash
	// separated). With a Mode, the worker gets their stat(2) signatures,
	// taken as the request goes out (wirepb.DiskState): a Node.js worker
	// uses them; without them it stats the files itself. (goja's `dfd
	// worker` does not: leave Paths out for its pools.)
	Paths []string
}

// JitJob is the JiT compilation of one action of the pool's project.
type JitJob struct {
	// Request is an encoded dataform.JitCompilationRequest.
	Request []byte
	Overlay map[string][]byte
	Timeout time.Duration
	Log     func(level, msg string)
	// Prefetched are answers the caller already has for calls the JiT
	// code is expected to make; the worker answers matching calls itself,
	// saving a round trip each, and OnPrefetched(i) is called (on the
	// pool's reader, in call order among the other calls: keep it quick)
	// for each such call of Prefetched[i].
	Prefetched   []PrefetchedCall
	OnPrefetched func(i int)
}

// PrefetchedCall is an adapter call and its answer, sent with a JiT
// request. Only successful answers of calls without side effects belong
// here.
type PrefetchedCall struct {
	Method            string
	Request, Response []byte
}

// Result is a request's answer.
type Result struct {
	// Response is the encoded dataform.CoreExecutionResponse (Compile) or
	// dataform.JitCompilationResponse (Jit), exactly as core wrote it.
	Response []byte
	Stats    Stats
	// Incremental says how a compile with a Mode ran (nil for other
	// requests, and from workers that know no incremental compiles).
	Incremental *engine.Outcome
}

// Stats describe how a request was served.
type Stats struct {
	PID      int           // the worker that served it
	Queued   time.Duration // waiting for a worker, including starting one
	Prepare  time.Duration // the runtime's preparation, done ahead of the request
	Wait     time.Duration // waiting for a prepared runtime in the worker (0 when warm)
	Run      time.Duration // in the engine
	Total    time.Duration // from the call to its return
	PeakHeap uint64        // the worker's largest Go heap during the request
}

// Compile compiles the pool's project on a worker.
func (p *Pool) Compile(ctx context.Context, job CompileJob) (*Result, error) {
	affinity := affinityNone
	switch job.Mode {
	case engine.ModeIncremental:
		affinity = affinityKept
	case engine.ModeFullHooked:
		affinity = affinityAway
	case engine.ModeKeep:
		affinity = affinityOther
	}
	return p.do(ctx, "compile", job.Timeout, job.Log, nil, nil, affinity, func(timeoutMS uint32) *wirepb.Request {
		var disk *wirepb.DiskState
		if job.Mode != engine.ModeFull {
			disk = diskState(p.opts.Root, job.Paths)
		}
		return &wirepb.Request{Kind: &wirepb.Request_Compile{Compile: &wirepb.Compile{
			Request: job.Request, Root: p.opts.Root, Overlay: job.Overlay, TimeoutMs: timeoutMS,
			Mode: wirepb.CompileMode(job.Mode), Disk: disk,
		}}}
	})
}

// Jit runs a JiT compilation on a worker; rpc answers its DbAdapter calls
// (on goroutines of their own, with a context that ends with the request).
// An error rpc returns reaches the JiT code as a rejected promise with the
// error's text as message.
func (p *Pool) Jit(ctx context.Context, job JitJob, rpc engine.RPC) (*Result, error) {
	var pre []*wirepb.PrefetchedCall
	for _, c := range job.Prefetched {
		pre = append(pre, &wirepb.PrefetchedCall{Method: c.Method, Request: c.Request, Response: nonNilBytes(c.Response)})
	}
	onPrefetched := job.OnPrefetched
	if onPrefetched == nil {
		onPrefetched = func(int) {}
	}
	return p.do(ctx, "JiT compilation", job.Timeout, job.Log, rpc, prefetchHook{n: len(pre), f: onPrefetched}.call, affinityOther, func(timeoutMS uint32) *wirepb.Request {
		return &wirepb.Request{Kind: &wirepb.Request_Jit{Jit: &wirepb.Jit{
			Request: job.Request, Root: p.opts.Root, Overlay: job.Overlay, TimeoutMs: timeoutMS, Prefetched: pre,
		}}}
	})
}

// do runs one request on a worker and decides the worker's fate after it.
func (p *Pool) do(ctx context.Context, what string, timeout time.Duration, log func(level, msg string), rpc engine.RPC, prefetched func(int) bool, affinity int, build func(timeoutMS uint32) *wirepb.Request) (*Result, error) {
	start := time.Now()
	if !p.enter() {
		return nil, ErrClosed
	}
	defer p.inflight.Done()
	if timeout <= 0 {
		timeout = p.opts.Timeout
	}
	if dl, ok := ctx.Deadline(); ok {
		// The worker enforces the deadline itself; tell it the real one.
		timeout = min(timeout, max(time.Until(dl), time.Millisecond))
	}

	var (
		w      *hostWorker
		ex     exchange
		queued time.Duration
	)
	for attempt := 0; ; attempt++ {
		var err error
		if w, err = p.acquire(ctx, affinity); err != nil {
			return nil, fmt.Errorf("jit: %s: waiting for a worker: %w", what, err)
		}
		queued = time.Since(start)
		req := build(uint32(min(timeout.Milliseconds(), 1<<32-1)))
		ex, err = w.call(ctx, p.ctx.Done(), req, rpc, prefetched, timeout, p.opts.Grace, log)
		if err == nil && strayInterrupt(ex) && attempt < p.opts.Workers && ctx.Err() == nil {
			// Nobody canceled this request, yet the worker says it was:
			// a SIGINT it did not ask for stopped it (the one sent after
			// the previous compile's Cancel landed once that compile had
			// ended, or a terminal's Ctrl-C). Its answer says nothing
			// about the request: run it again.
			p.keepIncremental(w, ex.resp)
			p.release(w, p.keep(w, ex.resp))
			p.log.Info("a jit worker's request was interrupted by a signal the host did not send for it; running it again", "worker", w.pid, "what", what)
			continue
		}
		if err == nil {
			break
		}
		p.release(w, false)
		// A worker killed from outside while idle can look alive for a
		// moment (its pipes close once the kernel has torn it down), so the
		// pool may hand it a request. One that died before accepting the
		// request ran nothing of it: run it on another. Every worker of the
		// pool may have been killed at once, hence up to Workers retries.
		if ex.lost && attempt < p.opts.Workers && ctx.Err() == nil {
			p.log.Info("a jit worker was gone before it accepted a request; running the request on another", "worker", w.pid, "err", err)
			continue
		}
		return nil, fmt.Errorf("jit: %s: %w", what, err)
	}
	resp := ex.resp
	st := resp.GetStats()
	p.keepIncremental(w, resp)
	p.release(w, p.keep(w, resp))

	res := &Result{Stats: Stats{
		PID:      w.pid,
		Queued:   queued,
		Prepare:  time.Duration(st.GetPrepareMicros()) * time.Microsecond,
		Wait:     time.Duration(st.GetWaitMicros()) * time.Microsecond,
		Run:      time.Duration(st.GetRunMicros()) * time.Microsecond,
		Total:    time.Since(start),
		PeakHeap: st.GetPeakHeapBytes(),
	}}
	if inc := resp.GetIncremental(); inc != nil {
		res.Incremental = &engine.Outcome{Rerun: inc.GetRerun(), File: inc.GetFile(), Kept: inc.GetKept(), Reason: inc.GetReason()}
	}
	if e := resp.GetError(); e != nil {
		return res, responseError(what, timeout, e, ex.interrupted)
	}
	res.Response = resp.GetResult()
	if res.Response == nil {
		res.Response = []byte{}
	}
	return res, nil
}

// strayInterrupt: the worker answered CANCELED to a request the host did
// not cancel.
func strayInterrupt(ex exchange) bool {
	return ex.interrupted == nil && ex.resp.GetError().GetCode() == CodeCanceled
}

// keepIncremental records whether w kept the context of the compile it
// answered with resp (the affinity of the next incremental compile).
func (p *Pool) keepIncremental(w *hostWorker, resp *wirepb.Response) {
	if inc := resp.GetIncremental(); inc != nil {
		p.mu.Lock()
		w.kept = inc.GetKept()
		p.mu.Unlock()
	}
}

// keep decides whether w serves again after answering resp.
func (p *Pool) keep(w *hostWorker, resp *wirepb.Response) bool {
	switch {
	case resp.GetError().GetCode() == CodeResourceExhausted:
		return false // the worker exits after such an answer
	case w.served.Load() >= int64(p.opts.MaxRequests):
		p.log.Debug("recycling a jit worker", "worker", w.pid, "requests", w.served.Load())
		return false
	case p.opts.RecycleHeap > 0 && resp.GetStats().GetPeakHeapBytes() >= p.opts.RecycleHeap && !p.holdsContext(w):
		p.log.Info("recycling a jit worker after a large request", "worker", w.pid, "peak_heap", resp.GetStats().GetPeakHeapBytes())
		return false
	}
	return true
}

// holdsContext says whether w keeps a compile's context. Such a worker is
// not recycled for its heap: the heap holds that context on purpose (and,
// on Node.js, garbage V8 has not collected yet: a 3,000-action project's
// compile reports 790 MiB in use), and replacing the worker would make
// every next compile a full one. The ceiling, MemoryLimit, still applies.
func (p *Pool) holdsContext(w *hostWorker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return w.kept
}

// responseError turns the worker's error answer into a *WorkerError.
// interrupted is why the host sent Cancel, if it did.
func responseError(what string, timeout time.Duration, e *wirepb.Error, interrupted error) error {
	we := &WorkerError{Code: e.GetCode(), Message: e.GetMessage(), Stack: e.GetStack()}
	if interrupted != nil && (we.Code == CodeCanceled || we.Code == CodeDeadlineExceeded) {
		we.cause = interrupted
		if errors.Is(interrupted, engine.ErrTimeout) {
			we.Code = CodeDeadlineExceeded
		}
	}
	if we.Code == CodeDeadlineExceeded {
		we.Message = fmt.Sprintf("%s: deadline of %s exceeded", what, timeout)
	}
	return we
}

// prefetchHook reports a worker's use of prefetched answer i, refusing
// indexes the request did not send.
type prefetchHook struct {
	n int
	f func(int)
}

func (h prefetchHook) call(i int) bool {
	if i < 0 || i >= h.n {
		return false
	}
	h.f(i)
	return true
}

// nonNilBytes keeps an empty answer distinct from an absent one on the
// wire's side of things (protobuf has no null bytes, and the worker hands
// the bytes to JavaScript).
func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
