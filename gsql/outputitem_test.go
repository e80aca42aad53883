package gsql

import (
	"context"
	"strings"
	"testing"
)

// OutputItem on queries reading proj.sales.orders: the item naming output
// column cid is written as the text around it with the name in
// [brackets], "+" after the bracket marking an alias; or the reason it has
// none.
func TestOutputItem(t *testing.T) {
	cases := []struct {
		name, sql, want, why string
	}{
		{"alias", "SELECT customer_id AS cid, amount FROM sales.orders", "_id AS [cid]+, amoun", ""},
		{"bare path", "SELECT o.amount, o.cid FROM (SELECT customer_id AS cid, amount FROM sales.orders) o", "unt, o.[cid] FROM (", ""},
		{"bare name, any case", "SELECT CID FROM (SELECT customer_id AS cid FROM sales.orders)", "SELECT [CID] FROM (", ""},
		{"quoted alias", "SELECT customer_id AS `cid` FROM sales.orders", "_id AS [`cid`]+ FROM s", ""},
		{"a WITH's final select", "WITH x AS (SELECT customer_id AS cid FROM sales.orders) SELECT cid FROM x", "SELECT [cid] FROM x", ""},
		{"named next to a star", "SELECT * EXCEPT (customer_id), customer_id AS cid FROM sales.orders", "_id AS [cid]+ FROM s", ""},
		{"parenthesised", "(SELECT customer_id AS cid FROM sales.orders)", "_id AS [cid]+ FROM s", ""},
		{"through a star", "SELECT * FROM (SELECT customer_id AS cid FROM sales.orders)", "", "comes through *"},
		{"set operation", "SELECT customer_id AS cid FROM sales.orders UNION ALL SELECT 1", "", "set operation"},
		{"no such column", "SELECT customer_id FROM sales.orders", "", "no output column cid"},
		{"twice", "SELECT customer_id AS cid, order_id AS cid FROM sales.orders", "", "several columns"},
		{"as struct: one unnamed column", "SELECT AS STRUCT customer_id AS cid FROM sales.orders", "", "no output column"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := lineageCatalog(t)
			an, it, err := c.OutputItem(context.Background(), tc.sql, "cid")
			if err != nil {
				t.Fatal(err)
			}
			if an.Problem != nil || an.Skipped != "" || it == nil {
				t.Fatalf("not analysed: %+v %q", an.Problem, an.Skipped)
			}
			if tc.why != "" {
				if !strings.Contains(it.Why, tc.why) {
					t.Errorf("why %q, want one saying %q (item %+v)", it.Why, tc.why, it)
				}
				return
			}
			if it.Why != "" {
				t.Fatalf("refused: %s", it.Why)
			}
			mark := "]"
			if it.Alias {
				mark = "]+"
			}
			got := tc.sql[max(it.Start-7, 0):it.Start] + "[" + tc.sql[it.Start:it.End] + mark + tc.sql[it.End:min(it.End+7, len(tc.sql))]
			if got != tc.want {
				t.Errorf("item %q, want %q", got, tc.want)
			}
		})
	}
	if IsReserved("customer_id") || !IsReserved("select") || !IsReserved("Where") {
		t.Errorf("IsReserved is wrong")
	}
}
