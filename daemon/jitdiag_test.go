package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/jit"
)

// After a compile, the JiT code of the actions of open .js files runs; a
// failing one gets an Error (jit-failed) on the line of its code that
// threw, cleared once the code succeeds again. In process and in a worker
// alike: both give the daemon the error's stack.
func TestJitFailureDiagnostics(t *testing.T) {
	t.Run("in process", func(t *testing.T) { testJitFailureDiagnostics(t, daemon.BackendOptions{}) })
	t.Run("worker", func(t *testing.T) {
		pools := jit.NewPools(jit.PoolOptions{Workers: 1, Command: []string{os.Args[0], "worker"}, Env: []string{benchWorkerEnv + "=1"}})
		t.Cleanup(func() { _ = pools.Close() })
		testJitFailureDiagnostics(t, daemon.BackendOptions{NewRunner: daemon.NewPooled(pools)})
	})
}

func testJitFailureDiagnostics(t *testing.T, backend daemon.BackendOptions) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{backend: backend, editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}})})
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
		if d.Range.Start.Line != 6 {
			t.Errorf("on line %d, want 7 (the throw in jit_boom's code): %+v", d.Range.Start.Line+1, d.Range)
		}
		if got := rangeText(t, file, d.Range); !strings.HasPrefix(got, `new Error("kaboom from jit")`) {
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

// JiT code that throws from a helper it defines, or from a function an
// includes file put together, is marked on the line that threw: where the
// code (or the function around the throw) is written. A throw with no
// stack (a string) stays on the action's `.jitCode(`.
func TestJitFailureOnTheThrowingLine(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}})})
	s.init(t, root)
	if err := os.WriteFile(filepath.Join(root, "includes", "jit_wrap.js"), []byte(`function wrap(fn) {
  return "async (jctx) => (" + fn + ")(jctx)";
}
module.exports = { wrap };
`), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "definitions", "jit", "boom.js")
	const text = `publish("jit_helper", { type: "table" }).jitCode(async (jctx) => {
  const pick = (o) => {
    return o.missing.field;
  };
  return { query: "SELECT " + pick({}) };
});

publish("jit_wrapped", { type: "table" }).jitCode(jit_wrap.wrap(async (jctx) => {
  const cols = null;
  return { query: "SELECT " + cols.join(", ") };
}));

publish("jit_string", { type: "table" }).jitCode(async (jctx) => {
  throw "no stack";
});
`
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Open(s.ctx, file); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, file, "three JiT failures", func(ds []protocol.Diagnostic) bool { return len(ds) == 3 })
	want := map[string]string{
		"jit_helper":  "o.missing.field",
		"jit_wrapped": "cols.join",
		"jit_string":  ".jitCode(",
	}
	for _, d := range ds {
		for action, at := range want {
			if !strings.Contains(fakeeditor.Message(d), action+" failed") {
				continue
			}
			// at's line; for .jitCode(, the one after the action's publish.
			from := strings.Index(text, `"`+action+`"`)
			wantLine := strings.Count(text[:from+strings.Index(text[from:], at)], "\n")
			if got := rangeText(t, file, d.Range); int(d.Range.Start.Line) != wantLine || at == ".jitCode(" && got != at {
				t.Errorf("%s: on %q (line %d), want on line %d (%q)", action, got, d.Range.Start.Line+1, wantLine+1, at)
			}
			delete(want, action)
		}
	}
	if len(want) > 0 {
		t.Errorf("no diagnostic for %v: %q", want, messages(ds))
	}
}
