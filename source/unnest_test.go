package source

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestUnnestAliases(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string // alias=path;… sorted by alias
	}{
		{"SELECT i.x FROM t, UNNEST(t.items) AS i", "i=t.items"},
		{"SELECT 1 FROM t CROSS JOIN UNNEST ( t . items ) i", "i=t.items"},
		{"SELECT 1 FROM t LEFT JOIN unnest(items) AS it ON true", "it=items"},
		{"SELECT 1 FROM t, UNNEST(t.items) WITH OFFSET", ""},                    // no alias
		{"SELECT 1 FROM t, UNNEST(t.items) AS i WITH OFFSET AS o", "i=t.items"}, // o is the offset's
		{"SELECT 1 FROM UNNEST([1, 2]) AS n", ""},                               // not a column
		{"SELECT 1 FROM UNNEST(GENERATE_ARRAY(1, 3)) AS n", ""},
		{"SELECT 1 FROM t, UNNEST(t.a) x UNION ALL SELECT 1 FROM t, UNNEST(t.b) x", ""}, // one alias, two paths
		{"SELECT 1 FROM t, UNNEST(t.a) x UNION ALL SELECT 1 FROM t, UNNEST(t.a) AS x", "x=t.a"},
	} {
		got := UnnestAliases([]byte(tc.sql))
		var parts []string
		for _, a := range slices.Sorted(maps.Keys(got)) {
			parts = append(parts, a+"="+strings.Join(got[a], "."))
		}
		if s := strings.Join(parts, ";"); s != tc.want {
			t.Errorf("UnnestAliases(%q) = %q, want %q", tc.sql, s, tc.want)
		}
	}
}

func TestUnnestPath(t *testing.T) {
	aliases := map[string][]string{"i": {"r", "items"}, "l": {"i", "lines"}, "a": {"b"}, "b": {"a"}}
	for _, tc := range []struct {
		path, want string
		rewrote    bool
	}{
		{"i", "r.items", true},
		{"I.sku", "r.items.sku", true},
		{"l", "r.items.lines", true},
		{"r.items", "r.items", false},
		{"a", "", true}, // a cycle stops, wherever it is
	} {
		got, ok := UnnestPath(strings.Split(tc.path, "."), aliases)
		if ok != tc.rewrote || tc.want != "" && strings.Join(got, ".") != tc.want {
			t.Errorf("UnnestPath(%s) = %v, %v; want %s, %v", tc.path, got, ok, tc.want, tc.rewrote)
		}
	}
}
