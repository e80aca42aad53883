package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/project"
)

// Runner executes @dataform/core for one project with one core version:
// compiles and JiT requests. InProcess runs everything on goja in the
// daemon's own process (tests, --in-process); NewPooled's runners run the
// same jobs in warm `dfd worker` (goja) or Node.js worker processes, so
// that runaway code costs a worker, never the daemon. Everything a job
// needs travels in the job (unsaved buffers included), so an
// implementation never reads the daemon's state.
//
// Implementations must be safe for concurrent use (a JiT preview may run
// beside a compile) and must honour ctx: the daemon cancels superseded
// compiles.
type Runner interface {
	// Compile compiles the project as the CLI would, reading Overlays
	// instead of the files on disk where given.
	Compile(ctx context.Context, job CompileJob) (*compile.Result, error)
	// Jit runs job (an encoded dataform.JitCompilationRequest and what it
	// may read) and returns the encoded dataform.JitCompilationResponse.
	// JiT code's database calls go to rpc. Runners without a process
	// boundary ignore job.Prefetched (a call of rpc costs them nothing).
	Jit(ctx context.Context, rpc engine.RPC, job jit.JitJob) ([]byte, error)
	// Close releases the runner (and, for a pool, its workers).
	Close() error
}

// CompileJob is one compilation, as the project sees it: the file list and
// the unsaved buffers. (A pool's jit.CompileJob is the encoded request that
// pooled builds from it; InProcess hands the same to compile.RunPrepared.)
type CompileJob struct {
	// Overlays are unsaved buffers by root-relative slash path.
	Overlays map[string][]byte
	// FilePaths is the file list handed to core (nil: list the project).
	FilePaths []string
	Timeout   time.Duration
	// Log receives console output of the project's JavaScript.
	Log func(level, msg string)
	// Mode is how the compile uses the runner's kept context of
	// incremental compiles (engine.Mode; the zero value: none).
	Mode engine.Mode
}

// RunnerFactory makes the Runner of an opened project: NewInProcess (the
// default) or NewPooled.
type RunnerFactory func(ctx context.Context, p *project.Project, core *project.Core, log *slog.Logger) (Runner, error)

// InProcess is a Runner on the engine in this process. It keeps one
// runtime prepared ahead of time (loading core into a fresh goja runtime
// is most of a small project's compile time) and prepares the next one in
// the background as soon as one is taken. A runtime serves one request and
// is dropped: JavaScript globals must not leak between compiles.
type InProcess struct {
	p      *project.Project
	bundle *engine.Bundle
	log    *slog.Logger

	mu     sync.Mutex // guards spare, closed
	spare  *prepared
	closed bool
	wg     sync.WaitGroup // the preparing goroutine

	keepMu sync.Mutex    // held by a compile using keeper
	keeper engine.Keeper // the kept context of incremental compiles
}

// prepared is a runtime ready for one request, with the log sink its
// console output goes to (set per job).
type prepared struct {
	rt   *engine.Runtime
	sink *logSink
	err  error
	done chan struct{}
}

type logSink struct {
	mu sync.Mutex // guards f
	f  func(level, msg string)
}

func (s *logSink) log(level, msg string) {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	if f != nil {
		f(level, msg)
	}
}

func (s *logSink) set(f func(level, msg string)) {
	s.mu.Lock()
	s.f = f
	s.mu.Unlock()
}

// NewInProcess loads the project's core and starts preparing a runtime.
// It satisfies RunnerFactory.
func NewInProcess(ctx context.Context, p *project.Project, core *project.Core, log *slog.Logger) (Runner, error) {
	bundle, err := engine.LoadBundle(core.BundlePath, core.Version)
	if err != nil {
		return nil, err
	}
	r := &InProcess{p: p, bundle: bundle, log: log}
	r.mu.Lock()
	r.prepareLocked()
	r.mu.Unlock()
	return r, nil
}

// prepareLocked starts preparing the next spare runtime.
func (r *InProcess) prepareLocked() {
	if r.closed {
		return
	}
	pr := &prepared{sink: &logSink{}, done: make(chan struct{})}
	r.spare = pr
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(pr.done)
		pr.rt, pr.err = r.bundle.NewRuntime(engine.Options{Root: r.p.Root, Log: pr.sink.log})
	}()
}

// take returns a prepared runtime (waiting for the one in preparation)
// and starts preparing its successor.
func (r *InProcess) take(ctx context.Context) (*prepared, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("runner for %s is closed", r.p.Root)
	}
	pr := r.spare
	r.prepareLocked()
	r.mu.Unlock()
	select {
	case <-pr.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if pr.err != nil {
		return nil, pr.err
	}
	return pr, nil
}

// begin takes a prepared runtime for one request, routes its console
// output to log and opens the project's files with the unsaved buffers.
func (r *InProcess) begin(ctx context.Context, log func(level, msg string), overlays map[string][]byte) (*prepared, engine.Files, func() error, error) {
	pr, err := r.take(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	pr.sink.set(log)
	files, done, err := engine.OpenFiles(r.p.Root, overlays)
	if err != nil {
		return nil, nil, nil, err
	}
	return pr, files, done, nil
}

// Compile implements Runner.
func (r *InProcess) Compile(ctx context.Context, job CompileJob) (*compile.Result, error) {
	pr, files, done, err := r.begin(ctx, job.Log, job.Overlays)
	if err != nil {
		return nil, err
	}
	defer done()
	opts := compile.Options{Files: files, FilePaths: job.FilePaths, Timeout: job.Timeout, Mode: job.Mode}
	if job.Mode == engine.ModeKeep || job.Mode == engine.ModeIncremental {
		// A verification (ModeFullHooked) does not touch the kept context:
		// it never waits for an incremental compile, nor one for it.
		r.keepMu.Lock()
		defer r.keepMu.Unlock()
	}
	opts.Keeper = &r.keeper
	if job.Mode == engine.ModeFullHooked {
		opts.Keeper = &engine.Keeper{}
	}
	return compile.RunPrepared(ctx, pr.rt, r.p, opts)
}

// Jit implements Runner.
func (r *InProcess) Jit(ctx context.Context, rpc engine.RPC, job jit.JitJob) ([]byte, error) {
	pr, files, done, err := r.begin(ctx, job.Log, job.Overlay)
	if err != nil {
		return nil, err
	}
	defer done()
	if job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, job.Timeout)
		defer cancel()
	}
	return pr.rt.JitCompile(ctx, files, job.Request, rpc)
}

// Close implements Runner: it waits for a runtime in preparation.
func (r *InProcess) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}
