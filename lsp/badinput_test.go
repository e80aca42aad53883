package lsp_test

import (
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// The daemon is a sidecar: no input may take it down. After each bad
// message a good request must still be answered.
func TestBadMessages(t *testing.T) {
	opts := lspOptions()
	opts.MaxMessageBytes = 1 << 20
	s := startRaw(t, &fakeBackend{}, opts)
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	alive := func(step string) {
		t.Helper()
		res := s.c.call("workspace/symbol", map[string]any{"query": ""})
		if res["error"] != nil {
			t.Fatalf("after %s: workspace/symbol failed: %v", step, res)
		}
	}

	nulls := 0
	expectNull := func(step string, code jsonrpc2.Code) {
		t.Helper()
		nulls++
		m := s.c.awaitNull(nulls)
		if errCode(m) != int(code) {
			t.Errorf("%s: answered %v, want error %d", step, m, code)
		}
		alive(step)
	}

	s.c.writeFrame([]byte(`{"jsonrpc":"2.0","id":1,"method":`))
	expectNull("truncated JSON", jsonrpc2.ParseError)

	s.c.writeFrame([]byte(`not json at all`))
	expectNull("not JSON", jsonrpc2.ParseError)

	s.c.writeFrame([]byte(`[{"jsonrpc":"2.0","id":3,"method":"workspace/symbol","params":{"query":""}}]`))
	expectNull("batch", jsonrpc2.InvalidRequest)

	s.c.writeFrame([]byte(`{"jsonrpc":"2.0","method":"x","id":{}}`))
	expectNull("object id", jsonrpc2.InvalidRequest)

	// An invalid request whose id can be read is answered with that id.
	if m := s.c.callRaw(7, `{"jsonrpc":"2.0","id":7,"method":5}`); errCode(m) != int(jsonrpc2.InvalidRequest) {
		t.Errorf("numeric method: %v", m)
	}
	alive("numeric method")

	if m := s.c.call("dfd/noSuchMethod", map[string]any{}); errCode(m) != int(jsonrpc2.MethodNotFound) {
		t.Errorf("unknown method: %v", m)
	}
	s.c.notify("$/unknownNotification", map[string]any{"x": 1})
	s.c.notify("textDocument/didChange", map[string]any{"textDocument": 5})
	alive("unknown and malformed notifications")

	for _, params := range []string{
		`{"textDocument":{"uri":"file:///a.sqlx"},"position":{"line":"zero","character":0}}`,
		`{"textDocument":5,"position":{}}`,
		`[1,2,3]`,
		`"hover"`,
	} {
		m := s.c.callRaw(50, fmt.Sprintf(`{"jsonrpc":"2.0","id":50,"method":"textDocument/hover","params":%s}`, params))
		if errCode(m) != int(jsonrpc2.InvalidParams) {
			t.Errorf("hover with params %s: %v, want InvalidParams", params, m)
		}
	}
	if m := s.c.call("dfd/preview", map[string]any{"textDocument": 3}); errCode(m) != int(jsonrpc2.InvalidParams) {
		t.Errorf("dfd/preview with bad params: %v", m)
	}
	alive("wrong parameter types")

	// A message over the limit is skipped without reading it into memory.
	huge := `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///h.sqlx","languageId":"sqlx","version":1,"text":"` +
		strings.Repeat("x", 2<<20) + `"}}}`
	s.c.writeFrame([]byte(huge))
	expectNull("huge message", jsonrpc2.InvalidRequest)

	// Broken framing: a header line without a colon, then a bad length.
	s.c.writeRaw([]byte("Content-Type utf8\r\n\r\n"))
	expectNull("header without colon", jsonrpc2.ParseError)
	s.c.writeRaw([]byte("Content-Length: -5\r\n\r\n"))
	expectNull("negative length", jsonrpc2.ParseError)
	s.c.writeRaw([]byte(strings.Repeat("x", 1<<20) + "\r\n\r\n"))
	expectNull("a megabyte-long header line", jsonrpc2.ParseError)
}

// Positions past the end of a line or file are clamped, not errors.
func TestPositionsBeyondEnd(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "config { type: \"view\" }\nSELECT 1"})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/a.sqlx"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": "config { type: \"view\" }\nSELECT 1"}})
	for _, m := range []string{"textDocument/hover", "textDocument/definition", "textDocument/completion", "textDocument/references"} {
		for _, pos := range []map[string]any{{"line": 1, "character": 999}, {"line": 999, "character": 0}, {"line": 4294967295, "character": 4294967295}} {
			params := map[string]any{"textDocument": map[string]any{"uri": u}, "position": pos, "context": map[string]any{"includeDeclaration": true}}
			if res := s.c.call(m, params); res["error"] != nil {
				t.Errorf("%s at %v: %v", m, pos, res["error"])
			}
		}
	}
	// An edit whose range lies beyond the end appends.
	s.c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": u, "version": 2}, "contentChanges": []any{
		map[string]any{"range": map[string]any{"start": map[string]any{"line": 50, "character": 3}, "end": map[string]any{"line": 60, "character": 0}}, "text": " -- tail"},
	}})
	res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}})
	if res["error"] != nil {
		t.Fatalf("preview: %v", res)
	}
	if q := res["result"].(map[string]any)["actions"].([]any)[0].(map[string]any)["sql"].(map[string]any)["query"]; q != "config { type: \"view\" }\nSELECT 1 -- tail" {
		t.Errorf("after an edit past the end the text is %q", q)
	}
}
