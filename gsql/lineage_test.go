package gsql

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// lineageCatalog is testCatalog plus a table of nested and repeated
// fields, as GA4-like exports have them.
func lineageCatalog(t testing.TB) *Catalog {
	t.Helper()
	c, err := NewCatalog("proj")
	if err != nil {
		t.Fatal(err)
	}
	str := func(fields ...Column) Type { return Type{Kind: "STRUCT", Fields: fields} }
	page := str(Column{Name: "url", Type: typ("STRING")}, Column{Name: "referrer", Type: typ("STRING")})
	item := str(Column{Name: "sku", Type: typ("STRING")}, Column{Name: "qty", Type: typ("INT64")}, Column{Name: "price", Type: typ("NUMERIC")})
	user := str(Column{Name: "id", Type: typ("INT64")},
		Column{Name: "geo", Type: str(Column{Name: "country", Type: typ("STRING")}, Column{Name: "city", Type: typ("STRING")})})
	for _, tb := range []Table{
		{Path: "proj.sales.orders", Columns: []Column{
			{Name: "order_id", Type: typ("INT64")}, {Name: "customer_id", Type: typ("INT64")},
			{Name: "amount", Type: typ("NUMERIC")}, {Name: "ordered_at", Type: typ("TIMESTAMP")},
			{Name: "status", Type: typ("STRING")}, {Name: "tags", Type: Type{Kind: "ARRAY", Elem: &Type{Kind: "STRING"}}},
		}, Pseudo: []Column{{Name: "_PARTITIONTIME", Type: typ("TIMESTAMP")}}},
		{Path: "proj.sales.customers", Columns: []Column{{Name: "customer_id", Type: typ("INT64")}, {Name: "name", Type: typ("STRING")}, {Name: "country", Type: typ("STRING")}}},
		{Path: "proj.web.sessions", Columns: []Column{
			{Name: "session_id", Type: typ("STRING")}, {Name: "page", Type: page}, {Name: "user", Type: user},
			{Name: "items", Type: Type{Kind: "ARRAY", Elem: &item}},
		}},
		// A table of the same short name in another dataset: lineage must
		// name the dataset the statement read.
		{Path: "proj.archive.orders", Columns: []Column{{Name: "order_id", Type: typ("INT64")}}},
		// And one of the same name and the same schema, which nothing
		// tells apart from the other.
		{Path: "proj.staging.customers", Columns: []Column{{Name: "customer_id", Type: typ("INT64")}, {Name: "name", Type: typ("STRING")}, {Name: "country", Type: typ("STRING")}}},
	} {
		if err := c.Add(tb); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// lineageCase is one query and the lineage BigQuery's semantics give its
// output columns. An input is written "table.column" with the table's
// dataset and name only ("sales.orders.amount"); a leading "=" marks an
// identity input (the values unchanged).
type lineageCase struct {
	name string
	sql  string
	want []wantColumn
}

type wantColumn struct {
	name   string
	inputs []string
	// fields, when set, is the lineage of each field of a STRUCT built in
	// the query, by field name.
	fields map[string][]string
	// unresolved: part of the lineage is unknown (Unresolved not empty).
	unresolved bool
}

func col(name string, inputs ...string) wantColumn { return wantColumn{name: name, inputs: inputs} }

var lineageCases = []lineageCase{
	{"rename", "SELECT order_id AS id, amount, status AS s FROM `proj.sales.orders`", []wantColumn{
		col("id", "=sales.orders.order_id"), col("amount", "=sales.orders.amount"), col("s", "=sales.orders.status"),
	}},
	{"unquoted three-part name", "SELECT o.order_id FROM proj.sales.orders AS o", []wantColumn{
		col("order_id", "=sales.orders.order_id"),
	}},
	{"dataset.table in the default project", "SELECT order_id FROM sales.orders", []wantColumn{
		col("order_id", "=sales.orders.order_id"),
	}},
	{"same short name, other dataset", "SELECT order_id FROM proj.archive.orders", []wantColumn{
		col("order_id", "=archive.orders.order_id"),
	}},
	{"computed", "SELECT amount * 2 AS twice, CAST(order_id AS STRING) AS id, CONCAT(status, '-', CAST(customer_id AS STRING)) AS k FROM `proj.sales.orders`", []wantColumn{
		col("twice", "sales.orders.amount"), col("id", "sales.orders.order_id"),
		col("k", "sales.orders.customer_id", "sales.orders.status"),
	}},
	{"WHERE filters, it is no input", "SELECT status FROM `proj.sales.orders` WHERE amount > 10 AND customer_id IS NOT NULL", []wantColumn{
		col("status", "=sales.orders.status"),
	}},
	{"CTE", "WITH a AS (SELECT customer_id AS cid, amount * 2 AS dbl FROM `proj.sales.orders`), b AS (SELECT cid AS who, dbl FROM a) SELECT who, dbl FROM b", []wantColumn{
		col("who", "=sales.orders.customer_id"), col("dbl", "sales.orders.amount"),
	}},
	{"CTE read twice", "WITH a AS (SELECT order_id, amount FROM `proj.sales.orders`) SELECT x.order_id, y.amount FROM a x JOIN a y USING (order_id)", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("amount", "=sales.orders.amount"),
	}},
	{"subquery in FROM", "SELECT x FROM (SELECT status AS x FROM `proj.sales.orders` WHERE amount > 0) WHERE x != 'void'", []wantColumn{
		col("x", "=sales.orders.status"),
	}},
	{"scalar subquery", "SELECT name, (SELECT SUM(o.amount) FROM `proj.sales.orders` o WHERE o.customer_id = c.customer_id) AS total FROM `proj.sales.customers` c", []wantColumn{
		col("name", "=sales.customers.name"), col("total", "sales.orders.amount"),
	}},
	{"EXISTS decides, it is no input", "SELECT EXISTS(SELECT 1 FROM `proj.sales.orders` o WHERE o.customer_id = c.customer_id) AS has_orders FROM `proj.sales.customers` c", []wantColumn{
		col("has_orders"),
	}},
	{"JOIN ON", "SELECT o.order_id, c.name, o.amount + 1 AS a FROM `proj.sales.orders` o JOIN `proj.sales.customers` c ON o.customer_id = c.customer_id", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("name", "=sales.customers.name"), col("a", "sales.orders.amount"),
	}},
	// INNER JOIN USING's column is the left side's; FULL JOIN USING's is
	// COALESCE(left, right): both, unchanged.
	{"JOIN USING", "SELECT customer_id, name FROM `proj.sales.orders` JOIN `proj.sales.customers` USING (customer_id)", []wantColumn{
		col("customer_id", "=sales.orders.customer_id"), col("name", "=sales.customers.name"),
	}},
	{"FULL JOIN USING", "SELECT customer_id FROM `proj.sales.orders` FULL JOIN `proj.sales.customers` USING (customer_id)", []wantColumn{
		col("customer_id", "=sales.customers.customer_id", "=sales.orders.customer_id"),
	}},
	{"self join", "SELECT a.order_id, b.order_id AS other FROM `proj.sales.orders` a JOIN `proj.sales.orders` b ON a.customer_id = b.customer_id", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("other", "=sales.orders.order_id"),
	}},
	{"SELECT *", "SELECT * FROM `proj.sales.customers`", []wantColumn{
		col("customer_id", "=sales.customers.customer_id"), col("name", "=sales.customers.name"), col("country", "=sales.customers.country"),
	}},
	{"SELECT * of a join", "SELECT * FROM `proj.sales.customers` c JOIN (SELECT customer_id AS cid, amount FROM `proj.sales.orders`) o ON c.customer_id = o.cid", []wantColumn{
		col("customer_id", "=sales.customers.customer_id"), col("name", "=sales.customers.name"), col("country", "=sales.customers.country"),
		col("cid", "=sales.orders.customer_id"), col("amount", "=sales.orders.amount"),
	}},
	{"t.* and a column", "SELECT c.*, o.amount FROM `proj.sales.customers` c JOIN `proj.sales.orders` o USING (customer_id)", []wantColumn{
		col("customer_id", "=sales.customers.customer_id"), col("name", "=sales.customers.name"), col("country", "=sales.customers.country"),
		col("amount", "=sales.orders.amount"),
	}},
	{"* EXCEPT", "SELECT * EXCEPT (ordered_at, status, tags) FROM `proj.sales.orders`", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("customer_id", "=sales.orders.customer_id"), col("amount", "=sales.orders.amount"),
	}},
	{"* REPLACE", "SELECT * REPLACE (UPPER(name) AS name) FROM `proj.sales.customers`", []wantColumn{
		col("customer_id", "=sales.customers.customer_id"), col("name", "sales.customers.name"), col("country", "=sales.customers.country"),
	}},
	{"aggregates", "SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n, COUNT(DISTINCT status) AS statuses, MAX(ordered_at) AS last FROM `proj.sales.orders` GROUP BY customer_id HAVING SUM(amount) > 10", []wantColumn{
		col("customer_id", "=sales.orders.customer_id"), col("total", "sales.orders.amount"), col("n"),
		col("statuses", "sales.orders.status"), col("last", "sales.orders.ordered_at"),
	}},
	{"GROUP BY a key not selected", "SELECT SUM(amount) AS total FROM `proj.sales.orders` GROUP BY customer_id", []wantColumn{
		col("total", "sales.orders.amount"),
	}},
	{"GROUP BY an expression", "SELECT DATE(ordered_at) AS day, AVG(amount) AS avg_amount FROM `proj.sales.orders` GROUP BY day", []wantColumn{
		col("day", "sales.orders.ordered_at"), col("avg_amount", "sales.orders.amount"),
	}},
	{"aggregate of an expression, ORDER BY inside", "SELECT STRING_AGG(UPPER(status), ',' ORDER BY ordered_at) AS s, SUM(amount * customer_id) AS w FROM `proj.sales.orders`", []wantColumn{
		col("s", "sales.orders.status"), col("w", "sales.orders.amount", "sales.orders.customer_id"),
	}},
	{"window functions", "SELECT order_id, SUM(amount) OVER (PARTITION BY customer_id ORDER BY ordered_at) AS running, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY ordered_at) AS rn, LAG(status) OVER (ORDER BY ordered_at) AS prev FROM `proj.sales.orders`", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("running", "sales.orders.amount"), col("rn"), col("prev", "sales.orders.status"),
	}},
	{"QUALIFY", "SELECT order_id FROM `proj.sales.orders` QUALIFY ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount DESC) = 1", []wantColumn{
		col("order_id", "=sales.orders.order_id"),
	}},
	// IF, CASE, COALESCE, IFNULL, NULLIF return one of their values
	// unchanged; their conditions only choose which.
	{"IF CASE COALESCE", `SELECT IF(amount > 0, status, 'none') AS s1,
		CASE WHEN amount > 100 THEN 'big' WHEN amount > 10 THEN status ELSE CAST(order_id AS STRING) END AS s2,
		CASE status WHEN 'new' THEN order_id ELSE customer_id END AS s3,
		COALESCE(c.name, c.country, 'n/a') AS s4, IFNULL(c.country, status) AS s5, NULLIF(status, '') AS s6
		FROM ` + "`proj.sales.orders` o JOIN `proj.sales.customers` c USING (customer_id)", []wantColumn{
		col("s1", "=sales.orders.status"),
		col("s2", "sales.orders.order_id", "=sales.orders.status"),
		col("s3", "=sales.orders.customer_id", "=sales.orders.order_id"),
		col("s4", "=sales.customers.country", "=sales.customers.name"),
		col("s5", "=sales.customers.country", "=sales.orders.status"),
		col("s6", "=sales.orders.status"),
	}},
	{"UNION ALL", "SELECT order_id AS id, status FROM `proj.sales.orders` UNION ALL SELECT customer_id, UPPER(name) FROM `proj.sales.customers`", []wantColumn{
		col("id", "=sales.customers.customer_id", "=sales.orders.order_id"),
		col("status", "sales.customers.name", "=sales.orders.status"),
	}},
	{"EXCEPT DISTINCT", "SELECT customer_id FROM `proj.sales.customers` EXCEPT DISTINCT SELECT customer_id FROM `proj.sales.orders`", []wantColumn{
		col("customer_id", "=sales.customers.customer_id", "=sales.orders.customer_id"),
	}},
	{"UNNEST of an array", "SELECT order_id, tag FROM `proj.sales.orders`, UNNEST(tags) AS tag", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("tag", "=sales.orders.tags"),
	}},
	{"UNNEST of ARRAY<STRUCT>", "SELECT s.session_id, it.sku, it.qty * it.price AS line, pos FROM `proj.web.sessions` s, UNNEST(s.items) AS it WITH OFFSET AS pos", []wantColumn{
		col("session_id", "=web.sessions.session_id"), col("sku", "=web.sessions.items.sku"),
		col("line", "web.sessions.items.price", "web.sessions.items.qty"), col("pos"),
	}},
	{"correlated array path", "SELECT it.sku FROM `proj.web.sessions` s, s.items AS it", []wantColumn{
		col("sku", "=web.sessions.items.sku"),
	}},
	{"UNNEST inside a subquery", "SELECT session_id, (SELECT SUM(qty) FROM UNNEST(items)) AS total_qty, ARRAY(SELECT sku FROM UNNEST(items) WHERE qty > 1) AS skus FROM `proj.web.sessions`", []wantColumn{
		col("session_id", "=web.sessions.session_id"), col("total_qty", "web.sessions.items.qty"), col("skus", "=web.sessions.items.sku"),
	}},
	{"STRUCT field reads", "SELECT page.url, page AS p, user.geo.country, s.user.id AS uid FROM `proj.web.sessions` s", []wantColumn{
		col("url", "=web.sessions.page.url"), col("p", "=web.sessions.page"),
		col("country", "=web.sessions.user.geo.country"), col("uid", "=web.sessions.user.id"),
	}},
	{"STRUCT field through a CTE", "WITH x AS (SELECT user, page FROM `proj.web.sessions`) SELECT x.user.geo.city, LOWER(x.page.url) AS u FROM x", []wantColumn{
		col("city", "=web.sessions.user.geo.city"), col("u", "web.sessions.page.url"),
	}},
	{"STRUCT construction", "SELECT STRUCT(order_id AS id, amount * 2 AS twice) AS s FROM `proj.sales.orders`", []wantColumn{
		{name: "s", inputs: []string{"sales.orders.amount", "=sales.orders.order_id"},
			fields: map[string][]string{"id": {"=sales.orders.order_id"}, "twice": {"sales.orders.amount"}}},
	}},
	// A field of a STRUCT built upstream is its field's lineage alone.
	{"field of a built STRUCT", "WITH x AS (SELECT STRUCT(order_id AS id, amount AS amt) AS s FROM `proj.sales.orders`) SELECT s.id, s.amt + 1 AS a FROM x", []wantColumn{
		col("id", "=sales.orders.order_id"), col("a", "sales.orders.amount"),
	}},
	{"SELECT AS STRUCT in ARRAY", "SELECT ARRAY(SELECT AS STRUCT sku, qty * 2 AS q FROM UNNEST(items)) AS lines FROM `proj.web.sessions`", []wantColumn{
		{name: "lines", inputs: []string{"web.sessions.items.qty", "=web.sessions.items.sku"},
			fields: map[string][]string{"sku": {"=web.sessions.items.sku"}, "q": {"web.sessions.items.qty"}}},
	}},
	{"ARRAY_AGG of a STRUCT", "SELECT customer_id, ARRAY_AGG(STRUCT(order_id, amount) ORDER BY ordered_at LIMIT 3) AS recent FROM `proj.sales.orders` GROUP BY 1", []wantColumn{
		col("customer_id", "=sales.orders.customer_id"),
		{name: "recent", inputs: []string{"=sales.orders.amount", "=sales.orders.order_id"},
			fields: map[string][]string{"order_id": {"=sales.orders.order_id"}, "amount": {"=sales.orders.amount"}}},
	}},
	{"ARRAY_AGG then UNNEST", "WITH a AS (SELECT customer_id, ARRAY_AGG(status) AS sts FROM `proj.sales.orders` GROUP BY 1) SELECT st FROM a, UNNEST(sts) st", []wantColumn{
		col("st", "=sales.orders.status"),
	}},
	{"literals and functions of nothing", "SELECT 1 AS one, 'x' AS s, CURRENT_DATE() AS d, NULL AS n, [1, 2] AS arr, STRUCT(1 AS a) AS st", []wantColumn{
		col("one"), col("s"), col("d"), col("n"), col("arr"), col("st"),
	}},
	{"literal next to a read", "SELECT 'web' AS source, order_id FROM `proj.sales.orders`", []wantColumn{
		col("source"), col("order_id", "=sales.orders.order_id"),
	}},
	{"PIVOT", "SELECT * FROM (SELECT customer_id, status, amount FROM `proj.sales.orders`) PIVOT (SUM(amount) FOR status IN ('new', 'paid'))", []wantColumn{
		col("customer_id", "=sales.orders.customer_id"), col("new", "sales.orders.amount"), col("paid", "sales.orders.amount"),
	}},
	{"UNPIVOT", "SELECT * FROM `proj.sales.customers` UNPIVOT (v FOR k IN (name, country))", []wantColumn{
		col("customer_id", "=sales.customers.customer_id"), col("v", "=sales.customers.country", "=sales.customers.name"), col("k"),
	}},
	// A recursive CTE's column is its seed's value or computed from it.
	{"WITH RECURSIVE", "WITH RECURSIVE r AS (SELECT customer_id AS n FROM `proj.sales.customers` UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT n FROM r", []wantColumn{
		col("n", "sales.customers.customer_id"),
	}},
	{"pipe syntax", "FROM `proj.sales.orders` |> WHERE amount > 1 |> AGGREGATE SUM(amount) AS s GROUP BY status |> EXTEND s * 2 AS s2", []wantColumn{
		col("status", "=sales.orders.status"), col("s", "sales.orders.amount"), col("s2", "sales.orders.amount"),
	}},
	{"a scan dfd follows generically", "FROM `proj.sales.orders` |> ASSERT amount >= 0 |> SELECT order_id", []wantColumn{
		col("order_id", "=sales.orders.order_id"),
	}},
	// ARRAY_TRANSFORM(items, e -> e.qty) is ARRAY(SELECT e.qty FROM
	// UNNEST(items) e): the elements are qty's values unchanged.
	{"lambda", "SELECT ARRAY_TRANSFORM(items, e -> e.qty) AS qtys, ARRAY_TRANSFORM(items, e -> e.qty * e.price) AS totals FROM `proj.web.sessions`", []wantColumn{
		col("qtys", "=web.sessions.items.qty"), col("totals", "web.sessions.items.price", "web.sessions.items.qty"),
	}},
	{"array elements", "SELECT items[OFFSET(0)].sku AS first_sku, items[SAFE_ORDINAL(2)].qty AS q2, ARRAY_FIRST(items).price AS p, ARRAY_REVERSE(items) AS r, ARRAY_LENGTH(items) AS n FROM `proj.web.sessions`", []wantColumn{
		col("first_sku", "=web.sessions.items.sku"), col("q2", "=web.sessions.items.qty"), col("p", "=web.sessions.items.price"),
		col("r", "=web.sessions.items"), col("n", "web.sessions.items"),
	}},
	// Tables named "orders" in two datasets, read by three names each:
	// the engine names both "orders"; their schemas tell them apart.
	{"two datasets, one table name", "SELECT a.order_id, b.order_id AS other FROM proj.sales.orders a JOIN archive.orders b USING (order_id)", []wantColumn{
		col("order_id", "=sales.orders.order_id"), col("other", "=archive.orders.order_id"),
	}},
	{"pseudo-column", "SELECT _PARTITIONTIME AS pt FROM `proj.sales.orders`", []wantColumn{
		col("pt", "=sales.orders._PARTITIONTIME"),
	}},
}

func TestLineage(t *testing.T) {
	c := lineageCatalog(t)
	ctx := context.Background()
	for _, tc := range lineageCases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := c.Lineage(ctx, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if a.Problem != nil || a.Skipped != "" {
				t.Fatalf("not analysed: problem %+v, skipped %q", a.Problem, a.Skipped)
			}
			if len(a.Lineage) != len(a.Columns) {
				t.Fatalf("%d columns, %d lineages", len(a.Columns), len(a.Lineage))
			}
			var names []string
			for _, l := range a.Lineage {
				names = append(names, l.Name)
			}
			var wantNames []string
			for _, w := range tc.want {
				wantNames = append(wantNames, w.name)
			}
			if !slices.Equal(names, wantNames) {
				t.Fatalf("columns %v, want %v", names, wantNames)
			}
			for i, w := range tc.want {
				got := a.Lineage[i]
				if got.Type.String() != a.Columns[i].Type.String() {
					t.Errorf("%s: type %s, the analysis says %s", w.name, got.Type, a.Columns[i].Type)
				}
				checkInputs(t, w.name, got.Inputs, w.inputs)
				if (len(got.Unresolved) > 0) != w.unresolved {
					t.Errorf("%s: unresolved %q", w.name, got.Unresolved)
				}
				if w.fields == nil {
					continue
				}
				if len(got.Fields) != len(w.fields) {
					t.Errorf("%s: %d fields, want %d (%+v)", w.name, len(got.Fields), len(w.fields), got.Fields)
				}
				for name, want := range w.fields {
					checkInputs(t, w.name+"."+name, got.Field(name).Inputs, want)
				}
			}
		})
	}
}

func checkInputs(t *testing.T, what string, got []Input, want []string) {
	t.Helper()
	var have []string
	for _, in := range got {
		s := strings.TrimPrefix(in.Table, "proj.") + "." + in.Column
		if in.Identity {
			s = "=" + s
		}
		have = append(have, s)
	}
	// Inputs are sorted by table and column; the want lists are written
	// sorted the same way, "=" aside.
	key := func(s string) string { return strings.TrimPrefix(s, "=") }
	wantSorted := slices.Clone(want)
	slices.SortFunc(wantSorted, func(a, b string) int { return strings.Compare(key(a), key(b)) })
	if !slices.Equal(have, wantSorted) {
		t.Errorf("%s: inputs %q, want %q", what, have, wantSorted)
	}
}

// TestLineageField reads fields off a column's lineage: a STRUCT column
// read whole has its fields' lineage as paths below it.
func TestLineageField(t *testing.T) {
	c := lineageCatalog(t)
	a, err := c.Lineage(context.Background(), "SELECT user, STRUCT(session_id AS sid, page AS pg) AS s FROM `proj.web.sessions`")
	if err != nil || len(a.Lineage) != 2 {
		t.Fatalf("%+v %v", a, err)
	}
	user, s := a.Lineage[0], a.Lineage[1]
	checkInputs(t, "user.geo.city", user.Field("geo", "city").Inputs, []string{"=web.sessions.user.geo.city"})
	if got := user.Field("geo", "city").Type.Kind; got != "STRING" {
		t.Errorf("user.geo.city: type %s, want STRING", got)
	}
	checkInputs(t, "s.sid", s.Field("sid").Inputs, []string{"=web.sessions.session_id"})
	checkInputs(t, "s.pg.url", s.Field("pg", "url").Inputs, []string{"=web.sessions.page.url"})
}

// TestLineageUnresolved: what the walk cannot follow is Unresolved on the
// columns it touches, with no input it is unsure of, and the rest is kept.
func TestLineageUnresolved(t *testing.T) {
	c := lineageCatalog(t)
	// proj.sales.customers and proj.staging.customers have the same
	// columns; read as three names each, the engine calls both
	// "customers".
	a, err := c.Lineage(context.Background(), "SELECT a.name, b.country, o.amount FROM proj.sales.customers a JOIN proj.staging.customers b USING (customer_id) JOIN `proj.sales.orders` o USING (customer_id)")
	if err != nil {
		t.Fatal(err)
	}
	if a.Skipped != "" || a.Problem != nil || len(a.Lineage) != 3 {
		t.Fatalf("%+v", a)
	}
	for _, l := range a.Lineage[:2] {
		if len(l.Inputs) != 0 || len(l.Unresolved) != 1 || !strings.Contains(l.Unresolved[0], "proj.sales.customers, proj.staging.customers") {
			t.Errorf("%s: inputs %v, unresolved %q; want none, and why", l.Name, l.Inputs, l.Unresolved)
		}
	}
	checkInputs(t, "amount", a.Lineage[2].Inputs, []string{"=sales.orders.amount"})
	if len(a.Lineage[2].Unresolved) != 0 {
		t.Errorf("amount: unresolved %q", a.Lineage[2].Unresolved)
	}
}

// TestLineageOnTheCorpus reads the lineage of every query of the
// false-alarm corpus (BigQuery's documented syntax): no error, no panic,
// one lineage per output column, every input a column of a table the
// catalog has.
func TestLineageOnTheCorpus(t *testing.T) {
	data, err := os.ReadFile(falseAlarmCorpus)
	if err != nil {
		t.Fatal(err)
	}
	var corpus faCorpus
	if err := json.Unmarshal(data, &corpus); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var queries, unresolved int
	reasons := map[string]int{}
	for _, e := range corpus.Entries {
		c, err := NewCatalog(corpus.DefaultProject)
		if err != nil {
			t.Fatal(err)
		}
		c.SetLineage(true)
		for _, path := range e.Tables {
			ct := corpus.Tables[path]
			tb := Table{Path: path}
			for _, s := range ct.Columns {
				col, err := parseColumn(s)
				if err != nil {
					t.Fatal(err)
				}
				tb.Columns = append(tb.Columns, col)
			}
			for _, s := range ct.Pseudo {
				col, err := parseColumn(s)
				if err != nil {
					t.Fatal(err)
				}
				tb.Pseudo = append(tb.Pseudo, col)
			}
			if err := c.Add(tb); err != nil {
				t.Fatal(err)
			}
		}
		for _, sql := range e.statements() {
			a, err := c.Analyze(ctx, sql)
			if err != nil {
				t.Fatalf("%s: %v", e.ID, err)
			}
			if a.Columns == nil {
				continue
			}
			queries++
			if len(a.Lineage) != len(a.Columns) {
				t.Errorf("%s: %d columns, %d lineages", e.ID, len(a.Columns), len(a.Lineage))
				continue
			}
			partly := false
			for _, l := range a.Lineage {
				for _, in := range l.Inputs {
					if _, ok := c.Table(in.Table); !ok {
						t.Errorf("%s: %s reads %s, a table the catalog does not have", e.ID, l.Name, in)
					}
				}
				for _, why := range l.Unresolved {
					partly = true
					reasons[why]++
				}
			}
			if partly {
				unresolved++
			}
		}
	}
	t.Logf("%d queries, %d with part of their lineage unresolved", queries, unresolved)
	for why, n := range reasons {
		t.Logf("  %3d %s", n, why)
	}
}

// BenchmarkLineage compares an analysis with lineage to one without, on
// statements of growing shape: the walk's cost is the difference.
func BenchmarkLineage(b *testing.B) {
	c := lineageCatalog(b)
	ctx := context.Background()
	for _, bc := range []struct{ name, sql string }{
		{"simple", "SELECT order_id, amount * 2 AS twice, status FROM `proj.sales.orders` WHERE amount > 0"},
		{"cte-join-window", `WITH o AS (SELECT customer_id, SUM(amount) AS total, COUNT(*) AS n FROM ` + "`proj.sales.orders`" + ` GROUP BY 1)
			SELECT c.*, o.total, o.n, RANK() OVER (PARTITION BY c.country ORDER BY o.total DESC) AS rk,
			COALESCE(c.name, 'anon') AS who FROM ` + "`proj.sales.customers`" + ` c JOIN o USING (customer_id)
			QUALIFY rk <= 10`},
		{"unnest-struct", `SELECT s.session_id, s.page.url, s.user.geo.country, it.sku, SUM(it.qty * it.price) AS revenue,
			ARRAY_AGG(STRUCT(it.sku AS sku, it.qty AS qty)) AS lines FROM ` + "`proj.web.sessions`" + ` s, UNNEST(s.items) it
			GROUP BY 1, 2, 3, 4`},
	} {
		for _, lineage := range []bool{false, true} {
			name := bc.name + "/analyze"
			if lineage {
				name = bc.name + "/lineage"
			}
			b.Run(name, func(b *testing.B) {
				c.SetLineage(lineage)
				defer c.SetLineage(false)
				for b.Loop() {
					a, err := c.Analyze(ctx, bc.sql)
					if err != nil || a.Problem != nil || a.Skipped != "" || (lineage && len(a.Lineage) == 0) {
						b.Fatalf("%+v %v", a, err)
					}
				}
			})
		}
	}
}
