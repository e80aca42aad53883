package daemon_test

import (
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/lsp"
)

// dfd/lineage on sql_check: a mart's column through stg_orders (an action
// only the project defines) to the warehouse's acme-raw.raw.orders, asked
// by the cursor on the column's name and by param; each table the project
// defines comes with its file; no lineage of an assertion or of SQL with an
// error is a reason, not an error; and an unsaved edit upstream changes
// the answer.
func TestLineageRequest(t *testing.T) {
	s, root := startSQLCheckServer(t, nil, nil)
	daily := filepath.Join(root, "definitions", "marts", "daily_revenue.sqlx")
	stg := filepath.Join(root, "definitions", "staging", "stg_orders.sqlx")
	if err := s.ed.Open(s.ctx, daily); err != nil {
		t.Fatal(err)
	}
	lineage := func(path string, params map[string]any) *lsp.LineageResult {
		t.Helper()
		params["textDocument"] = map[string]any{"uri": uri.File(path)}
		var res lsp.LineageResult
		if err := s.ed.Call(s.ctx, lsp.MethodLineage, params, &res); err != nil {
			t.Fatalf("dfd/lineage %s %v: %v", filepath.Base(path), params, err)
		}
		return &res
	}
	at := func(path, marker string, delta int) protocol.Position {
		t.Helper()
		pos, err := s.ed.Pos(path, marker, delta)
		if err != nil {
			t.Fatal(err)
		}
		return pos
	}
	one := func(res *lsp.LineageResult, column string) lsp.LineageColumn {
		t.Helper()
		if res.Reason != "" || len(res.Columns) != 1 || res.Columns[0].Name != column || res.Column != column {
			t.Fatalf("want the lineage of %s alone, got column %q, reason %q, columns %+v", column, res.Column, res.Reason, res.Columns)
		}
		return res.Columns[0]
	}
	find := func(ins []lsp.LineageInput, table, column string) *lsp.LineageInput {
		for i := range ins {
			if ins[i].Table == table && ins[i].Column == column {
				return &ins[i]
			}
		}
		return nil
	}

	// The cursor on the output column's name.
	res := lineage(daily, map[string]any{"position": at(daily, "AS revenue_cents", 5)})
	if res.Action != "acme-shop.shop.daily_revenue" {
		t.Errorf("action %q, want acme-shop.shop.daily_revenue", res.Action)
	}
	c := one(res, "revenue_cents")
	if c.Type != "INT64" {
		t.Errorf("revenue_cents has type %q, want INT64", c.Type)
	}
	d := find(c.Direct, "acme-shop.shop.stg_orders", "amount_cents")
	if len(c.Direct) != 1 || d == nil || !d.Computed {
		t.Fatalf("direct inputs %+v, want stg_orders.amount_cents, computed (a SUM)", c.Direct)
	}
	if d.File != "definitions/staging/stg_orders.sqlx" || d.Location == nil || d.Location.URI != uri.File(stg) {
		t.Errorf("stg_orders is defined at %q %+v, want its file", d.File, d.Location)
	}
	o := find(c.Origins, "acme-raw.raw.orders", "amount")
	if len(c.Origins) != 1 || o == nil || !o.Computed {
		t.Fatalf("origins %+v, want acme-raw.raw.orders.amount, computed", c.Origins)
	}
	if o.File != "definitions/sources/orders.sqlx" {
		t.Errorf("the declaration of acme-raw.raw.orders is in %q, want definitions/sources/orders.sqlx", o.File)
	}

	// By param, and the cursor elsewhere: every column.
	c = one(lineage(daily, map[string]any{"column": "customers"}), "customers")
	if find(c.Origins, "acme-raw.raw.orders", "customer_id") == nil {
		t.Errorf("customers' origins %+v, want acme-raw.raw.orders.customer_id", c.Origins)
	}
	all := lineage(daily, map[string]any{"position": at(daily, "FROM", 1)})
	if all.Column != "" || len(all.Columns) != 3 {
		t.Errorf("the cursor on no column: want all 3 columns, got %q %+v", all.Column, all.Columns)
	}
	// A nested field, in a file that also defines the assertions its
	// config asks for.
	c = one(lineage(stg, map[string]any{"column": "ship_country"}), "ship_country")
	if o := find(c.Origins, "acme-raw.raw.orders", "shipping.address.country"); o == nil || o.Computed {
		t.Errorf("ship_country's origins %+v, want acme-raw.raw.orders.shipping.address.country unchanged", c.Origins)
	}
	if res := lineage(stg, map[string]any{"column": "nope"}); res.Reason == "" || !strings.Contains(res.Reason, "amount_cents") {
		t.Errorf("a column the action lacks: reason %q, want one naming its columns", res.Reason)
	}

	// No lineage: a reason.
	assertion := filepath.Join(root, "definitions", "assertions", "positive_amounts.sqlx")
	if res := lineage(assertion, map[string]any{}); !strings.Contains(res.Reason, "assertion") || len(res.Columns) != 0 {
		t.Errorf("an assertion: reason %q, columns %+v; want a reason saying it is an assertion", res.Reason, res.Columns)
	}
	totals := filepath.Join(root, "definitions", "marts", "customer_totals.sqlx")
	if res := lineage(totals, map[string]any{}); !strings.Contains(res.Reason, "Unrecognized name: amount_cent") {
		t.Errorf("SQL with an error: reason %q, want GoogleSQL's error", res.Reason)
	}

	// An unsaved edit upstream: the mart's column now comes from another
	// warehouse column.
	if err := s.ed.Open(s.ctx, stg); err != nil {
		t.Fatal(err)
	}
	if err := s.ed.Replace(s.ctx, stg, `${money.cents("amount")} AS amount_cents`, `order_id AS amount_cents`); err != nil {
		t.Fatal(err)
	}
	c = one(lineage(daily, map[string]any{"position": at(daily, "AS revenue_cents", 5)}), "revenue_cents")
	if len(c.Origins) != 1 || find(c.Origins, "acme-raw.raw.orders", "order_id") == nil {
		t.Errorf("after the edit, origins %+v, want acme-raw.raw.orders.order_id", c.Origins)
	}
}

// With SQL analysis off, dfd/lineage says so instead of analysing.
func TestLineageSQLCheckOff(t *testing.T) {
	s, root := startSQLCheckServer(t, map[string]any{"sql": map[string]any{"check": false}}, nil)
	daily := filepath.Join(root, "definitions", "marts", "daily_revenue.sqlx")
	var res lsp.LineageResult
	params := map[string]any{"textDocument": map[string]any{"uri": uri.File(daily)}}
	if err := s.ed.Call(s.ctx, lsp.MethodLineage, params, &res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Reason, "dfd.sql.check") || len(res.Columns) != 0 || res.Action != "acme-shop.shop.daily_revenue" {
		t.Errorf("SQL analysis off: %+v, want the action with a reason naming dfd.sql.check", res)
	}
}
