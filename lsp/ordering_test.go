package lsp_test

import (
	"fmt"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// Text sync must be applied in order: 500 incremental edits sent back to
// back (each depends on the previous one) must produce exactly the text
// an editor has, and a dfd/preview sent right after them must see it.
func TestDidChangeOrdering(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": ""})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/a.sqlx"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": ""}})
	var want strings.Builder
	for i := 0; i < 500; i++ {
		// Append at the current end: only correct if applied in order.
		line := strings.Count(want.String(), "\n")
		text := fmt.Sprintf("-- edit %d\n", i)
		s.c.notify("textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": u, "version": i + 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{
				"start": map[string]any{"line": line, "character": 0}, "end": map[string]any{"line": line, "character": 0}}, "text": text}},
		})
		want.WriteString(text)
	}
	res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}})
	if res["error"] != nil {
		t.Fatalf("preview: %v", res)
	}
	got := res["result"].(map[string]any)["actions"].([]any)[0].(map[string]any)["sql"].(map[string]any)["query"]
	if got != want.String() {
		t.Fatalf("compiled text differs from the editor's after 500 edits:\n got %.200q\nwant %.200q", got, want.String())
	}
}

// A handler that panics answers with an internal error; the daemon lives.
func TestPanicsAreRecovered(t *testing.T) {
	b := &fakeBackend{panicMetadata: true}
	s := startRaw(t, b, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1", "definitions/b.sqlx": "SELECT * FROM ${ref(\"a\")}"})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/b.sqlx"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": "SELECT * FROM ${ref(\"a\")}"}})
	if res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}}); res["error"] != nil {
		t.Fatal(res)
	}
	res := s.c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": u}, "position": map[string]any{"line": 0, "character": 21}})
	if errCode(res) != int(jsonrpc2.InternalError) || !strings.Contains(errMessage(res), "internal error") {
		t.Fatalf("hover whose backend panics: %v, want an internal error", res)
	}
	// A compile that panics becomes a diagnostic.
	b.mu.Lock()
	b.panicCompile, b.panicMetadata = true, false
	b.mu.Unlock()
	s.c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
	s.c.awaitNote("diagnostic for the panicking compile", func(m map[string]any) bool {
		return m["method"] == protocol.MethodTextDocumentPublishDiagnostics && strings.Contains(fmt.Sprint(m["params"]), "internal error")
	})
	st := s.c.call("dfd/status", nil)
	// The didOpen's compile may still be queued when the compiler starts
	// panicking, so the save can meet one or two panicking compiles; each
	// is one violation, as is the hover's.
	b.mu.Lock()
	want := 1 + b.compilePanics
	b.mu.Unlock()
	if v := st["result"].(map[string]any)["invariantViolations"].(float64); int(v) != want {
		t.Errorf("invariantViolations = %v, want %d (the hover and %d panicking compiles)", v, want, want-1)
	}
}

// $/cancelRequest cancels a request that waits for a compile.
func TestCancelRequest(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{}, 1)
	b := &fakeBackend{compileGate: gate, compileStart: started}
	s := startRaw(t, b, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	<-started // the first compile is blocked
	u := "file://" + root + "/definitions/a.sqlx"
	ch := s.c.send(900, "dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}})
	// The preview waits; later messages are still served (it released its turn).
	if res := s.c.call("workspace/symbol", map[string]any{"query": ""}); res["error"] != nil {
		t.Fatal(res)
	}
	s.c.notify("$/cancelRequest", map[string]any{"id": 900})
	res := <-ch
	if errCode(res) != int(protocol.CodeRequestCancelled) {
		t.Fatalf("cancelled preview answered %v, want RequestCancelled", res)
	}
	close(gate)
	// A malformed cancel must not hurt.
	s.c.notify("$/cancelRequest", map[string]any{"id": map[string]any{}})
	if res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}}); res["error"] != nil {
		t.Fatal(res)
	}
}

// Diagnostics are published when they change, and only then.
func TestDiagnosticsPublishedOnChange(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/a.sqlx"
	publications := func() int {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		n := 0
		for _, m := range s.c.notes {
			if m["method"] == protocol.MethodTextDocumentPublishDiagnostics && strings.Contains(fmt.Sprint(m["params"]), u) {
				n++
			}
		}
		return n
	}
	compiles := func() int {
		s.c.mu.Lock()
		defer s.c.mu.Unlock()
		n := 0
		for _, m := range s.c.notes {
			if m["method"] == "dfd/previewChanged" {
				n++
			}
		}
		return n
	}
	awaitCompiles := func(n int) {
		s.c.awaitNote("compile", func(map[string]any) bool { return compiles() >= n })
	}
	open := func(text string, v int) {
		s.c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": u, "version": v},
			"contentChanges": []any{map[string]any{"text": text}}})
		s.c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
	}
	awaitCompiles(1)
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": "SELECT 1"}})
	open("SELECT BROKEN", 2)
	s.c.awaitNote("broken", func(m map[string]any) bool {
		return m["method"] == protocol.MethodTextDocumentPublishDiagnostics && strings.Contains(fmt.Sprint(m["params"]), "broken here")
	})
	if n := publications(); n != 1 {
		t.Fatalf("%d publications after the first error, want 1", n)
	}
	c := compiles()
	open("SELECT BROKEN -- more text", 3) // same diagnostic, other text: nothing new to publish
	awaitCompiles(c + 1)
	if n := publications(); n != 1 {
		t.Errorf("%d publications after an edit that kept the same diagnostic, want 1", n)
	}
	open("SELECT 2", 4)
	s.c.awaitNote("cleared", func(m map[string]any) bool {
		return m["method"] == protocol.MethodTextDocumentPublishDiagnostics && strings.Contains(fmt.Sprint(m["params"]), "diagnostics:[]")
	})
	if n := publications(); n != 2 {
		t.Errorf("%d publications after the fix, want 2", n)
	}
}

// An edit during a compile cancels it (it is superseded); the next compile
// has the latest text, and a preview waits for that one.
func TestSupersededCompileIsCancelled(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{}, 16)
	b := &fakeBackend{compileGate: gate, compileStart: started}
	s := startRaw(t, b, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	<-started // the first compile is held
	u := "file://" + root + "/definitions/a.sqlx"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": "SELECT 2"}})
	<-started // the open superseded the first compile; the second is held
	s.c.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
	<-started
	b.mu.Lock()
	cancelled := b.cancelled
	b.compileGate = nil
	b.mu.Unlock()
	if cancelled != 2 {
		t.Errorf("%d compiles cancelled, want 2", cancelled)
	}
	close(gate)
	res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}})
	if q := res["result"].(map[string]any)["actions"].([]any)[0].(map[string]any)["sql"].(map[string]any)["query"]; q != "SELECT 2" {
		t.Errorf("preview after superseded compiles: %v", q)
	}
}

// Every publication about an open buffer says which version it is about,
// the one that clears a fixed file too (a client comparing versions kept
// the old errors when it came without one).
func TestClearingPublicationHasTheVersion(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/a.sqlx"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": "SELECT 1"}})
	change := func(text string, v int) {
		s.c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": u, "version": v},
			"contentChanges": []any{map[string]any{"text": text}}})
	}
	publication := func(what string, broken bool) map[string]any {
		m := s.c.awaitNote(what, func(m map[string]any) bool {
			if m["method"] != protocol.MethodTextDocumentPublishDiagnostics {
				return false
			}
			p := m["params"].(map[string]any)
			return p["uri"] == u && (len(p["diagnostics"].([]any)) > 0) == broken
		})
		return m["params"].(map[string]any)
	}
	change("SELECT BROKEN", 2)
	if p := publication("the error", true); p["version"] != float64(2) {
		t.Errorf("the error was published with version %v, want 2", p["version"])
	}
	change("SELECT 2", 3)
	if p := publication("the clearing", false); p["version"] != float64(3) {
		t.Errorf("the clearing was published with version %v, want 3", p["version"])
	}
}
