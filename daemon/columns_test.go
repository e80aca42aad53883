package daemon_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

func completionLabels(t *testing.T, s *session, path, marker string, delta int) []string {
	t.Helper()
	pos, err := s.ed.Pos(path, marker, delta)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ed.Server.Completion(s.ctx, &protocol.CompletionParams{TextDocumentPositionParams: tdpp(path, pos)})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.(*protocol.CompletionList)
	var out []string
	if list != nil {
		for _, i := range list.Items {
			out = append(out, i.Label)
		}
	}
	sort.Strings(out)
	return out
}

// Column names from the project's declarations: after an alias (explicit
// or the table's name) and in the clauses that name columns (SELECT,
// WHERE, GROUP BY, HAVING, QUALIFY, ORDER BY, JOIN … ON); not in FROM,
// LIMIT or comments.
func TestCompletionColumnsFromProject(t *testing.T) {
	s, root := shopSession(t)
	path := filepath.Join(root, "definitions", "cols.sqlx")
	text := "config {\n  type: \"view\",\n  \n}\nSELECT o.am, ord , raw_orders. FROM ${ref(\"raw_orders\")} AS o\nWHERE x. AND o.\n-- o.\n" +
		"GROUP BY  HAVING  QUALIFY  ORDER BY  LIMIT  \n"
	if err := s.ed.OpenText(s.ctx, path, text); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		marker string
		delta  int
		want   string
	}{
		{"o.am", 4, "amount_cents,order_id"},          // after an explicit alias (filtered by the client)
		{"ord ", 3, "amount_cents,order_id"},          // in the SELECT list
		{"raw_orders. ", 11, "amount_cents,order_id"}, // the table's own name
		{"AND o.", 6, "amount_cents,order_id"},        // alias outside the SELECT list
		{"WHERE ", 6, "amount_cents,order_id"},        // WHERE
		{"GROUP BY ", 9, "amount_cents,order_id"},     // GROUP BY
		{"HAVING ", 7, "amount_cents,order_id"},       // HAVING
		{"QUALIFY ", 8, "amount_cents,order_id"},      // QUALIFY
		{"ORDER BY ", 9, "amount_cents,order_id"},     // ORDER BY
		{"LIMIT ", 6, ""},                             // not a clause of columns
		{"FROM ", 5, ""},                              // nor FROM
		{"x.", 2, ""},                                 // unknown alias
		{"-- o.", 5, ""},                              // comment
	} {
		if got := strings.Join(completionLabels(t, s, path, c.marker, c.delta), ","); got != c.want {
			t.Errorf("completion at %q+%d: %q, want %q", c.marker, c.delta, got, c.want)
		}
	}
	if keys := completionLabels(t, s, path, "  \n}", 2); contains(keys, "order_id") {
		t.Errorf("columns in the config block: %v", keys)
	}
}

// snapshotProject declares a table of the clickstream snapshot and one the
// snapshot lacks; report.sqlx refs both.
func snapshotProject(t *testing.T) (root, snapshot string) {
	data, err := os.ReadFile(snapshotPath())
	if err != nil {
		t.Fatal(err)
	}
	snapshot = filepath.Join(t.TempDir(), "snapshot.json")
	if err := os.WriteFile(snapshot, data, 0o644); err != nil {
		t.Fatal(err)
	}
	root = testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: acme-collector\ndefaultDataset: clicks\ndefaultLocation: US\n",
		"definitions/sources.js": `declare({database: "acme-collector", schema: "landing", name: "raw_clicks", columns: {extra_col: "Described in the project."}});
declare({database: "acme-collector", schema: "landing", name: "later"});`,
		"definitions/report.sqlx": "config { type: \"view\" }\nSELECT c.  FROM ${ref(\"raw_clicks\")} c\nLEFT JOIN ${ref(\"later\")} ON TRUE\n",
	})
	return root, snapshot
}

// Columns also come from the metadata source.
func TestCompletionColumnsFromMetadata(t *testing.T) {
	root, snapshot := snapshotProject(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd.metadata.snapshot": snapshot})})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	path := filepath.Join(root, "definitions", "report.sqlx")
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	got := completionLabels(t, s, path, "c. ", 2)
	for _, want := range []string{"click_id", "visitor_id", "country", "page", "extra_col"} {
		if !contains(got, want) {
			t.Errorf("column completion lacks %s: %v", want, got)
		}
	}
	if contains(got, "page.url") {
		t.Errorf("nested columns offered: %v", got)
	}
}

// A ref to a declared table that the metadata source does not know gets a
// warning, cleared once the metadata knows the table.
func TestMissingTableWarning(t *testing.T) {
	root, snapshot := snapshotProject(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd.metadata.snapshot": snapshot})})
	s.init(t, root)
	path := filepath.Join(root, "definitions", "report.sqlx")
	ds := s.awaitDiags(t, path, "missing table warning", func(ds []protocol.Diagnostic) bool { return len(withoutSyntax(withoutSQLHints(ds))) > 0 })
	// The unfinished "SELECT c." (the column completion test's) is a
	// syntax error, and nothing else of the SQL check is about it.
	if syn := len(withoutSQLHints(ds)) - len(withoutSyntax(withoutSQLHints(ds))); syn != 1 {
		t.Errorf("%d syntax errors on the unfinished SELECT c., want 1: %q", syn, messages(ds))
	}
	ds = withoutSyntax(withoutSQLHints(ds))
	if len(ds) != 1 || ds[0].Severity != protocol.DiagnosticSeverityWarning || rangeText(t, path, ds[0].Range) != `ref("later")` ||
		!hasMessage(ds, "table acme-collector.landing.later does not exist in BigQuery (per metadata offline snapshot "+snapshot+")") {
		t.Fatalf("diagnostics: %q %+v", messages(ds), ds)
	}
	// The table appears in the snapshot: the next compile clears the warning.
	data, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"tables": [`, `"tables": [
    {"target": {"database": "acme-collector", "schema": "landing", "name": "later"}, "type": "TABLE", "fields": [{"name": "id", "primitive": "STRING"}]},`, 1))
	if err := os.WriteFile(snapshot, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Save(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, path, "no warning", func(ds []protocol.Diagnostic) bool {
		return ds != nil && len(withoutSyntax(withoutSQLHints(ds))) == 0
	})
}

// withoutSyntax leaves out GoogleSQL's syntax errors (code sql-syntax).
func withoutSyntax(ds []protocol.Diagnostic) []protocol.Diagnostic {
	var out []protocol.Diagnostic
	for _, d := range ds {
		if c, ok := d.Code.(protocol.String); ok && c == "sql-syntax" {
			continue
		}
		out = append(out, d)
	}
	return out
}

// A table written by name that the snapshot says does not exist, and that
// no action declares or creates, gets a warning at its name (a snapshot
// may be partial), as in dfd check; adding it to the snapshot clears it.
func TestHardCodedMissingTableWarning(t *testing.T) {
	root, snapshot := snapshotProject(t)
	path := filepath.Join(root, "definitions", "hard.sqlx")
	text := "config { type: \"view\" }\nSELECT country\nFROM `acme-collector.landing.nope`\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd.metadata.snapshot": snapshot})})
	s.init(t, root)
	ds := s.awaitDiags(t, path, "warning at the table's name", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	if len(ds) != 1 || ds[0].Severity != protocol.DiagnosticSeverityWarning ||
		fakeeditor.Message(ds[0]) != "Table not found: acme-collector.landing.nope (the metadata source says it does not exist; a snapshot may be partial)" ||
		!strings.HasPrefix(rangeText(t, path, ds[0].Range), "`acme-collector.landing.nope`") {
		t.Fatalf("diagnostics: %q %+v", messages(ds), ds)
	}
	data, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), `"tables": [`, `"tables": [
    {"target": {"database": "acme-collector", "schema": "landing", "name": "nope"}, "type": "TABLE", "fields": [{"name": "country", "primitive": "STRING"}]},`, 1))
	if err := os.WriteFile(snapshot, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Save(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, path, "no warning", func(ds []protocol.Diagnostic) bool { return ds != nil && len(ds) == 0 })
}
