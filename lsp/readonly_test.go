package lsp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Read-only requests leave the ordered handler chain once they have read
// their document and snapshot (lsp.Release in fileAt): a hover stuck in
// its backend (a metadata lookup waiting on I/O) does not hold up a hover
// on another file, document symbols, completion, a workspace symbol
// search, nor the edits and the preview that follow it.
func TestReadOnlyRequestsDoNotWaitForEachOther(t *testing.T) {
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	b := &fakeBackend{metadataGate: gate, metadataEntered: entered}
	s := startRaw(t, b, lspOptions())
	root := fakeProject(t, map[string]string{
		"definitions/slow.sqlx":  "SELECT 1",
		"definitions/a.sqlx":     "SELECT * FROM ${ref(\"slow\")}",
		"definitions/other.sqlx": "SELECT * FROM ${ref(\"a\")}",
	})
	s.initialize(t, root)
	a, other := "file://"+root+"/definitions/a.sqlx", "file://"+root+"/definitions/other.sqlx"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": a, "languageId": "sqlx", "version": 1, "text": "SELECT * FROM ${ref(\"slow\")}"}})
	if res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": a}}); res["error"] != nil {
		t.Fatal(res)
	}
	pos := func(u string, line, char int) map[string]any {
		return map[string]any{"textDocument": map[string]any{"uri": u}, "position": map[string]any{"line": line, "character": char}}
	}
	stuck := s.c.send(0, "textDocument/hover", pos(a, 0, 21)) // on ref("slow")
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the hover never asked for the table's metadata")
	}
	// While it waits, everything else is answered.
	after := []struct {
		method string
		params any
	}{
		{"textDocument/hover", pos(other, 0, 21)},
		{"textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": a}}},
		{"textDocument/completion", pos(other, 0, 20)},
		{"textDocument/definition", pos(other, 0, 21)},
		{"workspace/symbol", map[string]any{"query": "sl"}},
	}
	for _, r := range after {
		ch := s.c.send(0, r.method, r.params)
		select {
		case m := <-ch:
			if m["error"] != nil {
				t.Errorf("%s: %v", r.method, m["error"])
			}
		case <-time.After(20 * time.Second):
			close(gate)
			t.Fatalf("%s waited for a hover stuck in its backend", r.method)
		}
	}
	s.c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": a, "version": 2},
		"contentChanges": []any{map[string]any{"text": "SELECT 2 FROM ${ref(\"slow\")}"}},
	})
	ch := s.c.send(0, "dfd/preview", map[string]any{"textDocument": map[string]any{"uri": a}})
	select {
	case m := <-ch:
		if q := fmt.Sprint(m["result"]); !strings.Contains(q, "SELECT 2") {
			t.Errorf("preview after the edit: %v", m)
		}
	case <-time.After(20 * time.Second):
		close(gate)
		t.Fatal("an edit and a preview waited for a hover stuck in its backend")
	}
	close(gate)
	if m := s.c.await(stuck, "the stuck hover"); m["error"] != nil {
		t.Errorf("stuck hover: %v", m["error"])
	}
}
