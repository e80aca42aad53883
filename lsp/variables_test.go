package lsp_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/workspace"
)

// Hover and go-to-definition on a variable the pre_operations DECLARE: its
// declaration; a column of the same name in a ref'd table is not taken
// for it (BigQuery resolves the name to the column).
func TestPreOperationsVariables(t *testing.T) {
	b := &fakeBackend{tables: map[string]*workspace.TableInfo{
		"events": {Source: "fake", Columns: []workspace.Column{{Name: "user_id", Type: "STRING"}, {Name: "ts", Type: "TIMESTAMP"}}},
	}}
	text := "config { type: \"incremental\" }\n" +
		"pre_operations {\n" +
		"  DECLARE since TIMESTAMP DEFAULT TIMESTAMP(\"2000-01-01\");\n" +
		"  DECLARE user_id STRING;\n" +
		"}\n" +
		"SELECT user_id, ts FROM ${ref(\"events\")}\nWHERE ts > since\n"
	root := fakeProject(t, map[string]string{"definitions/events.sqlx": "SELECT 1", "definitions/v.sqlx": text})
	s := startRaw(t, b, lspOptions())
	s.initialize(t, root)
	uri := "file://" + filepath.Join(root, "definitions", "v.sqlx")
	if res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": uri}}); res["error"] != nil {
		t.Fatal(res)
	}
	at := func(word string, nth int) map[string]any {
		off := -1
		for i := 0; i <= nth; i++ {
			off += 1 + strings.Index(text[off+1:], word)
		}
		line := strings.Count(text[:off], "\n")
		return map[string]any{"line": line, "character": off - (strings.LastIndexByte(text[:off], '\n') + 1) + 1}
	}
	req := func(method string, pos map[string]any) map[string]any {
		m := s.c.call(method, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos})
		if m["error"] != nil {
			t.Fatalf("%s: %v", method, m["error"])
		}
		return m
	}
	// since, used in WHERE (its second mention).
	h := req("textDocument/hover", at("since", 1))
	if got := fmt.Sprint(h["result"]); !strings.Contains(got, "since**: variable DECLAREd in `pre_operations` · `TIMESTAMP`") {
		t.Errorf("hover on since: %s", got)
	}
	d := req("textDocument/definition", at("since", 1))
	locs, _ := d["result"].([]any)
	if len(locs) != 1 || fmt.Sprint(locs[0].(map[string]any)["range"].(map[string]any)["start"]) != "map[character:10 line:2]" {
		t.Errorf("definition of since: %v, want the DECLARE on line 3", d["result"])
	}
	// user_id in the SELECT is events' column, not the variable.
	if h := req("textDocument/hover", at("user_id", 1)); strings.Contains(fmt.Sprint(h["result"]), "variable") {
		t.Errorf("hover on the column user_id: %v", h["result"])
	}
	if d := req("textDocument/definition", at("user_id", 1)); d["result"] != nil {
		t.Errorf("definition of the column user_id: %v", d["result"])
	}
}
