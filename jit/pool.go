package jit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"
)

// Defaults of PoolOptions.
const (
	DefaultTimeout      = 60 * time.Second // the official CLI's compile timeout
	DefaultGrace        = 2 * time.Second
	DefaultStartTimeout = 60 * time.Second
	DefaultMaxRequests  = 500
	DefaultMemoryLimit  = 1 << 30
	DefaultIdleTimeout  = 10 * time.Minute
)

// DefaultWorkers sizes a pool to the machine: half the CPUs, since a
// worker's collector and its next runtime's preparation use a second core,
// but at least two, so that a long compile never holds up a JiT preview.
func DefaultWorkers() int { return max(2, runtime.NumCPU()/2) }

// PoolOptions configure a Pool. Root, BundlePath and CoreVersion are
// required: a pool serves one project with one core.
type PoolOptions struct {
	Root        string // project directory, absolute with symbolic links resolved
	BundlePath  string // @dataform/core's bundle.js
	CoreVersion string

	// Workers is the most workers (and concurrent requests); default
	// DefaultWorkers(). MinWorkers are kept when idle ones are stopped
	// (default 1); IdleTimeout is how long a worker may sit idle before
	// that (default DefaultIdleTimeout, negative: never).
	Workers     int
	MinWorkers  int
	IdleTimeout time.Duration

	// Timeout is a request's deadline unless its job sets one (default
	// DefaultTimeout). At the deadline the worker is sent Cancel; if it has
	// not answered Grace later (default DefaultGrace) it is killed:
	// goja's interrupt does not stop native code such as a catastrophic
	// regular expression.
	Timeout time.Duration
	Grace   time.Duration
	// StartTimeout bounds a worker's start, up to its Hello.
	StartTimeout time.Duration

	// A worker is replaced after MaxRequests requests (default
	// DefaultMaxRequests), and after a request during which its heap
	// reached RecycleHeap bytes (default three quarters of MemoryLimit):
	// a Go process keeps memory it has grown into, a new one starts small.
	MaxRequests int
	RecycleHeap uint64
	// MemoryLimit is each worker's heap ceiling (default
	// DefaultMemoryLimit; negative: none): a request that crosses it fails
	// with ErrMemoryLimit and the worker is replaced.
	MemoryLimit int64

	// Worker process settings, see WorkerOptions.
	MaxFrame  int
	GCPercent int
	// SoftMemoryLimit: default DefaultSoftMemoryLimit; negative: none.
	SoftMemoryLimit int64
	Spares          int
	TranspileCache  string

	// Command starts a worker: the program and its first arguments, to
	// which the pool appends WorkerArgs. Default: this executable and
	// "worker", i.e. `dfd worker`. Tests point it at a test binary.
	Command []string
	// Engines start workers of other engines than goja, by Key.Engine;
	// used by Pools (NewPool ignores it).
	Engines map[string]EngineCommand
	// Env is added to the worker's environment, which otherwise holds only
	// PATH, HOME, TMPDIR, USER, LANG, LC_ALL, LC_CTYPE and TZ of the
	// daemon's: never credentials.
	Env []string

	// Logger receives the pool's events and the workers' stderr, re-logged
	// line by line with the worker's pid. Nil discards them.
	Logger *slog.Logger
}

// Pool runs compile and JiT requests of one project on warm worker
// processes. It is safe for concurrent use.
type Pool struct {
	opts PoolOptions
	cfg  workerConfig
	log  *slog.Logger

	ctx    context.Context // ends with Close: aborts starts and running requests
	cancel context.CancelFunc

	mu      sync.Mutex // guards the fields below and hostWorker.lastUsed
	closed  bool
	live    int                  // workers running or starting
	idle    []*hostWorker        // least recently used first
	busy    map[*hostWorker]bool // serving a request
	waiters []chan grant         // requests waiting for a worker, first come first served
	started int                  // workers started since the pool was created

	inflight sync.WaitGroup // Prewarm and requests; Add only while !closed, under mu
	wg       sync.WaitGroup // background goroutines: starts, stops, the idle reaper
}

// grant is what a waiting request is handed: a worker, or (w == nil) a
// slot to start one in, or an error.
type grant struct {
	w   *hostWorker
	err error
}

// NewPool creates a pool. It starts no worker: call Prewarm to have them
// ready before the first request.
func NewPool(opts PoolOptions) (*Pool, error) {
	if opts.Root == "" || opts.BundlePath == "" || opts.CoreVersion == "" {
		return nil, errors.New("jit: a pool needs Root, BundlePath and CoreVersion")
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers()
	}
	if opts.MinWorkers <= 0 {
		opts.MinWorkers = 1
	}
	opts.MinWorkers = min(opts.MinWorkers, opts.Workers)
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	switch {
	case opts.MemoryLimit == 0:
		opts.MemoryLimit = DefaultMemoryLimit
	case opts.MemoryLimit < 0:
		opts.MemoryLimit = 0
	}
	switch {
	case opts.SoftMemoryLimit == 0:
		opts.SoftMemoryLimit = DefaultSoftMemoryLimit
	case opts.SoftMemoryLimit < 0:
		opts.SoftMemoryLimit = 0
	}
	if opts.RecycleHeap == 0 && opts.MemoryLimit > 0 {
		opts.RecycleHeap = uint64(opts.MemoryLimit) / 4 * 3
	}
	if len(opts.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("jit: finding dfd's own executable to start workers: %w", err)
		}
		opts.Command = []string{exe, "worker"}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("root", opts.Root, "core", opts.CoreVersion)
	argv := append(append([]string(nil), opts.Command...), WorkerArgs(WorkerOptions{
		BundlePath:  opts.BundlePath,
		CoreVersion: opts.CoreVersion,
		Root:        opts.Root,
		MemoryLimit: opts.MemoryLimit,
		GCPercent:   opts.GCPercent,

		SoftMemoryLimit: opts.SoftMemoryLimit,
		MaxFrame:        opts.MaxFrame,
		Spares:          opts.Spares,

		TranspileCache: opts.TranspileCache,
	})...)
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		opts: opts,
		cfg: workerConfig{
			argv:         argv,
			env:          workerEnv(os.Environ(), opts.Env),
			dir:          opts.Root,
			maxFrame:     opts.MaxFrame,
			startTimeout: opts.StartTimeout,
			coreVersion:  opts.CoreVersion,
			log:          log,
		},
		log:    log,
		ctx:    ctx,
		cancel: cancel,
		busy:   map[*hostWorker]bool{},
	}
	if opts.IdleTimeout > 0 {
		p.wg.Add(1)
		go p.reapIdle()
	}
	return p, nil
}

// Options returns the pool's options with defaults filled in.
func (p *Pool) Options() PoolOptions { return p.opts }

// Prewarm starts workers until the pool has Workers of them, and waits
// until they are ready (have compiled core and prepared a runtime) or ctx
// ends; workers still starting then join the pool when ready.
func (p *Pool) Prewarm(ctx context.Context) error {
	return p.prewarm(ctx, p.opts.Workers)
}

// PrewarmMin is Prewarm up to MinWorkers: for a pool whose requests are
// rare (JiT previews of a project whose compiles run elsewhere), the
// others start on demand.
func (p *Pool) PrewarmMin(ctx context.Context) error {
	return p.prewarm(ctx, p.opts.MinWorkers)
}

func (p *Pool) prewarm(ctx context.Context, target int) error {
	if !p.enter() {
		return ErrClosed
	}
	defer p.inflight.Done()
	p.mu.Lock()
	n := max(0, target-p.live)
	p.live += n
	starts := make([]*pendingStart, n)
	for i := range starts {
		starts[i] = p.startAsync(true)
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range starts {
		w, err := p.finishStart(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.release(w, true)
	}
	if len(errs) > 0 {
		return fmt.Errorf("jit: prewarming %d worker(s): %w", n, errs[0])
	}
	return nil
}

// Close ends every worker: idle ones are asked to exit (stdin closed) and
// killed if they have not within Grace; running requests fail with an
// error wrapping ErrClosed and their workers are killed. It returns when
// every worker process is gone.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	idle, waiters := p.idle, p.waiters
	p.idle, p.waiters = nil, nil
	p.live -= len(idle)
	p.mu.Unlock()

	for _, ch := range waiters {
		ch <- grant{err: ErrClosed}
	}
	p.cancel()
	var wg sync.WaitGroup
	for _, w := range idle {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.stop(p.opts.Grace)
		}()
	}
	wg.Wait()
	p.inflight.Wait()
	p.wg.Wait()
	return nil
}

// WorkerInfo describes a worker of the pool, for status displays and tests.
type WorkerInfo struct {
	PID      int
	Busy     bool
	Requests int
}

// Workers lists the pool's running workers.
func (p *Pool) Workers() []WorkerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []WorkerInfo
	for w := range p.busy {
		out = append(out, WorkerInfo{PID: w.pid, Busy: true, Requests: int(w.served.Load())})
	}
	for _, w := range p.idle {
		out = append(out, WorkerInfo{PID: w.pid, Requests: int(w.served.Load())})
	}
	return out
}

// Started is how many worker processes the pool has started so far.
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// enter registers a request or Prewarm, unless the pool is closed.
func (p *Pool) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.inflight.Add(1)
	return true
}

// Affinities of acquire.
const (
	affinityNone  = iota
	affinityKept  // prefer the worker with a kept compile context
	affinityOther // prefer another
	// affinityAway: another, even if one must be started (a verification:
	// it may take as long as the next incremental compile waits).
	affinityAway
)

// acquire returns an idle worker, starts one if the pool has room, or
// queues until a worker is released (first come, first served) or ctx ends.
//
// With affinity, an idle worker holding a kept compile context is taken
// first (affinityKept: an incremental compile) or last (affinityOther: a
// request that should leave that worker free for the next one).
func (p *Pool) acquire(ctx context.Context, affinity int) (*hostWorker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	for n := len(p.idle); n > 0; n = len(p.idle) {
		i := n - 1 // the most recently used: warm caches, and the others may retire
		if affinity != affinityNone {
			found := false
			for j := n - 1; j >= 0; j-- {
				if p.idle[j].kept == (affinity == affinityKept) {
					i, found = j, true
					break
				}
			}
			if !found && affinity == affinityAway && p.live < p.opts.Workers {
				break // start another below
			}
		}
		w := p.idle[i]
		p.idle = append(p.idle[:i], p.idle[i+1:]...)
		if w.isDead() {
			// Died while idle (killed from outside, say): not this
			// request's problem.
			p.log.Warn("an idle jit worker died", "worker", w.pid, "stderr", w.stderr.last())
			p.live--
			p.retireLocked(w)
			continue
		}
		p.busy[w] = true
		p.mu.Unlock()
		return w, nil
	}
	if p.live < p.opts.Workers {
		p.live++
		p.mu.Unlock()
		return p.startFor(ctx)
	}
	ch := make(chan grant, 1)
	p.waiters = append(p.waiters, ch)
	p.mu.Unlock()

	select {
	case g := <-ch:
		switch {
		case g.err != nil:
			return nil, g.err
		case g.w != nil:
			return g.w, nil
		}
		return p.startFor(ctx)
	case <-ctx.Done():
		p.mu.Lock()
		removed := p.removeWaiterLocked(ch)
		p.mu.Unlock()
		if !removed {
			p.giveBack(<-ch) // handed something as ctx ended: pass it on
		}
		return nil, ctx.Err()
	}
}

func (p *Pool) removeWaiterLocked(ch chan grant) bool {
	for i, c := range p.waiters {
		if c == ch {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return true
		}
	}
	return false
}

func (p *Pool) giveBack(g grant) {
	switch {
	case g.w != nil:
		p.release(g.w, true)
	case g.err == nil:
		p.mu.Lock()
		p.dropLocked(false)
		p.mu.Unlock()
	}
}

// release returns w to the pool after a request, or retires it (keep is
// false, or the pool is closed), freeing its slot for a replacement.
func (p *Pool) release(w *hostWorker, keep bool) {
	p.mu.Lock()
	delete(p.busy, w)
	if keep && !p.closed {
		w.lastUsed = time.Now()
		if len(p.waiters) > 0 {
			ch := p.waiters[0]
			p.waiters = p.waiters[1:]
			p.busy[w] = true
			ch <- grant{w: w}
		} else {
			p.idle = append(p.idle, w)
		}
		p.mu.Unlock()
		return
	}
	p.dropLocked(true)
	p.retireLocked(w)
	p.mu.Unlock()
}

// retireLocked stops w in the background. p.mu is held, which with the
// callers' own registration keeps p.wg.Add safe against Close.
func (p *Pool) retireLocked(w *hostWorker) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		w.stop(p.opts.Grace)
	}()
}

// dropLocked frees a worker's slot: a waiting request gets it to start a
// worker of its own; otherwise, when replace is set, a replacement starts
// in the background so that the next request finds a warm worker.
func (p *Pool) dropLocked(replace bool) {
	p.live--
	if p.closed {
		return
	}
	if len(p.waiters) > 0 {
		ch := p.waiters[0]
		p.waiters = p.waiters[1:]
		p.live++
		ch <- grant{}
		return
	}
	if replace {
		p.live++
		p.startAsync(false)
	}
}
