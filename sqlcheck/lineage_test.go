package sqlcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// inputStrings writes inputs as "table.column", "=" first for identity.
func inputStrings(ins []gsql.Input) []string {
	var out []string
	for _, in := range ins {
		s := in.Table + "." + in.Column
		if in.Identity {
			s = "=" + s
		}
		out = append(out, s)
	}
	return out
}

func sortedInputs(want ...string) []string {
	out := slices.Clone(want)
	key := func(s string) string { return strings.TrimPrefix(s, "=") }
	slices.SortFunc(out, func(a, b string) int { return strings.Compare(key(a), key(b)) })
	return out
}

// TestLineageThroughTheFixture: sql_check's marts read stg_orders, which
// reads the warehouse's acme-raw.raw.orders; the origins of a mart's
// columns are raw.orders' columns, nested fields included.
func TestLineageThroughTheFixture(t *testing.T) {
	res, _ := checkFixture(t, "sql_check", "sql_check.json", Options{Lineage: true})
	const (
		raw = "acme-raw.raw.orders."
		stg = "acme-shop.shop.stg_orders."
	)
	for _, tc := range []struct {
		action, column  string
		direct, origins []string
	}{
		// One hop: stg_orders reads the warehouse.
		{"acme-shop.shop.stg_orders", "ship_country", []string{"=" + raw + "shipping.address.country"}, []string{"=" + raw + "shipping.address.country"}},
		{"acme-shop.shop.stg_orders", "amount_cents", []string{raw + "amount"}, []string{raw + "amount"}},
		{"acme-shop.shop.stg_orders", "status", []string{raw + "status"}, []string{raw + "status"}},
		{"acme-shop.shop.stg_orders", "items", []string{"=" + raw + "items"}, []string{"=" + raw + "items"}},
		// Two hops, an incremental table: aggregates of stg_orders.
		{"acme-shop.shop.daily_revenue", "order_date", []string{stg + "ordered_at"}, []string{raw + "ordered_at"}},
		{"acme-shop.shop.daily_revenue", "revenue_cents", []string{stg + "amount_cents"}, []string{raw + "amount"}},
		{"acme-shop.shop.daily_revenue", "customers", []string{stg + "customer_id"}, []string{raw + "customer_id"}},
		// Two hops through CTEs, UNNEST of ARRAY<STRUCT>, PIVOT, a cross join.
		{"acme-shop.shop.showcase", "ship_country", []string{"=" + stg + "ship_country"}, []string{"=" + raw + "shipping.address.country"}},
		{"acme-shop.shop.showcase", "top_skus", []string{"=" + stg + "items.sku"}, []string{"=" + raw + "items.sku"}},
		{"acme-shop.shop.showcase", "avg_basket", []string{stg + "items.price", stg + "items.qty", stg + "order_id"},
			[]string{raw + "items.price", raw + "items.qty", raw + "order_id"}},
		{"acme-shop.shop.showcase", "orders", []string{stg + "order_id"}, []string{raw + "order_id"}},
		{"acme-shop.shop.showcase", "paid_cents", []string{stg + "amount_cents"}, []string{raw + "amount"}},
		{"acme-shop.shop.showcase", "origin", nil, nil},
		{"acme-shop.shop.showcase", "stats", nil, nil},
		// A wildcard table and its pseudo-column.
		{"acme-shop.shop.stg_events", "param_key", []string{"=acme-raw.analytics.events_*.params.key"}, []string{"=acme-raw.analytics.events_*.params.key"}},
		{"acme-shop.shop.stg_events", "event_date", []string{"acme-raw.analytics.events_*._TABLE_SUFFIX"}, []string{"acme-raw.analytics.events_*._TABLE_SUFFIX"}},
	} {
		l, ok := res.Column(tc.action, tc.column)
		if !ok {
			t.Errorf("%s.%s: no lineage", tc.action, tc.column)
			continue
		}
		if got, want := inputStrings(l.Direct), sortedInputs(tc.direct...); !slices.Equal(got, want) {
			t.Errorf("%s.%s: direct %q, want %q", tc.action, tc.column, got, want)
		}
		if got, want := inputStrings(l.Origins), sortedInputs(tc.origins...); !slices.Equal(got, want) {
			t.Errorf("%s.%s: origins %q, want %q", tc.action, tc.column, got, want)
		}
		if len(l.Unresolved) > 0 {
			t.Errorf("%s.%s: unresolved %q", tc.action, tc.column, l.Unresolved)
		}
	}
	// customer_totals has an error, assertions have no output: no
	// lineage.
	for _, target := range []string{"acme-shop.shop.customer_totals", "acme-shop.shop_assertions.positive_amounts"} {
		if _, _, ok := res.ActionLineage(target); ok {
			t.Errorf("%s: lineage of an action dfd did not analyse", target)
		}
	}
	// Every column of every action with a schema has its lineage.
	for target, cols := range res.Schemas {
		ls, _, ok := res.ActionLineage(strings.ToUpper(target))
		if !ok || len(ls) != len(cols) {
			t.Errorf("%s: %d columns, lineage of %d (%v)", target, len(cols), len(ls), ok)
		}
	}
}

// A chain of four actions over one warehouse table, as a compiled graph.
func chainGraph() (*dataformpb.CompiledGraph, []byte) {
	g := &dataformpb.CompiledGraph{ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "p", DefaultSchema: "m"}}
	rawT := &dataformpb.Target{Database: "p", Schema: "raw", Name: "events"}
	g.Declarations = append(g.Declarations, &dataformpb.Declaration{Target: rawT})
	md := []byte(`{"tables": [{"target": {"database": "p", "schema": "raw", "name": "events"}, "type": "TABLE", "fields": [
		{"name": "user", "struct": {"fields": [{"name": "id", "primitive": "INTEGER"},
			{"name": "geo", "struct": {"fields": [{"name": "country", "primitive": "STRING"}, {"name": "city", "primitive": "STRING"}]}}]}},
		{"name": "amount", "primitive": "NUMERIC"},
		{"name": "items", "struct": {"fields": [{"name": "sku", "primitive": "STRING"}, {"name": "qty", "primitive": "INTEGER"}]}, "flags": ["REPEATED"]}]}]}`)
	add := func(name, query string, deps ...*dataformpb.Target) *dataformpb.Target {
		t := &dataformpb.Target{Database: "p", Schema: "m", Name: name}
		g.Tables = append(g.Tables, &dataformpb.Table{Target: t, FileName: "definitions/" + name + ".sqlx",
			EnumType: dataformpb.TableType_TABLE, Query: query, DependencyTargets: deps})
		return t
	}
	// Declared last first: Check orders them by dependency.
	var a, b, c *dataformpb.Target
	a = &dataformpb.Target{Database: "p", Schema: "m", Name: "a"}
	b = &dataformpb.Target{Database: "p", Schema: "m", Name: "b"}
	c = &dataformpb.Target{Database: "p", Schema: "m", Name: "c"}
	add("d", "SELECT * FROM `p.m.c`", c)
	add("c", "SELECT geo.country, SUM(amt2) AS total, ARRAY_AGG(it.sku) AS skus FROM `p.m.b`, UNNEST(items) AS it GROUP BY 1", b)
	add("b", "SELECT user.geo AS geo, amount * 2 AS amt2, items, STRUCT(amount AS a, user.id AS uid) AS s FROM m.a", a)
	add("a", "SELECT user, amount, items FROM `p.raw.events`", rawT)
	add("e", "SELECT s.uid, b.geo.city FROM `p.m.b` AS b", b)
	return g, md
}

func chainOptions(t *testing.T, md []byte) Options {
	t.Helper()
	a, err := offline.Parse("chain.json", md, offline.Options{DefaultDatabase: "p"})
	if err != nil {
		t.Fatal(err)
	}
	return Options{Metadata: a, MetadataID: "chain", Lineage: true}
}

// TestLineageManyHops follows columns through four actions: renames,
// STRUCT fields, an aggregate, UNNEST, SELECT *; a field of a STRUCT an
// action builds is that field's origin alone.
func TestLineageManyHops(t *testing.T) {
	g, md := chainGraph()
	res, err := Check(context.Background(), g, chainOptions(t, md))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("finding: %s: %s", f.Action, f.Message)
	}
	const raw = "p.raw.events."
	for _, tc := range []struct {
		action, column  string
		direct, origins []string
	}{
		{"p.m.d", "country", []string{"=p.m.c.country"}, []string{"=" + raw + "user.geo.country"}},
		{"p.m.d", "total", []string{"=p.m.c.total"}, []string{raw + "amount"}},
		{"p.m.d", "skus", []string{"=p.m.c.skus"}, []string{"=" + raw + "items.sku"}},
		{"p.m.c", "country", []string{"=p.m.b.geo.country"}, []string{"=" + raw + "user.geo.country"}},
		{"p.m.e", "uid", []string{"=p.m.b.s.uid"}, []string{"=" + raw + "user.id"}},
		{"p.m.e", "city", []string{"=p.m.b.geo.city"}, []string{"=" + raw + "user.geo.city"}},
		// A field path below an output column.
		{"p.m.b", "s.a", []string{"=p.m.a.amount"}, []string{"=" + raw + "amount"}},
		{"P.M.B", "geo", []string{"=p.m.a.user.geo"}, []string{"=" + raw + "user.geo"}},
	} {
		l, ok := res.Column(tc.action, tc.column)
		if !ok {
			t.Errorf("%s.%s: no lineage", tc.action, tc.column)
			continue
		}
		if got, want := inputStrings(l.Direct), sortedInputs(tc.direct...); !slices.Equal(got, want) {
			t.Errorf("%s.%s: direct %q, want %q", tc.action, tc.column, got, want)
		}
		if got, want := inputStrings(l.Origins), sortedInputs(tc.origins...); !slices.Equal(got, want) {
			t.Errorf("%s.%s: origins %q, want %q", tc.action, tc.column, got, want)
		}
	}
	if got, want := inputStrings(mustOrigins(res.Origins("p.m.c", "total"))), []string{raw + "amount"}; !slices.Equal(got, want) {
		t.Errorf("Origins(p.m.c, total) = %q, want %q", got, want)
	}
	if got, want := inputStrings(mustOrigins(res.Origins("p.raw.events", "user.id"))), []string{"=" + raw + "user.id"}; !slices.Equal(got, want) {
		t.Errorf("Origins of a warehouse column = %q, want itself, %q", got, want)
	}
}

func mustOrigins(in []gsql.Input, _ []string) []gsql.Input { return in }

// TestLineageRemembered: a Checker's analyses remembered from a check
// without lineage are analysed again for one that wants it, and the ones
// with lineage serve a check without.
func TestLineageRemembered(t *testing.T) {
	g, md := chainGraph()
	k := NewChecker()
	opts := chainOptions(t, md)
	opts.Lineage = false
	first, err := k.Check(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Lineage) != 0 {
		t.Errorf("lineage without Options.Lineage: %v", first.Lineage)
	}
	opts.Lineage = true
	second, err := k.Check(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := second.ActionLineage("p.m.d"); !ok || second.Ran == 0 {
		t.Errorf("after a check without lineage: lineage %v, ran %d", ok, second.Ran)
	}
	opts.Lineage = false
	third, err := k.Check(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if third.Ran != 0 || len(third.Lineage) != 0 {
		t.Errorf("a check without lineage after one with: ran %d, lineage %v", third.Ran, third.Lineage)
	}
}

// TestOriginsCycle: lineage that loops (two actions reading each other,
// which Check never infers but a caller's Result may hold) ends, keeping
// what lies outside the loop.
func TestOriginsCycle(t *testing.T) {
	in := func(table, column string) gsql.Input { return gsql.Input{Table: table, Column: column, Identity: true} }
	res := &Result{Lineage: map[string][]gsql.ColumnLineage{
		"p.d.x": {{Name: "a", Inputs: []gsql.Input{in("p.d.y", "b")}}},
		"p.d.y": {{Name: "b", Inputs: []gsql.Input{in("p.d.x", "a"), in("p.w.t", "c")}}},
	}}
	origins, why := res.Origins("p.d.x", "a")
	if got, want := inputStrings(origins), []string{"=p.w.t.c"}; !slices.Equal(got, want) {
		t.Errorf("origins %q, want %q", got, want)
	}
	if len(why) != 1 || !strings.Contains(why[0], "loops back to p.d.x.a") {
		t.Errorf("unresolved %q, want the loop named", why)
	}
}

// BenchmarkCheckLineage is a cold check of the benchmark project with and
// without lineage, and the origins of every column of the last action
// (the deepest chains): what `dfd lineage` adds to `dfd check`.
func BenchmarkCheckLineage(b *testing.B) {
	g, md := benchGraph(400, 1)
	opts := benchOptions(b, md)
	for _, lineage := range []bool{false, true} {
		b.Run(fmt.Sprintf("actions=400/lineage=%v", lineage), func(b *testing.B) {
			opts.Lineage = lineage
			for b.Loop() {
				res, err := Check(context.Background(), g, opts)
				if err != nil || (lineage && len(res.Lineage) != len(res.Schemas)) {
					b.Fatalf("%v: lineage of %d of %d", err, len(res.Lineage), len(res.Schemas))
				}
			}
		})
	}
	opts.Lineage = true
	res, err := Check(context.Background(), g, opts)
	if err != nil {
		b.Fatal(err)
	}
	last := g.Tables[len(g.Tables)-1].GetTarget()
	target := last.GetDatabase() + "." + last.GetSchema() + "." + last.GetName()
	b.Run("origins-of-one-action", func(b *testing.B) {
		for b.Loop() {
			cols, _, ok := res.ActionLineage(target)
			if !ok || len(cols) == 0 || len(cols[0].Origins) == 0 {
				b.Fatalf("%s: %v %+v", target, ok, cols)
			}
		}
	})
}
