package lsp_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/lsp"
	"github.com/dfdtools/dfd/settings"
	"github.com/dfdtools/dfd/workspace"
)

// fakeBackend compiles nothing: every .sqlx file of the project (on disk
// or open) becomes one table whose query is the file's text, and a file
// containing "BROKEN" gets a diagnostic on that word. It records what it
// was asked, and can be told to block or panic.
type fakeBackend struct {
	mu            sync.Mutex
	compiles      int
	lastOverlays  map[string][]byte
	compileGate   chan struct{} // when set, Compile waits on it (or ctx)
	compileStart  chan struct{} // when set, signalled as Compile starts
	panicCompile  bool
	compilePanics int // compiles that panicked: a compile the test did not ask for may panic too
	panicMetadata bool
	cancelled     int // compiles that ended because their context did
	// tables answers TableMetadata by target name; metadataGate, when
	// set, makes TableMetadata of a target named "slow" signal
	// metadataEntered and wait for it (a backend stuck on I/O).
	tables          map[string]*workspace.TableInfo
	metadataGate    chan struct{}
	metadataEntered chan struct{}
}

func (b *fakeBackend) OpenProject(ctx context.Context, root string, progress func(string)) (workspace.ProjectBackend, workspace.ProjectInfo, error) {
	progress("opening " + filepath.Base(root))
	return &fakeProjectBackend{b: b, root: root}, workspace.ProjectInfo{CoreVersion: "0.0.0-fake"}, nil
}

// fakeProjectBackend is an opened project of a fakeBackend.
type fakeProjectBackend struct {
	b    *fakeBackend
	root string
}

func (pb *fakeProjectBackend) Close() error { return nil }

func (pb *fakeProjectBackend) Check(context.Context, workspace.CheckRequest) []workspace.Diagnostic {
	return nil
}

func (pb *fakeProjectBackend) Compile(ctx context.Context, req workspace.CompileRequest) (*workspace.CompileResult, error) {
	b, root := pb.b, pb.root
	b.mu.Lock()
	b.compiles++
	b.lastOverlays = req.Overlays
	gate, start, boom := b.compileGate, b.compileStart, b.panicCompile
	if boom {
		b.compilePanics++
	}
	b.mu.Unlock()
	if start != nil {
		select {
		case start <- struct{}{}:
		default:
		}
	}
	if boom {
		panic("fake compile exploded")
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			b.mu.Lock()
			b.cancelled++
			b.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	res := &workspace.CompileResult{CoreVersion: "0.0.0-fake", Graph: "fake"}
	files := map[string][]byte{}
	_ = filepath.WalkDir(filepath.Join(root, "definitions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".sqlx") {
			rel, _ := filepath.Rel(root, p)
			b, _ := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	for name, text := range req.Overlays {
		if strings.HasSuffix(name, ".sqlx") {
			files[name] = text
		}
	}
	for name, text := range files {
		base := strings.TrimSuffix(filepath.Base(name), ".sqlx")
		res.Actions = append(res.Actions, &workspace.Action{
			Target: workspace.Target{Database: "p", Schema: "s", Name: base}, CanonicalTarget: workspace.Target{Database: "p", Schema: "s", Name: base},
			Kind: workspace.KindTable, File: name, SQL: workspace.SQL{Query: string(text)}, Jit: strings.Contains(string(text), "JIT"),
		})
		if i := strings.Index(string(text), "BROKEN"); i >= 0 {
			line := strings.Count(string(text[:i]), "\n")
			col := i - (strings.LastIndexByte(string(text[:i]), '\n') + 1)
			res.Diagnostics = append(res.Diagnostics, workspace.Diagnostic{Path: filepath.Join(root, name), Line: line, Col: col,
				EndLine: line, EndCol: col + len("BROKEN"), Severity: workspace.SeverityError, Message: "broken here"})
		}
	}
	return res, nil
}

func (pb *fakeProjectBackend) JitPreview(ctx context.Context, req workspace.JitRequest) (*workspace.JitResult, error) {
	return &workspace.JitResult{SQL: workspace.SQL{Query: "SELECT 'jit'"}, Adapter: "fake", Elapsed: time.Millisecond}, nil
}

func (pb *fakeProjectBackend) TableMetadata(ctx context.Context, t workspace.Target) (*workspace.TableInfo, bool) {
	b := pb.b
	b.mu.Lock()
	boom, gate, entered, info := b.panicMetadata, b.metadataGate, b.metadataEntered, b.tables[t.Name]
	b.mu.Unlock()
	if boom {
		panic("fake metadata exploded")
	}
	if gate != nil && t.Name == "slow" {
		if entered != nil {
			entered <- struct{}{}
		}
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return info, info != nil
}

func (b *fakeBackend) Configure(settings.Settings) error { return nil }

// fakeProject writes a project with the given definitions files.
func fakeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files["workflow_settings.yaml"] = "defaultProject: p\ndefaultDataset: s\n"
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type rawSession struct {
	c       *rawClient
	backend *fakeBackend
	done    chan int
}

// startRaw runs a server on a fake backend and connects a raw client.
func startRaw(t *testing.T, backend *fakeBackend, opts lsp.Options) *rawSession {
	t.Helper()
	a, b := net.Pipe()
	logs := &logBuffer{}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s := &rawSession{backend: backend, done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { s.done <- lsp.Serve(ctx, b, backend, opts) }()
	s.c = newRawClient(t, a)
	t.Cleanup(func() {
		_ = a.Close()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Error("server did not stop after the connection closed")
		}
		cancel()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return s
}

// logBuffer collects the server's log, shown when a test fails.
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

func (s *rawSession) initialize(t *testing.T, root string) {
	t.Helper()
	caps := map[string]any{"window": map[string]any{"workDoneProgress": true}}
	folders := []any{}
	if root != "" {
		folders = append(folders, map[string]any{"uri": "file://" + root, "name": "p"})
	}
	res := s.c.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": caps, "workspaceFolders": folders})
	if res["error"] != nil {
		t.Fatalf("initialize: %v", res["error"])
	}
	s.c.notify("initialized", map[string]any{})
}
