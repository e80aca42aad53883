package daemon_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// costWorkspace: a table and a view over a warehouse table, and an
// incremental table.
func costWorkspace(t *testing.T) string {
	return testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/src.sqlx":   "config { type: \"declaration\", schema: \"raw\", name: \"src\" }\n",
		"definitions/a.sqlx":     "config { type: \"table\" }\nSELECT id, name FROM ${ref(\"src\")}\n",
		"definitions/inc.sqlx":   "config { type: \"incremental\" }\nSELECT id FROM ${ref(\"src\")} ${when(incremental(), \"WHERE id > 10\")}\n",
		"definitions/v.sqlx":     "config { type: \"view\" }\nSELECT name AS n FROM ${ref(\"src\")}\n",
	})
}

// costFigure is the stand-in's totalBytesProcessed for a statement: each
// text its own figure, so that a figure shown names the text it is of.
func costFigure(stmt string) int64 { return int64(len(stmt)) << 24 }

func startCostServer(t *testing.T, rec *bqrecorder.Server) *session {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	return startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": rec.URL},
	}})})
}

// awaitCost waits for dfd/status to give the project's figures for its
// newest compile of every edit so far.
func (s *session) awaitCost(t *testing.T, root string) *lsp.ProjectCost {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p := projectStatus(t, s.status(t), filepath.Base(root))
		if c := p.Cost; c != nil && c.Version == p.Version && p.Compiled == p.Version {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("no cost figures for version %d within 60s: %+v", p.Version, p.Cost)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *session) lenses(t *testing.T, path string) []string {
	t.Helper()
	ls, err := s.ed.Server.CodeLens(s.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(path)}})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range ls {
		out = append(out, l.Command.Title)
	}
	return out
}

// As the user types, each action's code lens shows BigQuery's figure for
// the text as it is now (never an older text's), dfd/preview and
// dfd/status say the same figures, each distinct statement is dry-run
// once over the whole session (an unchanged action's statement once, a
// text typed again not again), and nothing but dry runs reaches BigQuery.
func TestCostAsYouType(t *testing.T) {
	rec := bqrecorder.Start(t, bqrecorder.Options{Bytes: costFigure})
	root := costWorkspace(t)
	s := startCostServer(t, rec)
	s.init(t, root)
	file := filepath.Join(root, "definitions", "a.sqlx")
	text := "config { type: \"table\" }\nSELECT id, name FROM ${ref(\"src\")}\n"
	if err := s.ed.OpenText(s.ctx, file, text); err != nil {
		t.Fatal(err)
	}
	cost := s.awaitCost(t, root)

	byText := func() map[string]int64 {
		out := map[string]int64{}
		for _, j := range rec.DryRuns() {
			out[j.Statement] = costFigure(j.Statement)
		}
		return out
	}
	stmtWith := func(substr string, not ...string) (string, int64) {
	next:
		for st, b := range byText() {
			for _, n := range not {
				if strings.Contains(st, n) {
					continue next
				}
			}
			if strings.Contains(st, substr) {
				return st, b
			}
		}
		t.Fatalf("no dry run of a statement with %q: %v", substr, byText())
		return "", 0
	}
	_, aBytes := stmtWith("id, name")
	_, incFull := stmtWith("SELECT id FROM", "WHERE")
	_, incInc := stmtWith("WHERE id > 10")
	_, vBytes := stmtWith("name AS n")
	usd := func(b int64) float64 { return drycost.Cost(b, drycost.DefaultPricePerTiB) }

	if !cost.Available || cost.TotalBytesProcessed != aBytes+incFull || cost.IncrementalTotalBytesProcessed != aBytes+incInc ||
		cost.CostUSD == nil || *cost.CostUSD != usd(aBytes+incFull) {
		t.Errorf("status cost %+v, want %d (full) and %d (incremental) bytes; views are not in it", cost, aBytes+incFull, aBytes+incInc)
	}
	wantLens := "≈ " + drycost.FormatBytes(aBytes) + " · " + drycost.FormatUSD(usd(aBytes))
	if ls := s.lenses(t, file); !contains(ls, wantLens) {
		t.Errorf("code lenses %q lack %q", ls, wantLens)
	}
	incLens := "≈ " + drycost.FormatBytes(incFull) + " · " + drycost.FormatUSD(usd(incFull)) + " full refresh / " +
		drycost.FormatBytes(incInc) + " · " + drycost.FormatUSD(usd(incInc)) + " incremental"
	if ls := s.lenses(t, filepath.Join(root, "definitions", "inc.sqlx")); !contains(ls, incLens) {
		t.Errorf("incremental table's lenses %q lack %q", ls, incLens)
	}
	if h := hoverText(t, s, file, "config", 2); !strings.Contains(h, "**Cost of one run** (BigQuery's dry run): "+wantLens) {
		t.Errorf("hover on config lacks the cost:\n%s", h)
	}
	pa := s.preview(t, file).Actions[0].Cost
	if pa == nil || pa.Status != "estimated" || pa.TotalBytesProcessed != aBytes || pa.Label != wantLens || !pa.InTotal {
		t.Errorf("dfd/preview cost %+v, want %d bytes", pa, aBytes)
	}
	pv := s.preview(t, filepath.Join(root, "definitions", "v.sqlx")).Actions[0].Cost
	if pv == nil || pv.TotalBytesProcessed != vBytes || pv.InTotal {
		t.Errorf("view's cost %+v, want %d bytes, not in the total", pv, vBytes)
	}

	// A typing session: a column typed letter by letter, without waiting,
	// then a text typed before.
	typed := "id, name"
	for _, c := range ", len" {
		typed += string(c)
		text = strings.Replace(text, "SELECT id, name", "SELECT "+typed, 1)
		if err := s.ed.SetText(s.ctx, file, text); err != nil {
			t.Fatal(err)
		}
		text = strings.Replace(text, "SELECT "+typed, "SELECT id, name", 1)
	}
	text = strings.Replace(text, "SELECT id, name", "SELECT "+typed, 1)
	s.awaitCost(t, root)
	final, finalBytes := stmtWith(typed)
	want := "≈ " + drycost.FormatBytes(finalBytes) + " · " + drycost.FormatUSD(usd(finalBytes))
	if ls := s.lenses(t, file); !contains(ls, want) {
		t.Errorf("after typing, lenses %q lack the final text's figure %q (of %q)", ls, want, final)
	}
	if err := s.ed.SetText(s.ctx, file, "config { type: \"table\" }\nSELECT id, name FROM ${ref(\"src\")}\n"); err != nil {
		t.Fatal(err)
	}
	if c := s.awaitCost(t, root); c.TotalBytesProcessed != aBytes+incFull {
		t.Errorf("back to the first text: total %d, want %d", c.TotalBytesProcessed, aBytes+incFull)
	}
	if ls := s.lenses(t, file); !contains(ls, wantLens) {
		t.Errorf("back to the first text, lenses %q lack %q", ls, wantLens)
	}

	seen := map[string]int{}
	for _, j := range rec.Jobs() {
		if !j.DryRun {
			t.Errorf("a job that is not a dry run reached BigQuery: %q", j.Statement)
		}
		seen[j.Statement]++
	}
	for st, n := range seen {
		if n != 1 {
			t.Errorf("%q dry-run %d times, want once", st, n)
		}
	}
	t.Logf("%d distinct statements dry-run over the session", len(seen))
}

// A dry run BigQuery answers with 429 or 500 is not the SQL's fault: no
// error diagnostic, no figure (the lens says why), dfd/status says what
// BigQuery answered; once BigQuery answers, the figures come back.
func TestCostBigQueryFaults(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusInternalServerError} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var failing atomic.Bool
			failing.Store(true)
			rec := bqrecorder.Start(t, bqrecorder.Options{
				Bytes: costFigure,
				DryRunError: func(string) *bqrecorder.Fault {
					if failing.Load() {
						return bqrecorder.Status(status, 0)
					}
					return nil
				},
			})
			root := costWorkspace(t)
			s := startCostServer(t, rec)
			s.init(t, root)
			file := filepath.Join(root, "definitions", "a.sqlx")
			text := "config { type: \"table\" }\nSELECT id, name FROM ${ref(\"src\")}\n"
			if err := s.ed.OpenText(s.ctx, file, text); err != nil {
				t.Fatal(err)
			}
			c := s.awaitCost(t, root)
			if c.TotalBytesProcessed != 0 || c.ActionsWithoutFigure != 3 {
				t.Errorf("with BigQuery failing: %+v, want no figure for the 3 actions", c)
			}
			for _, d := range s.ed.Snapshot().Diagnostics[fileURI(file)] {
				if d.Severity == protocol.DiagnosticSeverityError {
					t.Errorf("error diagnostic while BigQuery fails: %s", d.Message)
				}
			}
			if ls := strings.Join(s.lenses(t, file), " | "); !strings.Contains(ls, "no figure:") {
				t.Errorf("lenses %q do not say there is no figure", ls)
			}
			if m := projectStatus(t, s.status(t), filepath.Base(root)).Metadata; m == nil || !strings.Contains(m.Detail, fmt.Sprint(status)) || !strings.Contains(m.Detail, "dry run") {
				t.Errorf("metadata status %+v does not say what BigQuery answered", m)
			}
			if status == http.StatusInternalServerError {
				return // BigQuery is held as down for 30 s after a 5xx on every attempt
			}
			failing.Store(false)
			if err := s.ed.SetText(s.ctx, file, text+"-- again\n"); err != nil {
				t.Fatal(err)
			}
			if c := s.awaitCost(t, root); c.TotalBytesProcessed == 0 || c.ActionsWithoutFigure != 0 {
				t.Errorf("after BigQuery recovered: %+v", c)
			}
		})
	}
}

// at is the 1-based [line:column] of the first substr in stmt, as
// BigQuery reports positions.
func at(stmt, substr string) (int, int) {
	i := strings.Index(stmt, substr)
	if i < 0 {
		return 0, 0
	}
	line := strings.Count(stmt[:i], "\n") + 1
	return line, i - (strings.LastIndex(stmt[:i], "\n") + 1) + 1
}

// BigQuery's verdict on the SQL lands where the user wrote it: in a .sqlx
// file and in the template of a JiT action's .js file, as an error with
// source BigQuery. A table that reads a project table not built yet gets
// no diagnostic, and its lens says so.
func TestBigQueryVerdictDiagnostics(t *testing.T) {
	rec := bqrecorder.Start(t, bqrecorder.Options{
		Bytes: costFigure,
		DryRunError: func(stmt string) *bqrecorder.Fault {
			switch {
			case strings.Contains(stmt, "`p.d.a`"):
				return bqrecorder.TableNotFound("p.d.a")
			case strings.Contains(stmt, "bogus"):
				line, col := at(stmt, "bogus")
				return bqrecorder.SQLError("Unrecognized name: bogus", line, col)
			case strings.Contains(stmt, "flagged"):
				line, col := at(stmt, "flagged")
				return bqrecorder.SQLError("Column flagged is refused by the stand-in", line, col)
			}
			return nil
		},
	})
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/src.sqlx":   "config { type: \"declaration\", schema: \"raw\", name: \"src\" }\n",
		"definitions/a.sqlx":     "config { type: \"table\" }\nSELECT id, name AS flagged FROM ${ref(\"src\")}\n",
		"definitions/b.sqlx":     "config { type: \"table\" }\nSELECT id FROM ${ref(\"a\")}\n",
		"definitions/c.sqlx":     "config { type: \"table\" }\nSELECT bogus FROM ${ref(\"src\")}\n",
		"definitions/j.js":       "publish(\"j\", { type: \"table\", dependencies: [\"src\"] }).jitCode(async (jctx) => `SELECT id,\n  name AS flagged\nFROM ${jctx.ref(\"src\")}`);\n",
	})
	s := startCostServer(t, rec)
	s.init(t, root)
	sqlx := filepath.Join(root, "definitions", "a.sqlx")
	js := filepath.Join(root, "definitions", "j.js")
	b := filepath.Join(root, "definitions", "b.sqlx")
	c := filepath.Join(root, "definitions", "c.sqlx")
	for _, f := range []string{sqlx, js, b, c} {
		if err := s.ed.Open(s.ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	s.awaitCost(t, root)
	for _, tc := range []struct {
		file      string
		line, col uint32
	}{
		{sqlx, 1, 19}, // SELECT id, name AS |flagged
		{js, 1, 10},   //   name AS |flagged
	} {
		ds := s.awaitDiags(t, tc.file, "BigQuery's verdict", func(ds []protocol.Diagnostic) bool {
			for _, d := range ds {
				if src, ok := d.Source.Get(); ok && strings.Contains(src, "BigQuery") {
					return true
				}
			}
			return false
		})
		n := 0
		for _, d := range ds {
			if d.Severity != protocol.DiagnosticSeverityError {
				continue
			}
			n++
			if d.Range.Start.Line != tc.line || d.Range.Start.Character != tc.col || !strings.Contains(fakeeditor.Message(d), "refused by the stand-in") {
				t.Errorf("%s: %s at %d:%d, want BigQuery's at %d:%d", filepath.Base(tc.file), fakeeditor.Message(d), d.Range.Start.Line, d.Range.Start.Character, tc.line, tc.col)
			}
		}
		if n != 1 {
			t.Errorf("%s: %d error diagnostics, want BigQuery's one: %q", filepath.Base(tc.file), n, messages(ds))
		}
	}
	for _, d := range s.ed.Snapshot().Diagnostics[fileURI(b)] {
		if d.Severity == protocol.DiagnosticSeverityError {
			t.Errorf("b.sqlx reads a project table not built yet, yet: %s", fakeeditor.Message(d))
		}
	}
	// GoogleSQL finds the same mistake at the same spot: one diagnostic
	// that names both.
	ds := s.awaitDiags(t, c, "GoogleSQL's and BigQuery's finding", func(ds []protocol.Diagnostic) bool {
		for _, d := range ds {
			if src, ok := d.Source.Get(); ok && strings.Contains(src, "GoogleSQL") && strings.Contains(src, "BigQuery") {
				return true
			}
		}
		return false
	})
	errs := 0
	for _, d := range ds {
		if d.Severity == protocol.DiagnosticSeverityError {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("c.sqlx: %d errors, want one merged: %q", errs, messages(ds))
	}
	if h := hoverText(t, s, js, "publish", 3); !strings.Contains(h, "**Cost of one run** (BigQuery's dry run): BigQuery: Column flagged") {
		t.Errorf("hover on publish( lacks why the JiT action has no figure:\n%s", h)
	}
	if ls := strings.Join(s.lenses(t, b), " | "); !strings.Contains(ls, "upstream not built (p.d.a)") {
		t.Errorf("b.sqlx lenses %q do not say its upstream is not built", ls)
	}
}

// With a metadata source other than BigQuery there will be no figure, and
// every snapshot says so from its publication: dfd/status, asked as soon
// as dfd/preview has the compile of an edit, says "not available" and
// why, not "no figure yet" (which :DfdCost and the status bar would read
// as figures still to come).
func TestCostNotAvailableFromPublication(t *testing.T) {
	for _, source := range []string{"none", "snapshot"} {
		t.Run(source, func(t *testing.T) {
			root := costWorkspace(t)
			snap := filepath.Join(root, "metadata.json")
			if err := os.WriteFile(snap, []byte(`{"tables": []}`), 0o644); err != nil {
				t.Fatal(err)
			}
			s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
				"metadata": map[string]any{"source": source, "snapshot": snap},
			}})})
			s.init(t, root)
			file := filepath.Join(root, "definitions", "a.sqlx")
			if err := s.ed.OpenText(s.ctx, file, "config { type: \"table\" }\nSELECT id, name FROM ${ref(\"src\")}\n"); err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				if err := s.ed.SetText(s.ctx, file, fmt.Sprintf("config { type: \"table\" }\nSELECT id, name, %d AS n FROM ${ref(\"src\")}\n", i)); err != nil {
					t.Fatal(err)
				}
				pv := s.preview(t, file)
				p := projectStatus(t, s.status(t), filepath.Base(root))
				if p.Cost == nil || p.Cost.Available || !strings.Contains(p.Cost.Reason, "the metadata source is "+source) {
					t.Fatalf("edit %d: dfd/status cost %+v at version %d (preview %d), want not available because of the source", i, p.Cost, p.Compiled, pv.Version)
				}
			}
		})
	}
}
