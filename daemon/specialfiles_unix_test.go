//go:build unix

package daemon_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/lsp"
)

// A project holding a named pipe, a socket and links to /dev/zero in
// definitions/ and includes/ compiles in dfd serve (in-process and on
// worker processes): each such file gets a warning saying why it is not
// compiled, and a file added later appears in the graph (before the fix
// the first compile blocked forever in open(2), and every later one
// waited behind it).
func TestServeSkipsSpecialFiles(t *testing.T) {
	for _, name := range []string{"in-process", "workers"} {
		t.Run(name, func(t *testing.T) {
			var backend daemon.BackendOptions
			if name == "workers" {
				poolLog := &logBuffer{}
				pools := jit.NewPools(jit.PoolOptions{
					Workers: 1,
					Command: []string{os.Args[0], "worker"},
					Env:     []string{benchWorkerEnv + "=1"},
					Logger:  slog.New(slog.NewTextHandler(poolLog, &slog.HandlerOptions{Level: slog.LevelDebug})),
				})
				t.Cleanup(func() {
					_ = pools.Close()
					if t.Failed() {
						t.Logf("pool log:\n%s", lastLines(poolLog.String(), 40))
					}
				})
				backend.NewRunner = daemon.NewPooled(pools)
			}
			root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
			special := testenv.PlaceSpecialFiles(t, root)
			s := startServer(t, serverConfig{backend: backend})
			s.init(t, root)
			s.awaitPreviewChanged(t, 0, "")
			for _, f := range special {
				want := "not a regular file (" + f.Kind + "); dfd reads only regular files"
				s.awaitDiags(t, filepath.Join(root, filepath.FromSlash(f.Rel)), "a warning about "+f.Rel, func(ds []protocol.Diagnostic) bool {
					for _, d := range ds {
						if d.Severity == protocol.DiagnosticSeverityWarning && strings.Contains(fakeeditor.Message(d), want) {
							return true
						}
					}
					return false
				})
			}

			mark := s.previewChanges()
			added := filepath.Join(root, "definitions", "added_later.sqlx")
			if err := os.WriteFile(added, []byte("config { type: \"view\" }\nSELECT 1 AS x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := s.ed.Watched(s.ctx, fakeeditor.FileEvent{Path: added, Type: protocol.FileChangeTypeCreated}); err != nil {
				t.Fatal(err)
			}
			s.awaitPreviewChanged(t, mark, "")
			var g lsp.GraphResult
			if err := s.ed.Call(s.ctx, lsp.MethodGraph, map[string]any{"uri": uri.File(root)}, &g); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, a := range g.Projects[0].Actions {
				found = found || a.Target.Name == "added_later"
			}
			if !found || g.Projects[0].Error != "" {
				t.Errorf("the file added later is not in the graph (error %q, %d actions)", g.Projects[0].Error, len(g.Projects[0].Actions))
			}
		})
	}
}
