package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// dfd lineage on sql_check: showcase reads stg_orders (inferred, not in
// the warehouse), which reads acme-raw.raw.orders; --json is issue 14's
// shape, nested fields dotted.
func TestLineageCommand(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	res := runDFD(t, "lineage", dir, "--action", "showcase", "--metadata", sqlCheckMetadata(), "--json")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	type input struct{ Table, Column string }
	var doc struct {
		Action  string
		Columns []struct {
			Name, Type      string
			Direct, Origins []input
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(res.stdout)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	if doc.Action != "acme-shop.shop.showcase" {
		t.Errorf("action %q", doc.Action)
	}
	var names []string
	for _, c := range doc.Columns {
		names = append(names, c.Name)
	}
	if want := []string{"ship_country", "orders", "avg_basket", "top_skus", "paid_cents", "origin", "stats"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	const stg, raw = "acme-shop.shop.stg_orders", "acme-raw.raw.orders"
	for _, w := range []struct {
		i               int
		typ             string
		direct, origins []input
	}{
		{0, "STRING", []input{{stg, "ship_country"}}, []input{{raw, "shipping.address.country"}}},
		{2, "NUMERIC", []input{{stg, "items.price"}, {stg, "items.qty"}, {stg, "order_id"}}, []input{{raw, "items.price"}, {raw, "items.qty"}, {raw, "order_id"}}},
		{3, "ARRAY<STRING>", []input{{stg, "items.sku"}}, []input{{raw, "items.sku"}}},
		{4, "INT64", []input{{stg, "amount_cents"}}, []input{{raw, "amount"}}},
		{5, "STRING", []input{}, []input{}},
	} {
		c := doc.Columns[w.i]
		if c.Type != w.typ || !reflect.DeepEqual(c.Direct, w.direct) || !reflect.DeepEqual(c.Origins, w.origins) {
			t.Errorf("%s: %s direct %v origins %v; want %s %v %v", c.Name, c.Type, c.Direct, c.Origins, w.typ, w.direct, w.origins)
		}
	}
	// Empty lists are [], not null.
	if !strings.Contains(string(res.stdout), `"direct": []`) {
		t.Errorf("no empty direct list:\n%s", res.stdout)
	}

	// Text, one column, the action by schema.name.
	res = runDFD(t, "lineage", dir, "--action", "shop.daily_revenue", "--column", "revenue_cents", "--metadata", sqlCheckMetadata())
	if res.code != 0 {
		t.Fatalf("text: exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	want := "acme-shop.shop.daily_revenue\n" +
		"  revenue_cents INT64\n" +
		"    direct: acme-shop.shop.stg_orders.amount_cents (computed)\n" +
		"    origin: acme-raw.raw.orders.amount (computed)\n"
	if string(res.stdout) != want {
		t.Errorf("text output:\n%s\nwant:\n%s", res.stdout, want)
	}
}

// What has no lineage says why, and exits 1; usage errors exit 2.
func TestLineageCommandErrors(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	md := sqlCheckMetadata()
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--action", "customer_totals"}, 1, "Unrecognized name: amount_cent"},
		{[]string{"--action", "positive_amounts"}, 1, "an assertion outputs no table"},
		{[]string{"--action", "stg_orders", "--offline"}, 1, "SQL not checked: it reads acme-raw.raw.orders, whose schema dfd does not know"},
		{[]string{"--action", "stg_orders", "--column", "nope"}, 1, "no column nope (its columns: order_id, customer_id, amount_cents, status, ordered_at, items, ship_country)"},
		{[]string{"--action", "no_such_action"}, 1, "no_such_action"},
		{nil, 2, "--action NAME is required"},
	} {
		args := []string{"lineage", dir, "--metadata", md}
		if slices.Contains(tc.args, "--offline") {
			args = []string{"lineage", dir} // no metadata: the sources' schemas are unknown
		}
		res := runDFD(t, append(args, tc.args...)...)
		if res.code != tc.code || !strings.Contains(string(res.stderr), tc.says) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d and %q", tc.args, res.code, res.stderr, tc.code, tc.says)
		}
	}
}
