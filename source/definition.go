package source

import (
	"path/filepath"
	"strings"
)

// DefinitionSpan is where a file defines the action called name: in a
// .sqlx file the config keyword (or the start of the file); in JavaScript
// the name literal of the call that defines it (`("name"`), else of a
// `name: "name"` field; in YAML the value of a `name:` key; else the first
// whole-word mention. x is the file's ScanSQLX for .sqlx files (nil: it is
// scanned). ok is false when the file does not mention the name.
//
// It searches with strings.Index: workspace/symbol asks it for hundreds
// of actions at a time.
func DefinitionSpan(path string, text []byte, name string, x *SQLX) (Span, bool) {
	s := string(text)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sqlx":
		if x == nil {
			x = ScanSQLX(text)
		}
		if b, ok := x.Config(); ok {
			return Span{Start: b.Span.Start, End: b.Span.Start + len("config")}, true
		}
		return Span{}, true
	case ".js":
		if name == "" {
			break
		}
		// `\(\s*["'\x60](NAME)["'\x60]`
		if sp, ok := findQuoted(s, name, func(q int) bool {
			i := q - 1
			for i >= 0 && isRESpace(s[i]) {
				i--
			}
			return i >= 0 && s[i] == '('
		}); ok {
			return sp, true
		}
		// `\bname\s*:\s*["'\x60](NAME)["'\x60]`
		if sp, ok := findQuoted(s, name, func(q int) bool {
			i := q - 1
			for i >= 0 && isRESpace(s[i]) {
				i--
			}
			if i < 0 || s[i] != ':' {
				return false
			}
			for i--; i >= 0 && isRESpace(s[i]); i-- {
			}
			return i >= 3 && s[i-3:i+1] == "name" && (i == 3 || !isWordByte(s[i-4]))
		}); ok {
			return sp, true
		}
	case ".yaml", ".yml":
		// `(?m)\bname:\s*["']?(NAME)\b`
		for from := 0; name != ""; {
			j := strings.Index(s[from:], name)
			if j < 0 {
				break
			}
			p := from + j
			from = p + 1
			end := p + len(name)
			if isWordByte(s[end-1]) == (end < len(s) && isWordByte(s[end])) {
				continue // no \b after the name
			}
			i := p - 1
			if i >= 0 && (s[i] == '"' || s[i] == '\'') {
				i--
			}
			for i >= 0 && isRESpace(s[i]) {
				i--
			}
			if i >= 4 && s[i-4:i+1] == "name:" && (i == 4 || !isWordByte(s[i-5])) {
				return Span{p, end}, true
			}
		}
	}
	if w := FindWord(text, name); len(w) > 0 {
		return w[0], true
	}
	return Span{}, false
}

// findQuoted finds the first occurrence of name between two quotes (any of
// ' " `, as the regular expressions it replaces allow) whose opening quote
// at q satisfies before(q).
func findQuoted(s, name string, before func(q int) bool) (Span, bool) {
	for from := 0; ; {
		j := strings.Index(s[from:], name)
		if j < 0 {
			return Span{}, false
		}
		p := from + j
		from = p + 1
		end := p + len(name)
		if p == 0 || !isQuote(s[p-1]) || end >= len(s) || !isQuote(s[end]) {
			continue
		}
		if before(p - 1) {
			return Span{p, end}, true
		}
	}
}

// isWordByte is RE2's \w.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
