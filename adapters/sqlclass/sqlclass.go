// Package sqlclass tells read-only BigQuery queries from every other
// statement, so that a preview can run the former for real and turn the rest
// into dry runs.
//
// The classification is deliberately conservative: a statement is a [Query]
// only when it is exactly one SELECT, WITH … SELECT (every CTE body a query
// too) or pipe-syntax FROM … query, possibly wrapped in parentheses.
// Everything else — DML, DDL, DECLARE, SET, CALL, EXPORT DATA, LOAD DATA,
// BEGIN … END, scripts of several statements, unterminated literals,
// unbalanced parentheses — is not a query. A misclassification can only go
// one way: a harmless query that ends up as a dry run.
//
// The lexer knows GoogleSQL's comments (--, # and /* */), string and bytes
// literals (single, double and triple quoted, with r/b prefixes and
// backslash escapes) and backticked identifiers, so keywords and semicolons
// inside them do not count.
package sqlclass

import (
	"fmt"
	"strings"
)

// Kind is what a statement is, as far as preview safety goes.
type Kind int

const (
	// Empty: nothing but whitespace, comments and semicolons.
	Empty Kind = iota
	// Query: one read-only query.
	Query
	// Other: one statement that is not a read-only query (DML, DDL,
	// scripting, EXPORT DATA, …).
	Other
	// Script: more than one statement.
	Script
	// Malformed: could not be tokenised (unterminated string, comment or
	// identifier) or has unbalanced parentheses.
	Malformed
)

func (k Kind) String() string {
	switch k {
	case Empty:
		return "empty"
	case Query:
		return "query"
	case Other:
		return "statement"
	case Script:
		return "script"
	case Malformed:
		return "malformed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// IsReadOnlyQuery reports whether stmt is one read-only query.
func IsReadOnlyQuery(stmt string) bool {
	k, _ := Classify(stmt)
	return k == Query
}

// Classify returns the kind of stmt and a short reason for people, e.g.
// "read-only query", "INSERT statement", "script of 2 statements".
func Classify(stmt string) (Kind, string) {
	toks, err := lex(stmt)
	if err != nil {
		return Malformed, err.Error()
	}
	depth := 0
	for _, t := range toks {
		switch t.kind {
		case tLParen:
			depth++
		case tRParen:
			depth--
		}
		if depth < 0 {
			break
		}
	}
	if depth != 0 {
		return Malformed, "unbalanced parentheses"
	}

	// Every semicolon separates statements, even inside parentheses: SQL
	// that needs one there is not a plain query anyway.
	var stmts [][]token
	start := 0
	for i, t := range toks {
		if t.kind == tSemi {
			if i > start {
				stmts = append(stmts, toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		stmts = append(stmts, toks[start:])
	}
	switch len(stmts) {
	case 0:
		return Empty, "empty statement"
	case 1:
	default:
		return Script, fmt.Sprintf("script of %d statements", len(stmts))
	}

	s := stmts[0]
	if !isQuery(s) {
		first := leadingWord(s)
		switch first {
		case "":
			return Other, "unrecognised statement"
		case "WITH":
			return Other, "WITH whose body is not a query"
		}
		return Other, first + " statement"
	}
	for i, t := range s {
		if t.kind != tPipe {
			continue
		}
		if i+1 >= len(s) || s[i+1].kind != tWord || !pipeOperators[s[i+1].text] {
			op := "end of statement"
			if i+1 < len(s) {
				op = s[i+1].text
			}
			return Other, "query with pipe operator |> " + op
		}
	}
	return Query, "read-only query"
}

// isQuery reports whether toks (one statement) is a query: optional opening
// parentheses, then SELECT, FROM (pipe syntax), or WITH followed by CTEs that
// are all queries and a query body.
func isQuery(toks []token) bool {
	i := 0
	for i < len(toks) && toks[i].kind == tLParen {
		i++
	}
	if i >= len(toks) || toks[i].kind != tWord {
		return false
	}
	switch toks[i].text {
	case "SELECT", "FROM":
		return true
	case "WITH":
	default:
		return false
	}
	i++
	if i < len(toks) && toks[i].is("RECURSIVE") {
		i++
	}
	for {
		// name AS ( query )
		if i >= len(toks) || (toks[i].kind != tWord && toks[i].kind != tIdent) {
			return false
		}
		i++
		if i >= len(toks) || !toks[i].is("AS") {
			return false
		}
		i++
		if i >= len(toks) || toks[i].kind != tLParen {
			return false
		}
		end := closing(toks, i)
		if end < 0 || !isQuery(toks[i+1:end]) {
			return false
		}
		i = end + 1
		if i < len(toks) && toks[i].kind == tComma {
			i++
			continue
		}
		return isQuery(toks[i:])
	}
}

// closing returns the index of the parenthesis closing toks[open], or -1.
func closing(toks []token, open int) int {
	depth := 0
	for i := open; i < len(toks); i++ {
		switch toks[i].kind {
		case tLParen:
			depth++
		case tRParen:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func leadingWord(toks []token) string {
	for _, t := range toks {
		switch t.kind {
		case tLParen:
			continue
		case tWord:
			return t.text
		}
		return ""
	}
	return ""
}

// pipeOperators are the pipe-syntax operators that only reshape a query's
// result. Any other word after |> (current or future) makes the statement
// "not a query", so a new side-effecting operator is never run in a preview.
var pipeOperators = map[string]bool{
	"SELECT": true, "EXTEND": true, "SET": true, "DROP": true, "RENAME": true,
	"AS": true, "WHERE": true, "LIMIT": true, "AGGREGATE": true, "ORDER": true,
	"UNION": true, "INTERSECT": true, "EXCEPT": true, "JOIN": true,
	"LEFT": true, "RIGHT": true, "FULL": true, "INNER": true, "CROSS": true,
	"OUTER": true, "NATURAL": true, "CALL": true, "WINDOW": true,
	"TABLESAMPLE": true, "PIVOT": true, "UNPIVOT": true, "DISTINCT": true,
	"WITH": true, "MATCH_RECOGNIZE": true,
}

type tokKind uint8

const (
	tWord   tokKind = iota // keyword or unquoted identifier, upper-cased
	tIdent                 // `quoted identifier`
	tString                // string or bytes literal
	tNumber                // numeric literal
	tLParen                // (
	tRParen                // )
	tSemi                  // ;
	tComma                 // ,
	tPipe                  // |>
	tOther                 // any other punctuation
)

type token struct {
	kind tokKind
	text string // upper-cased for tWord; the operator for tOther; empty otherwise
}

func (t token) is(word string) bool { return t.kind == tWord && t.text == word }

// lex splits s into tokens, dropping whitespace and comments.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(s[i:], "--")):
			if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = len(s)
			}
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated /* comment")
			}
			i += 2 + end + 2
		case c == '\'' || c == '"':
			// String prefixes (r, b, rb, …) lexed as a word just before
			// do no harm: in raw strings a backslash still keeps the next
			// quote from closing the literal, as in ordinary ones.
			quote := s[i : i+1]
			if strings.HasPrefix(s[i:], quote+quote+quote) {
				quote = s[i : i+3]
			}
			end := scanQuoted(s, i+len(quote), quote)
			if end < 0 {
				return nil, fmt.Errorf("unterminated string literal")
			}
			toks = append(toks, token{kind: tString})
			i = end
		case c == '`':
			end := scanQuoted(s, i+1, "`")
			if end < 0 {
				return nil, fmt.Errorf("unterminated quoted identifier")
			}
			toks = append(toks, token{kind: tIdent})
			i = end
		case isWordByte(c) && !isDigit(c):
			j := i + 1
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tWord, text: strings.ToUpper(s[i:j])})
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, token{kind: tNumber})
			i = j
		case c == '(':
			toks = append(toks, token{kind: tLParen})
			i++
		case c == ')':
			toks = append(toks, token{kind: tRParen})
			i++
		case c == ';':
			toks = append(toks, token{kind: tSemi})
			i++
		case c == ',':
			toks = append(toks, token{kind: tComma})
			i++
		case c == '|' && strings.HasPrefix(s[i:], "|>"):
			toks = append(toks, token{kind: tPipe})
			i += 2
		default:
			toks = append(toks, token{kind: tOther, text: s[i : i+1]})
			i++
		}
	}
	return toks, nil
}

// scanQuoted returns the index just past the closing quote of a literal whose
// body starts at s[i], or -1 if it is not closed. A backslash escapes the
// next byte.
func scanQuoted(s string, i int, quote string) int {
	for i < len(s) {
		switch {
		case s[i] == '\\':
			i += 2
		case strings.HasPrefix(s[i:], quote):
			return i + len(quote)
		default:
			i++
		}
	}
	return -1
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return c == '_' || isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || c >= 0x80
}
