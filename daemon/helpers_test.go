package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// testTimeout bounds every wait of a test: waits are on events, so this is
// only reached when something is broken.
const testTimeout = 90 * time.Second

// logBuffer collects the daemon's log; it is printed when a test fails.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type session struct {
	ed   *fakeeditor.Editor
	done chan int
	log  *logBuffer
	ctx  context.Context
}

type serverConfig struct {
	editor   fakeeditor.Config
	debounce time.Duration
	backend  daemon.BackendOptions
	maxBytes int
}

// startServer runs the daemon in-process over a pipe and connects a fake
// editor. The server is stopped (and must stop) when the test ends.
func startServer(t *testing.T, cfg serverConfig) *session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	client, server := net.Pipe()
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := &session{done: make(chan int, 1), log: logs, ctx: ctx}
	go func() {
		s.done <- daemon.Serve(context.Background(), server, server, daemon.Options{
			Version: "test", Log: log, Backend: cfg.backend, Debounce: cfg.debounce, MaxMessageBytes: cfg.maxBytes,
		})
	}()
	s.ed = fakeeditor.New(context.Background(), client, cfg.editor)
	t.Cleanup(func() {
		_ = s.ed.Close()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not stop after the client closed the connection")
		}
		cancel()
		if t.Failed() {
			t.Logf("daemon log:\n%s", lastLines(logs.String(), 80))
		}
	})
	return s
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// txtarWorkspace writes a txtar archive from testdata/lsp into a temporary
// directory and installs the test core into every project that has a
// package.json.
func txtarWorkspace(t *testing.T, archive string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata", "lsp", archive))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := fakeeditor.WriteTxtar(dir, data); err != nil {
		t.Fatal(err)
	}
	installCores(t, dir)
	return dir
}

func installCores(t *testing.T, dir string) {
	t.Helper()
	core := testenv.CoreDir(t, testenv.CoreVersion)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if d.Name() == "package.json" {
			return testenv.CopyTree(core, filepath.Join(filepath.Dir(p), "node_modules", "@dataform", "core"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (s *session) init(t *testing.T, folders ...string) {
	t.Helper()
	if _, err := s.ed.Initialize(s.ctx, folders...); err != nil {
		t.Fatal(err)
	}
}

// awaitDiags waits until the diagnostics of path satisfy pred.
func (s *session) awaitDiags(t *testing.T, path string, what string, pred func([]protocol.Diagnostic) bool) []protocol.Diagnostic {
	t.Helper()
	u := uri.File(path)
	var got []protocol.Diagnostic
	err := s.ed.Await(s.ctx, what+" in "+filepath.Base(path), func(st *fakeeditor.State) bool {
		ds, ok := st.Diagnostics[u]
		if !ok && pred(nil) {
			return false // never published: wait for a publication
		}
		got = ds
		return pred(ds)
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// awaitCompiles waits until n more compiles of projects whose root ends
// in suffix have been announced (dfd/previewChanged) than at mark.
func (s *session) previewChanges() int { return len(s.ed.Snapshot().PreviewChanged) }

func (s *session) awaitPreviewChanged(t *testing.T, after int, rootSuffix string) lsp.PreviewChangedParams {
	t.Helper()
	var p lsp.PreviewChangedParams
	err := s.ed.Await(s.ctx, "dfd/previewChanged for "+rootSuffix, func(st *fakeeditor.State) bool {
		for _, raw := range st.PreviewChanged[min(after, len(st.PreviewChanged)):] {
			var x lsp.PreviewChangedParams
			if err := json.Unmarshal(raw, &x); err == nil && strings.HasSuffix(string(x.Project), rootSuffix) {
				p = x
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checksEnded counts the later phases (checks after a compile) that ended.
func (s *session) checksEnded() int { st := s.ed.Snapshot(); return st.EndedProgress("dfd: checking") }

// awaitChecked waits until more checks ended than at mark.
func (s *session) awaitChecked(t *testing.T, mark int) {
	t.Helper()
	if err := s.ed.Await(s.ctx, "a check after a compile", func(st *fakeeditor.State) bool {
		return st.EndedProgress("dfd: checking") > mark
	}); err != nil {
		t.Fatal(err)
	}
}

func (s *session) preview(t *testing.T, path string) *lsp.PreviewResult {
	t.Helper()
	var res lsp.PreviewResult
	params := map[string]any{"textDocument": map[string]any{"uri": uri.File(path)}}
	if err := s.ed.Call(s.ctx, lsp.MethodPreview, params, &res); err != nil {
		t.Fatalf("dfd/preview %s: %v", path, err)
	}
	return &res
}

func messages(ds []protocol.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, fakeeditor.Message(d))
	}
	return out
}

// withoutSQLHints leaves out the SQL analysis's hints (statements it did
// not analyse, and why), for tests about other diagnostics.
func withoutSQLHints(ds []protocol.Diagnostic) []protocol.Diagnostic {
	var out []protocol.Diagnostic
	for _, d := range ds {
		if d.Source == protocol.NewOptional("GoogleSQL") && d.Severity == protocol.DiagnosticSeverityHint {
			continue
		}
		out = append(out, d)
	}
	return out
}

func hasMessage(ds []protocol.Diagnostic, substr string) bool {
	for _, d := range ds {
		if strings.Contains(fakeeditor.Message(d), substr) {
			return true
		}
	}
	return false
}

// rangeText is the text a diagnostic's range covers (UTF-16 columns),
// clipped to its first line.
func rangeText(t *testing.T, path string, r protocol.Range) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if int(r.Start.Line) >= len(lines) {
		return ""
	}
	u := utf16.Encode([]rune(lines[r.Start.Line]))
	end := len(u)
	if r.End.Line == r.Start.Line {
		end = min(int(r.End.Character), len(u))
	}
	start := min(int(r.Start.Character), end)
	return string(utf16.Decode(u[start:end]))
}

func fakeeditorConfig(initOptions any) fakeeditor.Config {
	return fakeeditor.Config{InitializationOptions: initOptions}
}

func jsonRaw(v any) ([]byte, error) { return json.Marshal(v) }

func fileURI(path string) uri.URI { return uri.File(path) }

// sqlCheckSnapshot is the offline metadata of the warehouse tables the
// sql_check fixture reads.
func sqlCheckSnapshot() string {
	return filepath.Join(testenv.RepoRoot(), "testdata", "metadata", "sql_check.json")
}

// startSQLCheckServer starts a server on a copy of the sql_check fixture
// with sqlCheckSnapshot as its metadata source, more dfd settings beside
// it, and caps (when set) editing the capabilities the editor announces.
func startSQLCheckServer(t *testing.T, more map[string]any, caps func(*protocol.ClientCapabilities)) (*session, string) {
	t.Helper()
	root := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	settings := map[string]any{"metadata": map[string]any{"source": "snapshot", "snapshot": sqlCheckSnapshot()}}
	for k, v := range more {
		settings[k] = v
	}
	cfg := fakeeditorConfig(map[string]any{"dfd": settings})
	cfg.Capabilities = caps
	s := startServer(t, serverConfig{editor: cfg})
	s.init(t, root)
	return s, root
}
