package source

import "strings"

// OutputColumnEnds are where, in a .sqlx file's main SQL (outside its
// blocks, ${…} placeholders, comments and quotes), each of names is
// written as an output column, as the offset just after the name: its
// `AS name` when there is exactly one, else its one bare occurrence in a
// SELECT list when the name is written nowhere else. A name written so
// that the place is not certain (twice, only inside a string) has none:
// a hint in the wrong place would mislead.
func (x *SQLX) OutputColumnEnds(src []byte, names []string) map[string]int {
	mask := x.mainSQLMask(src)
	type occ struct {
		end    int
		as     bool
		inList bool
	}
	found := map[string][]occ{}
	want := map[string]string{}
	for _, n := range names {
		want[strings.ToLower(n)] = n
	}
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; i < len(src); {
		if !mask[i] || !isWord(src[i]) || i > 0 && isWord(src[i-1]) {
			i++
			continue
		}
		j := i
		for j < len(src) && mask[j] && isWord(src[j]) {
			j++
		}
		if j < len(src) && (isWord(src[j]) || src[j] == '.') || i > 0 && src[i-1] == '.' {
			i = j // part of a longer word, or a path (t.col): not an output name
			continue
		}
		if n, ok := want[strings.ToLower(string(src[i:j]))]; ok {
			k := i
			for k > 0 && (src[k-1] == ' ' || src[k-1] == '\t' || src[k-1] == '\n' || src[k-1] == '\r') {
				k--
			}
			as := k >= 2 && strings.EqualFold(string(src[k-2:k]), "as") && (k == 2 || !isWord(src[k-3]))
			found[n] = append(found[n], occ{end: j, as: as, inList: x.ClauseAt(src, i) == "select"})
		}
		i = j
	}
	out := map[string]int{}
	for n, occs := range found {
		var as []occ
		for _, o := range occs {
			if o.as {
				as = append(as, o)
			}
		}
		switch {
		case len(as) == 1:
			out[n] = as[0].end
		case len(as) == 0 && len(occs) == 1 && occs[0].inList:
			out[n] = occs[0].end
		}
	}
	return out
}

// mainSQLMask marks the bytes of src that are the main SQL's own text:
// outside blocks and placeholders, comments and quoted text.
func (x *SQLX) mainSQLMask(src []byte) []bool {
	mask := make([]bool, len(src))
	for i := range mask {
		mask[i] = true
	}
	clear := func(s Span) {
		for i := max(s.Start, 0); i < min(s.End, len(src)); i++ {
			mask[i] = false
		}
	}
	for _, b := range x.Blocks {
		clear(b.Span)
	}
	for _, p := range x.Placeholders {
		clear(p)
	}
	for i := 0; i < len(src); i++ {
		if !mask[i] {
			continue
		}
		start := i
		switch c := src[i]; {
		case c == '-' && i+1 < len(src) && src[i+1] == '-', c == '#':
			for i < len(src) && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
				i++
			}
			i++
		case c == '\'' || c == '"' || c == '`':
			i++
			for i < len(src) && src[i] != c {
				if src[i] == '\\' {
					i++
				}
				i++
			}
		default:
			continue
		}
		clear(Span{start, min(i+1, len(src))})
	}
	return mask
}
