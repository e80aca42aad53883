package jit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/heapwatch"
	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// ServeWorker is the worker process: it compiles the core bundle once,
// keeps fresh runtimes prepared, says Hello on out and then serves the
// host's requests from in, one at a time, each on a runtime of its own that
// is dropped afterwards. It returns nil when in reaches EOF (the host is
// gone or done with it).
//
// It assumes it owns the process: it sets the GC percentage and memory
// limit, and on a fatal error (heap ceiling, broken protocol) it returns
// without waiting for a read of in that may never end, for the process to
// exit.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer, stderr io.Writer, opts WorkerOptions) error {
	start := time.Now()
	// No time stamps: the host re-logs each line with its own.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}))
	heapwatch.SetLimits(opts.GCPercent, opts.SoftMemoryLimit, opts.MemoryLimit)
	if opts.SampleEvery <= 0 {
		opts.SampleEvery = heapwatch.DefaultEvery
	}
	if opts.Spares <= 0 {
		opts.Spares = DefaultSpares
	}
	if opts.TranspileCache != "" {
		engine.SetTranspileCacheDir(opts.TranspileCache)
	}

	bundle, err := engine.LoadBundle(opts.BundlePath, opts.CoreVersion)
	if err != nil {
		return err
	}

	parent := ctx
	ctx, stop := context.WithCancelCause(ctx)
	s := &server{
		opts:  opts,
		out:   wire.NewWriter(out),
		log:   log,
		calls: map[uint64]chan *wirepb.AdapterResult{},
		early: map[uint64]bool{},
		wake:  make(chan struct{}, 1),
	}
	s.spares = newSpares(bundle, opts.Root, opts.Spares, s.console)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.spares.run(ctx)
	}()
	defer stop(nil) // runs before wg.Wait: stops the preparer

	// Hello only once a runtime is ready: a worker that has said Hello is
	// warm, which is what the pool's Prewarm promises.
	select {
	case <-s.spares.firstReady:
		if err := s.spares.firstErr; err != nil {
			return fmt.Errorf("preparing a runtime: %w", err)
		}
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	// Compiling core's bundle left tens of MB of garbage; an idle worker
	// should not hold it (measured: 62 MB RSS idle without this).
	debug.FreeOSMemory()
	err = s.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Hello{Hello: &wirepb.Hello{
		ProtocolVersion:  wire.ProtocolVersion,
		CoreVersion:      opts.CoreVersion,
		Pid:              int32(os.Getpid()),
		BundlePath:       opts.BundlePath,
		Root:             opts.Root,
		StartupMicros:    time.Since(start).Microseconds(),
		MemoryLimitBytes: opts.MemoryLimit,
	}}})
	if err != nil {
		return fmt.Errorf("writing hello: %w", err)
	}
	log.Debug("ready", "core", opts.CoreVersion, "root", opts.Root, "startup", time.Since(start))

	readerDone := make(chan struct{})
	go func() {
		// Owned by ServeWorker: it ends at EOF of in, which is how ServeWorker
		// normally returns. On a fatal error ServeWorker returns without it
		// (see the doc comment); closing in, when possible, ends it too.
		defer close(readerDone)
		stop(s.readLoop(wire.NewReader(in, opts.MaxFrame)))
	}()
	served := make(chan error, 1)
	go func() { served <- s.serve(ctx) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		// Stdin's EOF (or a fatal error) interrupts the request in progress,
		// but goja's interrupt does not stop native code (a catastrophic
		// regular expression): don't wait for it for long. The serve
		// goroutine is then abandoned to the process's exit.
		select {
		case err = <-served:
		case <-time.After(exitGrace):
			return fmt.Errorf("%w; the request in progress did not stop within %s", context.Cause(ctx), exitGrace)
		}
	}
	if errors.Is(err, errStdinEOF) {
		<-readerDone
		return nil
	}
	if parent.Err() != nil {
		err = nil // asked to stop (SIGTERM): not a failure
	}
	if c, ok := in.(io.Closer); ok {
		_ = c.Close()
	}
	return err
}

var errStdinEOF = errors.New("stdin reached EOF")

// exitGrace is how long the worker waits for an interrupted request before
// it exits without it.
const exitGrace = 2 * time.Second

// server is the state of one worker process.
type server struct {
	opts   WorkerOptions
	out    *wire.Writer
	log    *slog.Logger
	spares *spares
	keeper engine.Keeper // the kept context of incremental compiles; only the serve loop touches it

	mu      sync.Mutex // guards queue, early, current, cancel and calls
	queue   []*wirepb.Request
	early   map[uint64]bool // Cancel frames for requests still queued
	current uint64          // id of the running request, 0 when idle
	cancel  context.CancelCauseFunc
	calls   map[uint64]chan *wirepb.AdapterResult // adapter calls waiting for the host

	wake     chan struct{} // cap 1: the queue may have grown
	nextCall atomic.Uint64
	served   uint64        // requests answered; only the serve loop touches it
	logReq   atomic.Uint64 // request whose console output is being relayed
}

// errCanceledByHost is the cause of a request's cancellation by a Cancel frame.
var errCanceledByHost = errors.New("canceled by the host")

// readLoop reads the host's frames until EOF or a protocol error. It never
// blocks on the serve loop, so adapter results keep flowing while a
// request runs.
func (s *server) readLoop(r *wire.Reader) error {
	for {
		f, err := r.Read()
		if err == io.EOF {
			return errStdinEOF
		}
		if err != nil {
			if errors.Is(err, wire.ErrProtocol) {
				s.log.Error("ending: the host sent a bad frame", "err", err)
				return fmt.Errorf("%w: %w", errHostProtocol, err)
			}
			s.log.Error("ending: reading stdin failed", "err", err)
			return err
		}
		switch k := f.Kind.(type) {
		case *wirepb.Frame_Request:
			// The receipt goes out before the request can start, so every
			// other frame about it follows the receipt (wire's rule that
			// lets the host retry requests of a worker that died first).
			if err := s.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Accepted{Accepted: &wirepb.Accepted{Id: k.Request.GetId()}}}); err != nil {
				return fmt.Errorf("writing accepted: %w", err)
			}
			s.mu.Lock()
			s.queue = append(s.queue, k.Request)
			s.mu.Unlock()
			select {
			case s.wake <- struct{}{}:
			default:
			}
		case *wirepb.Frame_Cancel:
			s.cancelRequest(k.Cancel.GetId())
		case *wirepb.Frame_AdapterResult:
			s.mu.Lock()
			ch := s.calls[k.AdapterResult.GetCallId()]
			delete(s.calls, k.AdapterResult.GetCallId())
			s.mu.Unlock()
			if ch != nil {
				ch <- k.AdapterResult // buffered: the caller may have given up
			}
		default:
			err := fmt.Errorf("%w: %w: unexpected %T frame from the host", errHostProtocol, wire.ErrProtocol, f.Kind)
			s.log.Error("ending", "err", err)
			return err
		}
	}
}

func (s *server) cancelRequest(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == s.current && s.cancel != nil {
		s.cancel(errCanceledByHost)
		return
	}
	for _, q := range s.queue {
		if q.GetId() == id {
			s.early[id] = true
			return
		}
	}
	// Already answered or never seen: ignored, as the protocol says.
}

// serve answers queued requests one at a time until ctx ends.
func (s *server) serve(ctx context.Context) error {
	for {
		req, err := s.next(ctx)
		if err != nil {
			return err
		}
		// The next runtime is prepared once the response is out (unless no
		// spare is left), not beside the request.
		s.spares.setRunning(true)
		resp, fatal := s.handle(ctx, req)
		err = s.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Response{Response: resp}})
		s.spares.setRunning(false)
		if err != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx) // the host is gone: stdin's EOF says why
			}
			return fmt.Errorf("writing response: %w", err)
		}
		if fatal != nil {
			return fatal
		}
		if resp.GetStats().GetPeakHeapBytes() > releaseAfterHeap {
			// The request's runtime is garbage now. Without this the
			// worker would keep the pages of a big compile for minutes
			// (the scavenger returns them slowly) while it sits idle.
			debug.FreeOSMemory()
		}
	}
}

// releaseAfterHeap is the peak heap above which a worker hands its free
// memory back to the system after the response (a collection and a
// scavenge: milliseconds for the small live heap left between requests).
const releaseAfterHeap = 64 << 20

func (s *server) next(ctx context.Context) (*wirepb.Request, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			req := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return req, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// console relays console output of user code to the host as Log frames.
func (s *server) console(level, msg string) {
	_ = s.out.Write(&wirepb.Frame{Kind: &wirepb.Frame_Log{Log: &wirepb.Log{
		RequestId: s.logReq.Load(), Level: level, Message: msg,
	}}})
}
