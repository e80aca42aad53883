package source

import (
	"regexp"
	"strings"
)

// unnestRE matches `UNNEST(path) [AS] alias`, path a column or a dotted
// path to one (`r.items`, `items`, `r.order.lines`). An UNNEST of any other
// expression names no column, and is left out.
var unnestRE = regexp.MustCompile(`(?i)\bUNNEST\s*\(\s*([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\)\s*(?:AS\s+)?([A-Za-z_]\w*)`)

// UnnestAliases maps the lower-cased aliases of a query's UNNESTs of a
// column to that column's path as written, so that `i.` after
// `UNNEST(r.items) AS i` can be completed with the fields of r.items'
// elements. An alias given to two different paths is left out: which one a
// use means depends on scopes dfd does not track. The path's own first
// name may be another UNNEST's alias (UnnestPath follows it).
func UnnestAliases(src []byte) map[string][]string {
	out := map[string][]string{}
	twice := map[string]bool{}
	for _, m := range unnestRE.FindAllSubmatch(src, -1) {
		alias := strings.ToLower(string(m[2]))
		if SQLKeywords[alias] {
			continue // UNNEST(x) WITH OFFSET, UNNEST(x) ON …: no alias
		}
		var path []string
		for _, p := range strings.Split(string(m[1]), ".") {
			path = append(path, strings.TrimSpace(p))
		}
		if prev, ok := out[alias]; ok && strings.Join(prev, ".") != strings.Join(path, ".") {
			twice[alias] = true
		}
		out[alias] = path
	}
	for a := range twice {
		delete(out, a)
	}
	return out
}

// UnnestPath rewrites a member path whose first name is an UNNEST alias of
// aliases (UnnestAliases) into the path of the unnested column, following
// aliases of aliases (`UNNEST(i.lines) AS l` after `UNNEST(r.items) AS i`),
// and reports whether it did. A cycle of aliases stops the rewrite.
func UnnestPath(path []string, aliases map[string][]string) ([]string, bool) {
	rewrote := false
	for range len(aliases) {
		if len(path) == 0 {
			break
		}
		to, ok := aliases[strings.ToLower(path[0])]
		if !ok {
			break
		}
		path = append(append([]string(nil), to...), path[1:]...)
		rewrote = true
	}
	return path, rewrote
}
