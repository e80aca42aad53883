package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/project"
)

// NewPooled returns a RunnerFactory whose runners serve compiles and JiT
// previews on warm `dfd worker` processes from pools: a request that loops
// or allocates without end, or a catastrophic regular expression that
// goja's interrupt cannot stop, costs a worker process, never the daemon.
// Each project's pool is prewarmed when the project opens.
func NewPooled(pools *jit.Pools) RunnerFactory {
	return NewPooledWith(pools, PooledOptions{})
}

// Engine choices of PooledOptions.Engine.
const (
	EngineAuto = "auto"
	EngineGoja = jit.EngineGoja
	EngineNode = jit.EngineNode
)

// DefaultNodeMinFiles is the project size (source files) from which
// `dfd compile --engine=auto`, a cold process, compiles on Node.js: below
// it starting a Node.js worker costs more than goja's slower JavaScript.
const DefaultNodeMinFiles = 150

// DefaultNodeMinExcess is the other reason `dfd compile --engine=auto`
// compiles on Node.js: when a compile would take that much longer in goja
// than on Node.js, as engine.GojaExcess estimates from the project's source
// bytes by kind of file (measured per byte, see engine/gojacost.go). Half
// a second is more
// than a cold Node.js worker takes to start (≈0.3 s), and about what goja's
// slower JavaScript costs at DefaultNodeMinFiles files (≈3.4 ms a file at
// 1,000 actions). With SQLX in Go (engine/sqlx.go) goja compiles SQLX faster
// than Node.js, so a 2 MB or 10 MB .sqlx stays on goja; what sends a
// project to Node.js is ≈200 KB of YAML (js-yaml: ≈2.5 µs/byte more in
// goja), ≈2.5 MB of JavaScript (≈0.2 µs/byte, more for bigger files), or,
// with a core whose SQLX code dfd does not know, ≈140 KB of SQLX
// (≈3.5 µs/byte with its lexer in Go) or ≈11 KB (≈44 µs/byte with none).
const DefaultNodeMinExcess = 500 * time.Millisecond

// PreferNode reports whether `dfd compile --engine=auto` compiles on
// Node.js a project with these source files (relative to root) and the
// core bundle at bundlePath, before any of its compiles was timed
// (AutoEngine): minFiles of them or more (DefaultNodeMinFiles when not
// positive), or DefaultNodeMinExcess of estimated extra time in goja.
func PreferNode(root string, paths []string, bundlePath string, minFiles int) bool {
	if minFiles <= 0 {
		minFiles = DefaultNodeMinFiles
	}
	return len(paths) >= minFiles || engine.GojaExcess(root, paths, bundlePath) >= DefaultNodeMinExcess
}

// PreferNodeWarm reports whether EngineAuto compiles on Node.js in the
// daemon, whose workers are warm before the first edit: whenever a
// recompile is estimated to be faster there (engine.GojaWarmExcess > 0),
// which is every project but those dominated by multi-megabyte .sqlx
// files (SQLX runs in Go on goja). At 30 actions an edit's diagnostics came in 43 ms on Node.js and
// 102 ms on goja (bench/cmd/lspbench); Node.js's sandbox (permission model
// and a fresh vm context per request, jit/nodeworker) holds the project
// code as goja's does, and JiT previews stay on goja.
func PreferNodeWarm(root string, paths []string, bundlePath string) bool {
	// The slow-compile hint of enginehint.go is not consulted: every
	// project it could send to Node.js is sent there already, but for the
	// big .sqlx that keeps one on goja, whose cold compile the hint would
	// have recorded as slow.
	return engine.GojaWarmExcess(root, paths, bundlePath) > 0
}

// PooledOptions choose the engine of a project's compiles.
type PooledOptions struct {
	// Engine is EngineGoja (default), EngineNode, or EngineAuto: Node.js
	// when PreferNodeWarm says so and pools can make Node workers, else
	// goja. JiT previews always run on goja workers: a warm goja runtime
	// answers in about a millisecond, while a Node worker sets up a fresh
	// context per request.
	Engine string
}

// NewPooledWith is NewPooled with a choice of engine for compiles.
func NewPooledWith(pools *jit.Pools, opts PooledOptions) RunnerFactory {
	return func(ctx context.Context, p *project.Project, core *project.Core, log *slog.Logger) (Runner, error) {
		key := jit.Key{Root: p.Root, BundlePath: core.BundlePath, CoreVersion: core.Version}
		jitPool, release, err := pools.Acquire(key)
		if err != nil {
			return nil, err
		}
		r := &pooled{p: p, jitPool: jitPool, pool: jitPool, releases: []func(){release}, log: log}
		r.dec.Verify = os.Getenv("DFD_VERIFY_DECODE") == "1"
		if engine := compileEngine(pools, p, core, opts, log); engine != EngineGoja {
			nk := key
			nk.Engine = engine
			pool, release, err := pools.Acquire(nk)
			if err == nil {
				err = pool.Prewarm(ctx)
				if err != nil {
					release()
				}
			}
			if err != nil {
				// Node is an accelerator: without it the project still
				// compiles, on goja.
				log.Warn("the "+engine+" engine cannot be used; compiling on goja", "err", err)
			} else {
				r.pool = pool
				r.releases = append(r.releases, release)
				log.Info("compiling on the " + engine + " engine")
			}
		}
		prewarm := jitPool.Prewarm
		if r.pool != jitPool {
			// JiT previews only: one warm worker, more on demand.
			prewarm = jitPool.PrewarmMin
		}
		if err := prewarm(ctx); err != nil {
			log.Warn("prewarming workers failed; they start on first use", "err", err)
		}
		return r, nil
	}
}

// compileEngine decides where a project compiles.
func compileEngine(pools *jit.Pools, p *project.Project, core *project.Core, opts PooledOptions, log *slog.Logger) string {
	switch opts.Engine {
	case EngineNode:
		return EngineNode
	case EngineAuto:
		if !pools.HasEngine(EngineNode) {
			return EngineGoja
		}
		paths, err := p.FilePaths()
		if err != nil || !PreferNodeWarm(p.Root, paths, core.BundlePath) {
			return EngineGoja
		}
		log.Debug("compiling on Node.js, faster than goja for this project", "files", len(paths))
		return EngineNode
	default:
		return EngineGoja
	}
}

type pooled struct {
	p *project.Project
	// pool compiles; jitPool runs JiT code. They are the same goja pool
	// unless compiles run on another engine.
	pool    *jit.Pool
	jitPool *jit.Pool
	// releases give back the references to them (jit.Pools.Acquire): the
	// last runner of a pool to close ends its workers.
	releases []func()
	log      *slog.Logger
	// dec decodes the project's compiles, sharing unchanged actions'
	// messages between them (DFD_VERIFY_DECODE=1: checked unwritten).
	dec compile.Decoder
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
	cj := jit.CompileJob{Request: req, Overlay: job.Overlays, Timeout: timeout, Log: job.Log, Mode: job.Mode}
	if r.pool != r.jitPool {
		cj.Paths = paths // (a Node.js worker uses their signatures)
	}
	out, err := r.pool.Compile(ctx, cj)
	if err != nil {
		return nil, err
	}
	decodeStart := time.Now()
	res, err := r.dec.Decode(out.Response)
	if err != nil {
		return nil, err
	}
	// Where a compile's time went, for performance work (dfd serve -v).
	r.log.Debug("compile on a worker", "mode", job.Mode, "worker", out.Stats.PID,
		"queued", out.Stats.Queued, "run", out.Stats.Run, "total", out.Stats.Total,
		"decode", time.Since(decodeStart), "bytes", len(out.Response))
	res.Prepare, res.Run = out.Stats.Prepare, out.Stats.Run
	res.Incremental = out.Incremental
	return res, nil
}

// Jit implements Runner.
func (r *pooled) Jit(ctx context.Context, rpc engine.RPC, job jit.JitJob) ([]byte, error) {
	out, err := r.jitPool.Jit(ctx, job, rpc)
	if err != nil {
		return nil, err
	}
	return out.Response, nil
}

// Close implements Runner: it ends the project's workers unless another
// runner of the project still uses them.
func (r *pooled) Close() error {
	for _, release := range r.releases {
		release() // does nothing the second time
	}
	return nil
}
