package engine

import (
	"cmp"
	"slices"
	"strings"
)

// The bundle patches look for long literal pieces of minified code in the
// 0.65–0.77 MB bundle, before every cold compile. strings.Index finds a
// pattern longer than its vectorised limit by its first byte and then
// Rabin–Karp, slow when that byte is as common as 'p' or 'c' in minified
// code: the patches took ≈21 ms a process. Searching for the pattern's
// head with the vectorised path and checking the rest takes ≈5.

// searchHead is the longest head strings.Index searches vectorised on every
// platform (bytealg.MaxLen is 31 without AVX2).
const searchHead = 31

// indexText is strings.Index(s, pat).
func indexText(s, pat string) int {
	if len(pat) <= searchHead {
		return strings.Index(s, pat)
	}
	head := pat[:searchHead]
	for off := 0; ; {
		i := strings.Index(s[off:], head)
		if i < 0 {
			return -1
		}
		if strings.HasPrefix(s[off+i:], pat) {
			return off + i
		}
		off += i + 1
	}
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
