package gsql

import (
	"context"
	"strings"
	"testing"
)

func typ(k string) Type { return Type{Kind: k} }

func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := NewCatalog("proj")
	if err != nil {
		t.Fatal(err)
	}
	page := Type{Kind: "STRUCT", Fields: []Column{{Name: "url", Type: typ("STRING")}, {Name: "referrer", Type: typ("STRING")}}}
	for _, tb := range []Table{
		{Path: "proj.sales.orders", Columns: []Column{
			{Name: "order_id", Type: typ("INT64")}, {Name: "customer_id", Type: typ("INT64")},
			{Name: "amount", Type: typ("NUMERIC")}, {Name: "ordered_at", Type: typ("TIMESTAMP")},
			{Name: "status", Type: typ("STRING")}, {Name: "tags", Type: Type{Kind: "ARRAY", Elem: &Type{Kind: "STRING"}}},
			{Name: "page", Type: page}, {Name: "payload", Type: typ("JSON")}, {Name: "location", Type: typ("GEOGRAPHY")},
		}, Pseudo: []Column{{Name: "_PARTITIONTIME", Type: typ("TIMESTAMP")}, {Name: "_PARTITIONDATE", Type: typ("DATE")}}},
		{Path: "proj.sales.customers", Columns: []Column{{Name: "customer_id", Type: typ("INT64")}, {Name: "name", Type: typ("STRING")}, {Name: "country", Type: typ("STRING")}}},
		{Path: "other.analytics.events_*", Columns: []Column{{Name: "event", Type: typ("STRING")}},
			Pseudo: []Column{{Name: "_TABLE_SUFFIX", Type: typ("STRING")}}},
	} {
		if err := c.Add(tb); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestAnalyzeValid(t *testing.T) {
	c := testCatalog(t)
	ctx := context.Background()
	for _, sql := range []string{
		"SELECT order_id, amount FROM `proj.sales.orders`",
		"SELECT o.order_id FROM proj.sales.orders AS o",
		"SELECT order_id FROM sales.orders",
		"SELECT order_id FROM `sales.orders`",
		"SELECT * FROM `proj`.`sales`.`orders`",
		"SELECT customer_id, SUM(amount) AS total FROM `proj.sales.orders` GROUP BY 1 QUALIFY ROW_NUMBER() OVER (ORDER BY total DESC) <= 10",
		"SELECT * FROM (SELECT status, amount FROM `proj.sales.orders`) PIVOT (SUM(amount) FOR status IN ('new', 'paid'))",
		"SELECT * FROM `proj.sales.customers` UNPIVOT (v FOR k IN (name, country))",
		"SELECT order_id, tag FROM `proj.sales.orders`, UNNEST(tags) AS tag",
		"SELECT o.order_id, t FROM `proj.sales.orders` o, o.tags t",
		"SELECT SAFE_DIVIDE(amount, 0), SAFE_CAST(status AS INT64), SAFE.LOG(10, 2) FROM `proj.sales.orders`",
		"SELECT page.url, page.referrer FROM `proj.sales.orders`",
		"SELECT JSON_VALUE(payload, '$.x'), ST_ASTEXT(location), ST_DWITHIN(location, ST_GEOGPOINT(1, 2), 10) FROM `proj.sales.orders`",
		"SELECT event FROM `other.analytics.events_*` WHERE _TABLE_SUFFIX BETWEEN '20240101' AND '20240131'",
		"SELECT _PARTITIONTIME AS pt, order_id FROM `proj.sales.orders` WHERE _PARTITIONDATE = '2024-01-01'",
		"WITH big AS (SELECT * FROM `proj.sales.orders` WHERE amount > 100) SELECT b.order_id, c.name FROM big b JOIN `proj.sales.customers` c USING (customer_id)",
		"SELECT DATE_TRUNC(DATE(ordered_at), MONTH) AS m, COUNT(DISTINCT customer_id) FROM `proj.sales.orders` GROUP BY ALL",
		"FROM `proj.sales.orders` |> WHERE amount > 1 |> AGGREGATE SUM(amount) AS s GROUP BY status",
		"SELECT ARRAY_AGG(STRUCT(order_id, amount) ORDER BY amount DESC LIMIT 3) FROM `proj.sales.orders`",
		"INSERT INTO `proj.sales.customers` (customer_id, name, country) SELECT customer_id, status, status FROM `proj.sales.orders`",
	} {
		a, err := c.Analyze(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		if a.Problem != nil || a.Skipped != "" {
			t.Errorf("%s:\n  problem %+v skipped %q", sql, a.Problem, a.Skipped)
		}
	}
}

func TestAnalyzeProblems(t *testing.T) {
	c := testCatalog(t)
	ctx := context.Background()
	for _, tc := range []struct {
		sql      string
		kind     ErrorKind
		contains string
		line     int
		col      int
	}{
		{"SELECT order_idd\nFROM `proj.sales.orders`", UnknownColumn, "Did you mean order_id?", 1, 8},
		{"SELECT o.order_id\nFROM `proj.sales.orders` o\nJOIN `proj.sales.customers` c ON c.customer_idx = o.customer_id", UnknownColumn, "customer_idx", 3, 0},
		{"SELECT amount + status FROM `proj.sales.orders`", TypeMismatch, "No matching signature for operator +", 1, 8},
		{"SELECT page.urll FROM `proj.sales.orders`", UnknownColumn, "urll", 1, 0},
		{"SELECT NO_SUCH_FN(1)", UnknownFunction, "NO_SUCH_FN", 1, 8},
		{"SELECT 1 FROM orders", UnknownTable, "orders", 1, 15},
	} {
		a, err := c.Analyze(ctx, tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		if a.Problem == nil {
			t.Errorf("%q: no problem (skipped %q)", tc.sql, a.Skipped)
			continue
		}
		p := a.Problem
		if p.Kind != tc.kind || !strings.Contains(p.Message, tc.contains) || p.Line != tc.line || (tc.col != 0 && p.Column != tc.col) {
			t.Errorf("%q: %+v, want %s containing %q at %d:%d", tc.sql, p, tc.kind, tc.contains, tc.line, tc.col)
		}
	}
}

func TestAnalyzeSkipsWhatItCannotKnow(t *testing.T) {
	c := testCatalog(t)
	ctx := context.Background()
	for _, tc := range []struct{ sql, skipped string }{
		{"SELECT x FROM `proj.sales.unknown`", "reads proj.sales.unknown"},
		{"SELECT x FROM `proj.sales.unknown` JOIN `proj.sales.orders` USING (order_id)", "reads proj.sales.unknown"},
		{"SELECT * FROM `proj.sales.INFORMATION_SCHEMA.TABLES`", "INFORMATION_SCHEMA"},
		{"ALTER PROJECT proj SET OPTIONS (`region-us.default_time_zone` = 'UTC')", "GoogleSQL does not know ALTER PROJECT statements yet"},
		{"SET x = 2", "which its script did not declare"},
		{"SET (x, y) = (1, 2)", "scripting statement (SET)"},
		{"SELECT CONTAINS_SUBSTR(status, 'a') FROM `proj.sales.orders`", "BigQuery function GoogleSQL's analyzer lacks"},
		{"SELECT ML.PREDICT(1)", "routine dfd does not know"},
		{"SELECT sales.my_udf(order_id) FROM `proj.sales.orders`", "routine dfd does not know"},
		{"SELECT * FROM ML.PREDICT(MODEL `proj.sales.m`, (SELECT 1))", "does not model"},
		{"SELECT * FROM APPENDS(TABLE `proj.sales.orders`, NULL, NULL)", "does not model"},
	} {
		a, err := c.Analyze(ctx, tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		if a.Problem != nil || !strings.Contains(a.Skipped, tc.skipped) {
			t.Errorf("%q: problem %+v skipped %q, want skipped with %q", tc.sql, a.Problem, a.Skipped, tc.skipped)
		}
	}
}

// Output schemas feed the next action: an inferred table is analysed
// against like a warehouse one.
func TestAnalyzeChain(t *testing.T) {
	c := testCatalog(t)
	ctx := context.Background()
	a, err := c.Analyze(ctx, "SELECT customer_id, SUM(amount) AS total, ARRAY_AGG(status) AS statuses, ANY_VALUE(page) AS page FROM `proj.sales.orders` GROUP BY 1")
	if err != nil || a.Problem != nil {
		t.Fatalf("%+v %v", a, err)
	}
	got := []string{}
	for _, col := range a.Columns {
		got = append(got, col.Name+" "+col.Type.String())
	}
	want := "customer_id INT64, total NUMERIC, statuses ARRAY<STRING>, page STRUCT<url STRING, referrer STRING>"
	if strings.Join(got, ", ") != want {
		t.Fatalf("columns %s, want %s", strings.Join(got, ", "), want)
	}
	if err := c.Add(Table{Path: "proj.marts.totals", Columns: a.Columns}); err != nil {
		t.Fatal(err)
	}
	b, err := c.Analyze(ctx, "SELECT page.url, totl FROM `proj.marts.totals`")
	if err != nil {
		t.Fatal(err)
	}
	if b.Problem == nil || !strings.Contains(b.Problem.Message, "Did you mean total?") {
		t.Fatalf("downstream typo: %+v", b)
	}
}

func TestAnalyzeQueryParametersAreBigQuerys(t *testing.T) {
	c := testCatalog(t)
	a, err := c.Analyze(context.Background(), "SELECT order_id FROM `proj.sales.orders` WHERE ordered_at > @since")
	if err != nil || a.Problem != nil || a.Skipped != "" {
		t.Fatalf("%+v %v", a, err)
	}
}

// A temporary function declared in pre_operations resolves in the
// statements after it; one declared twice, differently, is not trusted.
func TestAnalyzeTemporaryFunctions(t *testing.T) {
	c := testCatalog(t)
	ctx := context.Background()
	must := func(sql string) Analysis {
		t.Helper()
		a, err := c.Analyze(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := must("CREATE TEMP FUNCTION cents(x NUMERIC) RETURNS INT64 AS (CAST(x * 100 AS INT64))"); a.Problem != nil || a.Skipped != "" {
		t.Fatalf("declaration: %+v", a)
	}
	if a := must("SELECT cents(amount) AS c FROM `proj.sales.orders`"); a.Problem != nil || a.Skipped != "" || len(a.Columns) != 1 || a.Columns[0].Type.Kind != "INT64" {
		t.Fatalf("call: %+v", a)
	}
	if a := must("SELECT cents(status) FROM `proj.sales.orders`"); a.Problem == nil || a.Problem.Kind != TypeMismatch {
		t.Fatalf("call with a STRING: %+v", a)
	}
	if a := must("CREATE TEMP FUNCTION anything(x ANY TYPE) AS (x)"); a.Problem != nil {
		t.Fatalf("templated declaration: %+v", a)
	}
	if a := must("SELECT anything(1)"); a.Problem != nil || !strings.Contains(a.Skipped, "could not register") {
		t.Fatalf("templated call: %+v", a)
	}
	// Another action's different cents: neither is trusted any more.
	must("CREATE TEMP FUNCTION cents(x STRING) RETURNS INT64 AS (LENGTH(x))")
	if a := must("SELECT cents(status) FROM `proj.sales.orders`"); a.Problem != nil || a.Skipped == "" {
		t.Fatalf("call after a second declaration: %+v", a)
	}
}

func TestAnalyzeSeverities(t *testing.T) {
	c := testCatalog(t)
	for _, tc := range []struct {
		sql  string
		kind ErrorKind
	}{
		{"SELECT customer_id FROM `proj.sales.orders` JOIN `proj.sales.customers` USING (order_id)", UnknownColumn},
		{"SELECT customer_id FROM `proj.sales.orders` o JOIN `proj.sales.customers` c ON o.customer_id = c.customer_id", OtherError},
		{"SELECT status, SUM(amount) FROM `proj.sales.orders`", OtherError},
	} {
		a, err := c.Analyze(context.Background(), tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		if a.Problem == nil || a.Problem.Kind != tc.kind {
			t.Errorf("%s: %+v, want %s", tc.sql, a.Problem, tc.kind)
		}
	}
}

// A catalog that carries a previous one's temporary functions registers
// them again from the same statements without analysing those, with the
// same outcome and the same StateKey.
func TestCarryTemporaryFunctions(t *testing.T) {
	ctx := context.Background()
	decl := "CREATE TEMP FUNCTION cents(x NUMERIC) RETURNS INT64 AS (CAST(x * 100 AS INT64))"
	first := testCatalog(t)
	if a, err := first.Analyze(ctx, decl); err != nil || a.Problem != nil || a.Skipped != "" {
		t.Fatalf("declaration: %+v %v", a, err)
	}
	second := testCatalog(t)
	second.Carry(first)
	if a, err := second.Analyze(ctx, decl); err != nil || a.Problem != nil || a.Skipped != "" {
		t.Fatalf("carried declaration: %+v %v", a, err)
	}
	if first.StateKey() == "" || second.StateKey() != first.StateKey() {
		t.Errorf("state keys %q and %q", first.StateKey(), second.StateKey())
	}
	if a, err := second.Analyze(ctx, "SELECT cents(amount) FROM `proj.sales.orders`"); err != nil || a.Problem != nil || len(a.Columns) != 1 || a.Columns[0].Type.Kind != "INT64" {
		t.Fatalf("call: %+v %v", a, err)
	}
	if a, err := second.Analyze(ctx, "SELECT cents(status) FROM `proj.sales.orders`"); err != nil || a.Problem == nil || a.Problem.Kind != TypeMismatch {
		t.Fatalf("call with a STRING: %+v %v", a, err)
	}
	// Not declared in the third catalog: carrying is no declaration.
	third := testCatalog(t)
	third.Carry(second)
	if a, err := third.Analyze(ctx, "SELECT cents(amount) FROM `proj.sales.orders`"); err != nil || a.Problem == nil || a.Problem.Kind != UnknownFunction {
		t.Fatalf("call without the declaration: %+v %v", a, err)
	}
}
