package daemon_test

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/lsp"
)

// benchWorkerEnv makes the test binary serve as `dfd worker` (the
// helper-process pattern of package jit): the pooled runner of the latency
// benchmarks starts `<test binary> worker …` with it set.
const benchWorkerEnv = "DFD_DAEMON_BENCH_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(benchWorkerEnv) != "" && len(os.Args) > 1 && os.Args[1] == "worker" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := jit.WorkerMain(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// benchProject is a project a latency benchmark edits: its root and one
// .sqlx file of a table or view.
type benchProject struct {
	name string
	root string
	file string
}

// BenchmarkLSPLatency measures what a user waits for in the editor, from
// the client's message to the server's answer, on a warm daemon (project
// open, first compile done), with compiles on `dfd worker` processes (as
// `dfd serve` runs them) and in-process (`dfd serve --in-process`):
//
//   - didSave-diagnostics: the file is written on disk and didSave sent,
//     alternately broken and fixed, until publishDiagnostics for it shows
//     the change.
//   - didChange-preview: an unsaved didChange, then dfd/preview of the
//     file, until the answer shows the edit; it includes the as-you-type
//     debounce (lsp.DefaultDebounce). didChange-preview-debounce0 runs the
//     same with the smallest debounce the options allow (1ns: zero means
//     the default).
//
// Each sub-benchmark reports the p50 and p95 of its iterations in ms.
func BenchmarkLSPLatency(b *testing.B) {
	projects := []func(b *testing.B) benchProject{
		func(b *testing.B) benchProject {
			root := testenv.ProjectCopy(b, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
			return benchProject{"sqlx_warehouse", root, filepath.Join(root, "definitions", "marts", "dim_customers.sqlx")}
		},
		func(b *testing.B) benchProject {
			src := filepath.Join(b.TempDir(), "p")
			if err := projectgen.Generate(src, projectgen.Options{Actions: 1000, CoreVersion: testenv.CoreVersion, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			root := testenv.ProjectCopy(b, src, testenv.CoreVersion)
			return benchProject{"generated-1000", root, pickSQLX(b, root)}
		},
	}
	names := []string{"sqlx_warehouse", "generated-1000"}
	for i, mk := range projects {
		b.Run(names[i], func(b *testing.B) {
			p := mk(b)
			for _, runner := range []string{"pooled", "inprocess"} {
				b.Run(runner, func(b *testing.B) {
					s := startBenchServer(b, p, runner, 0)
					b.Run("didSave-diagnostics", func(b *testing.B) { benchSave(b, s, p) })
					b.Run("didChange-preview", func(b *testing.B) { benchPreview(b, s, p) })
					s0 := startBenchServer(b, p, runner, time.Nanosecond)
					b.Run("didChange-preview-debounce0", func(b *testing.B) { benchPreview(b, s0, p) })
				})
			}
		})
	}
}

// pickSQLX is the first .sqlx file (in path order) of a table or view
// under definitions.
func pickSQLX(b *testing.B, root string) string {
	var found string
	err := filepath.WalkDir(filepath.Join(root, "definitions"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" || d.IsDir() || !strings.HasSuffix(p, ".sqlx") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(data)
		if strings.HasPrefix(text, "config {") && (strings.Contains(text, `type: "table"`) || strings.Contains(text, `type: "view"`)) {
			found = p
		}
		return nil
	})
	if err != nil || found == "" {
		b.Fatalf("no table or view .sqlx in %s: %v", root, err)
	}
	return found
}

type benchSession struct {
	ed  *fakeeditor.Editor
	ctx context.Context
	log *logBuffer
}

// startBenchServer runs the daemon in-process over a pipe, opens p and
// waits for its first compile. runner is "pooled" or "inprocess";
// debounce 0 is the default.
func startBenchServer(b *testing.B, p benchProject, runner string, debounce time.Duration) *benchSession {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	client, server := net.Pipe()
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	opts := daemon.Options{Version: "bench", Log: log, Debounce: debounce}
	var pools *jit.Pools
	if runner == "pooled" {
		pools = jit.NewPools(jit.PoolOptions{
			Command: []string{os.Args[0], "worker"},
			Env:     []string{benchWorkerEnv + "=1"},
			Logger:  log.With("component", "jit"),
		})
		opts.Backend.NewRunner = daemon.NewPooled(pools)
	}
	done := make(chan int, 1)
	go func() { done <- daemon.Serve(context.Background(), server, server, opts) }()
	s := &benchSession{ed: fakeeditor.New(context.Background(), client, fakeeditor.Config{}), ctx: ctx, log: logs}
	b.Cleanup(func() {
		_ = s.ed.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			b.Errorf("the server did not stop after the client closed the connection")
		}
		if pools != nil {
			_ = pools.Close()
		}
		cancel()
		if b.Failed() {
			b.Logf("daemon log:\n%s", lastLines(logs.String(), 80))
		}
	})
	if _, err := s.ed.Initialize(ctx, p.root); err != nil {
		b.Fatal(err)
	}
	err := s.ed.Await(ctx, "first compile of "+p.name, func(st *fakeeditor.State) bool { return len(st.PreviewChanged) > 0 })
	if err != nil {
		b.Fatalf("%v\n%s", err, lastLines(logs.String(), 40))
	}
	return s
}

const brokenProperty = "descripton"

// benchSave: write the file (broken or fixed) and send didSave; wait for
// its diagnostics to show the change.
func benchSave(b *testing.B, s *benchSession, p benchProject) {
	orig, err := os.ReadFile(p.file)
	if err != nil {
		b.Fatal(err)
	}
	fixed := string(orig)
	broken := strings.Replace(fixed, "config {", "config {\n  "+brokenProperty+": \"bench\",", 1)
	defer os.WriteFile(p.file, orig, 0o644)
	u := uri.File(p.file)
	isBroken := func(ds []protocol.Diagnostic) bool { return hasMessage(ds, brokenProperty) }
	// Start from the fixed state, whatever the previous run left.
	save := func(text string, wantBroken bool) time.Duration {
		published := s.ed.Snapshot().Published[u]
		start := time.Now()
		if err := os.WriteFile(p.file, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := s.ed.Server.DidSave(s.ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}}); err != nil {
			b.Fatal(err)
		}
		err := s.ed.Await(s.ctx, "diagnostics of "+filepath.Base(p.file), func(st *fakeeditor.State) bool {
			return st.Published[u] > published && isBroken(st.Diagnostics[u]) == wantBroken
		})
		if err != nil {
			b.Fatalf("%v\n%s", err, lastLines(s.log.String(), 40))
		}
		return time.Since(start)
	}
	if isBroken(s.ed.Snapshot().Diagnostics[u]) {
		save(fixed, false)
	}
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			samples = append(samples, save(broken, true))
		} else {
			samples = append(samples, save(fixed, false))
		}
	}
	b.StopTimer()
	if b.N%2 == 1 {
		save(fixed, false)
	}
	reportPercentiles(b, samples)
}

var previewRun int

// benchPreview: an unsaved didChange appending a marker comment, then
// dfd/preview; the latency ends with the answer that has the marker.
func benchPreview(b *testing.B, s *benchSession, p benchProject) {
	if err := s.ed.Open(s.ctx, p.file); err != nil {
		b.Fatal(err)
	}
	defer s.ed.CloseFile(s.ctx, p.file)
	base := s.ed.Text(p.file)
	previewRun++
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		marker := fmt.Sprintf("dfd_bench_%d_%d", previewRun, i)
		start := time.Now()
		if err := s.ed.SetText(s.ctx, p.file, base+"\n-- "+marker+"\n"); err != nil {
			b.Fatal(err)
		}
		for {
			var res lsp.PreviewResult
			params := map[string]any{"textDocument": map[string]any{"uri": uri.File(p.file)}}
			if err := s.ed.Call(s.ctx, lsp.MethodPreview, params, &res); err != nil {
				b.Fatalf("dfd/preview: %v", err)
			}
			if len(res.Actions) > 0 && strings.Contains(res.Actions[0].SQL.Query, marker) {
				break
			}
			if time.Since(start) > time.Minute {
				b.Fatalf("dfd/preview never showed the edit: %+v", res.Actions)
			}
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	// Back to the file's text on disk before the next sub-benchmark.
	if err := s.ed.SetText(s.ctx, p.file, base); err != nil {
		b.Fatal(err)
	}
	reportPercentiles(b, samples)
}

// reportPercentiles reports nearest-rank p50 and p95 in milliseconds.
func reportPercentiles(b *testing.B, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p/100*float64(len(samples)))) - 1
		return samples[max(0, min(i, len(samples)-1))]
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(rank(50)), "p50-ms")
	b.ReportMetric(ms(rank(95)), "p95-ms")
}
