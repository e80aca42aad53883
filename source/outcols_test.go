package source

import (
	"strings"
	"testing"
)

// Output columns are placed only where the place is certain.
func TestOutputColumnEnds(t *testing.T) {
	src := "config { type: \"table\", columns: { total: \"x\" } }\n" +
		"pre_operations { SELECT 1 AS total }\n" +
		"SELECT\n  customer_id,\n  SUM(amount) AS total, -- total of amounts\n  'label AS name' AS label,\n" +
		"  a.region, t.dup AS dup, x AS dup, ${ref(\"t\")} AS placed\nFROM ${ref(\"orders\")} AS a\nWHERE customer_id > 0\n"
	x := ScanSQLX([]byte(src))
	got := x.OutputColumnEnds([]byte(src), []string{"customer_id", "total", "label", "region", "dup", "name", "placed", "missing"})
	want := map[string]string{
		"total":  "SUM(amount) AS total",
		"label":  "' AS label",
		"placed": "} AS placed",
	}
	for n, before := range want {
		end, ok := got[n]
		if !ok || !strings.HasSuffix(src[:end], before) {
			t.Errorf("%s: at %d (%v), want after %q", n, end, ok, before)
		}
	}
	// customer_id is written twice (the list and WHERE); region is a path
	// (a.region); dup twice with AS; name only inside a string; missing
	// nowhere.
	for _, n := range []string{"customer_id", "region", "dup", "name", "missing"} {
		if end, ok := got[n]; ok {
			t.Errorf("%s placed at %d: %q", n, end, src[:end])
		}
	}
	bare := []byte("SELECT id, name FROM t")
	got = ScanSQLX(bare).OutputColumnEnds(bare, []string{"id", "name"})
	if got["id"] != len("SELECT id") || got["name"] != len("SELECT id, name") {
		t.Errorf("bare columns: %v", got)
	}
}
