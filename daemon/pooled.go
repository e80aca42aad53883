package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/project"
)

// NewPooled returns a RunnerFactory whose runners serve compiles and JiT
// previews on warm `dfd worker` processes from pools: a request that loops
// or allocates without end, or a catastrophic regular expression that
// goja's interrupt cannot stop, costs a worker process, never the daemon.
// Each project's pool is prewarmed when the project opens.
func NewPooled(pools *jit.Pools) RunnerFactory {
	refs := &poolRefs{pools: pools, n: map[jit.Key]int{}}
	return func(ctx context.Context, p *project.Project, core *project.Core, log *slog.Logger) (Runner, error) {
		key := jit.Key{Root: p.Root, BundlePath: core.BundlePath, CoreVersion: core.Version}
		pool, err := refs.acquire(key)
		if err != nil {
			return nil, err
		}
		if err := pool.Prewarm(ctx); err != nil {
			log.Warn("prewarming workers failed; they start on first use", "err", err)
		}
		return &pooled{p: p, pool: pool, refs: refs, key: key}, nil
	}
}

// poolRefs counts the runners of each pool: a project reopened with the
// same core gets its new runner before the old one is closed, and the
// workers must outlive that hand-over.
type poolRefs struct {
	pools *jit.Pools
	mu    sync.Mutex // guards n
	n     map[jit.Key]int
}

func (r *poolRefs) acquire(k jit.Key) (*jit.Pool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, err := r.pools.Get(k)
	if err == nil {
		r.n[k]++
	}
	return p, err
}

func (r *poolRefs) release(k jit.Key) {
	r.mu.Lock()
	r.n[k]--
	last := r.n[k] <= 0
	if last {
		delete(r.n, k)
	}
	r.mu.Unlock()
	if last {
		r.pools.Remove(k)
	}
}

type pooled struct {
	p    *project.Project
	pool *jit.Pool
	refs *poolRefs
	key  jit.Key

	once sync.Once
}

// Compile implements Runner.
func (r *pooled) Compile(ctx context.Context, job CompileJob) (*compile.Result, error) {
	paths := job.FilePaths
	if paths == nil {
		var err error
		if paths, err = r.p.FilePaths(); err != nil {
			return nil, fmt.Errorf("listing project files: %w", err)
		}
	}
	timeout := job.Timeout
	if timeout <= 0 {
		timeout = compile.DefaultTimeout
	}
	req, err := compile.Request(r.p.Root, paths, compile.Overrides{}, timeout)
	if err != nil {
		return nil, err
	}
	out, err := r.pool.Compile(ctx, jit.CompileJob{Request: req, Overlay: job.Overlays, Timeout: timeout, Log: job.Log})
	if err != nil {
		return nil, err
	}
	res, err := compile.Decode(out.Response)
	if err != nil {
		return nil, err
	}
	res.Prepare, res.Run = out.Stats.Prepare, out.Stats.Run
	return res, nil
}

// Jit implements Runner.
func (r *pooled) Jit(ctx context.Context, job JitJob) ([]byte, error) {
	out, err := r.pool.Jit(ctx, jit.JitJob{Request: job.Request, Overlay: job.Overlays, Timeout: job.Timeout, Log: job.Log}, job.RPC)
	if err != nil {
		return nil, err
	}
	return out.Response, nil
}

// Close implements Runner: it ends the project's workers.
func (r *pooled) Close() error {
	r.once.Do(func() { r.refs.release(r.key) })
	return nil
}
