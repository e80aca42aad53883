package daemon_test

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// format asks for textDocument/formatting of path and applies the edits.
func (s *session) format(t *testing.T, path string) []fakeeditor.TextEdit {
	t.Helper()
	var edits []fakeeditor.TextEdit
	params := map[string]any{"textDocument": map[string]any{"uri": uri.File(path)}, "options": map[string]any{"tabSize": 2, "insertSpaces": true}}
	if err := s.ed.Call(s.ctx, protocol.MethodTextDocumentFormatting, params, &edits); err != nil {
		t.Fatalf("formatting %s: %v", path, err)
	}
	if len(edits) > 0 {
		we := &fakeeditor.WorkspaceEdit{Changes: map[string][]fakeeditor.TextEdit{string(uri.File(path)): edits}}
		if err := s.ed.ApplyEdit(s.ctx, we); err != nil {
			t.Fatal(err)
		}
	}
	return edits
}

// Formatting an unsaved .sqlx buffer: its SQL is GoogleSQL's layout, the
// config block, ${…} and js {} as written; the project compiles to the
// same graph (no diagnostics appear); formatting again changes nothing;
// comments stay where they stand; a part GoogleSQL cannot parse is left
// as written, and the editor is told.
func TestFormattingSQLX(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	path := filepath.Join(root, "definitions", "marts", "customer_orders_mv.sqlx")
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "")
	before := s.ed.Text(path)
	config := before[:strings.Index(before, "}\n\nSELECT")+1]
	messy := config + "\n\nselect customer_id,count(*) as orders,   MAX(ordered_at) AS last_ordered_at from ${ref(\"fct_orders\")} group by customer_id\n"
	if err := s.ed.SetText(s.ctx, path, messy); err != nil {
		t.Fatal(err)
	}
	if edits := s.format(t, path); len(edits) != 1 {
		t.Fatalf("%d edits, want one covering what changed: %+v", len(edits), edits)
	}
	got := s.ed.Text(path)
	if !strings.HasPrefix(got, config) {
		t.Errorf("the config block changed:\n%s", got)
	}
	for _, want := range []string{"SELECT\n", "count(*) AS orders", "FROM\n", "${ref(\"fct_orders\")}", "GROUP BY"} {
		if !strings.Contains(got, want) {
			t.Errorf("formatted text lacks %q:\n%s", want, got)
		}
	}
	if edits := s.format(t, path); len(edits) != 0 {
		t.Errorf("formatting twice changed the text again: %+v", edits)
	}
	// The preview compiles the formatted buffer: the same action, its
	// SQL in the new layout, no error.
	res := s.preview(t, path)
	if res.Error != "" || len(res.Actions) != 1 || !strings.Contains(res.Actions[0].SQL.Query, "count(*) AS orders") {
		t.Errorf("the preview of the formatted buffer: error %q, %d actions %+v", res.Error, len(res.Actions), res.Actions)
	}

	// A Windows buffer (CRLF line ends, a UTF-8 byte order mark) formats
	// as its LF twin did, keeping both.
	crlf := func(s string) string { return "\xef\xbb\xbf" + strings.ReplaceAll(s, "\n", "\r\n") }
	if err := s.ed.SetText(s.ctx, path, crlf(messy)); err != nil {
		t.Fatal(err)
	}
	if edits := s.format(t, path); len(edits) != 1 {
		t.Fatalf("CRLF: %d edits, want one: %+v", len(edits), edits)
	}
	if text := s.ed.Text(path); text != crlf(got) {
		t.Errorf("CRLF buffer formatted as\n%q\nwant\n%q", text, crlf(got))
	}
	if edits := s.format(t, path); len(edits) != 0 {
		t.Errorf("CRLF: formatting twice changed the text again: %+v", edits)
	}

	// A comment in the SQL goes back where it stood.
	commented := config + "\n\nselect customer_id -- the key\nfrom ${ref(\"fct_orders\")}\n"
	if err := s.ed.SetText(s.ctx, path, commented); err != nil {
		t.Fatal(err)
	}
	s.format(t, path)
	if got, want := s.ed.Text(path), config+"\n\nSELECT\n  customer_id -- the key\nFROM\n  ${ref(\"fct_orders\")}\n"; got != want {
		t.Errorf("a part with a comment:\n%s\nwant\n%s", got, want)
	}

	// SQL GoogleSQL cannot parse: that part stays as written, and the
	// editor hears why.
	broken := config + "\n\nselect customer_id,, from ${ref(\"fct_orders\")}\n"
	if err := s.ed.SetText(s.ctx, path, broken); err != nil {
		t.Fatal(err)
	}
	s.format(t, path)
	if got := s.ed.Text(path); got != broken {
		t.Errorf("a part GoogleSQL cannot parse was changed:\n%s", got)
	}
	if err := s.ed.Await(s.ctx, "a message about the part left as written", func(st *fakeeditor.State) bool {
		for _, m := range st.Shown {
			if strings.Contains(m, "as written") && strings.Contains(m, "customer_orders_mv.sqlx") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
}
