package jit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/heapwatch"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// handle runs one request. A non-nil second result means the worker must
// exit after sending the response.
func (s *server) handle(ctx context.Context, req *wirepb.Request) (*wirepb.Response, error) {
	s.served++
	resp := &wirepb.Response{Id: req.GetId(), Stats: &wirepb.Stats{RequestsServed: s.served}}

	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	early := s.early[req.GetId()]
	delete(s.early, req.GetId())
	s.current, s.cancel = req.GetId(), cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.current, s.cancel = 0, nil
		s.mu.Unlock()
	}()
	if early {
		// Cancelled while queued: answered without spending a runtime.
		resp.Outcome = errorOutcome(CodeCanceled, "canceled before it started", "")
		return resp, nil
	}

	var job jobSpec
	switch k := req.Kind.(type) {
	case *wirepb.Request_Compile:
		job = jobSpec{request: k.Compile.GetRequest(), root: k.Compile.GetRoot(), overlay: k.Compile.GetOverlay(), timeoutMS: k.Compile.GetTimeoutMs(),
			mode: engine.Mode(k.Compile.GetMode())}
		if job.root != "" && job.root != s.opts.Root {
			job.mode = engine.ModeFull // the kept context is of the worker's root
		}
	case *wirepb.Request_Jit:
		job = jobSpec{request: k.Jit.GetRequest(), root: k.Jit.GetRoot(), overlay: k.Jit.GetOverlay(), timeoutMS: k.Jit.GetTimeoutMs(),
			jit: true, prefetched: k.Jit.GetPrefetched()}
	default:
		resp.Outcome = errorOutcome(CodeInvalidArgument, "request has neither compile nor jit", "")
		return resp, nil
	}
	if job.timeoutMS > 0 {
		var cancelT context.CancelFunc
		reqCtx, cancelT = context.WithTimeout(reqCtx, time.Duration(job.timeoutMS)*time.Millisecond)
		defer cancelT()
	}

	var rt *engine.Runtime
	if job.mode == engine.ModeFull {
		waitStart := time.Now()
		var prepared time.Duration
		var err error
		rt, prepared, err = s.runtimeFor(reqCtx, job.root)
		resp.Stats.WaitMicros = time.Since(waitStart).Microseconds()
		resp.Stats.PrepareMicros = prepared.Microseconds()
		if err != nil {
			s.setOutcome(resp, reqCtx, nil, err)
			return resp, nil
		}
	}

	s.logReq.Store(req.GetId())
	heap := heapwatch.Start(s.opts.MemoryLimit, s.opts.SampleEvery, func() { cancel(ErrMemoryLimit) })
	runStart := time.Now()
	var result []byte
	var err error
	if job.mode != engine.ModeFull {
		result, err = s.runKept(reqCtx, resp, job)
	} else {
		result, err = s.run(reqCtx, rt, req.GetId(), job)
	}
	resp.Stats.RunMicros = time.Since(runStart).Microseconds()
	resp.Stats.PeakHeapBytes = heap.Stop()
	s.logReq.Store(0)

	s.setOutcome(resp, reqCtx, result, err)
	if errors.Is(context.Cause(reqCtx), ErrMemoryLimit) {
		// Even if the request finished, the heap crossed the ceiling: the
		// process goes, so that its memory goes back to the system.
		s.log.Warn("heap ceiling crossed; exiting after this response",
			"request", req.GetId(), "peak_heap", resp.Stats.PeakHeapBytes, "limit", s.opts.MemoryLimit)
		return resp, ErrMemoryLimit
	}
	return resp, nil
}

type jobSpec struct {
	request   []byte
	root      string
	overlay   map[string][]byte
	timeoutMS uint32
	jit       bool
	mode      engine.Mode // compiles: how the kept context is used

	prefetched []*wirepb.PrefetchedCall
}

// runtimeFor returns a prepared runtime for root (the worker's own root
// when empty) and how long its preparation took.
func (s *server) runtimeFor(ctx context.Context, root string) (*engine.Runtime, time.Duration, error) {
	if root == "" || root == s.opts.Root {
		return s.spares.take(ctx)
	}
	// Another root: the pool never sends one, but serve it correctly, if
	// slowly, rather than compile one project with another's files.
	start := time.Now()
	rt, err := s.spares.bundle.NewRuntime(engine.Options{Root: root, Log: s.console})
	return rt, time.Since(start), err
}

func (s *server) run(ctx context.Context, rt *engine.Runtime, id uint64, job jobSpec) ([]byte, error) {
	root := job.root
	if root == "" {
		root = s.opts.Root
	}
	files, closeFiles, err := engine.OpenFiles(root, job.overlay)
	if err != nil {
		return nil, err
	}
	defer closeFiles()
	if job.jit {
		rt.SetImmediate(s.prefetchedAnswers(id, job.prefetched))
		return rt.JitCompile(ctx, files, job.request, s.adapter(id))
	}
	return rt.Compile(ctx, files, job.request)
}

// runKept runs a compile through the worker's kept context (see
// engine.Keeper); a runtime is taken only when the compile is not a rerun.
func (s *server) runKept(ctx context.Context, resp *wirepb.Response, job jobSpec) ([]byte, error) {
	files, closeFiles, err := engine.OpenFiles(s.opts.Root, job.overlay)
	if err != nil {
		return nil, err
	}
	defer closeFiles()
	fresh := func() (*engine.Runtime, error) {
		waitStart := time.Now()
		rt, prepared, err := s.runtimeFor(ctx, "")
		resp.Stats.WaitMicros = time.Since(waitStart).Microseconds()
		resp.Stats.PrepareMicros = prepared.Microseconds()
		return rt, err
	}
	result, out, err := s.keeper.Compile(ctx, fresh, files, job.request, job.mode)
	resp.Incremental = &wirepb.Incremental{Rerun: out.Rerun, File: out.File, Kept: out.Kept, Reason: out.Reason}
	return result, err
}

// setOutcome turns the engine's result into the response's outcome.
func (s *server) setOutcome(resp *wirepb.Response, ctx context.Context, result []byte, err error) {
	if err == nil {
		resp.Outcome = &wirepb.Response_Result{Result: result}
		return
	}
	resp.Outcome = s.errorOutcome(ctx, err)
}

func (s *server) errorOutcome(ctx context.Context, err error) *wirepb.Response_Error {
	var se *engine.ScriptError
	switch {
	case errors.Is(context.Cause(ctx), ErrMemoryLimit):
		return errorOutcome(CodeResourceExhausted, fmt.Sprintf("the worker's heap went over its %d MiB ceiling", s.opts.MemoryLimit>>20), "")
	case errors.As(err, &se):
		return errorOutcome(CodeScript, se.Message, se.Stack)
	case errors.Is(err, engine.ErrTimeout):
		return errorOutcome(CodeDeadlineExceeded, err.Error(), "")
	case errors.Is(err, engine.ErrCanceled), errors.Is(err, context.Canceled):
		return errorOutcome(CodeCanceled, err.Error(), "")
	case errors.Is(err, context.DeadlineExceeded):
		return errorOutcome(CodeDeadlineExceeded, err.Error(), "")
	}
	return errorOutcome(CodeInternal, err.Error(), "")
}

func errorOutcome(code Code, msg, stack string) *wirepb.Response_Error {
	return &wirepb.Response_Error{Error: &wirepb.Error{Code: code, Message: msg, Stack: stack}}
}
