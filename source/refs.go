package source

import (
	"bytes"
	"regexp"
	"strings"
)

// StringArg is a string literal argument and where its value is.
type StringArg struct {
	Value string
	Span  Span // the value, without quotes
}

// RefCall is a call of ref(), resolve() (or ctx.ref, jctx.resolve, …) with
// literal arguments, the forms Dataform documents:
//
//	ref("name")  ref("schema", "name")  ref({schema: "s", name: "n"})
type RefCall struct {
	Func string // "ref" or "resolve"
	Span Span   // from the callee (ctx.ref, ref) to the closing parenthesis
	// Database, Schema and Name as written; empty when not given.
	Database, Schema, Name StringArg
}

// NameSpan is where the call names its action (the name argument, or the
// whole call when it has none).
func (r RefCall) NameSpan() Span {
	if r.Name.Span != (Span{}) {
		return r.Name.Span
	}
	return r.Span
}

// FindRefs finds every ref/resolve call with literal arguments in src
// (SQLX or JavaScript). Calls with computed arguments are skipped.
func FindRefs(src []byte) []RefCall {
	s := string(src)
	callees := refCallees(s)
	out := make([]RefCall, 0, len(callees))
	for _, c := range callees {
		i := c.open + 1 // after "("
		// The span starts at the callee (ctx.ref), so the whole call counts.
		rc := RefCall{Func: s[c.fn:c.fnEnd], Span: Span{Start: c.start}}
		i = skipSpace(s, i)
		switch {
		case i < len(s) && isQuote(s[i]):
			a, next, ok := stringLit(s, i)
			if !ok {
				continue
			}
			i = skipSpace(s, next)
			if i < len(s) && s[i] == ',' {
				b, next2, ok := stringLit(s, skipSpace(s, i+1))
				if ok {
					rc.Schema, rc.Name = a, b
					i = skipSpace(s, next2)
				} else {
					rc.Name = a
				}
			} else {
				rc.Name = a
			}
		case i < len(s) && s[i] == '{':
			fields, next, ok := objectLit(s, i)
			if !ok {
				continue
			}
			rc.Database, rc.Schema, rc.Name = fields["database"], fields["schema"], fields["name"]
			if rc.Database == (StringArg{}) {
				rc.Database = fields["project"]
			}
			if rc.Schema == (StringArg{}) {
				rc.Schema = fields["dataset"]
			}
			i = skipSpace(s, next)
		default:
			continue
		}
		if rc.Name.Value == "" {
			continue
		}
		if i < len(s) && s[i] == ')' {
			i++
		}
		rc.Span.End = i
		out = append(out, rc)
	}
	return out
}

// callee is where a ref/resolve call starts: start is the callee's first
// byte (ctx in ctx.ref), [fn, fnEnd) the function name, open the "(".
type callee struct{ start, fn, fnEnd, open int }

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isRESpace is RE2's \s: tab, newline, form feed, carriage return, space.
func isRESpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// refCallees finds the calls that the regular expression
// `(?:^|[^\w$])((?:[A-Za-z_$][\w$]*\.)?(ref|resolve))\s*\(` matches, as
// its leftmost-first, non-overlapping matches would, without running it
// over the whole text (which took a fifth of a second on 2 MB): candidates
// are found with strings.Index, and each is checked around its name.
func refCallees(s string) []callee {
	var out []callee
	minStart := 0 // where the previous match ended: matches do not overlap
	for from := 0; ; {
		j := strings.Index(s[from:], "re")
		if j < 0 {
			return out
		}
		p := from + j
		from = p + 1
		n := 0
		switch {
		case strings.HasPrefix(s[p:], "ref"):
			n = 3
		case strings.HasPrefix(s[p:], "resolve"):
			n = 7
		default:
			continue
		}
		open := p + n
		for open < len(s) && isRESpace(s[open]) {
			open++
		}
		if open >= len(s) || s[open] != '(' {
			continue
		}
		// What comes before the name: the start of the text, a byte that
		// is not part of an identifier, or "<identifier>." (preferred,
		// being further left, when the identifier can start one).
		start := -1
		if p == 0 {
			start = 0
			if minStart > 0 {
				start = -1
			}
		} else if c := s[p-1]; !isIdentByte(c) {
			if c == '.' {
				q := p - 1
				for q > 0 && isIdentByte(s[q-1]) {
					q--
				}
				first := byte(0)
				if q < p-1 {
					first = s[q]
				}
				if q < p-1 && (first < '0' || first > '9') && (q == 0 && minStart == 0 || q > 0 && q-1 >= minStart) {
					start = q
				}
			}
			if start < 0 && p-1 >= minStart {
				start = p
			}
		}
		if start < 0 {
			continue
		}
		out = append(out, callee{start: start, fn: p, fnEnd: p + n, open: open})
		minStart = open + 1
		from = open + 1
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

func isQuote(b byte) bool { return b == '"' || b == '\'' || b == '`' }

// stringLit reads a JavaScript string literal starting at s[i] (a quote).
// Template literals with ${} are not literals.
func stringLit(s string, i int) (StringArg, int, bool) {
	if i >= len(s) || !isQuote(s[i]) {
		return StringArg{}, i, false
	}
	q := s[i]
	// Most literals have no escape: their value is the text between the
	// quotes (no copy, no builder).
	if j := strings.IndexByte(s[i+1:], q); j >= 0 {
		body := s[i+1 : i+1+j]
		if !strings.ContainsAny(body, "\\\n") && (q != '`' || !strings.Contains(body, "${")) {
			return StringArg{Value: body, Span: Span{i + 1, i + 1 + j}}, i + 2 + j, true
		}
	}
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s):
			b.WriteByte(s[j+1])
			j++
		case c == q:
			return StringArg{Value: b.String(), Span: Span{i + 1, j}}, j + 1, true
		case c == '\n' && q != '`':
			return StringArg{}, j, false
		case q == '`' && c == '$' && j+1 < len(s) && s[j+1] == '{':
			return StringArg{}, j, false
		default:
			b.WriteByte(c)
		}
	}
	return StringArg{}, len(s), false
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][\w$]*`)

// objectLit reads a flat object literal of string values: {a: "x", "b": 'y'}.
func objectLit(s string, i int) (map[string]StringArg, int, bool) {
	fields := map[string]StringArg{}
	i++ // '{'
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			return nil, i, false
		}
		if s[i] == '}' {
			return fields, i + 1, true
		}
		var key string
		if isQuote(s[i]) {
			k, next, ok := stringLit(s, i)
			if !ok {
				return nil, i, false
			}
			key, i = k.Value, next
		} else if m := identRE.FindString(s[i:]); m != "" {
			key, i = m, i+len(m)
		} else {
			return nil, i, false
		}
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != ':' {
			return nil, i, false
		}
		i = skipSpace(s, i+1)
		v, next, ok := stringLit(s, i)
		if !ok {
			// A non-literal value (a variable, a boolean): skip it.
			for next = i; next < len(s) && s[next] != ',' && s[next] != '}'; next++ {
			}
		} else {
			fields[key] = v
		}
		i = skipSpace(s, next)
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// RefAt returns the ref/resolve call whose span contains offset.
func RefAt(refs []RefCall, offset int) (RefCall, bool) {
	for _, r := range refs {
		if r.Span.Contains(offset) {
			return r, true
		}
	}
	return RefCall{}, false
}

// StringAt returns the string literal (single or double quotes, one line)
// around offset, for names written outside ref(): dependencies: ["x"].
func StringAt(src []byte, offset int) (StringArg, bool) {
	if offset < 0 || offset > len(src) {
		return StringArg{}, false
	}
	// Only the line matters: convert just that (files can be megabytes).
	lineStart := bytes.LastIndexByte(src[:offset], '\n') + 1
	lineEnd := len(src)
	if j := bytes.IndexByte(src[offset:], '\n'); j >= 0 {
		lineEnd = offset + j
	}
	line := string(src[lineStart:lineEnd])
	off := offset - lineStart
	for i := 0; i < len(line); i++ {
		if line[i] != '"' && line[i] != '\'' {
			continue
		}
		a, next, ok := stringLit(line, i)
		if !ok {
			return StringArg{}, false
		}
		if off >= a.Span.Start && off <= a.Span.End {
			a.Span.Start += lineStart
			a.Span.End += lineStart
			return a, true
		}
		i = next - 1
	}
	return StringArg{}, false
}

// WordAt returns the JavaScript identifier path around offset
// ("billing.planPriceCase" → ["billing", "planPriceCase"]) and the span of
// the identifier under the cursor.
func WordAt(src []byte, offset int) (path []string, at int, span Span) {
	s := src
	isIdent := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if offset < 0 || offset > len(s) {
		return nil, -1, Span{}
	}
	start := offset
	for start > 0 && (isIdent(s[start-1]) || s[start-1] == '.') {
		start--
	}
	end := offset
	for end < len(s) && isIdent(s[end]) {
		end++
	}
	if start == end {
		return nil, -1, Span{}
	}
	full := strings.Trim(string(s[start:end]), ".")
	if full == "" {
		return nil, -1, Span{}
	}
	path = strings.Split(full, ".")
	// Which segment is under the cursor?
	pos := start
	for i, p := range path {
		segEnd := pos + len(p)
		if offset <= segEnd {
			return path, i, Span{pos, segEnd}
		}
		pos = segEnd + 1
	}
	return path, len(path) - 1, Span{end - len(path[len(path)-1]), end}
}

var requireRE = regexp.MustCompile(`require\s*\(\s*(["'])([^"'\n]+)["']\s*\)`)

// Require is a require("path") call.
type Require struct {
	Path StringArg
	Span Span
}

// FindRequires lists the require() calls with literal paths.
func FindRequires(src []byte) []Require {
	var out []Require
	for _, m := range requireRE.FindAllSubmatchIndex(src, -1) {
		out = append(out, Require{Path: StringArg{Value: string(src[m[4]:m[5]]), Span: Span{m[4], m[5]}}, Span: Span{m[0], m[1]}})
	}
	return out
}

// FindDefinition finds where a JavaScript file defines name at top level:
// a function, a const/let/var, an exports.name assignment or a key of
// module.exports. It returns the span of the name.
func FindDefinition(src []byte, name string) (Span, bool) {
	// Every pattern has the name in it, as written: most lookups (names a
	// JavaScript loop computes) end here, without compiling six patterns
	// and scanning the file with each, which was a third of a SQL check
	// of 3,000 actions.
	if !bytes.Contains(src, []byte(name)) {
		return Span{}, false
	}
	q := regexp.QuoteMeta(name)
	for _, pat := range []string{
		`(?m)\bfunction\s*\*?\s*(` + q + `)\s*\(`,
		`(?m)\b(?:const|let|var)\s+(` + q + `)\b`,
		`(?m)\bclass\s+(` + q + `)\b`,
		`(?m)\bexports\.(` + q + `)\s*=`,
		`(?m)[{,\s](` + q + `)\s*:`,
		`(?m)[{,]\s*(` + q + `)\s*[,}]`,
	} {
		re := regexp.MustCompile(pat)
		if m := re.FindSubmatchIndex(src); m != nil {
			return Span{m[2], m[3]}, true
		}
	}
	return Span{}, false
}

// FindWord finds whole-word occurrences of word (an action or column name)
// in src; a word is delimited by characters that cannot be part of an
// identifier or a dashed name.
func FindWord(src []byte, word string) []Span {
	if word == "" {
		return nil
	}
	var out []Span
	s := string(src)
	isPart := func(c byte) bool {
		return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return out
		}
		start := i + j
		end := start + len(word)
		if (start == 0 || !isPart(s[start-1])) && (end == len(s) || !isPart(s[end])) {
			out = append(out, Span{start, end})
		}
		i = start + 1
	}
}
