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

// A wrong Content-Length, garbage between messages or a broken header
// line puts the reader out of step; it must find its place again at the
// next Content-Length header, so that the requests after the bad input
// are answered. Each case is followed by two good requests (ids 21 and
// 22), written together with it and, separately, one write each (the
// reader then waits for input in the middle of a resync).
func TestResynchronisesAfterBadFraming(t *testing.T) {
	frame := func(body string, delta int) string {
		return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)+delta, body)
	}
	symbols := func(id int, query string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"workspace/symbol","params":{"query":%q}}`, id, query)
	}
	m9 := symbols(9, "")
	good1, good2 := frame(symbols(21, ""), 0), frame(symbols(22, ""), 0)
	for _, tc := range []struct {
		name string
		bad  string
		// swallows is set when bad's declared length takes in good1's
		// header, so good1 must be written with it.
		swallows bool
		answered bool            // the request with id 9 in bad is answered
		errs     []jsonrpc2.Code // answers without id, in order
	}{
		{name: "length too short by 1", bad: frame(m9, -1), errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "length too short by 10", bad: frame(m9, -10), errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "length too long by 1", bad: frame(m9, 1), answered: true},
		{name: "length too long by 14", bad: frame(m9, 14), answered: true},
		{name: "length too long by a whole message", bad: frame(m9, len(good1)), swallows: true, answered: true},
		{name: "too short, then too long", bad: frame(m9, -1) + frame(m9, 1), answered: true, errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "garbage bytes between messages", bad: frame(m9, 0) + "\x00\xff}{garbage", answered: true, errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "letters running into the next header", bad: frame(m9, 0) + "garbage", answered: true, errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "garbage then a lower-case header", bad: "\x01\x02" + strings.ToLower(frame(m9, 0)), answered: true, errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "header line without colon", bad: "Content-Type utf8\r\n" + frame(m9, 0), answered: true, errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "Content-Length not a number", bad: "Content-Length: 12abc\r\n\r\n" + frame(m9, 0), answered: true, errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "body not JSON", bad: frame("not json at all", 0), errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "valid JSON, not JSON-RPC", bad: frame(`{"hello":"world"}`, 0), errs: []jsonrpc2.Code{jsonrpc2.InvalidRequest}},
		{name: "a too-long body mentioning Content-Length", bad: frame(symbols(9, "Content-Length: 5"), 1), errs: []jsonrpc2.Code{jsonrpc2.ParseError}},
		{name: "CRLF header", bad: frame(m9, 0), answered: true},
		{name: "LF header", bad: fmt.Sprintf("Content-Length: %d\n\n%s", len(m9), m9), answered: true},
		{name: "mixed CRLF and LF header", bad: fmt.Sprintf("Content-Length: %d\r\n\n%s", len(m9), m9), answered: true},
		{name: "Content-Type before Content-Length", bad: "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(m9, 0), answered: true},
	} {
		for _, split := range []bool{false, true} {
			name := tc.name + "/one write"
			if split {
				name = tc.name + "/separate writes"
			}
			t.Run(name, func(t *testing.T) {
				s := startRaw(t, &fakeBackend{}, lspOptions())
				s.initialize(t, fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"}))
				r9, r21, r22 := s.c.expect(9), s.c.expect(21), s.c.expect(22)
				switch {
				case !split:
					s.c.writeRaw([]byte(tc.bad + good1 + good2))
				case tc.swallows:
					s.c.writeRaw([]byte(tc.bad + good1))
					s.c.writeRaw([]byte(good2))
				default:
					s.c.writeRaw([]byte(tc.bad))
					s.c.writeRaw([]byte(good1))
					s.c.writeRaw([]byte(good2))
				}
				for id, ch := range map[int]chan map[string]any{21: r21, 22: r22} {
					if m := s.c.await(ch, fmt.Sprintf("request %d", id)); m["error"] != nil {
						t.Errorf("request %d: %v", id, m)
					}
				}
				// Errors for the bad input were written before the answers
				// to what follows it.
				nulls := s.c.nulls()
				if len(nulls) != len(tc.errs) {
					t.Errorf("%d answers without id, want %d: %v", len(nulls), len(tc.errs), nulls)
				}
				for i := range min(len(nulls), len(tc.errs)) {
					if errCode(nulls[i]) != int(tc.errs[i]) {
						t.Errorf("answer without id %d: %v, want error %d", i, nulls[i], tc.errs[i])
					}
				}
				if tc.answered {
					if m := s.c.await(r9, "request 9"); m["error"] != nil {
						t.Errorf("request 9: %v", m)
					}
				} else {
					select {
					case m := <-r9:
						t.Errorf("request 9 in the bad input was answered: %v", m)
					default:
					}
				}
			})
		}
	}
}
