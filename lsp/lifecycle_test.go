package lsp_test

import (
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

func TestRequestsBeforeInitialize(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	res := s.c.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///x.sqlx"}, "position": map[string]any{"line": 0, "character": 0}})
	if errCode(res) != int(jsonrpc2.ServerNotInitialized) {
		t.Fatalf("hover before initialize: %v, want ServerNotInitialized (-32002)", res)
	}
	// Notifications before initialize are dropped, not fatal.
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///x.sqlx", "languageId": "sqlx", "version": 1, "text": ""}})
	s.initialize(t, "")
	if res := s.c.call("initialize", map[string]any{"capabilities": map[string]any{}}); errCode(res) != int(jsonrpc2.InvalidRequest) {
		t.Errorf("second initialize: %v, want InvalidRequest", res)
	}
}

func TestShutdownExit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		shutdown bool
		want     int
	}{{"shutdown then exit", true, 0}, {"exit without shutdown", false, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := startRaw(t, &fakeBackend{}, lspOptions())
			s.initialize(t, fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"}))
			if tc.shutdown {
				if res := s.c.call("shutdown", nil); res["error"] != nil {
					t.Fatalf("shutdown: %v", res)
				}
				// Requests after shutdown are errors; the server stays up.
				if res := s.c.call("workspace/symbol", map[string]any{"query": ""}); errCode(res) != int(jsonrpc2.InvalidRequest) {
					t.Errorf("request after shutdown: %v, want InvalidRequest", res)
				}
			}
			s.c.notify("exit", nil)
			select {
			case code := <-s.done:
				s.done <- code // for the cleanup
				if code != tc.want {
					t.Errorf("exit code %d, want %d", code, tc.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the server did not exit")
			}
		})
	}
}

func TestExitsWhenStdinCloses(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	s.initialize(t, fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"}))
	_ = s.c.conn.Close()
	select {
	case code := <-s.done:
		s.done <- code
		if code != 1 {
			t.Errorf("exit code %d after the client vanished, want 1", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop when its input closed")
	}
}

var _ = protocol.MethodExit
