package highlight

import "strings"

// A JavaScript lexer for highlighting. It tracks just enough context to
// tell a regular expression from a division (the token before a '/'), an
// object literal's keys from labels and ternaries (the brace they are
// in), and where a template literal's substitution ends (a stack of open
// brackets). Every step consumes at least one byte and every scan stops
// at the end of its range, so it ends on any input.

// frame is an open bracket.
type frame uint8

const (
	frameBlock    frame = iota // { of a block or function body
	frameObject                // { of an object literal
	frameParen                 // (
	frameBracket               // [
	frameTemplate              // ${ of a template literal's substitution
)

// prevKind is the kind of the last token that decides what comes next.
type prevKind uint8

const (
	prevNone    prevKind = iota // the start: a statement begins
	prevValue                   // an identifier, literal or closing bracket: an operand ended
	prevKeyword                 // a keyword (text tells which)
	prevPunct                   // an operator or opening bracket (text tells which)
)

// sqlxBuiltins are the names a SQLX file's JavaScript sees from core: the
// context's functions (self(), ref(), …) and the JiT context.
var sqlxBuiltins = map[string]Kind{
	"ref": Function, "resolve": Function, "self": Function, "name": Function,
	"database": Function, "schema": Function, "when": Function, "incremental": Function,
	"jctx": Variable, "dataform": Variable, "require": Function,
}

// jsBuiltins are the globals of a project's .js files: the action
// builders, the session, Node's require and module.
var jsBuiltins = map[string]Kind{
	"publish": Function, "declare": Function, "assert": Function, "operate": Function,
	"test": Function, "notebook": Function, "require": Function,
	"dataform": Variable, "session": Variable, "module": Variable, "exports": Variable,
}

// jsKeywords are JavaScript's keywords and literal names.
var jsKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`async await break case catch class const continue debugger
default delete do else export extends false finally for from function if import in instanceof
let new null of return super switch this throw true try typeof undefined var void while with yield`) {
		m[w] = true
	}
	return m
}()

// regexAfterKeyword are the keywords after which '/' starts a regular
// expression (an operand is expected); after this, super, true and the
// like it is a division.
var regexAfterKeyword = map[string]bool{
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true,
	"yield": true, "await": true, "export": true, "default": true,
}

// jsOperators are the operators of more than one byte, longest first.
var jsOperators = []string{
	">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "**", "<<", ">>",
}

type jsLexer struct {
	s        string
	end      int // the range ends here: nothing is read at or after it
	out      []Token
	builtins map[string]Kind
	stack    []frame
	prev     prevKind
	prevText string // the keyword or operator of prevKeyword and prevPunct
}

// lexJS appends the tokens of s[start:end] to out. A config block starts
// inside an object literal (its body is one), a ${} placeholder in an
// expression, a js block or a .js file at a statement.
func lexJS(s string, start, end int, out []Token, builtins map[string]Kind, initial frame) []Token {
	l := &jsLexer{s: s, end: min(end, len(s)), out: out, builtins: builtins}
	switch initial {
	case frameObject:
		l.stack = append(l.stack, frameObject)
		l.prev, l.prevText = prevPunct, "{"
	case frameParen:
		l.stack = append(l.stack, frameParen)
		l.prev, l.prevText = prevPunct, "("
	}
	l.run(start)
	return l.out
}

func (l *jsLexer) emit(start, end int, k Kind, m Mods) {
	end = min(end, l.end)
	if start < end {
		l.out = append(l.out, Token{Start: start, End: end, Kind: k, Mods: m})
	}
}

func (l *jsLexer) top() (frame, bool) {
	if len(l.stack) == 0 {
		return 0, false
	}
	return l.stack[len(l.stack)-1], true
}

func (l *jsLexer) pop() { l.stack = l.stack[:len(l.stack)-1] }

func isJSIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
func isJSIdentPart(c byte) bool { return isJSIdentStart(c) || c >= '0' && c <= '9' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// lineEnd is where the line that i is on ends (before its '\n').
func (l *jsLexer) lineEnd(i int) int {
	if j := strings.IndexByte(l.s[i:l.end], '\n'); j >= 0 {
		return i + j
	}
	return l.end
}

// next is the first byte at or after i that is neither blank nor in a
// comment (l.end when there is none).
func (l *jsLexer) next(i int) int {
	for i < l.end {
		switch c := l.s[i]; {
		case isSpace(c):
			i++
		case c == '/' && i+1 < l.end && l.s[i+1] == '/':
			i = l.lineEnd(i)
		case c == '/' && i+1 < l.end && l.s[i+1] == '*':
			if j := strings.Index(l.s[i+2:l.end], "*/"); j >= 0 {
				i += 2 + j + 2
			} else {
				i = l.end
			}
		default:
			return i
		}
	}
	return l.end
}

func (l *jsLexer) regexAllowed() bool {
	switch l.prev {
	case prevValue:
		return false
	case prevKeyword:
		return regexAfterKeyword[l.prevText]
	}
	return true
}

// objectAllowed reports whether a '{' here opens an object literal (an
// operand is expected) rather than a block.
func (l *jsLexer) objectAllowed() bool {
	switch l.prev {
	case prevPunct:
		switch l.prevText {
		case ";", "=>", "{", "}":
			return false
		}
		return true
	case prevKeyword:
		switch l.prevText {
		case "return", "typeof", "yield", "await", "in", "of", "new", "delete", "void", "throw", "case", "default", "export":
			return true
		}
	}
	return false
}

func (l *jsLexer) run(i int) {
	s := l.s
	for i < l.end {
		c := s[i]
		switch {
		case isSpace(c):
			i++
		case c == '/' && i+1 < l.end && s[i+1] == '/':
			j := l.lineEnd(i)
			l.emit(i, i+trimCR(s[i:j]), Comment, 0)
			i = j
		case c == '/' && i+1 < l.end && s[i+1] == '*':
			j := l.end
			if k := strings.Index(s[i+2:l.end], "*/"); k >= 0 {
				j = i + 2 + k + 2
			}
			l.emit(i, j, Comment, 0)
			i = j
		case c == '\'' || c == '"':
			j := l.stringEnd(i)
			l.emit(i, j, String, 0)
			l.prev = prevValue
			i = j
		case c == '`':
			i = l.template(i, i+1)
		case isDigit(c) || c == '.' && i+1 < l.end && isDigit(s[i+1]):
			j := l.numberEnd(i)
			l.emit(i, j, Number, 0)
			l.prev = prevValue
			i = j
		case isJSIdentStart(c):
			i = l.ident(i)
		case c == '/' && l.regexAllowed():
			if j, ok := l.regexEnd(i); ok {
				l.emit(i, j, Regexp, 0)
				l.prev = prevValue
				i = j
			} else {
				i = l.operator(i)
			}
		case c == '{':
			if l.objectAllowed() {
				l.stack = append(l.stack, frameObject)
			} else {
				l.stack = append(l.stack, frameBlock)
			}
			l.prev, l.prevText = prevPunct, "{"
			i++
		case c == '}':
			f, ok := l.top()
			if ok {
				l.pop()
			}
			if ok && f == frameTemplate {
				l.emit(i, i+1, Operator, 0)
				i = l.template(i+1, i+1)
				continue
			}
			l.prev, l.prevText = prevPunct, "}"
			i++
		case c == '(' || c == '[':
			if c == '(' {
				l.stack = append(l.stack, frameParen)
			} else {
				l.stack = append(l.stack, frameBracket)
			}
			l.prev, l.prevText = prevPunct, s[i:i+1]
			i++
		case c == ')' || c == ']':
			want := frameParen
			if c == ']' {
				want = frameBracket
			}
			if f, ok := l.top(); ok && f == want {
				l.pop()
			}
			l.prev = prevValue
			i++
		case c == ',' || c == ';' || c == '.' || c == ':':
			l.prev, l.prevText = prevPunct, s[i:i+1]
			i++
		default:
			i = l.operator(i)
		}
	}
}

// operator emits the operator at i (longest first) and returns its end.
// A byte that is no operator (#, @, a stray quote of broken input) is
// passed over.
func (l *jsLexer) operator(i int) int {
	rest := l.s[i:l.end]
	n := 0
	for _, op := range jsOperators {
		if strings.HasPrefix(rest, op) {
			n = len(op)
			break
		}
	}
	if n == 0 {
		if !strings.ContainsRune("+-*/%=<>!~&|^?", rune(rest[0])) {
			l.prev, l.prevText = prevPunct, rest[:1]
			return i + 1
		}
		n = 1
	}
	op := rest[:n]
	if op == "?." {
		// Optional chaining reads like a '.': what follows is a member.
		l.prev, l.prevText = prevPunct, "."
		return i + n
	}
	l.emit(i, i+n, Operator, 0)
	l.prev, l.prevText = prevPunct, op
	if op == "++" || op == "--" {
		// x++ / y: after a postfix operator an operand has ended. (A
		// prefix ++ before a regular expression is not valid anyway.)
		l.prev = prevValue
	}
	return i + n
}

// stringEnd is the end of the quoted string at i: after its closing
// quote, or at the line break or the range end that leaves it open. A
// backslash before a line break continues the string on the next line.
func (l *jsLexer) stringEnd(i int) int {
	q := l.s[i]
	for j := i + 1; j < l.end; j++ {
		switch l.s[j] {
		case q:
			return j + 1
		case '\\':
			j++
			if j+1 < l.end && l.s[j] == '\r' && l.s[j+1] == '\n' {
				j++
			}
		case '\n':
			return j
		}
	}
	return l.end
}

// template lexes template text from i (after its opening backtick or the
// '}' that closed a substitution; the token starts at from) to the
// closing backtick or the next "${", which opens a substitution.
func (l *jsLexer) template(from, i int) int {
	s := l.s
	for j := i; j < l.end; j++ {
		switch s[j] {
		case '\\':
			j++
		case '`':
			l.emit(from, j+1, String, 0)
			l.prev = prevValue
			return j + 1
		case '$':
			if j+1 < l.end && s[j+1] == '{' {
				l.emit(from, j, String, 0)
				l.emit(j, j+2, Operator, 0)
				l.stack = append(l.stack, frameTemplate)
				l.prev, l.prevText = prevPunct, "${"
				return j + 2
			}
		}
	}
	l.emit(from, l.end, String, 0)
	return l.end
}

// numberEnd is the end of the numeric literal at i: decimal with
// fraction and exponent, 0x/0o/0b, numeric separators, BigInt's n.
func (l *jsLexer) numberEnd(i int) int {
	s := l.s
	j := i
	if s[j] == '0' && j+1 < l.end && strings.IndexByte("xXoObB", s[j+1]) >= 0 {
		j += 2
		for j < l.end && (isJSIdentPart(s[j]) && s[j] < 0x80) {
			j++
		}
		return j
	}
	digits := func() {
		for j < l.end && (isDigit(s[j]) || s[j] == '_') {
			j++
		}
	}
	digits()
	if j < l.end && s[j] == '.' {
		j++
		digits()
	}
	if j < l.end && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < l.end && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < l.end && isDigit(s[k]) {
			j = k
			digits()
		}
	}
	if j < l.end && s[j] == 'n' {
		j++
	}
	return j
}

// regexEnd is the end of the regular expression literal at i, flags
// included; false when the line or the range ends before its closing
// '/' (then the '/' is a division of broken code).
func (l *jsLexer) regexEnd(i int) (int, bool) {
	s := l.s
	class := false
	for j := i + 1; j < l.end; j++ {
		switch s[j] {
		case '\\':
			j++
		case '\n', '\r':
			return 0, false
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if class {
				continue
			}
			j++
			for j < l.end && isJSIdentPart(s[j]) && s[j] < 0x80 {
				j++
			}
			return j, true
		}
	}
	return 0, false
}

// ident lexes the identifier or keyword at i.
func (l *jsLexer) ident(i int) int {
	s := l.s
	j := i + 1
	for j < l.end && isJSIdentPart(s[j]) {
		j++
	}
	word := s[i:j]
	after := l.next(j)
	call := after < l.end && s[after] == '('
	member := l.prev == prevPunct && l.prevText == "."
	key := false
	if f, ok := l.top(); ok && f == frameObject && l.prev == prevPunct && (l.prevText == "{" || l.prevText == ",") {
		key = after < l.end && s[after] == ':'
	}
	builtinKind, isBuiltin := l.builtins[word]
	prev, prevText := l.prev, l.prevText
	l.prev = prevValue
	switch {
	case member && call:
		l.emit(i, j, Method, 0)
	case member || key:
		l.emit(i, j, Property, 0)
	case jsKeywords[word]:
		l.emit(i, j, Keyword, 0)
		switch word {
		case "this", "super", "true", "false", "null", "undefined":
		default:
			l.prev, l.prevText = prevKeyword, word
		}
	case prev == prevKeyword && (prevText == "const" || prevText == "let" || prevText == "var"):
		m := Declaration
		if prevText == "const" {
			m |= Readonly
		}
		l.emit(i, j, Variable, m)
	case prev == prevKeyword && prevText == "function":
		l.emit(i, j, Function, Declaration)
	case prev == prevKeyword && (prevText == "class" || prevText == "extends"):
		m := Mods(0)
		if prevText == "class" {
			m = Declaration
		}
		l.emit(i, j, Type, m)
	case isBuiltin:
		l.emit(i, j, builtinKind, DefaultLibrary)
	case call:
		l.emit(i, j, Function, 0)
	case strings.HasPrefix(s[after:l.end], "=>"):
		l.emit(i, j, Parameter, 0)
	default:
		// A plain name says nothing a base highlighter does not know, and
		// in an editor with one (Neovim's treesitter, which ranks below
		// semantic tokens) it would only hide what that one knows
		// (console as a built-in, say): no token.
	}
	return j
}
