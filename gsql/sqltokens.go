package gsql

import (
	"fmt"
	"strings"
)

// TokenKind is the lexical class of a SQL token.
type TokenKind int

const (
	// Word is an unquoted identifier or keyword.
	Word TokenKind = iota
	// QuotedIdent is a `back-quoted` identifier.
	QuotedIdent
	// String is a string or bytes literal, with its prefix (r, b, rb, br)
	// and quotes, single- or triple-quoted.
	String
	// Number is a numeric literal (integer, decimal, exponent, hex).
	Number
	// Punct is an operator or punctuation.
	Punct
	// Comment is a `--`, `#` or `/* */` comment.
	Comment
)

// Token is a token of a SQL text: its kind and the byte range [Start, End).
type Token struct {
	Kind       TokenKind
	Start, End int
}

// multiPunct are the operators of more than one byte, longest first, so
// that the tokens of two texts are compared operator by operator: `<=`
// and `< =` must not count as the same.
var multiPunct = []string{"<<=", ">>=", "<=", ">=", "<>", "!=", "||", "<<", ">>", "=>", "->", "|>", "+=", "-="}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentPart(c byte) bool  { return isIdentStart(c) || c >= '0' && c <= '9' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// Tokens splits a SQL text into GoogleSQL's tokens as far as formatting
// needs them: comments are tokens (so that formatting can tell whether it
// would lose one), whitespace is not. It is not the parser's lexer; its
// one job is to be exact about where strings, quoted identifiers and
// comments begin and end, so that two texts can be compared token by
// token. Unterminated strings, quoted identifiers and block comments are
// errors.
func Tokens(text string) ([]Token, error) {
	var out []Token
	s := text
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case strings.HasPrefix(s[i:], "--") || c == '#':
			j := strings.IndexAny(s[i:], "\r\n")
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, Token{Comment, i, i + j})
			i += j
			continue
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("offset %d: unterminated /* comment", i)
			}
			out = append(out, Token{Comment, i, i + 2 + j + 2})
			i += 2 + j + 2
			continue
		case c == '`':
			end, err := quotedEnd(s, i, "`")
			if err != nil {
				return nil, err
			}
			out = append(out, Token{QuotedIdent, i, end})
			i = end
			continue
		case c == '\'' || c == '"':
			end, err := stringEnd(s, i)
			if err != nil {
				return nil, err
			}
			out = append(out, Token{String, i, end})
			i = end
			continue
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			// A string prefix: r'…', b"…", rb'''…''', BR"…".
			if p := strings.ToLower(s[i:j]); (p == "r" || p == "b" || p == "rb" || p == "br") && j < len(s) && (s[j] == '\'' || s[j] == '"') {
				end, err := stringEnd(s, j)
				if err != nil {
					return nil, err
				}
				out = append(out, Token{String, i, end})
				i = end
				continue
			}
			out = append(out, Token{Word, i, j})
			i = j
			continue
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]) && !afterOperand(s, out, i):
			j := i + 1
			for j < len(s) {
				if isIdentPart(s[j]) || s[j] == '.' {
					j++
				} else if (s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E') && !strings.HasPrefix(strings.ToLower(s[i:]), "0x") {
					j++
				} else {
					break
				}
			}
			out = append(out, Token{Number, i, j})
			i = j
			continue
		}
		n := 1
		for _, p := range multiPunct {
			if strings.HasPrefix(s[i:], p) {
				n = len(p)
				break
			}
		}
		out = append(out, Token{Punct, i, i + n})
		i += n
	}
	return out, nil
}

// afterOperand reports whether the last token ends right at i and ends an
// operand, after which `.5` is a field access (`t.1col` paths exist)
// rather than a number.
func afterOperand(s string, toks []Token, i int) bool {
	if len(toks) == 0 || toks[len(toks)-1].End != i {
		return false
	}
	t := toks[len(toks)-1]
	switch t.Kind {
	case Word, QuotedIdent:
		return true
	case Punct:
		return s[t.Start:t.End] == ")" || s[t.Start:t.End] == "]"
	}
	return false
}

// stringEnd is the end of the string literal whose quote is s[i]: single
// or triple, with backslash escapes (which raw strings also honour for
// finding the end: r'\” is one literal in GoogleSQL's lexer).
func stringEnd(s string, i int) (int, error) {
	q := s[i : i+1]
	if strings.HasPrefix(s[i:], q+q+q) {
		return quotedEnd(s, i, q+q+q)
	}
	end, err := quotedEnd(s, i, q)
	if err == nil && strings.ContainsAny(s[i:end], "\r\n") {
		return 0, fmt.Errorf("offset %d: line break in a single-quoted string", i)
	}
	return end, err
}

// quotedEnd finds the closing quote of the literal opened at s[i] with
// quote, skipping backslash escapes.
func quotedEnd(s string, i int, quote string) (int, error) {
	for j := i + len(quote); j < len(s); j++ {
		if s[j] == '\\' {
			j++
			continue
		}
		if strings.HasPrefix(s[j:], quote) {
			return j + len(quote), nil
		}
	}
	return 0, fmt.Errorf("offset %d: unterminated %s", i, quote)
}
