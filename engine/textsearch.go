package engine

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The bundle patches look for literal pieces of minified code in the
// 0.65–0.77 MB bundle, before every cold compile: about thirty searches of
// the whole text. strings.Index looks for a pattern's first byte, which in
// minified code is as common as '.', 'e' or 'c', and then falls back to
// comparing at every offset: ≈0.3 ms a search. indexText looks for the
// pattern's rarest byte instead (IndexByte runs at memory speed over bytes
// it does not stop at) and compares the pattern where it is found.

// commonBytes are the bytes of core's minified bundle, most common first,
// down to 1 in 2,000; any other byte is rarer than all of them.
const commonBytes = `etrnio.asl()c=u,dp f"m&hgyb;O{}:vj!T0w[]+xE1P|ACSk23_>NLD?RIq<MB46F5U8J\G-/7VK9`

// byteRarity ranks bytes by commonBytes: higher is rarer.
var byteRarity = func() (r [256]uint8) {
	for i := range r {
		r[i] = 255
	}
	for i := 0; i < len(commonBytes); i++ {
		r[commonBytes[i]] = uint8(i)
	}
	return r
}()

// indexText is strings.Index(s, pat).
func indexText(s, pat string) int {
	if len(pat) < 2 {
		return strings.Index(s, pat)
	}
	k := 0 // the offset in pat of its rarest byte
	for i := 1; i < len(pat); i++ {
		if byteRarity[pat[i]] > byteRarity[pat[k]] {
			k = i
		}
	}
	c := pat[k]
	// A match at i has c at i+k: candidates come in the order of i, so the
	// first that matches is the leftmost. When c turns out common in s
	// (most candidates fail), strings.Index does the rest.
	fails := 0
	for off := k; off < len(s); {
		j := strings.IndexByte(s[off:], c)
		if j < 0 {
			return -1
		}
		i := off + j - k
		if i+len(pat) > len(s) {
			return -1
		}
		if s[i:i+len(pat)] == pat {
			return i
		}
		off += j + 1
		if fails++; fails > 64 && fails > (off>>6) {
			if r := strings.Index(s[i+1:], pat); r >= 0 {
				return i + 1 + r
			}
			return -1
		}
	}
	return -1
}

// prefixedRE is a regular expression that starts with a literal, searched
// for in the bundle by that literal (indexText) and tried only where it
// occurs: Go's regexp looks for a literal prefix with strings.Index.
type prefixedRE struct {
	*regexp.Regexp                // the expression
	anchored       *regexp.Regexp // the same, matching only at the start
	prefix         string         // what every match starts with
}

func mustPrefixedRE(expr string) prefixedRE {
	re := regexp.MustCompile(expr)
	prefix, _ := re.LiteralPrefix()
	if prefix == "" {
		panic(fmt.Sprintf("engine: %q does not start with a literal", expr))
	}
	// A group that captures nothing: the submatches keep their numbers.
	return prefixedRE{re, regexp.MustCompile(`^(?:` + expr + `)`), prefix}
}

// findAll is FindAllStringSubmatchIndex(code, n): the leftmost match is
// the first occurrence of the prefix where the expression matches.
func (p prefixedRE) findAll(code string, n int) [][]int {
	return findAround(code, p.anchored, p.prefix, n, func(_ string, i int) int { return i })
}

// findAround is the leftmost non-overlapping matches (submatch indexes, at
// most n; all when n < 0) of the anchored re, where each match contains
// an occurrence of lit: for an occurrence at i, re is tried at
// start(code, i), where a match containing that occurrence must start (i
// when none can), or at the end of the match before when that is later, as
// FindAll's search goes on from there. An expression that starts with a
// name or a common word has no literal prefix Go's regexp could look for,
// so over the whole bundle it would be tried at nearly every byte.
func findAround(code string, re *regexp.Regexp, lit string, n int, start func(code string, i int) int) [][]int {
	var out [][]int
	end := 0 // of the last match
	for from := 0; n < 0 || len(out) < n; {
		i := indexText(code[from:], lit)
		if i < 0 {
			break
		}
		i += from
		from = i + 1
		at := max(start(code, i), end)
		m := re.FindStringSubmatchIndex(code[at:])
		if m == nil {
			continue
		}
		for k, v := range m {
			if v >= 0 {
				m[k] = at + v
			}
		}
		out = append(out, m)
		from, end = m[1], m[1] // past the occurrence: a match contains it
	}
	return out
}

// nameStart is where the name that ends at i starts (i when none does).
func nameStart(code string, i int) int {
	for i > 0 && isNameByte(code[i-1]) {
		i--
	}
	return i
}

// isNameByte is [\w$] of Go's regexp: a byte of a minified name.
func isNameByte(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9'
}

// indexOnce is the offset of pat in s when it occurs exactly once
// (strings.Count(s, pat) == 1), else -1: the patches change only code they
// find once.
func indexOnce(s, pat string) int {
	if pat == "" { // Count counts len(s)+1 empty matches
		if s == "" {
			return 0
		}
		return -1
	}
	i := indexText(s, pat)
	if i < 0 || indexText(s[i+len(pat):], pat) >= 0 {
		return -1
	}
	return i
}

// replaceOnce is strings.Replace(s, old, new, 1).
func replaceOnce(s, old, new string) string {
	i := indexText(s, old)
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}

// applyEdits makes the edits of code, which must not overlap, in one copy;
// with overlapping edits it returns code unchanged (none of them made,
// where applying them one after the other would have made some: the
// callers' edits never overlap in a known core).
func applyEdits(code string, edits []textEdit) string {
	if len(edits) == 0 {
		return code
	}
	sorted := slices.Clone(edits)
	slices.SortFunc(sorted, func(a, b textEdit) int { return cmp.Compare(a.start, b.start) })
	n := len(code)
	for k, e := range sorted {
		if k > 0 && e.start < sorted[k-1].end {
			return code
		}
		n += len(e.text) - (e.end - e.start)
	}
	var b strings.Builder
	b.Grow(n)
	at := 0
	for _, e := range sorted {
		b.WriteString(code[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(code[at:])
	return b.String()
}
