package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// JiT code that uses a name of its module's scope gets a Warning
// (jit-free-variable) on each use as soon as it compiles, and the JiT
// runtime agrees that the name is not defined there: the preview fails
// with a ReferenceError about it.
func TestJitFreeVariableWarnings(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"includes/consts.js":     "const TABLE_LIMIT = 5;\nmodule.exports = { TABLE_LIMIT };\n",
		"definitions/src.js":     "declare({ schema: \"d\", name: \"src\" });\n",
		"definitions/planted.js": `const LIMIT = 10;
const helper = (x) => x;

publish("uses_helper", { type: "table", dependencies: ["src"] }).jitCode(async (jctx) => {
  const n = helper(1);
  return ` + "`SELECT ${n} FROM ${jctx.ref(\"src\")} LIMIT ${LIMIT} + ${LIMIT}`" + `;
});

publish("uses_includes", { type: "table" }).jitCode(async (jctx) => {
  return "SELECT " + consts.TABLE_LIMIT;
});

publish("fine", { type: "table" }).jitCode(async (jctx) => {
  const LIMIT = 3;
  const helper = (x) => x * LIMIT;
  return "SELECT " + helper(typeof consts === "undefined" ? 1 : 2);
});
`,
	})
	file := filepath.Join(root, "definitions", "planted.js")
	s := startServer(t, serverConfig{})
	s.init(t, root)
	ds := s.awaitDiags(t, file, "free-variable warnings", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	text, _ := os.ReadFile(file)
	var want []string
	for _, w := range []struct {
		name, marker string // the use is at the nth marker
		nth          int
	}{{"helper", "helper(1)", 0}, {"LIMIT", "LIMIT}", 0}, {"LIMIT", "LIMIT}", 1}, {"consts", "consts.TABLE_LIMIT", 0}} {
		at := -1
		for i, from := 0, 0; i <= w.nth; i++ {
			at = from + strings.Index(string(text[from:]), w.marker)
			from = at + 1
		}
		p := fakeeditor.PositionOf(string(text), at)
		want = append(want, fmt.Sprintf("%d:%d %s", p.Line+1, p.Character+1, w.name))
	}
	var got []string
	for _, d := range ds {
		msg := fakeeditor.Message(d)
		if fmt.Sprint(d.Code) != "jit-free-variable" || d.Severity != protocol.DiagnosticSeverityWarning {
			t.Errorf("diagnostic %+v", d)
			continue
		}
		name := rangeText(t, file, d.Range)
		if !strings.Contains(msg, "`"+name+"` is not defined when the JiT code runs") {
			t.Errorf("message %q on %q", msg, name)
		}
		got = append(got, fmt.Sprintf("%d:%d %s", d.Range.Start.Line+1, d.Range.Start.Character+1, name))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("warnings %v, want %v", got, want)
	}
	// The runtime's word on it.
	res := s.preview(t, file)
	errs := map[string]string{}
	for _, a := range res.Actions {
		if a.JitPreview != nil {
			errs[a.Target.Name] = a.JitPreview.Error
		}
	}
	for action, name := range map[string]string{"uses_helper": "helper", "uses_includes": "consts"} {
		if e := errs[action]; !strings.Contains(e, "ReferenceError") || !strings.Contains(e, name) {
			t.Errorf("preview of %s: %q, want a ReferenceError about %s", action, e, name)
		}
	}
	if e := errs["fine"]; e != "" {
		t.Errorf("preview of fine: %q", e)
	}
}

// Every JiT function of the fixtures and the example runs, so none of
// them may be warned about.
func TestJitFreeVariableNoFalseAlarms(t *testing.T) {
	for _, src := range []string{
		testenv.Fixture("jit_actions"),
		testenv.Fixture("jit_function_shapes"),
		filepath.Join(testenv.RepoRoot(), "examples", "clickstream"),
	} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			root := testenv.ProjectCopy(t, src, testenv.CoreVersion)
			s := startServer(t, serverConfig{})
			s.init(t, root)
			s.awaitPreviewChanged(t, 0, "")
			var g struct{ jit int }
			for u, ds := range s.ed.Snapshot().Diagnostics {
				for _, d := range ds {
					if fmt.Sprint(d.Code) == "jit-free-variable" {
						t.Errorf("%s: %q", u, fakeeditor.Message(d))
					}
				}
			}
			var res lsp.GraphResult
			if err := s.ed.Call(s.ctx, lsp.MethodGraph, map[string]any{"uri": uri.File(root)}, &res); err != nil {
				t.Fatal(err)
			}
			for _, a := range res.Projects[0].Actions {
				if a.Jit {
					g.jit++
				}
			}
			if g.jit == 0 {
				t.Fatalf("%s has no JiT action: the test needs some", src)
			}
			t.Logf("%d JiT actions, no warning", g.jit)
		})
	}
}

// When the JiT check runs the code of an open file and it fails with the
// ReferenceError a free-variable warning predicted, the two are one
// diagnostic: the check's Error, on the name, saying why. The warnings
// the run did not reach stay. In process and in a worker alike.
func TestJitFreeVariableFailureIsOneDiagnostic(t *testing.T) {
	t.Run("in process", func(t *testing.T) { testJitFreeVariableFailure(t, daemon.BackendOptions{}) })
	t.Run("worker", func(t *testing.T) {
		pools := jit.NewPools(jit.PoolOptions{Workers: 1, Command: []string{os.Args[0], "worker"}, Env: []string{benchWorkerEnv + "=1"}})
		t.Cleanup(func() { _ = pools.Close() })
		testJitFreeVariableFailure(t, daemon.BackendOptions{NewRunner: daemon.NewPooled(pools)})
	})
}

func testJitFreeVariableFailure(t *testing.T, backend daemon.BackendOptions) {
	root := jitWorkspace(t)
	file := filepath.Join(root, "definitions", "jit", "free.js")
	const text = "const LIMIT = 10;\nconst helper = (x) => x;\n\n" +
		"publish(\"uses_helper\", { type: \"table\" }).jitCode(async (jctx) => {\n" +
		"  const n = helper(1);\n" +
		"  return `SELECT ${n} LIMIT ${LIMIT}`;\n" +
		"});\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{backend: backend, editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"snapshot": snapshotPath()}}})})
	s.init(t, root)
	mark := s.checksEnded()
	if err := s.ed.Open(s.ctx, file); err != nil {
		t.Fatal(err)
	}
	s.awaitChecked(t, mark)
	ds := s.awaitDiags(t, file, "the JiT failure", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "uses_helper failed") })
	var got []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d:%d %s %s", d.Range.Start.Line+1, d.Range.Start.Character+1, rangeText(t, file, d.Range), fmt.Sprint(d.Code)))
		if fmt.Sprint(d.Code) == "jit-failed" {
			if msg := fakeeditor.Message(d); d.Severity != protocol.DiagnosticSeverityError || !strings.Contains(msg, "ReferenceError: helper is not defined") ||
				!strings.Contains(msg, "without its module's scope; define `helper` inside the function") {
				t.Errorf("the failure: %v %q", d.Severity, msg)
			}
		}
	}
	// helper(1) threw: one Error on it; LIMIT was never reached: its
	// warning stays.
	if want := []string{"5:13 helper jit-failed", "6:31 LIMIT jit-free-variable"}; !slices.Equal(got, want) {
		t.Errorf("diagnostics %q, want %q", got, want)
	}
}
