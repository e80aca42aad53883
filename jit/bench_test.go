package jit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
)

// BenchmarkJitWarm measures a JiT request through the real pipe to a warm
// goja worker (workertest.BenchJitWarm). 3-cached-calls makes three
// metadata reads that the worker answers from prefetched answers
// (PrefetchedCall), as the daemon's repeated previews of an action do.
func BenchmarkJitWarm(b *testing.B) {
	root := workertest.Project(b, nil)
	p := gojaWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1})
	if err := p.Prewarm(context.Background()); err != nil {
		b.Fatal(err)
	}
	cached := workertest.JitJob(jitThreeReads)
	_, cached.Prefetched = recordCalls(b, p, cached)
	workertest.BenchJitWarm(b, p, []workertest.WarmCase{
		{Name: "0-calls", Job: workertest.JitJob(workertest.JitNoCalls)},
		{Name: "3-calls", Job: workertest.JitJob(workertest.JitThreeCalls), Calls: 3},
		// Three metadata reads answered by the worker from the answers
		// the daemon sends along (what the previous run asked).
		{Name: "3-cached-calls", Job: cached},
	})
}

// BenchmarkWorkerColdStart measures a new worker process up to its Hello
// (process start, core's bundle compiled, first runtime prepared) and then
// its first JiT request: the test binary as worker, and a built dfd binary.
func BenchmarkWorkerColdStart(b *testing.B) {
	root := workertest.Project(b, nil)
	b.Run("helper", func(b *testing.B) { gojaWorkers.BenchColdStart(b, root) })
	if !testing.Short() {
		dfd := workertest.Engine{Command: func(tb testing.TB, _, _ string) []string { return []string{dfdBinary(tb), "worker"} }}
		b.Run("dfd", func(b *testing.B) { dfd.BenchColdStart(b, root) })
	}
}

// BenchmarkCompileGC compiles a generated project of 400 chained .sqlx
// files on a warm worker under several GOGC settings, to choose the
// worker's DefaultGCPercent.
func BenchmarkCompileGC(b *testing.B) {
	const n = 400
	files := map[string]string{}
	for i := 0; i < n; i++ {
		src := "select 1 as id, 'x' as name"
		if i > 0 {
			src = fmt.Sprintf("select id, name, %d as step from ${ref(\"t_%03d\")} where id > %d", i, i-1, i)
		}
		files[fmt.Sprintf("definitions/t_%03d.sqlx", i)] = fmt.Sprintf("config { type: \"table\", description: \"table %d\", columns: { id: \"the id\" } }\n%s\n", i, src)
	}
	root := workertest.Project(b, files)
	req, err := compile.Request(root, filePaths(files), compile.Overrides{}, 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	for _, gc := range []int{100, 200, 400, 800} {
		b.Run(fmt.Sprintf("gogc=%d", gc), func(b *testing.B) {
			p := gojaWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1, GCPercent: gc})
			if err := p.Prewarm(context.Background()); err != nil {
				b.Fatal(err)
			}
			var peak uint64
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := workertest.CPUTime(p.Workers()[0].PID)
				res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
				if err != nil {
					b.Fatal(err)
				}
				// The worker's CPU time (all threads: the collector too) is
				// what the setting changes; wall time on a shared machine
				// mostly measures the neighbours.
				cpu += workertest.CPUTime(res.Stats.PID) - before
				peak = max(peak, res.Stats.PeakHeap)
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/float64(time.Millisecond), "worker-cpu-ms/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

var dfdBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// dfdBinary builds cmd/dfd once per test binary.
func dfdBinary(tb testing.TB) string {
	tb.Helper()
	dfdBuild.once.Do(func() {
		dfdBuild.dir, dfdBuild.err = os.MkdirTemp("", "dfd-jit-test")
		if dfdBuild.err != nil {
			return
		}
		dfdBuild.bin = filepath.Join(dfdBuild.dir, "dfd")
		cmd := exec.Command("go", "build", "-o", dfdBuild.bin, "./cmd/dfd")
		cmd.Dir = testenv.RepoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			dfdBuild.err = fmt.Errorf("go build ./cmd/dfd: %v\n%s", err, out)
		}
	})
	if dfdBuild.err != nil {
		tb.Fatal(dfdBuild.err)
	}
	return dfdBuild.bin
}

// BenchmarkJitInProcess is the reference for BenchmarkJitWarm: the same
// requests on a runtime prepared ahead, in this process, no pipe.
func BenchmarkJitInProcess(b *testing.B) {
	root := workertest.Project(b, nil)
	bundle, err := engine.LoadBundle(workertest.BundlePath(root), testenv.CoreVersion)
	if err != nil {
		b.Fatal(err)
	}
	dir, err := engine.OpenDir(root)
	if err != nil {
		b.Fatal(err)
	}
	defer dir.Close()
	for _, c := range []struct{ name, code string }{{"0-calls", workertest.JitNoCalls}, {"3-calls", workertest.JitThreeCalls}} {
		b.Run(c.name, func(b *testing.B) {
			job := workertest.JitJob(c.code)
			a := &workertest.Adapter{}
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				rt, err := bundle.NewRuntime(engine.Options{Root: root})
				if err != nil {
					b.Fatal(err)
				}
				time.Sleep(40 * time.Millisecond) // as BenchmarkJitWarm
				b.StartTimer()
				start := time.Now()
				if _, err := rt.JitCompile(context.Background(), dir, job.Request, a.RPC); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			workertest.ReportLatency(b, lat, "")
		})
	}
}

// BenchmarkTransport is a request's round trip through the pool and the
// pipes to a fake worker that answers at once: the protocol's own cost,
// the floor under BenchmarkJitWarm.
func BenchmarkTransport(b *testing.B) {
	root := workertest.Project(b, nil)
	p := gojaWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=echo"}})
	if err := p.Prewarm(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		pause time.Duration
		calls int
	}{
		{"0-calls", 0, 0}, {"0-calls-after-pause", 40 * time.Millisecond, 0},
		{"3-calls", 0, 3}, {"3-calls-after-pause", 40 * time.Millisecond, 3},
	} {
		pause := c.pause
		job := jit.JitJob{Request: make([]byte, c.calls)} // the echo worker's instruction
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				if pause > 0 {
					b.StopTimer()
					time.Sleep(pause) // as BenchmarkJitWarm: both processes go idle
					b.StartTimer()
				}
				start := time.Now()
				if _, err := p.Jit(context.Background(), job, (&workertest.Adapter{}).RPC); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			workertest.ReportLatency(b, lat, "")
		})
	}
}
