package daemon_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=dfd", "-c", "user.email=dfd@localhost", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// While stg_orders.sqlx is edited, renaming its amount_cents (which
// daily_revenue sums) puts a warning on the new name naming the reader,
// compared with the file as committed; it clears when the buffer is
// back as committed, and when the reader's own buffer stops reading the
// old name.
func TestChangeWarningsWhileEditing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, root, "init", "-q", "-b", "main")
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "base")

	cfg := fakeeditorConfig(map[string]any{"dfd": map[string]any{"metadata": map[string]any{"source": "snapshot", "snapshot": sqlCheckSnapshot()}}})
	s := startServer(t, serverConfig{editor: cfg})
	s.init(t, root)
	stg := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
	revenue := filepath.Join(root, "definitions", "marts", "daily_revenue.sqlx")
	if err := s.ed.Open(s.ctx, stg); err != nil {
		t.Fatal(err)
	}
	isWarn := func(d protocol.Diagnostic) bool {
		return fmt.Sprint(d.Code) == "breaks-readers" && d.Severity == protocol.DiagnosticSeverityWarning
	}
	warnings := func(ds []protocol.Diagnostic) []protocol.Diagnostic {
		var out []protocol.Diagnostic
		for _, d := range ds {
			if isWarn(d) {
				out = append(out, d)
			}
		}
		return out
	}
	// As committed: no warning, once the SQL check has run (it puts its
	// planted error on customer_totals).
	totals := filepath.Join(root, "definitions", "marts", "customer_totals.sqlx")
	s.awaitDiags(t, totals, "the first check", func(ds []protocol.Diagnostic) bool { return hasMessage(ds, "amount_cent") })
	if w := warnings(s.ed.Snapshot().Diagnostics[fileURI(stg)]); len(w) > 0 {
		t.Fatalf("warnings on the file as committed: %q", messages(w))
	}

	if err := s.ed.Replace(s.ctx, stg, "AS amount_cents", "AS cents"); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, stg, "the rename's warning", func(ds []protocol.Diagnostic) bool { return len(warnings(ds)) > 0 })
	w := warnings(ds)
	if len(w) != 1 {
		t.Fatalf("%d warnings, want 1: %q", len(w), messages(w))
	}
	msg := fakeeditor.Message(w[0])
	for _, want := range []string{"column amount_cents renamed to cents", "git HEAD", "acme-shop.shop.daily_revenue.revenue_cents"} {
		if !strings.Contains(msg, want) {
			t.Errorf("warning %q lacks %q", msg, want)
		}
	}
	if got := rangeTextOf(s.ed.Text(stg), w[0].Range); got != "cents" {
		t.Errorf("the warning covers %q, want the new name", got)
	}

	// Back as committed: it clears.
	if err := s.ed.Replace(s.ctx, stg, "AS cents", "AS amount_cents"); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, stg, "no warning once undone", func(ds []protocol.Diagnostic) bool { return ds != nil && len(warnings(ds)) == 0 })

	// ordered_at renamed: daily_revenue reads it (its order_date), and
	// so does the operation tidy_orders, in a WHERE (no lineage: it is
	// found by its error with the buffers as they are).
	if err := s.ed.Replace(s.ctx, stg, "  ordered_at,", "  ordered_at AS ordered_time,"); err != nil {
		t.Fatal(err)
	}
	ds = s.awaitDiags(t, stg, "the second rename's warning", func(ds []protocol.Diagnostic) bool { return hasMessage(warnings(ds), "ordered_at renamed") })
	w = warnings(ds)
	msg = fakeeditor.Message(w[0])
	for _, want := range []string{"acme-shop.shop.daily_revenue.order_date", "acme-shop.shop.tidy_orders"} {
		if !strings.Contains(msg, want) {
			t.Errorf("warning %q lacks %q", msg, want)
		}
	}
	if got := rangeTextOf(s.ed.Text(stg), w[0].Range); got != "ordered_time" {
		t.Errorf("the warning covers %q, want the new name", got)
	}
	// The readers follow in their buffers: nothing reads the old name
	// any more, so the warning clears.
	tidy := filepath.Join(root, "definitions", "ops", "tidy_orders.sqlx")
	for _, f := range []string{revenue, tidy} {
		if err := s.ed.Open(s.ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ed.SetText(s.ctx, revenue, strings.ReplaceAll(s.ed.Text(revenue), "ordered_at", "ordered_time")); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Replace(s.ctx, tidy, "WHERE ordered_at", "WHERE ordered_time"); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, stg, "no warning once the readers follow", func(ds []protocol.Diagnostic) bool { return ds != nil && len(warnings(ds)) == 0 })
	for _, f := range []string{revenue, tidy} {
		if w := warnings(s.ed.Snapshot().Diagnostics[fileURI(f)]); len(w) > 0 {
			t.Errorf("warnings on a reader, whose columns are unchanged: %q", messages(w))
		}
	}
}
