//go:build unix

package compile_test

// Benchmarks of a whole compile, dfd's engine against the official CLI, on
// the same copies of the same projects. Only `go test -bench` runs them:
//
//	go test ./compile/ -run '^$' -bench . -benchtime 5x
//
// DFD_BENCH_GENERATED=30,400,1000 chooses the generated sizes (default 1000).
//
// Unix only: CPU time comes from getrusage. The CLI benchmark also needs
// bench/cmd/measure, which is Linux only.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/project"
)

type benchProject struct {
	name string
	dir  string // a scratch copy with core in node_modules
}

// expectationRE matches testdata/README.md's machine-readable outcomes.
var expectationRE = regexp.MustCompile(`^([a-z0-9_]+): cores=([0-9.,]+) expect=(ok|errors)`)

// cleanFixtures are the fixtures that compile without errors with
// testenv.CoreVersion according to testdata/README.md, and that have a
// package.json. A dataformCoreVersion project (no package.json) is left
// out: the CLI runs `npm i` on every compile of one, so its time would be
// npm's and the network's, not the compiler's.
func cleanFixtures(b *testing.B) []string {
	b.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "testdata", "README.md"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := expectationRE.FindStringSubmatch(sc.Text())
		if m == nil || m[3] != "ok" || !strings.Contains(","+m[2]+",", ","+testenv.CoreVersion+",") {
			continue
		}
		if _, err := os.Stat(filepath.Join(testenv.Fixture(m[1]), "package.json")); err != nil {
			continue
		}
		names = append(names, m[1])
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if len(names) == 0 {
		b.Fatal("no clean fixtures found in testdata/README.md")
	}
	return names
}

func generatedSizes(b *testing.B) []int {
	s := os.Getenv("DFD_BENCH_GENERATED")
	if s == "" {
		return []int{1000}
	}
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("DFD_BENCH_GENERATED=%q: %q is not a positive number", s, f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// benchProjects prepares the projects both benchmarks compile. Copies live
// in b's temporary directory, removed when the top-level benchmark ends.
func benchProjects(b *testing.B) []benchProject {
	b.Helper()
	var out []benchProject
	for _, name := range cleanFixtures(b) {
		out = append(out, benchProject{name, testenv.ProjectCopy(b, testenv.Fixture(name), testenv.CoreVersion)})
	}
	for _, n := range generatedSizes(b) {
		src := filepath.Join(b.TempDir(), "p")
		opts := projectgen.Options{Actions: n, CoreVersion: testenv.CoreVersion, JiT: true, Seed: 1}
		if err := projectgen.Generate(src, opts); err != nil {
			b.Fatal(err)
		}
		out = append(out, benchProject{fmt.Sprintf("generated-%d", n), testenv.ProjectCopy(b, src, testenv.CoreVersion)})
	}
	return out
}

// BenchmarkCompile is dfd's compile with core's program already compiled
// (as in a running language server or daemon) but a fresh runtime per
// compile, which is what dfd does for every request. prepare-ms/op is
// NewRuntime, compile-ms/op is RunPrepared (listing, reading, compiling and
// decoding the project), cpu-s/op the process's user + system time (the
// garbage collector's threads included), comparable with the CLI's.
func BenchmarkCompile(b *testing.B) {
	ctx := context.Background()
	for _, bp := range benchProjects(b) {
		b.Run(bp.name, func(b *testing.B) {
			p, err := project.Open(bp.dir)
			if err != nil {
				b.Fatal(err)
			}
			core, err := (&project.CoreResolver{}).Resolve(ctx, p)
			if err != nil {
				b.Fatal(err)
			}
			bundle, err := engine.LoadBundle(core.BundlePath, core.Version)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var prepare, run time.Duration
			n := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				t0 := time.Now()
				rt, err := bundle.NewRuntime(engine.Options{Root: p.Root})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				res, err := compile.RunPrepared(ctx, rt, p, compile.Options{})
				if err != nil {
					b.Fatal(err)
				}
				run += time.Since(t1)
				prepare += t1.Sub(t0)
				n++
				if errs := res.Errors(); len(errs) > 0 {
					b.Fatalf("%d compilation errors, first: %s: %s", len(errs), errs[0].GetFileName(), errs[0].GetMessage())
				}
			}
			b.ReportMetric((processCPU(b)-cpu0).Seconds()/float64(n), "cpu-s/op")
			b.ReportMetric(ms(prepare)/float64(n), "prepare-ms/op")
			b.ReportMetric(ms(run)/float64(n), "compile-ms/op")
		})
	}
}

// BenchmarkOfficialCLI runs `dataform compile <dir> --json` as a cold node
// process per iteration: what a user waits for today. Each run goes through
// bench/cmd/measure, which also counts the CLI's compile worker (the CLI
// kills it and never waits for it, so the rusage Go gets misses it):
// cpu-s/op is user + system time of both processes, peak-rss-MB their
// summed resident memory at its highest (the largest run's).
func BenchmarkOfficialCLI(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("node is not installed: cannot run the official CLI")
	}
	if runtime.GOOS != "linux" {
		b.Skip("bench/cmd/measure, which counts the CLI's worker process, needs Linux")
	}
	cli := testenv.CLIBundle(b)
	measure := buildMeasure(b)
	for _, bp := range benchProjects(b) {
		b.Run(bp.name, func(b *testing.B) {
			usageFile := filepath.Join(b.TempDir(), "usage")
			var cpu float64
			var peakKB int64
			n := 0
			for b.Loop() {
				cmd := exec.Command(measure, "-o", usageFile, "--", "node", cli, "compile", bp.dir, "--json")
				cmd.Env = append(os.Environ(), "NO_COLOR=1")
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = nil, &stderr // stdout to /dev/null: the JSON is still printed
				if err := cmd.Run(); err != nil {
					b.Fatalf("the official CLI failed on %s: %v\n%s", bp.name, err, stderr.String())
				}
				_, kb, c, err := readUsage(usageFile)
				if err != nil {
					b.Fatal(err)
				}
				cpu += c
				peakKB = max(peakKB, kb)
				n++
			}
			b.ReportMetric(cpu/float64(n), "cpu-s/op")
			b.ReportMetric(float64(peakKB)/1024, "peak-rss-MB")
		})
	}
}

// buildMeasure builds bench/cmd/measure into b's temporary directory.
func buildMeasure(b *testing.B) string {
	b.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("the go tool is needed to build bench/cmd/measure: %v", err)
	}
	bin := filepath.Join(b.TempDir(), "measure")
	cmd := exec.Command(goTool, "build", "-o", bin, "./bench/cmd/measure")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building bench/cmd/measure: %v\n%s", err, out)
	}
	return bin
}

// readUsage reads measure's "<wall s> <peak KiB> <CPU s>" line.
func readUsage(file string) (wall float64, peakKB int64, cpu float64, err error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("reading measure's output: %w", err)
	}
	if _, err := fmt.Sscan(string(data), &wall, &peakKB, &cpu); err != nil {
		return 0, 0, 0, fmt.Errorf("parsing measure's output %q: %w", data, err)
	}
	return wall, peakKB, cpu, nil
}

// processCPU is the user + system time this process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
