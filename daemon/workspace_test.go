package daemon_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/lsp"
)

// A file renamed in a terminal: its diagnostics move with it, the graph
// follows.
func TestRenameOutsideEditor(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	s.awaitPreviewChanged(t, 0, "/shop")
	st := s.ed.Snapshot()
	if len(st.Registrations) != 1 || st.Registrations[0].Method != "workspace/didChangeWatchedFiles" ||
		!strings.Contains(string(st.Registrations[0].RegisterOptions), "**/*.{js,sql,sqlx,yaml,yml,json,ipynb}") {
		t.Errorf("file watching registrations: %+v", st.Registrations)
	}
	oldPath := filepath.Join(ws, "shop", "definitions", "big_orders.sqlx")
	newPath := filepath.Join(ws, "shop", "definitions", "reports", "huge_orders.sqlx")

	// Break the file on disk (a generator, a git checkout).
	if err := os.WriteFile(oldPath, []byte("config { type: \"view\" }\nSELECT * FROM ${ref(\"missing_table\")}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Watched(s.ctx, fakeeditor.FileEvent{Path: oldPath, Type: protocol.FileChangeTypeChanged}); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, oldPath, "error before the rename", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "missing_table") })

	if err := os.MkdirAll(filepath.Dir(newPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(oldPath, newPath); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Watched(s.ctx,
		fakeeditor.FileEvent{Path: oldPath, Type: protocol.FileChangeTypeDeleted},
		fakeeditor.FileEvent{Path: newPath, Type: protocol.FileChangeTypeCreated}); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, newPath, "error after the rename", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "missing_table") })
	s.awaitDiags(t, oldPath, "old file cleared", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })

	var g lsp.GraphResult
	if err := s.ed.Call(s.ctx, lsp.MethodGraph, map[string]any{"uri": uri.File(filepath.Join(ws, "shop"))}, &g); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range g.Projects[0].Actions {
		names = append(names, a.Target.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "huge_orders,order_stats,orders,raw_orders" {
		t.Errorf("actions after the rename: %v", names)
	}
}

// A file deleted on disk while open keeps compiling from its buffer; once
// closed it is gone, and whoever depended on it gets an error.
func TestFileDeletedWhileOpen(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	orders := filepath.Join(ws, "shop", "definitions", "orders.sqlx")
	stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
	if err := s.ed.Open(s.ctx, orders); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "/shop")
	if err := os.Remove(orders); err != nil {
		t.Fatal(err)
	}
	mark := s.previewChanges()
	if err := s.ed.Watched(s.ctx, fakeeditor.FileEvent{Path: orders, Type: protocol.FileChangeTypeDeleted}); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, mark, "/shop")
	res := s.preview(t, orders)
	if len(res.Actions) != 1 || res.Actions[0].Target.Name != "orders" {
		t.Fatalf("preview of a deleted but open file: %+v", res)
	}
	if st := s.ed.Snapshot(); len(st.Diagnostics[uri.File(stats)]) != 0 {
		t.Errorf("dependents broke while the buffer is open: %v", messages(st.Diagnostics[uri.File(stats)]))
	}
	// Requests on the vanished file still work (from the buffer).
	pos, _ := s.ed.Pos(orders, `ref("raw_orders")`, 6)
	if _, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(orders)}, Position: pos}}); err != nil {
		t.Errorf("hover on a deleted open file: %v", err)
	}
	if err := s.ed.CloseFile(s.ctx, orders); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, stats, "dependent broken", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "orders") })
	// Requests on the closed, deleted file fail cleanly.
	if _, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(orders)}, Position: pos}}); err == nil {
		t.Errorf("hover on a file that no longer exists succeeded")
	}
}

// Several projects in one workspace (side by side and nested) stay
// separate: compiles, references, diagnostics, symbols.
func TestTwoProjects(t *testing.T) {
	ws := txtarWorkspace(t, "monorepo.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	for _, p := range []string{"/analytics", "/marketing", "/experiments"} {
		s.awaitPreviewChanged(t, 0, p)
	}
	var g lsp.GraphResult
	if err := s.ed.Call(s.ctx, lsp.MethodGraph, nil, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Projects) != 3 {
		t.Fatalf("%d projects, want 3: %+v", len(g.Projects), g)
	}
	for _, p := range g.Projects {
		if p.Error != "" || len(p.Actions) == 0 {
			t.Errorf("project %s: %+v", p.Root, p)
		}
	}

	clicks := filepath.Join(ws, "marketing", "definitions", "clicks.sqlx")
	if err := s.ed.Open(s.ctx, clicks); err != nil {
		t.Fatal(err)
	}
	pos, _ := s.ed.Pos(clicks, `ref("events")`, 6)
	def, err := s.ed.Server.Definition(s.ctx, &protocol.DefinitionParams{TextDocumentPositionParams: protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(clicks)}, Position: pos}})
	if err != nil {
		t.Fatal(err)
	}
	locs, _ := def.(protocol.LocationSlice)
	if len(locs) != 1 || locs[0].URI != uri.File(filepath.Join(ws, "marketing", "definitions", "events.sqlx")) {
		t.Errorf("definition of events from marketing: %+v", def)
	}

	// A mistake in one project is reported there only.
	daily := filepath.Join(ws, "analytics", "definitions", "daily.sqlx")
	if err := s.ed.Open(s.ctx, daily); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Replace(s.ctx, daily, `ref("events")`, `ref("campaigns")`); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, daily, "analytics error", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "campaigns") })
	if st := s.ed.Snapshot(); len(st.Diagnostics[uri.File(clicks)]) != 0 {
		t.Errorf("marketing got analytics' diagnostics")
	}

	syms, err := s.ed.Server.Symbols(s.ctx, &protocol.WorkspaceSymbolParams{Query: "events"})
	if err != nil {
		t.Fatal(err)
	}
	if si, _ := syms.(protocol.SymbolInformationSlice); len(si) != 2 {
		t.Errorf("workspace symbols for events: %+v", syms)
	}

	// Removing the analytics folder's projects clears their diagnostics.
	mark := s.previewChanges()
	if err := s.ed.Server.DidChangeWorkspaceFolders(s.ctx, &protocol.DidChangeWorkspaceFoldersParams{Event: protocol.WorkspaceFoldersChangeEvent{
		Removed: []protocol.WorkspaceFolder{{URI: uri.File(ws), Name: "ws"}},
		Added:   []protocol.WorkspaceFolder{{URI: uri.File(filepath.Join(ws, "marketing")), Name: "marketing"}},
	}}); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, daily, "cleared with its folder", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
	_ = mark
	if err := s.ed.Call(s.ctx, lsp.MethodGraph, nil, &g); err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, p := range g.Projects {
		roots = append(roots, filepath.Base(uriPath(p.Root)))
	}
	// analytics/daily.sqlx is still open: its project comes back on demand
	// only when a request needs it, so only marketing must remain.
	if !contains(roots, "marketing") || contains(roots, "experiments") {
		t.Errorf("projects after the folder change: %v", roots)
	}
}

func uriPath(u uri.URI) string { return strings.TrimPrefix(string(u), "file://") }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
