package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Document links and folding ranges (issue 15 item 4) through the fake
// editor against the real server on a fixture project.

func TestDocumentLinks(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	path := filepath.Join(root, "definitions", "marts", "linked.sqlx")
	text := "config { type: \"view\" }\n" +
		"js {\n  const c = require(\"includes/constants\");\n}\n" +
		"SELECT *\nFROM ${ref(\"dim_customers\")}\n" +
		"JOIN ${ref(\"shop\", \"stg_orders\")} USING (customer_id)\n" +
		"JOIN ${ref(\"no_such_action\")} USING (customer_id)\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{})
	s.init(t, root)
	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "")
	var links []struct {
		Range   protocol.Range `json:"range"`
		Target  string         `json:"target"`
		Tooltip string         `json:"tooltip"`
	}
	if err := s.ed.Call(s.ctx, protocol.MethodTextDocumentDocumentLink, map[string]any{"textDocument": map[string]any{"uri": uri.File(path)}}, &links); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{} // linked text → root-relative target
	for _, l := range links {
		rel, err := filepath.Rel(root, uri.URI(l.Target).FsPath())
		if err != nil {
			t.Fatal(err)
		}
		got[rangeTextOf(text, l.Range)] = filepath.ToSlash(rel)
	}
	want := map[string]string{
		"includes/constants": "includes/constants.js",
		"dim_customers":      "definitions/marts/dim_customers.sqlx",
		"stg_orders":         "definitions/staging/stg_orders.sqlx", // ref("schema", "name")
		// no_such_action names no action: no link.
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("document links (-want +got):\n%s", diff)
	}
	for _, l := range links {
		if rangeTextOf(text, l.Range) == "dim_customers" && !strings.Contains(l.Tooltip, "dim_customers.sqlx") {
			t.Errorf("tooltip %q does not say where the action is defined", l.Tooltip)
		}
	}
}

func TestFoldingRanges(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	folds := func(rel string) (json.RawMessage, []protocol.FoldingRange) {
		t.Helper()
		var raw json.RawMessage
		if err := s.ed.Call(s.ctx, protocol.MethodTextDocumentFoldingRange, map[string]any{"textDocument": map[string]any{"uri": uri.File(filepath.Join(root, rel))}}, &raw); err != nil {
			t.Fatal(err)
		}
		var out []protocol.FoldingRange
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return raw, out
	}
	b, err := os.ReadFile(filepath.Join(root, "definitions", "marts", "fct_orders.sqlx"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lineOf := func(prefix string, from int) int {
		for i := from; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], prefix) {
				return i
			}
		}
		t.Fatalf("no line %q in fct_orders.sqlx", prefix)
		return -1
	}
	// Each block from its keyword to the line before its closing brace;
	// the top-level SELECT's indented column list.
	var want [][2]int
	for _, kw := range []string{"config {", "pre_operations {", "post_operations {"} {
		start := lineOf(kw, 0)
		want = append(want, [2]int{start, lineOf("}", start) - 1})
	}
	sel := lineOf("SELECT", 0)
	want = append(want, [2]int{sel, lineOf("FROM ", sel) - 1})
	_, got := folds("definitions/marts/fct_orders.sqlx")
	have := map[[2]int]bool{}
	for _, r := range got {
		if r.StartLine >= r.EndLine || int(r.EndLine) >= len(lines) {
			t.Errorf("invalid folding range %+v", r)
		}
		have[[2]int{int(r.StartLine), int(r.EndLine)}] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no folding range %d-%d (%q); got %+v", w[0], w[1], lines[w[0]], got)
		}
	}
	// The config's nested bigquery: {…} is folded with the block, not on
	// its own by indentation.
	if bq := lineOf("  bigquery: {", 0); have[[2]int{bq, lineOf("  },", bq) - 1}] {
		t.Errorf("a range inside the config block: %+v", got)
	}
	// JavaScript is left to the editor's own JavaScript folding.
	if raw, got := folds("includes/sql.js"); len(got) != 0 {
		t.Errorf("folding ranges of a .js file: %s, want none", raw)
	}
}
