package daemon_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
	"github.com/dfdtools/dfd/project"
)

var (
	buildOnce sync.Once
	dfdBinary string
	buildErr  error
)

// dfdBin builds cmd/dfd once per test binary.
func dfdBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dfd-lsp-test-")
		if err != nil {
			buildErr = err
			return
		}
		dfdBinary = filepath.Join(dir, "dfd")
		cmd := exec.Command("go", "build", "-o", dfdBinary, "./cmd/dfd")
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building dfd: %v", buildErr)
	}
	return dfdBinary
}

// pipes joins a subprocess's stdout and stdin into one connection.
type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error {
	_ = p.w.Close()
	return p.ReadCloser.Close()
}

type subprocess struct {
	cmd    *exec.Cmd
	ed     *fakeeditor.Editor
	stderr *logBuffer
	conn   pipes
}

func startSubprocess(t *testing.T, cfg fakeeditor.Config) *subprocess {
	t.Helper()
	cmd := exec.Command(dfdBin(t), "serve", "--stdio")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sp := &subprocess{cmd: cmd, stderr: &logBuffer{}}
	cmd.Stderr = sp.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sp.conn = pipes{stdout, stdin}
	sp.ed = fakeeditor.New(context.Background(), sp.conn, cfg)
	t.Cleanup(func() {
		_ = sp.ed.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("dfd serve stderr:\n%s", lastLines(sp.stderr.String(), 60))
		}
	})
	return sp
}

func (sp *subprocess) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- sp.cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			if ee.ExitCode() < 0 {
				t.Logf("dfd serve ended: %v", ee)
			}
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("dfd serve did not exit")
		return -1
	}
}

// The real binary over stdio: a full session, then shutdown + exit.
func TestServeSubprocess(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	sp := startSubprocess(t, fakeeditor.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res, err := sp.ed.Initialize(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerInfo.Name != "dfd" {
		t.Errorf("server info: %+v", res.ServerInfo)
	}
	orders := filepath.Join(ws, "shop", "definitions", "orders.sqlx")
	if err := sp.ed.Open(ctx, orders); err != nil {
		t.Fatal(err)
	}
	if err := sp.ed.Replace(ctx, orders, `ref("raw_orders")`, `ref("raw_ordrs")`); err != nil {
		t.Fatal(err)
	}
	if err := sp.ed.Await(ctx, "diagnostic from the subprocess", func(st *fakeeditor.State) bool {
		return hasMessage(st.Diagnostics[fileURI(orders)], "raw_ordrs")
	}); err != nil {
		t.Fatal(err)
	}
	if err := sp.ed.Await(ctx, "logs forwarded", func(st *fakeeditor.State) bool {
		for _, l := range st.Logs {
			if strings.Contains(l, "project ready") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Error(err)
	}
	if err := sp.ed.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sp.ed.Exit(ctx); err != nil {
		t.Fatal(err)
	}
	if code := sp.wait(t); code != 0 {
		t.Errorf("exit code %d after shutdown + exit", code)
	}
	if !strings.Contains(sp.stderr.String(), "exit received") {
		t.Errorf("stderr has no log of the exit:\n%s", sp.stderr.String())
	}
	// The editor still holds stdin open after exit, as editors do: the
	// read blocked on it must end at once (dfd makes stdin pollable), not
	// hold the exit for the 2 s grace — which it did on most exits.
	if strings.Contains(sp.stderr.String(), "did not close") {
		t.Errorf("the exit waited for a read of stdin:\n%s", lastLines(sp.stderr.String(), 5))
	}
}

// An editor that dies (closes stdin) without shutdown: the daemon exits.
func TestServeSubprocessClientDies(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	sp := startSubprocess(t, fakeeditor.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := sp.ed.Initialize(ctx, ws); err != nil {
		t.Fatal(err)
	}
	// A request in flight when the editor dies.
	go func() {
		var out any
		_ = sp.ed.Call(ctx, "dfd/preview", map[string]any{"textDocument": map[string]any{"uri": fileURI(filepath.Join(ws, "shop", "definitions", "orders.sqlx"))}}, &out)
	}()
	_ = sp.conn.w.Close() // the editor's end of stdin
	if code := sp.wait(t); code != 1 {
		t.Errorf("exit code %d when the client vanished, want 1", code)
	}
}

// gatedRunner is a Runner (the seam the jit pool will use) that holds
// compiles until released, to have requests in flight on demand.
type gatedRunner struct {
	daemon.Runner
	mu        sync.Mutex
	hold      bool
	started   chan struct{}
	cancelled chan struct{}
}

func (g *gatedRunner) Compile(ctx context.Context, job daemon.CompileJob) (*compile.Result, error) {
	g.mu.Lock()
	hold := g.hold
	g.mu.Unlock()
	if hold {
		g.started <- struct{}{}
		<-ctx.Done()
		g.cancelled <- struct{}{}
		return nil, ctx.Err()
	}
	return g.Runner.Compile(ctx, job)
}

// The client disappears while a request waits for a compile: the compile
// is cancelled and the server stops, in-process (no leaked waits).
func TestClientDiesMidRequest(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	g := &gatedRunner{started: make(chan struct{}, 8), cancelled: make(chan struct{}, 8)}
	s := startServer(t, serverConfig{backend: daemon.BackendOptions{
		NewRunner: func(ctx context.Context, p *project.Project, core *project.Core, log *slog.Logger) (daemon.Runner, error) {
			r, err := daemon.NewInProcess(ctx, p, core, log)
			g.Runner = r
			return g, err
		},
	}})
	s.init(t, ws)
	s.awaitPreviewChanged(t, 0, "/shop")
	g.mu.Lock()
	g.hold = true
	g.mu.Unlock()
	orders := filepath.Join(ws, "shop", "definitions", "orders.sqlx")
	if err := s.ed.Open(s.ctx, orders); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Replace(s.ctx, orders, "order_id,", "order_id, 1 AS x,"); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Save(s.ctx, orders); err != nil {
		t.Fatal(err)
	}
	<-g.started
	errc := make(chan error, 1)
	go func() {
		var out any
		errc <- s.ed.Call(s.ctx, "dfd/preview", map[string]any{"textDocument": map[string]any{"uri": fileURI(orders)}}, &out)
	}()
	// Let the request reach the server: a request after it is answered
	// only once the preview released its turn.
	if _, err := s.ed.Server.Symbols(s.ctx, &protocol.WorkspaceSymbolParams{}); err != nil {
		t.Fatal(err)
	}
	_ = s.ed.Close()
	select {
	case <-g.cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("the compile was not cancelled when the client died")
	}
	select {
	case <-s.done:
		s.done <- 1
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}
	if err := <-errc; err == nil {
		t.Error("the preview of a dead connection succeeded")
	}
}

// Latency on a fixture: didSave → diagnostics, didChange → dfd/preview.
func TestLatency(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	file := filepath.Join(root, "definitions", "marts", "dim_customers.sqlx")
	if err := s.ed.Open(s.ctx, file); err != nil {
		t.Fatal(err)
	}
	text := s.ed.Text(file)
	var save, change, overhead []time.Duration
	for i := 0; i < 8; i++ {
		broken := i%2 == 0
		next := text
		if broken {
			next = strings.Replace(text, `ref("stg_customers")`, `ref("stg_customerz")`, 1)
		}
		if err := s.ed.SetText(s.ctx, file, next); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := s.ed.Save(s.ctx, file); err != nil {
			t.Fatal(err)
		}
		s.awaitDiags(t, file, "diagnostics after save", func(ds []protocol.Diagnostic) bool { return (len(ds) > 0) == broken })
		e2e := time.Since(start)
		save = append(save, e2e)
		var st lsp.StatusResult
		if err := s.ed.Call(s.ctx, lsp.MethodStatus, nil, &st); err != nil {
			t.Fatal(err)
		}
		overhead = append(overhead, e2e-time.Duration(st.Projects[0].CompileMs*float64(time.Millisecond)))
	}
	for i := 0; i < 8; i++ {
		if err := s.ed.SetText(s.ctx, file, strings.Replace(text, "SELECT", "SELECT "+strings.Repeat(" ", i+1), 1)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		s.preview(t, file)
		change = append(change, time.Since(start))
	}
	t.Logf("sqlx_warehouse (27 actions): didSave → diagnostics %s (of which outside the compile: %s); didChange → dfd/preview %s (debounce %s included)",
		stats(save), stats(overhead), stats(change), lsp.DefaultDebounce)
}

func stats(ds []time.Duration) string {
	sorted := append([]time.Duration(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return "median " + sorted[len(sorted)/2].Round(time.Millisecond).String() + ", max " + sorted[len(sorted)-1].Round(time.Millisecond).String()
}
