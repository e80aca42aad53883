package daemon_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Every intended error of the compile_errors fixture lands on its file, on
// the line of the mistake and on the token the message is about.
func TestCompileErrorPositions(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("compile_errors"), testenv.CoreVersion)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	want := []struct {
		file    string
		line    int    // 1-based
		text    string // what the range covers (prefix)
		message string
	}{
		{"definitions/broken/churned_accounts.sqlx", 5, "SELECT account_id", "Unexpected identifier"},
		{"definitions/broken/dunning_schedule.js", 5, ";", "Unexpected token ;"},
		{"definitions/broken/plan_changes.sqlx", 4, "descripton", `Unexpected property "descripton"`},
		{"definitions/broken/tax_rates.js", 7, "new Error", "No VAT rate configured for: XX"},
		{"definitions/broken/usage_daily.sqlx", 4, "bigquery", `Unexpected property "bigquery"`},
		// Core also reports it as "Missing dependency detected": said once.
		{"definitions/broken/revenue_by_region.sqlx", 8, "account_regions", `Could not resolve "account_regions"`},
		{"definitions/broken/invoices.sqlx", 1, "config", "Duplicate action name detected"},
		{"definitions/ok/invoices.js", 2, "invoices", "Duplicate canonical target detected"},
		// A cycle is on every file of it.
		{"definitions/broken/account_health.sqlx", 7, "account_scores", "Circular dependency detected"},
		{"definitions/broken/account_scores.sqlx", 6, "account_health", "Circular dependency detected"},
	}
	st := s.ed.Snapshot()
	total := 0
	for _, ds := range st.Diagnostics {
		total += len(ds)
	}
	if total != 12 {
		t.Errorf("%d diagnostics, want 12: the fixture's 12 errors, less one said twice, plus the cycle's second file", total)
	}
	for _, w := range want {
		path := filepath.Join(root, filepath.FromSlash(w.file))
		found := false
		for _, d := range st.Diagnostics[uri.File(path)] {
			if !strings.Contains(fakeeditor.Message(d), w.message) {
				continue
			}
			found = true
			if got := int(d.Range.Start.Line) + 1; got != w.line {
				t.Errorf("%s %q: line %d, want %d", w.file, w.message, got, w.line)
			}
			if got := rangeText(t, path, d.Range); !strings.HasPrefix(got, w.text) {
				t.Errorf("%s %q: range covers %q, want %q", w.file, w.message, got, w.text)
			}
			if d.Severity != protocol.DiagnosticSeverityError {
				t.Errorf("%s: severity %v", w.file, d.Severity)
			}
		}
		if !found {
			t.Errorf("%s: no diagnostic %q; got %q", w.file, w.message, messages(st.Diagnostics[uri.File(path)]))
		}
	}
	for u, n := range st.Published {
		if n != 1 {
			t.Errorf("%s published %d times after one compile", u, n)
		}
	}
}

// Typing a mistake shows a diagnostic on the right line and UTF-16 column
// (without saving); fixing it clears it.
func TestBreakAndFix(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	orders := filepath.Join(ws, "shop", "definitions", "orders.sqlx")
	if err := s.ed.Open(s.ctx, orders); err != nil {
		t.Fatal(err)
	}
	s.awaitPreviewChanged(t, 0, "/shop")
	noDiags := func(ds []protocol.Diagnostic) bool { return len(ds) == 0 }

	// A misspelt ref after non-ASCII text on the same line.
	if err := s.ed.Replace(s.ctx, orders, `FROM ${ref("raw_orders")}`, `FROM ${ref("raw_orderz")} /* 📦 */ JOIN ${ref("nöpe")}`); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, orders, "misspelt ref", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "raw_orderz") })
	for _, d := range ds {
		msg := fakeeditor.Message(d)
		name := "raw_orderz"
		if strings.Contains(msg, "nöpe") {
			name = "nöpe"
		}
		want, _ := s.ed.Pos(orders, `"`+name, 1)
		if d.Range.Start != want {
			t.Errorf("%q at %v, want %v (UTF-16)", msg, d.Range.Start, want)
		}
	}
	if err := s.ed.Replace(s.ctx, orders, `FROM ${ref("raw_orderz")} /* 📦 */ JOIN ${ref("nöpe")}`, `FROM ${ref("raw_orders")}`); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, orders, "fixed ref", noDiags)

	// An unclosed config block: the error is where the SQL starts.
	if err := s.ed.Replace(s.ctx, orders, "  tags: [\"daily\"]\n}", "  tags: [\"daily\"]\n"); err != nil {
		t.Fatal(err)
	}
	ds = s.awaitDiags(t, orders, "syntax error", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	if sel, _ := s.ed.Pos(orders, "SELECT", 0); ds[0].Range.Start != sel {
		t.Errorf("unclosed config reported at %v (%q), want %v (the SELECT the config swallowed)", ds[0].Range.Start, fakeeditor.Message(ds[0]), sel)
	}
	if err := s.ed.Replace(s.ctx, orders, "  tags: [\"daily\"]\n", "  tags: [\"daily\"]\n}"); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, orders, "fixed config", noDiags)

	// A JavaScript syntax error in a JS file, saved.
	stats := filepath.Join(ws, "shop", "definitions", "order_stats.js")
	if err := s.ed.Open(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Replace(s.ctx, stats, "`);", "`;"); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Save(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	ds = s.awaitDiags(t, stats, "JS syntax error", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	if ds[0].Range.Start.Line != 1 {
		t.Errorf("JS syntax error on line %d, want 2", ds[0].Range.Start.Line+1)
	}
	if err := s.ed.Replace(s.ctx, stats, "`;", "`);"); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Save(s.ctx, stats); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, stats, "fixed JS", noDiags)
}

// A broken workflow_settings.yaml is a diagnostic on that file, at the
// line of the problem; fixing it clears it and compiles again.
func TestBrokenSettings(t *testing.T) {
	ws := txtarWorkspace(t, "shop.txtar")
	settings := filepath.Join(ws, "shop", "workflow_settings.yaml")
	good, _ := os.ReadFile(settings)
	if err := os.WriteFile(settings, []byte("defaultProject: acme-shop\ndefaultDataset: [shop\ndefaultLocation: US\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	ds := s.awaitDiags(t, settings, "settings error", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	// yaml.v3 places this error on line 1 or 2 depending on its version.
	if l := ds[0].Range.Start.Line; l > 2 {
		t.Errorf("YAML error on line %d: %q", l+1, fakeeditor.Message(ds[0]))
	}
	// The daemon keeps serving: a preview explains the problem.
	res := s.preview(t, filepath.Join(ws, "shop", "definitions", "orders.sqlx"))
	if res.Error == "" {
		t.Errorf("preview of a project with broken settings has no error")
	}
	mark := s.previewChanges()
	if err := os.WriteFile(settings, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Watched(s.ctx, fakeeditor.FileEvent{Path: settings, Type: protocol.FileChangeTypeChanged}); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, settings, "settings fixed", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
	s.awaitPreviewChanged(t, mark, "/shop")
	if res := s.preview(t, filepath.Join(ws, "shop", "definitions", "orders.sqlx")); res.Error != "" || len(res.Actions) != 1 {
		t.Errorf("after the fix: %+v", res)
	}
}

// A project with no core says what to do, keeps serving, and compiles as
// soon as a core is installed.
func TestCoreMissing(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := fakeeditor.WriteTxtar(dir, []byte("-- p/workflow_settings.yaml --\ndefaultProject: x\ndefaultDataset: y\n-- p/definitions/a.sqlx --\nSELECT 1\n")); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(dir, "p", "workflow_settings.yaml")
	s := startServer(t, serverConfig{})
	s.init(t, dir)
	ds := s.awaitDiags(t, settings, "missing core", func(ds []protocol.Diagnostic) bool { return len(ds) > 0 })
	msg := fakeeditor.Message(ds[0])
	for _, want := range []string{"dataformCoreVersion", "npm install @dataform/core"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing-core diagnostic does not mention %q: %s", want, msg)
		}
	}
	if ds[0].Range.Start.Line != 0 {
		t.Errorf("missing-core diagnostic on line %d", ds[0].Range.Start.Line+1)
	}
	if err := s.ed.Await(s.ctx, "a message about the missing core", func(st *fakeeditor.State) bool {
		return len(st.Shown) == 1 && strings.Contains(st.Shown[0], "cannot compile p")
	}); err != nil {
		t.Error(err)
	}
	// Edits while the project cannot compile are answered (not left
	// waiting for a compile that cannot happen).
	a := filepath.Join(dir, "p", "definitions", "a.sqlx")
	if err := s.ed.Open(s.ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Replace(s.ctx, a, "SELECT 1", "SELECT 2"); err != nil {
		t.Fatal(err)
	}
	res := s.preview(t, a)
	if !strings.Contains(res.Error, "@dataform/core") {
		t.Errorf("preview error %q", res.Error)
	}
	// Install a core as `npm install` would; the watcher reports it.
	pkg := filepath.Join(dir, "p", "node_modules", "@dataform", "core")
	if err := testenv.CopyTree(testenv.CoreDir(t, testenv.CoreVersion), pkg); err != nil {
		t.Fatal(err)
	}
	mark := s.previewChanges()
	start := time.Now()
	if err := s.ed.Watched(s.ctx, fakeeditor.FileEvent{Path: filepath.Join(pkg, "package.json"), Type: protocol.FileChangeTypeCreated}); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, settings, "core installed", func(ds []protocol.Diagnostic) bool { return len(ds) == 0 })
	s.awaitPreviewChanged(t, mark, "/p")
	t.Logf("recovered %s after the core appeared", time.Since(start).Round(time.Millisecond))
	if res := s.preview(t, a); res.Error != "" || len(res.Actions) != 1 || !strings.Contains(strings.Join(res.Actions[0].SQL.Queries, ";"), "SELECT 2") {
		t.Errorf("after installing a core: %+v", res)
	}
}

var _ = fmt.Sprint
