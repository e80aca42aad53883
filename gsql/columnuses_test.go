package gsql

import (
	"context"
	"strings"
	"testing"
)

// ColumnUses on queries reading proj.sales.orders: each use is written
// here as the text around it with the name in [brackets] ("o.[customer_id]"),
// a "+" after the bracket marking an implicit one (a whole select item
// without alias); hidden are substrings of the reasons.
func TestColumnUses(t *testing.T) {
	cases := []struct {
		name   string
		sql    string
		uses   []string
		hidden []string
	}{
		{"alias qualifiers and a join", "SELECT o.customer_id AS cid, c.name FROM proj.sales.orders o JOIN proj.sales.customers c ON c.customer_id = o.customer_id",
			[]string{"o.[customer_id] AS", "= o.[customer_id]"}, nil},
		{"bare column, implicit output", "SELECT customer_id, amount FROM sales.orders WHERE customer_id > 0",
			[]string{"SELECT [customer_id]+", "WHERE [customer_id]"}, nil},
		{"qualified implicit output", "SELECT t.customer_id FROM sales.orders t",
			[]string{"t.[customer_id]+"}, nil},
		{"back-quoted", "SELECT `customer_id` AS c FROM sales.orders",
			[]string{"[`customer_id`] AS"}, nil},
		{"computed", "SELECT customer_id + 1 AS x, SUM(amount) AS s FROM sales.orders GROUP BY customer_id",
			[]string{"SELECT [customer_id] + 1", "BY [customer_id]"}, nil},
		{"group by a bare item", "SELECT customer_id, SUM(amount) AS s FROM sales.orders GROUP BY customer_id",
			[]string{"SELECT [customer_id]+"}, nil},
		{"through a CTE", "WITH x AS (SELECT customer_id FROM sales.orders) SELECT x.customer_id FROM x",
			[]string{"(SELECT [customer_id]+ FROM sa"}, nil},
		{"through a subquery: the outer name is the subquery's", "SELECT s.customer_id, s.customer_id + 1 AS y FROM (SELECT customer_id FROM sales.orders) s",
			[]string{"(SELECT [customer_id]+"}, nil},
		{"correlated", "SELECT (SELECT COUNT(*) FROM sales.customers c WHERE c.customer_id = o.customer_id) AS n FROM sales.orders o",
			[]string{"= o.[customer_id]"}, nil},
		{"another table's column of the same name", "SELECT c.customer_id FROM sales.customers c", nil, nil},
		{"select star", "SELECT * FROM sales.orders", nil, []string{"through *"}},
		{"dot star", "SELECT o.*, 1 AS one FROM sales.orders o", nil, []string{"through *"}},
		{"star in a subquery", "SELECT customer_id FROM (SELECT * FROM sales.orders)", nil, []string{"through *"}},
		{"using", "SELECT c.name FROM sales.orders JOIN sales.customers c USING (customer_id)", nil, []string{"USING"}},
		{"not read", "SELECT amount FROM sales.orders", nil, nil},
		{"an alias and GROUP BY the column", "SELECT customer_id AS c, SUM(amount) AS s FROM sales.orders GROUP BY customer_id",
			[]string{"SELECT [customer_id] AS", "BY [customer_id]"}, nil},
		{"self join", "SELECT a.customer_id AS x, b.customer_id AS y FROM sales.orders a JOIN sales.orders b ON a.order_id = b.order_id",
			[]string{"a.[customer_id] AS x", "b.[customer_id] AS y"}, nil},
		{"ORDER BY the implicit output", "SELECT customer_id FROM sales.orders ORDER BY customer_id",
			[]string{"SELECT [customer_id]+"}, []string{"ORDER BY an output column"}},
		{"a string and a comment are not names", "SELECT customer_id AS c, 'customer_id' AS s FROM sales.orders -- customer_id",
			[]string{"SELECT [customer_id] AS"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := lineageCatalog(t)
			an, u, err := c.ColumnUses(context.Background(), tc.sql, "proj.sales.orders", "customer_id")
			if err != nil {
				t.Fatal(err)
			}
			if an.Problem != nil || an.Skipped != "" || u == nil {
				t.Fatalf("not analysed: %+v %+v", an.Problem, an.Skipped)
			}
			var got []string
			for _, x := range u.Uses {
				got = append(got, marked(tc.sql, x))
			}
			for _, w := range tc.uses {
				if !containsStr(got, w) {
					t.Errorf("uses %q, want one %q", got, w)
				}
			}
			if len(got) != len(tc.uses) {
				t.Errorf("uses %q, want %d", got, len(tc.uses))
			}
			var why []string
			for _, h := range u.Hidden {
				why = append(why, h.Why)
			}
			for _, w := range tc.hidden {
				if !strings.Contains(strings.Join(why, "|"), w) {
					t.Errorf("hidden %q, want one saying %q", why, w)
				}
			}
			if len(tc.hidden) == 0 && len(why) > 0 {
				t.Errorf("unexpected hidden uses %q", why)
			}
		})
	}
}

// marked is the use in its context: up to 8 bytes around the name, which
// is in brackets.
func marked(sql string, u ColumnUse) string {
	mark := "]"
	if u.Implicit {
		mark = "]+"
	}
	return sql[max(u.Start-8, 0):u.Start] + "[" + sql[u.Start:u.End] + mark + sql[u.End:min(u.End+8, len(sql))]
}

func containsStr(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// After ColumnUses, the catalog analyses without recording locations
// again, and its answers are Analyze's.
func TestColumnUsesLeavesAnalyzeAlone(t *testing.T) {
	c := lineageCatalog(t)
	sql := "SELECT customer_id AS c FROM sales.orders"
	before, err := c.Analyze(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	an, _, err := c.ColumnUses(context.Background(), sql, "proj.sales.orders", "customer_id")
	if err != nil {
		t.Fatal(err)
	}
	after, err := c.Analyze(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	if c.uses != nil || c.usesOut != nil {
		t.Errorf("ColumnUses left its request behind")
	}
	for _, a := range []Analysis{an, after} {
		if len(a.Columns) != 1 || a.Columns[0].Name != before.Columns[0].Name {
			t.Errorf("columns %+v, want %+v", a.Columns, before.Columns)
		}
	}
}
