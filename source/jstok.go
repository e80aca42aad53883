package source

import (
	"strings"
	"unicode/utf8"
)

// A small JavaScript tokenizer: enough to tell code from comments, string
// literals and the text of template literals, and to pair brackets, so
// that renames and quick fixes touch only what the JavaScript engine would
// read as a call, a key or a literal — never a name that happens to sit
// in a comment, a SQL string or a description.
//
// It never fails: an unterminated literal or comment runs to the end of the
// text, as the engine would then report a syntax error anyway.

// tokKind is the kind of a JavaScript token.
type tokKind uint8

const (
	tokIdent  tokKind = iota // identifiers and keywords
	tokPunct                 // operators and brackets; Text is the operator
	tokString                // '…' or "…"; Value is the decoded value
	// tokTemplate is a template literal without substitutions (`…`);
	// Value is its cooked text when it has no escapes.
	tokTemplate
	// tokTemplateHead (` … ${), tokTemplateMiddle (} … ${) and
	// tokTemplateTail (} … `) are the literal parts of a template with
	// substitutions; the substitutions' tokens come between them.
	tokTemplateHead
	tokTemplateMiddle
	tokTemplateTail
	tokNumber
	tokRegex
)

// jsTok is one token. Span covers the whole token (quotes included).
type jsTok struct {
	Kind tokKind
	Span Span
	Text string // the token's source text for identifiers and punctuation
	// Value is a string literal's value and ValueSpan where it is (inside
	// the quotes); Plain says the value is written as it is (no escapes),
	// so that replacing ValueSpan replaces exactly the value.
	Value     string
	ValueSpan Span
	Plain     bool
	// Match is the index of the matching bracket ((, [, {, ${ … }), or -1.
	Match int
}

// jsTokens tokenizes src[start:end] as JavaScript.
func jsTokens(src []byte, start, end int) []jsTok {
	s := string(src[:end])
	var toks []jsTok
	// braces is a stack of the open brackets: a '{' of code, or a template
	// substitution (whose closing '}' resumes the template's text).
	type open struct {
		tok      int
		template bool
	}
	var stack []open
	push := func(tok int, template bool) { stack = append(stack, open{tok, template}) }
	closeTo := func(i int) {
		if len(stack) == 0 {
			return
		}
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		toks[o.tok].Match = i
		toks[i].Match = o.tok
	}
	// regexAllowed: a '/' here starts a regular expression, not a division.
	regexAllowed := func() bool {
		if len(toks) == 0 {
			return true
		}
		t := toks[len(toks)-1]
		switch t.Kind {
		case tokIdent:
			switch t.Text {
			case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await":
				return true
			}
			return false
		case tokNumber, tokString, tokTemplate, tokTemplateTail, tokRegex:
			return false
		case tokPunct:
			return t.Text != ")" && t.Text != "]" && t.Text != "}"
		}
		return true
	}
	// template reads template text from i (after ` or after the } of a
	// substitution) to the closing ` or the next ${, and appends the token.
	template := func(from, i int, head bool) int {
		var b strings.Builder
		plain := true
		j := i
		for ; j < len(s); j++ {
			c := s[j]
			if c == '\\' {
				plain = false
				j++
				continue
			}
			if c == '`' {
				kind := tokTemplate
				if !head {
					kind = tokTemplateTail
				}
				b.WriteString(s[i:j])
				toks = append(toks, jsTok{Kind: kind, Span: Span{from, j + 1}, Value: b.String(), ValueSpan: Span{i, j}, Plain: plain, Match: -1})
				return j + 1
			}
			if c == '$' && j+1 < len(s) && s[j+1] == '{' {
				kind := tokTemplateHead
				if !head {
					kind = tokTemplateMiddle
				}
				toks = append(toks, jsTok{Kind: kind, Span: Span{from, j + 2}, Match: -1})
				push(len(toks)-1, true)
				return j + 2
			}
		}
		kind := tokTemplate
		if !head {
			kind = tokTemplateTail
		}
		toks = append(toks, jsTok{Kind: kind, Span: Span{from, len(s)}, Match: -1})
		return len(s)
	}
	for i := start; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if j := strings.Index(s[i+2:], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				i = len(s)
			}
		case c == '\'' || c == '"':
			j, val, plain := i+1, strings.Builder{}, true
			for ; j < len(s) && s[j] != c && s[j] != '\n'; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					plain = false
					j++
					val.WriteByte(unescapeJS(s[j]))
					continue
				}
				val.WriteByte(s[j])
			}
			end := min(j+1, len(s))
			if j >= len(s) || s[j] != c {
				end = j // unterminated: the line ends it
			}
			toks = append(toks, jsTok{Kind: tokString, Span: Span{i, end}, Value: val.String(), ValueSpan: Span{i + 1, j}, Plain: plain, Match: -1})
			i = end
		case c == '`':
			i = template(i, i+1, true)
		case c == '}' && len(stack) > 0 && stack[len(stack)-1].template:
			// The end of a substitution: the template goes on.
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n := len(toks)
			i = template(i, i+1, false)
			toks[o.tok].Match = n // a head or middle points at the part after its substitution
		case isIdentStart(c) || c >= utf8.RuneSelf:
			j := i
			for j < len(s) && (isIdentByte(s[j]) || s[j] >= utf8.RuneSelf) {
				j++
			}
			toks = append(toks, jsTok{Kind: tokIdent, Span: Span{i, j}, Text: s[i:j], Match: -1})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) && (isIdentByte(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, jsTok{Kind: tokNumber, Span: Span{i, j}, Match: -1})
			i = j
		case c == '/' && regexAllowed():
			j, class := i+1, false
			for ; j < len(s) && s[j] != '\n'; j++ {
				if s[j] == '\\' {
					j++
					continue
				}
				if s[j] == '[' {
					class = true
				} else if s[j] == ']' {
					class = false
				} else if s[j] == '/' && !class {
					break
				}
			}
			j = min(j+1, len(s))
			for j < len(s) && isIdentByte(s[j]) {
				j++ // flags
			}
			toks = append(toks, jsTok{Kind: tokRegex, Span: Span{i, j}, Match: -1})
			i = j
		default:
			n := punctLen(s[i:])
			toks = append(toks, jsTok{Kind: tokPunct, Span: Span{i, i + n}, Text: s[i : i+n], Match: -1})
			switch c {
			case '(', '[', '{':
				push(len(toks)-1, false)
			case ')', ']', '}':
				// Only the bracket that closes the innermost open one pairs
				// (broken code leaves the others unmatched).
				if len(stack) > 0 && !stack[len(stack)-1].template && toks[stack[len(stack)-1].tok].Text == string(opening[c]) {
					closeTo(len(toks) - 1)
				}
			}
			i += n
		}
	}
	return toks
}

var opening = map[byte]byte{')': '(', ']': '[', '}': '{'}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// unescapeJS is the character a one-character escape stands for (good
// enough for names: an escaped name is never rewritten, only read).
func unescapeJS(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	}
	return c
}

var puncts3 = []string{">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??="}
var puncts2 = []string{"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>"}

func punctLen(s string) int {
	for _, p := range puncts3 {
		if strings.HasPrefix(s, p) {
			return len(p)
		}
	}
	for _, p := range puncts2 {
		if strings.HasPrefix(s, p) {
			return 2
		}
	}
	_, n := utf8.DecodeRuneInString(s)
	return max(n, 1)
}
