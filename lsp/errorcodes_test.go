package lsp_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// A request about a file outside every project (or one that does not
// exist) is answered with a defined JSON-RPC error code, never 0: the
// params name nothing the server can answer about (InvalidParams).
func TestOutsideProjectErrorCodes(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(outside, "loose.sqlx")
	if err := os.WriteFile(loose, []byte("SELECT 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := "file://" + filepath.Join(outside, "missing.sqlx")
	doc := func(u string) map[string]any { return map[string]any{"uri": u} }
	pos := map[string]any{"line": 0, "character": 0}
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{"dfd/preview", map[string]any{"textDocument": doc("file://" + loose)}},
		{"dfd/graph", map[string]any{"uri": "file://" + outside}},
		{"dfd/refreshMetadata", map[string]any{"uri": "file://" + outside}},
		{"textDocument/hover", map[string]any{"textDocument": doc(missing), "position": pos}},
		{"textDocument/definition", map[string]any{"textDocument": doc(missing), "position": pos}},
		{"textDocument/completion", map[string]any{"textDocument": doc(missing), "position": pos}},
		{"textDocument/references", map[string]any{"textDocument": doc(missing), "position": pos, "context": map[string]any{"includeDeclaration": true}}},
		{"textDocument/documentSymbol", map[string]any{"textDocument": doc(missing)}},
		{"textDocument/codeLens", map[string]any{"textDocument": doc(missing)}},
	} {
		m := s.c.call(c.method, c.params)
		if m["error"] == nil {
			t.Errorf("%s: no error: %v", c.method, m)
			continue
		}
		if got := errCode(m); got != int(jsonrpc2.InvalidParams) {
			t.Errorf("%s: error code %d (%q), want InvalidParams (%d)", c.method, got, errMessage(m), jsonrpc2.InvalidParams)
		}
	}
	// A file outside every project that exists has nothing to offer:
	// an empty answer, not an error.
	if m := s.c.call("textDocument/hover", map[string]any{"textDocument": doc("file://" + loose), "position": pos}); m["error"] != nil {
		t.Errorf("hover outside a project: %v", m)
	}
}
