package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// "Document columns": the code action writes the action's inferred
// columns into config.columns after the one already documented (kept as
// written, its comment too), with the warehouse's description where the
// metadata source has one for the built table, and the project still
// compiles without errors.
func TestDocumentColumnsCodeAction(t *testing.T) {
	snapshot := filepath.Join(t.TempDir(), "metadata.json")
	if err := os.WriteFile(snapshot, []byte(`{"tables": [
  {"target": {"database": "test", "schema": "d", "name": "orders"}, "type": "TABLE", "fields": [
    {"name": "id", "primitive": "INTEGER"}, {"name": "name", "primitive": "STRING"}, {"name": "amount", "primitive": "NUMERIC"}]},
  {"target": {"database": "test", "schema": "d", "name": "v"}, "type": "VIEW", "fields": [
    {"name": "id", "primitive": "INTEGER"}, {"name": "name", "primitive": "STRING", "description": "who \"bought\""}, {"name": "amount", "primitive": "NUMERIC"}]}
]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	src := "config {\n  type: \"view\",\n  columns: {\n    id: \"kept\", // mine\n  },\n}\nSELECT id, name, amount FROM ${ref(\"orders\")}\n"
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":  "defaultProject: test\ndefaultDataset: d\n",
		"definitions/orders.sqlx": "config { type: \"declaration\" }\n",
		"definitions/v.sqlx":      src,
	})
	cfg := fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"source": "snapshot", "snapshot": snapshot}}})
	cfg.Capabilities = fakeeditor.WorkspaceEditCapabilities
	s := startServer(t, serverConfig{editor: cfg})
	s.init(t, root)
	path := filepath.Join(root, "definitions", "v.sqlx")
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	// The inferred columns come from the SQL check after the compile.
	var action *fakeeditor.CodeAction
	var titles []string
	for deadline := time.Now().Add(60 * time.Second); action == nil && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		actions, err := s.ed.CodeActions(s.ctx, path, protocol.Range{Start: protocol.Position{Line: 1}, End: protocol.Position{Line: 1}})
		if err != nil {
			t.Fatal(err)
		}
		titles = titles[:0]
		for i, a := range actions {
			titles = append(titles, a.Title)
			if a.Kind == string(lsp.CodeActionDocumentColumns) {
				action = &actions[i]
			}
		}
	}
	if action == nil {
		t.Fatalf("no document-columns action; got %q", titles)
	}
	if action.Title != "Document columns: add 2 to config.columns" || action.Edit == nil {
		t.Fatalf("action %+v", action)
	}
	mark := s.checksEnded()
	if err := s.ed.ApplyEdit(s.ctx, action.Edit); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "    id: \"kept\", // mine\n", "    id: \"kept\", // mine\n    name: \"who \\\"bought\\\"\",\n    amount: \"\",\n", 1)
	if got := s.ed.Text(path); got != want {
		t.Fatalf("after the edit:\n%s\nwant:\n%s", got, want)
	}
	s.awaitChecked(t, mark)
	if res := s.preview(t, path); res.Error != "" || len(res.Actions) != 1 || len(res.Actions[0].Columns) != 3 {
		t.Errorf("after documenting: %+v", res)
	}
	// Every column documented: no action any more.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		actions, err := s.ed.CodeActions(s.ctx, path, protocol.Range{Start: protocol.Position{Line: 1}, End: protocol.Position{Line: 1}})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range actions {
			found = found || a.Kind == string(lsp.CodeActionDocumentColumns)
		}
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still a document-columns action with every column documented")
		}
	}
}
