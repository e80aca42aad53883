package highlight

import (
	_ "embed"
	"strings"
)

// bigqueryFunctions is BigQuery's documented function names, written by
// gsql/gen/bqfunctions next to gsql's own copy. It is generated here, not
// imported: gsql carries GoogleSQL's analyzer, which the LSP layer must
// not depend on.
//
//go:embed bigquery_functions.txt
var bigqueryFunctions string

var functionSet = func() map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(bigqueryFunctions, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			m[strings.ToUpper(line)] = true
		}
	}
	return m
}()

// sqlKeywords are GoogleSQL's reserved keywords and the non-reserved ones
// that read as keywords in BigQuery's SQL and scripting.
var sqlKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
ALL AND ANY ARRAY AS ASC ASSERT_ROWS_MODIFIED AT BETWEEN BY CASE CAST COLLATE CONTAINS
CREATE CROSS CUBE CURRENT DEFAULT DEFINE DESC DISTINCT ELSE END ENUM ESCAPE EXCEPT EXCLUDE
EXISTS EXTRACT FALSE FETCH FOLLOWING FOR FROM FULL GROUP GROUPING GROUPS HASH HAVING IF
IGNORE IN INNER INTERSECT INTERVAL INTO IS JOIN LATERAL LEFT LIKE LIMIT LOOKUP MERGE NATURAL
NEW NO NOT NULL NULLS OF ON OR ORDER OUTER OVER PARTITION PRECEDING PROTO QUALIFY RANGE
RECURSIVE RESPECT RIGHT ROLLUP ROWS SELECT SET SOME STRUCT TABLESAMPLE THEN TO TREAT TRUE
UNBOUNDED UNION UNNEST USING WHEN WHERE WINDOW WITH WITHIN
ADD ALTER BEGIN BREAK CALL CASCADE CLONE CLUSTER COLUMN COMMIT CONSTRAINT CONTINUE COPY
DECLARE DELETE DESCRIBE DETERMINISTIC DO DROP ELSEIF EXCEPTION EXECUTE EXPORT EXTERNAL
FILTER FIRST FUNCTION IMMEDIATE INSERT ITERATE KEY LANGUAGE LAST LEAVE LOAD LOOP MATCHED
MATERIALIZED MODEL OFFSET OPTIONS OVERWRITE PIVOT PRIMARY PROCEDURE RAISE RECORD REPLACE
RETURN RETURNS ROLLBACK ROW SAFE_OFFSET SAFE_ORDINAL ORDINAL SCHEMA SOURCE SYSTEM_TIME
TABLE TARGET TEMP TEMPORARY TRANSACTION TRUNCATE UNPIVOT UNTIL UPDATE VALUE VALUES VIEW
WHILE ZONE REPEAT`) {
		m[w] = true
	}
	return m
}()

// sqlTypes are BigQuery's type names (and their aliases).
var sqlTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`INT64 INT SMALLINT INTEGER BIGINT TINYINT BYTEINT NUMERIC
DECIMAL BIGNUMERIC BIGDECIMAL FLOAT64 BOOL BOOLEAN STRING BYTES DATE DATETIME TIME TIMESTAMP
GEOGRAPHY JSON`) {
		m[w] = true
	}
	return m
}()

// sqlOperators are the operators of more than one byte, longest first.
var sqlOperators = []string{"<<=", ">>=", "<=", ">=", "<>", "!=", "||", "<<", ">>", "=>", "->", "|>", "+=", "-="}

func isSQLIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isSQLIdentPart(c byte) bool  { return isSQLIdentStart(c) || isDigit(c) }

// sqlLexer lexes SQL in which the ranges that are not SQL (holes: the
// blocks of JavaScript, ${} placeholders, block keywords, separators) are
// blanked out. A token around a hole — a string with a placeholder in it
// — is split so that the hole stays the JavaScript's, and each hole's own
// tokens go out where it is, so that the result is in order.
type sqlLexer struct {
	s     string
	holes []hole
	js    []Token // the holes' tokens
	h     int     // the first hole whose tokens are not out yet
	out   []Token
	dot   bool // the last punctuation was a '.': a word is a field or a namespace's member
}

// hole is a range [Start, End) that is not SQL, with its tokens
// js[from:to].
type hole struct {
	Start, End int
	from, to   int
}

// flush puts out the tokens of the holes that start before a.
func (l *sqlLexer) flush(a int) {
	for ; l.h < len(l.holes) && l.holes[l.h].Start < a; l.h++ {
		l.out = append(l.out, l.js[l.holes[l.h].from:l.holes[l.h].to]...)
	}
}

func (l *sqlLexer) emit(a, b int, k Kind, m Mods) {
	for a < b {
		l.flush(a)
		if l.h < len(l.holes) && l.holes[l.h].Start < b {
			// A hole inside the token: the part before it, then (at
			// the next flush) the hole's tokens.
			hole := l.holes[l.h]
			if hole.Start > a {
				l.out = append(l.out, Token{Start: a, End: hole.Start, Kind: k, Mods: m})
			}
			a = hole.End
			continue
		}
		l.out = append(l.out, Token{Start: a, End: b, Kind: k, Mods: m})
		return
	}
}

// lexSQL lexes all of s (the masked text: holes are blanks), putting
// each hole's tokens (js) where it is.
func lexSQL(s string, holes []hole, js, out []Token) []Token {
	l := &sqlLexer{s: s, holes: holes, js: js, out: out}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '#':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			l.emit(i, i+trimCR(s[i:i+j]), Comment, 0)
			i += j
			continue
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := len(s)
			if k := strings.Index(s[i+2:], "*/"); k >= 0 {
				j = i + 2 + k + 2
			}
			l.emit(i, j, Comment, 0)
			i = j
			continue
		case c == '`':
			j := l.quotedEnd(i, "`", true)
			l.emit(i, j, Variable, 0)
			i = j
		case c == '\'' || c == '"':
			j := l.stringEnd(i)
			l.emit(i, j, String, 0)
			i = j
		case isSQLIdentStart(c):
			i = l.word(i)
		case c == '@':
			j := i + 1
			k := Parameter
			if j < len(s) && s[j] == '@' {
				j++
				k = Variable
			}
			for j < len(s) && isSQLIdentPart(s[j]) {
				j++
			}
			l.emit(i, j, k, 0)
			i = j
		case isDigit(c) || c == '.' && i+1 < len(s) && isDigit(s[i+1]) && !l.afterOperand(i):
			j := i + 1
			for j < len(s) && (isSQLIdentPart(s[j]) || s[j] == '.' ||
				(s[j] == '+' || s[j] == '-') && (s[j-1] == 'e' || s[j-1] == 'E') && !strings.HasPrefix(s[i:], "0x") && !strings.HasPrefix(s[i:], "0X")) {
				j++
			}
			l.emit(i, j, Number, 0)
			i = j
		default:
			i = l.punct(i)
			continue
		}
		l.dot = false
	}
	l.flush(len(s) + 1)
	return l.out
}

// afterOperand reports whether s[i-1] ends an operand, after which ".5"
// is a field access (t.5col is not, but `a`.5 paths exist) rather than a
// number.
func (l *sqlLexer) afterOperand(i int) bool {
	if i == 0 {
		return false
	}
	c := l.s[i-1]
	return isSQLIdentPart(c) || c == ')' || c == ']' || c == '`'
}

// punct emits an operator (punctuation is left plain) and returns its end.
func (l *sqlLexer) punct(i int) int {
	rest := l.s[i:]
	if len(rest) > 1 && strings.IndexByte("<>!|=-+", rest[0]) >= 0 { // the first bytes of sqlOperators
		for _, op := range sqlOperators {
			if strings.HasPrefix(rest, op) {
				l.emit(i, i+len(op), Operator, 0)
				l.dot = false
				return i + len(op)
			}
		}
	}
	switch c := rest[0]; c {
	case '+', '-', '*', '/', '%', '=', '<', '>', '!', '|', '&', '^', '~':
		l.emit(i, i+1, Operator, 0)
		l.dot = false
	case '.':
		l.dot = true
	default:
		l.dot = false
	}
	return i + 1
}

// stringEnd is the end of the string literal at i: single- or
// triple-quoted, backslash escapes. A single-quoted string left open ends
// at its line's end (BigQuery allows no line break in one), a triple-quoted
// one at the end of the text.
func (l *sqlLexer) stringEnd(i int) int {
	q := l.s[i : i+1]
	if strings.HasPrefix(l.s[i:], q+q+q) {
		return l.quotedEnd(i, q+q+q, false)
	}
	return l.quotedEnd(i, q, true)
}

func (l *sqlLexer) quotedEnd(i int, quote string, oneLine bool) int {
	s := l.s
	for j := i + len(quote); j < len(s); j++ {
		switch {
		case s[j] == '\\':
			j++
		case oneLine && s[j] == '\n':
			return j
		case s[j] == quote[0] && strings.HasPrefix(s[j:], quote):
			return j + len(quote)
		}
	}
	return len(s)
}

// word lexes an identifier, keyword, type or function name at i (or a
// string with an r/b prefix).
func (l *sqlLexer) word(i int) int {
	s := l.s
	j := i + 1
	for j < len(s) && isSQLIdentPart(s[j]) {
		j++
	}
	if j-i <= 2 && j < len(s) && (s[j] == '\'' || s[j] == '"') {
		if p := strings.ToLower(s[i:j]); p == "r" || p == "b" || p == "rb" || p == "br" {
			end := l.stringEnd(j)
			l.emit(i, end, String, 0)
			return end
		}
	}
	var buf [64]byte
	if j-i > len(buf) {
		if l.called(j) {
			l.emit(i, j, Function, 0)
		}
		return j
	}
	upper := buf[:j-i]
	for k := range upper {
		c := s[i+k]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper[k] = c
	}
	member := l.dot
	qualifier := j < len(s) && s[j] == '.' && j+1 < len(s) && (isSQLIdentStart(s[j+1]) || s[j+1] == '`')
	call := l.called(j)
	switch {
	case call && functionSet[string(upper)]:
		// Before keywords: IF(, LEFT(, DATE( are functions.
		l.emit(i, j, Function, DefaultLibrary)
	case member && call:
		// SAFE.DIVIDE(, NET.HOST(, or a UDF's dataset.fn(.
		var m Mods
		if q := l.qualifier(i); q == "SAFE" && functionSet[string(upper)] || q != "" && functionSet[q+"."+string(upper)] {
			m = DefaultLibrary
		}
		l.emit(i, j, Function, m)
	case member || qualifier:
		// A table's, a struct's or a namespace's name: not a keyword
		// even when it is spelled like one (t.date, end.x).
	case sqlKeywords[string(upper)]:
		l.emit(i, j, Keyword, 0) // IN (, OVER (, EXISTS ( included
	case sqlTypes[string(upper)]:
		l.emit(i, j, Type, 0)
	case call:
		l.emit(i, j, Function, 0)
	}
	return j
}

// called reports whether a '(' follows j, blanks aside.
func (l *sqlLexer) called(j int) bool {
	for j < len(l.s) && (l.s[j] == ' ' || l.s[j] == '\t') {
		j++
	}
	return j < len(l.s) && l.s[j] == '('
}

// qualifier is the upper-cased word right before the '.' before i (SAFE
// of SAFE.DIVIDE), "" when there is none.
func (l *sqlLexer) qualifier(i int) string {
	if i == 0 || l.s[i-1] != '.' {
		return ""
	}
	j := i - 1
	for j > 0 && isSQLIdentPart(l.s[j-1]) {
		j--
	}
	return strings.ToUpper(l.s[j : i-1])
}

// trimCR is the length of line without the '\r' of a \r\n line end.
func trimCR(line string) int {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return n - 1
	}
	return len(line)
}
