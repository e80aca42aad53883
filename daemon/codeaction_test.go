package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Quick fixes (textDocument/codeAction) driven by the fake editor against
// the real server: each breaks a fixture project as a user would, applies
// the fix the server offers for the diagnostic, and has the official CLI
// compile the result.

// fixFor waits for a diagnostic of path whose message contains msg, asks
// for the code actions of its range and returns the one titled title.
func (s *session) fixFor(t *testing.T, path, msg, title string) (protocol.Diagnostic, fakeeditor.CodeAction) {
	t.Helper()
	ds := s.awaitDiags(t, path, msg, func(ds []protocol.Diagnostic) bool { return hasMessage(ds, msg) })
	var d protocol.Diagnostic
	for _, x := range ds {
		if strings.Contains(fakeeditor.Message(x), msg) {
			d = x
		}
	}
	actions, err := s.ed.CodeActions(s.ctx, path, d.Range)
	if err != nil {
		t.Fatalf("codeAction: %v", err)
	}
	var titles []string
	for _, a := range actions {
		titles = append(titles, a.Title)
		if a.Title == title {
			if a.Kind != "quickfix" || a.Edit == nil {
				t.Fatalf("code action %q: %+v", title, a)
			}
			return d, a
		}
	}
	t.Fatalf("no code action %q for %q; got %q", title, fakeeditor.Message(d), titles)
	return d, fakeeditor.CodeAction{}
}

// "Did you mean" for a reference to an action that does not exist. Core
// says it twice ("Could not resolve" from a ref, "Missing dependency
// detected" from the graph); the daemon says it once on each place that
// names the action, and the fix hangs on that diagnostic: "Could not
// resolve" on a ref, "Missing dependency" on a dependencies entry.
func TestQuickFixDidYouMean(t *testing.T) {
	cases := []struct {
		name, file, good, bad, msg string
	}{
		{"ref", "definitions/marts/legacy_customer_ltv.sqlx", `ref("dim_customers")`, `ref("dim_custmers")`,
			`Could not resolve "dim_custmers"`},
		{"dependencies entry", "definitions/assertions/assert_orders_have_customers.sqlx", `dependencies: ["dim_customers"]`, `dependencies: ["dim_custmers"]`,
			`depends on "{"name":"dim_custmers"}" which does not exist`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
			before := cliGraph(t, root)
			s := startServer(t, renameEditorConfig())
			s.init(t, root)
			path := filepath.Join(root, filepath.FromSlash(tc.file))
			if err := s.ed.Open(s.ctx, path); err != nil {
				t.Fatal(err)
			}
			s.awaitPreviewChanged(t, 0, "")
			if err := s.ed.Replace(s.ctx, path, tc.good, tc.bad); err != nil {
				t.Fatal(err)
			}
			d, fix := s.fixFor(t, path, tc.msg, `Did you mean "dim_customers"?`)
			if got := rangeTextOf(s.ed.Text(path), d.Range); got != "dim_custmers" {
				t.Errorf("the diagnostic covers %q, want the name", got)
			}
			if !fix.IsPreferred {
				t.Errorf("the only suggestion is not preferred: %+v", fix)
			}
			if err := s.ed.ApplyEdit(s.ctx, fix.Edit); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s.ed.Text(path), tc.good) {
				t.Fatalf("after the fix:\n%s", s.ed.Text(path))
			}
			s.awaitDiags(t, path, "no diagnostics after the fix", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
			if err := s.ed.Save(s.ctx, path); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sortedGraph(before), sortedGraph(cliGraph(t, root))); diff != "" {
				t.Errorf("graph after the fix (-before +after):\n%s", diff)
			}
		})
	}
}

// A ref to a table the project does not declare but the metadata source
// (an offline snapshot) knows: the fix creates its declaration.
func TestQuickFixDeclareKnownTable(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{editor: fakeeditor.Config{
		InitializationOptions: map[string]any{"dfd": map[string]any{"metadata": map[string]any{"source": "snapshot", "snapshot": snapshotPath()}}},
		Capabilities:          fakeeditor.WorkspaceEditCapabilities,
	}})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	path := filepath.Join(root, "definitions", "log_view.sqlx")
	// A new file, as another program writes it: the editor's watcher
	// reports it (opening a file that is as on disk compiles nothing).
	if err := os.WriteFile(path, []byte("config { type: \"view\" }\nSELECT * FROM ${ref(\"housekeeping_log\")}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Watched(s.ctx, fakeeditor.FileEvent{Path: path, Type: protocol.FileChangeTypeCreated}); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	_, fix := s.fixFor(t, path, `Could not resolve "housekeeping_log"`,
		"Declare acme-clickstream.clicks.housekeeping_log (new file definitions/sources/housekeeping_log.sqlx)")
	if err := s.ed.ApplyEdit(s.ctx, fix.Edit); err != nil {
		t.Fatal(err)
	}
	created := filepath.Join(root, "definitions", "sources", "housekeeping_log.sqlx")
	if _, err := os.Stat(created); err != nil {
		t.Fatalf("the declaration file was not created: %v", err)
	}
	s.awaitDiags(t, path, "no diagnostics after the fix", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
	g := cliGraph(t, root)
	found := false
	for _, d := range g["declarations"].([]any) {
		tg := d.(map[string]any)["target"].(map[string]any)
		if tg["database"] == "acme-clickstream" && tg["schema"] == "clicks" && tg["name"] == "housekeeping_log" {
			found = true
		}
	}
	if !found {
		t.Errorf("the CLI's graph has no declaration of acme-clickstream.clicks.housekeeping_log: %v", g["declarations"])
	}
	// A name the metadata source does not know gets no declaration.
	if err := s.ed.Replace(s.ctx, path, "housekeeping_log", "no_such_table_anywhere"); err != nil {
		t.Fatal(err)
	}
	const unknown = `Could not resolve "no_such_table_anywhere"`
	ds := s.awaitDiags(t, path, unknown, func(ds []protocol.Diagnostic) bool { return hasMessage(ds, unknown) })
	for _, d := range ds {
		if !strings.Contains(fakeeditor.Message(d), unknown) {
			continue
		}
		actions, err := s.ed.CodeActions(s.ctx, path, d.Range)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			if strings.HasPrefix(a.Title, "Declare") {
				t.Errorf("a declaration offered for a table the snapshot does not know: %q", a.Title)
			}
		}
	}
}

// JiT code that refs an action its JiT action does not declare as a
// dependency fails when the action runs; the fix adds the dependency.
func TestQuickFixAddJitDependency(t *testing.T) {
	root := jitWorkspace(t)
	before := cliGraph(t, root)
	s := startServer(t, renameEditorConfig())
	s.init(t, root)
	path := filepath.Join(root, "definitions", "jit", "daily_clicks.js")
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "")
	if err := s.ed.Replace(s.ctx, path, `dependencies: ["raw_clicks", "campaigns"]`, `dependencies: ["raw_clicks"]`); err != nil {
		t.Fatal(err)
	}
	d, fix := s.fixFor(t, path, `"campaigns" is not a dependency of the JiT action daily_clicks`, `Add "campaigns" to the dependencies of daily_clicks`)
	if got := rangeTextOf(s.ed.Text(path), d.Range); got != "campaigns" {
		t.Errorf("the diagnostic covers %q, want the ref's name", got)
	}
	if err := s.ed.ApplyEdit(s.ctx, fix.Edit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.ed.Text(path), `dependencies: ["raw_clicks", "campaigns"]`) {
		t.Fatalf("after the fix:\n%s", s.ed.Text(path))
	}
	s.awaitDiags(t, path, "no diagnostics after the fix", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
	if err := s.ed.Save(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedGraph(before), sortedGraph(cliGraph(t, root))); diff != "" {
		t.Errorf("graph after the fix (-before +after):\n%s", diff)
	}
}

// A config key given twice: the first has no effect; the fix removes it
// and leaves the file as it was.
func TestQuickFixDuplicateConfigKey(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	before := cliGraph(t, root)
	s := startServer(t, renameEditorConfig())
	s.init(t, root)
	path := filepath.Join(root, "definitions", "marts", "dim_customers.sqlx")
	original, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "")
	if err := s.ed.Replace(s.ctx, path, "config {\n", "config {\n  type: \"view\",\n"); err != nil {
		t.Fatal(err)
	}
	d, fix := s.fixFor(t, path, `"type" is given again on line 3`, `Remove this "type" (the one that has no effect)`)
	if d.Severity != protocol.DiagnosticSeverityWarning || d.Range.Start.Line != 1 {
		t.Errorf("duplicate key diagnostic: %+v", d)
	}
	// The editor sent the diagnostic back with its string code, as VS Code
	// and Neovim do: the server decodes it (go.lsp.dev/protocol's own
	// decoder does; encoding/json cannot, the fake editor's answer once
	// failed on it) and echoes it in the action.
	if c, ok := d.Code.(protocol.String); !ok || c != "duplicate-key" {
		t.Errorf("the diagnostic's code is %#v, want the string %q", d.Code, "duplicate-key")
	}
	if len(fix.Diagnostics) != 1 || fix.Diagnostics[0].Code != d.Code {
		t.Errorf("the fix's diagnostics %+v, want the one it fixes", fix.Diagnostics)
	}
	if err := s.ed.ApplyEdit(s.ctx, fix.Edit); err != nil {
		t.Fatal(err)
	}
	if s.ed.Text(path) != string(original) {
		t.Fatalf("after the fix the file is not as it was:\n%s", s.ed.Text(path))
	}
	s.awaitDiags(t, path, "no diagnostics after the fix", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
	if err := s.ed.Save(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sortedGraph(before), sortedGraph(cliGraph(t, root))); diff != "" {
		t.Errorf("graph after the fix (-before +after):\n%s", diff)
	}
}

// rangeTextOf is the text of r (UTF-16 columns) on its first line.
func rangeTextOf(text string, r protocol.Range) string {
	lines := strings.Split(text, "\n")
	if int(r.Start.Line) >= len(lines) {
		return ""
	}
	line := lines[r.Start.Line]
	start := len(utf16Prefix(line, int(r.Start.Character)))
	end := len(utf16Prefix(line, int(r.End.Character)))
	if r.End.Line != r.Start.Line {
		end = len(line)
	}
	return line[start:end]
}

func utf16Prefix(s string, units int) string {
	n := 0
	for i, r := range s {
		if n >= units {
			return s[:i]
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return s
}
