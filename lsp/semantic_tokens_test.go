package lsp_test

import (
	"fmt"
	"strings"
	"testing"
)

// Semantic tokens are read-only: they leave the ordered chain once they
// have the text, yet each answer is for the text as of its place among
// the edits (a request after version k's didChange sees version k, never
// an older or a newer one) — under -race with edits and requests
// interleaved.
func TestSemanticTokensBesideEdits(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/a.sqlx"
	// Version k has k string tokens between SELECT and 1: 2+k tokens.
	text := func(k int) string { return "SELECT " + strings.Repeat("'s', ", k) + "1" }
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 0, "text": text(0)}})
	const versions = 40
	var answers []chan map[string]any
	for k := 0; k <= versions; k++ {
		if k > 0 {
			s.c.notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": u, "version": k},
				"contentChanges": []any{map[string]any{"text": text(k)}},
			})
		}
		method, params := "textDocument/semanticTokens/full", map[string]any{"textDocument": map[string]any{"uri": u}}
		if k%2 == 1 {
			method = "textDocument/semanticTokens/range"
			params["range"] = map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 1, "character": 0}}
		}
		answers = append(answers, s.c.send(0, method, params))
	}
	for k, ch := range answers {
		m := s.c.await(ch, fmt.Sprintf("semantic tokens of version %d", k))
		res, _ := m["result"].(map[string]any)
		data, ok := res["data"].([]any)
		if !ok {
			t.Fatalf("version %d: %v", k, m)
		}
		if want := 5 * (2 + k); len(data) != want {
			t.Errorf("version %d: %d numbers, want %d (the tokens of another version?)", k, len(data), want)
		}
	}
}
