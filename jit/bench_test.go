package jit_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testenv"
	"github.com/dfdtools/dfd/jit"
)

// reportLatency reports the median and 95th percentile of d in ms.
func reportLatency(b *testing.B, d []time.Duration, prefix string) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	b.ReportMetric(ms(d[len(d)/2]), prefix+"p50-ms")
	b.ReportMetric(ms(d[(len(d)*95)/100]), prefix+"p95-ms")
}

// BenchmarkJitWarm measures a JiT request through the real pipe to a warm
// worker: one whose next runtime is prepared, as it is for a request that
// arrives after the previous one by more than the ≈10–30 ms a preparation
// takes. The benchmark waits that long between requests, off the clock.
// The adapter answers in-process, at once: what is measured is the worker
// protocol and goja, not BigQuery. 3-cached-calls makes three metadata
// reads that the worker answers from prefetched answers (PrefetchedCall),
// as the daemon's repeated previews of an action do.
func BenchmarkJitWarm(b *testing.B) {
	root := project(b, nil)
	p := newPool(b, root, jit.PoolOptions{Workers: 1})
	if err := p.Prewarm(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, code string
		calls      int64 // reaching the host
		prefetch   bool
	}{
		{"0-calls", jitNoCalls, 0, false},
		{"3-calls", jitThreeCalls, 3, false},
		// Three metadata reads answered by the worker from the answers
		// the daemon sends along (what the previous run asked).
		{"3-cached-calls", jitThreeReads, 0, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			job := jitJob(c.code)
			if c.prefetch {
				_, job.Prefetched = recordCalls(b, p, job)
			}
			a := &adapter{}
			lat := make([]time.Duration, 0, b.N)
			var run []time.Duration
			waited := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(40 * time.Millisecond) // the worker prepares its next runtime
				b.StartTimer()
				start := time.Now()
				res, err := p.Jit(context.Background(), job, a.rpc)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				run = append(run, res.Stats.Run)
				if res.Stats.Wait > 100*time.Microsecond {
					waited++
				}
			}
			b.StopTimer()
			if a.calls.Load() != c.calls*int64(b.N) {
				b.Fatalf("%d adapter calls for %d requests", a.calls.Load(), b.N)
			}
			reportLatency(b, lat, "")
			reportLatency(b, run, "engine-")
			b.ReportMetric(float64(waited)/float64(b.N), "cold-frac")
		})
	}
}

// BenchmarkWorkerColdStart measures a new worker process up to its Hello
// (process start, core's bundle compiled, first runtime prepared) and then
// its first JiT request: the test binary as worker, and a built dfd binary.
func BenchmarkWorkerColdStart(b *testing.B) {
	root := project(b, nil)
	commands := map[string][]string{"helper": nil}
	if !testing.Short() {
		commands["dfd"] = []string{dfdBinary(b), "worker"}
	}
	for _, name := range []string{"helper", "dfd"} {
		cmd, ok := commands[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			var ready, first []time.Duration
			for i := 0; i < b.N; i++ {
				opts := jit.PoolOptions{Root: root, BundlePath: bundlePath(root), CoreVersion: testenv.CoreVersion, Workers: 1, Command: cmd}
				if cmd == nil {
					opts.Command = []string{os.Args[0], "worker"}
					opts.Env = []string{helperEnv + "=worker"}
				}
				p, err := jit.NewPool(opts)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := p.Prewarm(context.Background()); err != nil {
					b.Fatal(err)
				}
				ready = append(ready, time.Since(start))
				if _, err := p.Jit(context.Background(), jitJob(jitThreeCalls), (&adapter{}).rpc); err != nil {
					b.Fatal(err)
				}
				first = append(first, time.Since(start))
				b.StopTimer()
				p.Close()
				b.StartTimer()
			}
			reportLatency(b, ready, "ready-")
			reportLatency(b, first, "first-jit-")
		})
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
	root := project(b, files)
	req, err := compile.Request(root, filePaths(files), compile.Overrides{}, 5*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	for _, gc := range []int{100, 200, 400, 800} {
		b.Run(fmt.Sprintf("gogc=%d", gc), func(b *testing.B) {
			p := newPool(b, root, jit.PoolOptions{Workers: 1, GCPercent: gc})
			if err := p.Prewarm(context.Background()); err != nil {
				b.Fatal(err)
			}
			var peak uint64
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := cpuTime(p.Workers()[0].PID)
				res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
				if err != nil {
					b.Fatal(err)
				}
				// The worker's CPU time (all threads: the collector too) is
				// what the setting changes; wall time on a shared machine
				// mostly measures the neighbours.
				cpu += cpuTime(res.Stats.PID) - before
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
	root := project(b, nil)
	bundle, err := engine.LoadBundle(bundlePath(root), testenv.CoreVersion)
	if err != nil {
		b.Fatal(err)
	}
	dir, err := engine.OpenDir(root)
	if err != nil {
		b.Fatal(err)
	}
	defer dir.Close()
	for _, c := range []struct{ name, code string }{{"0-calls", jitNoCalls}, {"3-calls", jitThreeCalls}} {
		b.Run(c.name, func(b *testing.B) {
			job := jitJob(c.code)
			a := &adapter{}
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
				if _, err := rt.JitCompile(context.Background(), dir, job.Request, a.rpc); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat, "")
		})
	}
}

// cpuTime is the user+system CPU time of process pid so far.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// Fields after the command: state(0) ppid … utime(11) stime(12), in
	// clock ticks (100 per second on Linux).
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// BenchmarkTransport is a request's round trip through the pool and the
// pipes to a fake worker that answers at once: the protocol's own cost,
// the floor under BenchmarkJitWarm.
func BenchmarkTransport(b *testing.B) {
	root := project(b, nil)
	p := newPool(b, root, jit.PoolOptions{Workers: 1, Env: []string{helperEnv + "=echo"}})
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
				if _, err := p.Jit(context.Background(), job, (&adapter{}).rpc); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat, "")
		})
	}
}
