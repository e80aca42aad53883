package daemon_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"go.lsp.dev/protocol"
)

// GoogleSQL's findings arrive as diagnostics as you type, on the text of
// the .sqlx that produced them: the planted unknown column of sql_check's
// customer_totals (a column of stg_orders, a table only the project
// defines, whose schema dfd infers), then nothing once the unsaved buffer
// spells it right; an edit upstream that drops the column puts the error
// back on the reader, a file the user did not touch.
func TestSQLDiagnosticsAsYouType(t *testing.T) {
	s, root := startSQLCheckServer(t, nil, fakeeditor.WorkspaceEditCapabilities) // quick fixes
	totals := filepath.Join(root, "definitions", "marts", "customer_totals.sqlx")
	if err := s.ed.Open(s.ctx, totals); err != nil {
		t.Fatal(err)
	}
	isSQL := func(d protocol.Diagnostic) bool { return d.Source == protocol.NewOptional("GoogleSQL") }
	sqlErrors := func(ds []protocol.Diagnostic) []protocol.Diagnostic {
		var out []protocol.Diagnostic
		for _, d := range ds {
			if isSQL(d) && d.Severity == protocol.DiagnosticSeverityError {
				out = append(out, d)
			}
		}
		return out
	}
	ds := s.awaitDiags(t, totals, "the unknown column", func(ds []protocol.Diagnostic) bool {
		return len(sqlErrors(ds)) > 0
	})
	errs := sqlErrors(ds)
	if len(errs) != 1 {
		t.Fatalf("%d GoogleSQL errors, want 1: %q", len(errs), messages(errs))
	}
	msg := fakeeditor.Message(errs[0])
	if !strings.Contains(msg, "Unrecognized name: amount_cent") || !strings.Contains(msg, "Did you mean amount_cents?") {
		t.Errorf("message %q, want GoogleSQL's unrecognized name with its suggestion", msg)
	}
	if got := rangeText(t, totals, errs[0].Range); !strings.HasPrefix(got, "amount_cent") {
		t.Errorf("the error covers %q, want the misspelt column", got)
	}

	// Fixed in the unsaved buffer with GoogleSQL's suggestion, a quick
	// fix: the error goes.
	_, fix := s.fixFor(t, totals, "Unrecognized name: amount_cent", "Change to amount_cents")
	if err := s.ed.ApplyEdit(s.ctx, fix.Edit); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.ed.Text(totals), "SUM(amount_cents)") {
		t.Fatalf("after the fix:\n%s", s.ed.Text(totals))
	}
	s.awaitDiags(t, totals, "the fixed column", func(ds []protocol.Diagnostic) bool {
		return ds != nil && len(sqlErrors(ds)) == 0
	})

	// stg_orders is not in the warehouse: hover on its ref and column
	// completion after its alias show the schema dfd inferred.
	pos, _ := s.ed.Pos(totals, `ref("stg_orders")`, 6)
	h, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: tdpp(totals, pos)})
	if err != nil || h == nil {
		t.Fatalf("hover on ref(\"stg_orders\"): %v %v", h, err)
	}
	hv := h.Contents.(*protocol.MarkupContent).Value
	for _, want := range []string{"inferred", "amount_cents", "INT64", "ship_country", "items"} {
		if !strings.Contains(hv, want) {
			t.Errorf("hover on an inferred table lacks %q:\n%s", want, hv)
		}
	}
	if err := s.ed.Replace(s.ctx, totals, "FROM ${ref(\"stg_orders\")}", "FROM ${ref(\"stg_orders\")} AS so WHERE so."); err != nil {
		t.Fatal(err)
	}
	if got := completionLabels(t, s, totals, "so.", 3); !contains(got, "amount_cents") || !contains(got, "ship_country") {
		t.Errorf("column completion after an alias of an inferred table: %v", got)
	}
	if err := s.ed.Replace(s.ctx, totals, "FROM ${ref(\"stg_orders\")} AS so WHERE so.", "FROM ${ref(\"stg_orders\")}"); err != nil {
		t.Fatal(err)
	}

	// The upstream action loses the column: its reader, not edited, has
	// the error now.
	stg := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
	if err := s.ed.Open(s.ctx, stg); err != nil {
		t.Fatal(err)
	}
	if text := s.ed.Text(stg); !strings.Contains(text, "AS amount_cents") {
		t.Fatalf("stg_orders.sqlx no longer names amount_cents:\n%s", text)
	}
	if err := s.ed.Replace(s.ctx, stg, "AS amount_cents", "AS cents"); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, totals, "the column gone upstream", func(ds []protocol.Diagnostic) bool {
		return hasMessage(sqlErrors(ds), "Unrecognized name: amount_cents")
	})
}

// Hover on an output column's name: its inferred type at once, then,
// once the background trace has run, where its values come from, through
// the project's actions to the warehouse.
func TestHoverColumnLineage(t *testing.T) {
	s, root := startSQLCheckServer(t, nil, nil)
	stg := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
	if err := s.ed.Open(s.ctx, stg); err != nil {
		t.Fatal(err)
	}
	hover := func() string {
		t.Helper()
		pos, _ := s.ed.Pos(stg, "AS amount_cents", 5)
		h, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: tdpp(stg, pos)})
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			return ""
		}
		return h.Contents.(*protocol.MarkupContent).Value
	}
	for {
		h := hover()
		if strings.Contains(h, "origins in the warehouse") {
			if !strings.Contains(h, "**amount_cents** `INT64`") || !strings.Contains(h, "`acme-raw.raw.orders.amount` (computed)") {
				t.Errorf("hover on an output column:\n%s", h)
			}
			return
		}
		if h != "" && !strings.Contains(h, "`INT64`") {
			t.Fatalf("hover before the lineage is traced:\n%s", h)
		}
		select {
		case <-s.ctx.Done():
			t.Fatalf("the hover never showed the column's origins; last:\n%s", h)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Inlay hints: after each output column whose place in the SQL is
// certain, the type the SQL check inferred; none where the name is
// written more than once without an AS.
func TestInlayHintsColumnTypes(t *testing.T) {
	s, root := startSQLCheckServer(t, nil, nil)
	stg := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
	if err := s.ed.Open(s.ctx, stg); err != nil {
		t.Fatal(err)
	}
	all := protocol.Range{End: protocol.Position{Line: 1000}}
	for {
		var raw json.RawMessage
		if err := s.ed.Call(s.ctx, protocol.MethodTextDocumentInlayHint, map[string]any{
			"textDocument": map[string]any{"uri": fileURI(stg)}, "range": all}, &raw); err != nil {
			t.Fatal(err)
		}
		var hints []protocol.InlayHint
		if err := protocol.Unmarshal(raw, &hints); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if len(hints) > 0 {
			at := map[protocol.Position]string{}
			for _, h := range hints {
				at[h.Position] = fmt.Sprint(h.Label)
			}
			for after, label := range map[string]string{"AS amount_cents": ": INT64", "AS ship_country": ": STRING", "AS status": ": STRING"} {
				want, _ := s.ed.Pos(stg, after, len(after))
				if at[want] != label {
					t.Errorf("after %q: hint %q, want %q; hints %v", after, at[want], label, at)
				}
			}
			if p, _ := s.ed.Pos(stg, "  order_id,", len("  order_id")); at[p] != "" {
				t.Errorf("a hint after order_id, which the SQL writes twice without AS: %v", at)
			}
			return
		}
		select {
		case <-s.ctx.Done():
			t.Fatal("no inlay hints after the project's check")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A statement GoogleSQL cannot parse is an error as you type, on the token
// the parser stopped at in the .sqlx (the same place `dfd check` gives),
// with code sql-syntax; fixed, it goes, and the statement is analysed
// again (its planted unknown column is back).
func TestSQLSyntaxErrorAsYouType(t *testing.T) {
	s, root := startSQLCheckServer(t, nil, nil)
	totals := filepath.Join(root, "definitions", "marts", "customer_totals.sqlx")
	if err := s.ed.Open(s.ctx, totals); err != nil {
		t.Fatal(err)
	}
	sqlErrors := func(ds []protocol.Diagnostic) []protocol.Diagnostic {
		var out []protocol.Diagnostic
		for _, d := range ds {
			if d.Source == protocol.NewOptional("GoogleSQL") && d.Severity == protocol.DiagnosticSeverityError {
				out = append(out, d)
			}
		}
		return out
	}
	s.awaitDiags(t, totals, "the unknown column", func(ds []protocol.Diagnostic) bool {
		return hasMessage(sqlErrors(ds), "Unrecognized name: amount_cent")
	})
	if err := s.ed.Replace(s.ctx, totals, "SELECT\n  customer_id", "SELEC\n  customer_id"); err != nil {
		t.Fatal(err)
	}
	ds := s.awaitDiags(t, totals, "the syntax error", func(ds []protocol.Diagnostic) bool {
		return hasMessage(sqlErrors(ds), "Syntax error")
	})
	errs := sqlErrors(ds)
	if len(errs) != 1 {
		t.Fatalf("%d GoogleSQL errors, want the syntax error only: %q", len(errs), messages(errs))
	}
	d := errs[0]
	if msg := fakeeditor.Message(d); msg != `Syntax error: Unexpected identifier "SELEC"` {
		t.Errorf("message %q", msg)
	}
	if c, ok := d.Code.(protocol.String); !ok || c != "sql-syntax" {
		t.Errorf("code %v, want sql-syntax", d.Code)
	}
	want, _ := s.ed.Pos(totals, "SELEC\n", 0)
	if d.Range.Start != want || rangeTextOf(s.ed.Text(totals), d.Range) != "SELEC" {
		t.Errorf("the error covers %v %q, want %v \"SELEC\"", d.Range, rangeTextOf(s.ed.Text(totals), d.Range), want)
	}
	if err := s.ed.Replace(s.ctx, totals, "SELEC\n  customer_id", "SELECT\n  customer_id"); err != nil {
		t.Fatal(err)
	}
	s.awaitDiags(t, totals, "the fixed keyword", func(ds []protocol.Diagnostic) bool {
		return hasMessage(sqlErrors(ds), "Unrecognized name: amount_cent") && !hasMessage(sqlErrors(ds), "Syntax error")
	})
}
