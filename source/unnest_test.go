package source

import (
	"fmt"
	"maps"
	"regexp"
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

// BenchmarkUnnestAliases reads the UNNESTs of a 2 MB query (the size of
// bench/editor.sh's big .sqlx buffer), as a completion after `x.` does.
func BenchmarkUnnestAliases(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("config { type: \"table\" }\nSELECT\n")
	for i := 0; sb.Len() < 2<<20; i++ {
		fmt.Fprintf(&sb, "  src.column_%d AS renamed_column_%d, -- a comment about unnesting nothing\n", i, i)
	}
	sb.WriteString("  1\nFROM ${ref(\"source\")} AS src, UNNEST(src.items) AS item\n")
	src := []byte(sb.String())
	for b.Loop() {
		if got := UnnestAliases(src); len(got) != 1 {
			b.Fatalf("aliases %v", got)
		}
	}
}

// unnestSearch is the search unnestMatches stands for: the pattern with
// \b in front of it, over the whole text.
var unnestSearch = regexp.MustCompile(`(?i)\bUNNEST\s*\(\s*([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\)\s*(?:AS\s+)?([A-Za-z_]\w*)`)

// unnestMatches finds what a search of the whole text does.
func FuzzUnnestMatches(f *testing.F) {
	for _, s := range []string{
		"SELECT i.x FROM t, UNNEST(t.items) AS i",
		"SELECT 1 FROM t CROSS JOIN UNNEST ( t . items ) i, unnest(x)y,UnNeSt(\n a.b\t) AS  c",
		"-- unnesting\nx_unnest(a) b, unnest unnest(a) b, UNNEST(UNNEST(a) b) c",
		"SELECT 1 FROM t, UNNEST(t.a) x UNION ALL SELECT 1 FROM t, UNNEST(t.b) x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		for _, m := range unnestSearch.FindAllSubmatch([]byte(s), -1) {
			want = append(want, string(m[0])+"|"+string(m[1])+"|"+string(m[2]))
		}
		var got []string
		for _, m := range unnestMatches([]byte(s)) {
			got = append(got, string(m[0])+"|"+string(m[1])+"|"+string(m[2]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("unnestMatches(%q) = %q, want %q", s, got, want)
		}
	})
}
