package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/fakeeditor"
)

// After a compile, the JiT code of the actions of open .js files runs; a
// failing one gets an Error (jit-failed) on its own `.jitCode(`, cleared
// once the code succeeds again.
func TestJitFailureDiagnostics(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}})})
	s.init(t, root)
	file := filepath.Join(root, "definitions", "jit", "boom.js")
	const bad = `publish("jit_fine", { type: "table" }).jitCode(async (jctx) => {
  return { query: "SELECT 1 AS x" };
});

publish("jit_boom", { type: "table" })
  .jitCode(async (jctx) => {
    throw new Error("kaboom from jit");
  });
`
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Open(s.ctx, file); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, file, "jit-failed", func(ds []protocol.Diagnostic) bool {
		return hasMessage(ds, "kaboom from jit")
	})
	var found bool
	for _, d := range ds {
		if !strings.Contains(fakeeditor.Message(d), "kaboom from jit") {
			continue
		}
		found = true
		if d.Severity != protocol.DiagnosticSeverityError || fmt.Sprint(d.Source) != fmt.Sprint(protocol.NewOptional("dfd")) || fmt.Sprint(d.Code) != "jit-failed" {
			t.Errorf("diagnostic: %+v", d)
		}
		if d.Range.Start.Line != 5 {
			t.Errorf("on line %d, want 5 (jit_boom's .jitCode): %+v", d.Range.Start.Line, d.Range)
		}
		if got := rangeText(t, file, d.Range); got != ".jitCode(" {
			t.Errorf("range text %q", got)
		}
		if !strings.Contains(fakeeditor.Message(d), "jit_boom") {
			t.Errorf("message %q", fakeeditor.Message(d))
		}
	}
	if !found || len(ds) != 1 {
		t.Fatalf("diagnostics: %v", messages(ds))
	}

	if err := s.ed.SetText(s.ctx, file, strings.Replace(bad, `throw new Error("kaboom from jit");`, `return { query: "SELECT 2 AS y" };`, 1)); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, file, "cleared", func(ds []protocol.Diagnostic) bool { return ds != nil && len(ds) == 0 })
}
