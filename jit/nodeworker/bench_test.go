package nodeworker_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	dfproject "github.com/dfdtools/dfd/project"
)

// BenchmarkJitWarm is jit's BenchmarkJitWarm with the node worker: a JiT
// request through the pipe to a warm worker (its next context prepared: the
// benchmark waits 40 ms between requests, off the clock), the adapter
// answering in-process at once.
//
// With $DFD_BENCH_DFD (a built dfd), the goja worker runs the same requests
// through the same pool, for comparison.
func BenchmarkJitWarm(b *testing.B) {
	root := workertest.Project(b, nil)
	engines := map[string]*jit.Pool{"node": nodeWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1})}
	if dfd := os.Getenv("DFD_BENCH_DFD"); dfd != "" {
		engines["goja"] = nodeWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1, Command: []string{dfd, "worker"}})
	}
	for _, name := range []string{"node", "goja"} {
		p := engines[name]
		if p == nil {
			continue
		}
		if err := p.Prewarm(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) { benchJitWarm(b, p) })
	}
}

func benchJitWarm(b *testing.B, p *jit.Pool) {
	workertest.BenchJitWarm(b, p, []workertest.WarmCase{
		{Name: "0-calls", Job: workertest.JitJob(workertest.JitNoCalls)},
		{Name: "3-calls", Job: workertest.JitJob(workertest.JitThreeCalls), Calls: 3},
	})
}

// BenchmarkWorkerColdStart: a new node worker up to its Hello, then its
// first JiT request.
func BenchmarkWorkerColdStart(b *testing.B) {
	nodeWorkers.BenchColdStart(b, workertest.Project(b, nil))
}

// BenchmarkCompileProject compiles the projects listed in
// $DFD_NODE_BENCH_PROJECTS (comma-separated directories with core in
// node_modules, e.g. made by bench/cmd/genproject) on a warm node worker:
// the first compile, then warm ones, with the worker's caches of core's
// compiler() output and module scripts on and off; and on the goja worker
// (`dfd worker` needs a built dfd: $DFD_BENCH_DFD) when given.
//
//	DFD_NODE_BENCH_PROJECTS=/tmp/nw1000 go test ./jit/nodeworker -run '^$' -bench CompileProject -benchtime 5x
func BenchmarkCompileProject(b *testing.B) {
	dirs := os.Getenv("DFD_NODE_BENCH_PROJECTS")
	if dirs == "" {
		b.Skip("set DFD_NODE_BENCH_PROJECTS to directories of projects to compile")
	}
	for _, dir := range strings.Split(dirs, ",") {
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			b.Fatal(err)
		}
		req := projectRequest(b, root)
		engines := []struct {
			name string
			opts jit.PoolOptions
		}{
			{"node", jit.PoolOptions{}},
			{"node-nocache", jit.PoolOptions{Env: []string{"DFD_NODE_CACHE=0"}}},
		}
		if dfd := os.Getenv("DFD_BENCH_DFD"); dfd != "" {
			engines = append(engines, struct {
				name string
				opts jit.PoolOptions
			}{"goja", jit.PoolOptions{Command: []string{dfd, "worker"}}})
		}
		for _, e := range engines {
			b.Run(filepath.Base(root)+"/"+e.name, func(b *testing.B) {
				opts := e.opts
				opts.Workers, opts.Timeout, opts.MemoryLimit = 1, 10*time.Minute, -1
				p := nodeWorkers.NewPool(b, root, opts)
				if err := p.Prewarm(context.Background()); err != nil {
					b.Fatal(err)
				}
				var first time.Duration
				var warm, run, cpu []time.Duration
				var want []byte
				for i := 0; i < b.N+1; i++ {
					var before time.Duration
					if ws := p.Workers(); len(ws) == 1 {
						before = workertest.CPUTime(ws[0].PID)
					}
					start := time.Now()
					res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
					d := time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						first = d
						want = res.Response
						r, err := compile.Decode(res.Response)
						if err != nil {
							b.Fatal(err)
						}
						b.Logf("%s: %d tables, %d errors, response %d bytes", e.name, len(r.Graph.GetTables()), len(r.Errors()), len(res.Response))
						continue
					}
					if string(res.Response) != string(want) {
						b.Fatal("a warm compile's response differs from the first's")
					}
					warm = append(warm, d)
					run = append(run, res.Stats.Run)
					cpu = append(cpu, workertest.CPUTime(res.Stats.PID)-before)
					time.Sleep(100 * time.Millisecond) // the next context is prepared
				}
				b.ReportMetric(float64(first)/float64(time.Millisecond), "first-ms")
				workertest.ReportLatency(b, warm, "warm-")
				workertest.ReportLatency(b, run, "warm-engine-")
				workertest.ReportLatency(b, cpu, "warm-worker-cpu-")
			})
		}
	}
}

// BenchmarkCoreMainAlone is the floor under every engine: core's main() on
// the same requests in a plain Node.js realm (testdata/coremain.js: no vm
// context, no sandbox, compiler() output kept, V8's code hot after the first
// run). Its output must be the node worker's, byte for byte. On the
// generated projects it is as slow as the worker's whole compile: the time
// is core's own, which is why an edit → diagnostic of 400 actions cannot
// reach 100 ms while every edit runs core's compile of the whole project.
//
//	DFD_NODE_BENCH_PROJECTS=/tmp/p400 go test ./jit/nodeworker -run '^$' -bench CoreMainAlone -benchtime 20x
func BenchmarkCoreMainAlone(b *testing.B) {
	dirs := os.Getenv("DFD_NODE_BENCH_PROJECTS")
	if dirs == "" {
		b.Skip("set DFD_NODE_BENCH_PROJECTS to directories of projects to compile")
	}
	node := needNode(b)
	script, err := filepath.Abs(filepath.Join("testdata", "coremain.js"))
	if err != nil {
		b.Fatal(err)
	}
	for _, dir := range strings.Split(dirs, ",") {
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			b.Fatal(err)
		}
		req := projectRequest(b, root)
		reqFile := filepath.Join(b.TempDir(), "request.bin")
		if err := os.WriteFile(reqFile, req, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(root), func(b *testing.B) {
			p := nodeWorkers.NewPool(b, root, jit.PoolOptions{Workers: 1, Timeout: 10 * time.Minute, MemoryLimit: -1})
			res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
			if err != nil {
				b.Fatal(err)
			}
			want := sha256.Sum256(res.Response)
			out, err := exec.Command(node, script, root, reqFile, strconv.Itoa(b.N+1)).Output()
			if err != nil {
				b.Fatalf("%s: %v", script, err)
			}
			var r struct {
				Ms     []float64
				Sha256 string
				Bytes  int
			}
			if err := json.Unmarshal(out, &r); err != nil {
				b.Fatalf("%s printed %q: %v", script, out, err)
			}
			if r.Sha256 != hex.EncodeToString(want[:]) {
				b.Fatalf("core's main() in a plain realm returned %d bytes that differ from the node worker's %d", r.Bytes, len(res.Response))
			}
			warm := make([]time.Duration, 0, len(r.Ms)-1)
			for _, ms := range r.Ms[1:] {
				warm = append(warm, time.Duration(ms*float64(time.Millisecond)))
			}
			b.ReportMetric(r.Ms[0], "first-ms")
			workertest.ReportLatency(b, warm, "warm-")
		})
	}
}

// BenchmarkGojaInProcess is the reference: the same projects compiled by
// the goja engine in this process (a runtime prepared ahead of each).
func BenchmarkGojaInProcess(b *testing.B) {
	dirs := os.Getenv("DFD_NODE_BENCH_PROJECTS")
	if dirs == "" {
		b.Skip("set DFD_NODE_BENCH_PROJECTS")
	}
	for _, dir := range strings.Split(dirs, ",") {
		root, _ := filepath.EvalSymlinks(dir)
		b.Run(filepath.Base(root), func(b *testing.B) {
			pr, err := dfproject.Open(root)
			if err != nil {
				b.Fatal(err)
			}
			bundle, err := engine.LoadBundle(workertest.BundlePath(root), testenv.CoreVersion)
			if err != nil {
				b.Fatal(err)
			}
			var lat []time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				rt, err := bundle.NewRuntime(engine.Options{Root: root})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := time.Now()
				if _, err := compile.RunPrepared(context.Background(), rt, pr, compile.Options{Timeout: 10 * time.Minute}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			workertest.ReportLatency(b, lat, "")
		})
	}
}

// projectRequest is the compile request of the project at root, with every
// file it has.
func projectRequest(b *testing.B, root string) []byte {
	pr, err := dfproject.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	paths, err := pr.FilePaths()
	if err != nil {
		b.Fatal(err)
	}
	req, err := compile.Request(root, paths, compile.Overrides{}, 10*time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	return req
}
