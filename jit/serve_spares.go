package jit

import (
	"context"
	"sync"
	"time"

	"github.com/dfdtools/dfd/engine"
)

// spares keeps fresh runtimes prepared ahead of the requests they will
// serve: preparing one (running core's bundle in a new goja runtime) takes
// 10–30 ms, ten times a warm JiT request. A runtime serves one request and
// is dropped, so JavaScript globals never leak from one request into the
// next.
//
// Preparation waits while a request runs and until its response is out,
// unless no spare is left: on two cores a preparation running beside a
// warm JiT request doubled its latency (BenchmarkJitWarm/0-calls p50
// 3.5–4.1 ms against 1.8–2.1 ms).
type spares struct {
	bundle *engine.Bundle
	opts   engine.Options
	ready  chan prepared // buffered to the number of spares

	firstReady chan struct{} // closed once the first runtime is ready, or failed
	firstErr   error         // why the first runtime failed; set before firstReady closes
	once       sync.Once

	mu      sync.Mutex    // guards running
	running bool          // a request is being served
	changed chan struct{} // cap 1: running changed or a spare was taken
}

type prepared struct {
	rt   *engine.Runtime
	took time.Duration
	err  error
}

func newSpares(b *engine.Bundle, root string, n int, log func(level, msg string)) *spares {
	return &spares{
		bundle:     b,
		opts:       engine.Options{Root: root, Log: log},
		ready:      make(chan prepared, n),
		firstReady: make(chan struct{}),
		changed:    make(chan struct{}, 1),
	}
}

// run prepares runtimes until ctx ends. The channel's capacity bounds how
// many wait.
func (s *spares) run(ctx context.Context) {
	for {
		if !s.mayPrepare(ctx) {
			return
		}
		start := time.Now()
		rt, err := s.bundle.NewRuntime(s.opts)
		p := prepared{rt: rt, took: time.Since(start), err: err}
		if err != nil {
			first := false
			s.once.Do(func() { first = true; s.firstErr = err; close(s.firstReady) })
			if first {
				return // the worker cannot start: it reports err and exits
			}
		}
		select {
		case s.ready <- p:
			s.once.Do(func() { close(s.firstReady) })
		case <-ctx.Done():
			return
		}
	}
}

// mayPrepare waits until the worker is idle or has no spare left; false
// when ctx ended.
func (s *spares) mayPrepare(ctx context.Context) bool {
	for {
		s.mu.Lock()
		ok := !s.running || len(s.ready) == 0
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-s.changed:
		case <-ctx.Done():
			return false
		}
	}
}

// setRunning tells the preparer whether a request is being served.
func (s *spares) setRunning(running bool) {
	s.mu.Lock()
	s.running = running
	s.mu.Unlock()
	s.notify()
}

func (s *spares) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// take returns a prepared runtime, waiting for one if need be.
func (s *spares) take(ctx context.Context) (*engine.Runtime, time.Duration, error) {
	select {
	case p := <-s.ready:
		s.notify()
		return p.rt, p.took, p.err
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}
