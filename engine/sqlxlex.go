package engine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Core's moo lexer for SQLX, run in Go (see sqlx.go for where it is used
// and why it is exact).

// A pattern is one of the regular expressions of core's SQLX lexer, by
// its source, implemented with JavaScript's semantics: no u flag (the
// input is UTF-16 code units), multiline (`.` is any code unit but a line
// terminator, `$` is the end or before a line terminator). match returns
// the end of the match starting exactly at i (moo's regexes are sticky),
// or -1; first reports whether a match can start with code unit c.
type pattern struct {
	match func(s []uint16, i int) int
	first func(c uint16) bool
	// oneUnit: the pattern matches exactly the one code unit at i.
	oneUnit bool
}

// sqlxPatterns are the lexer's regular expressions. Each is
// deterministic: backtracking cannot give a different match than the
// scan that implements it (the comments say why).
var sqlxPatterns = map[string]pattern{
	// Greedy: identifiers never contain the '"' after them, \s never
	// matches '"', and a repetition that fails leaves a ',' where " {"
	// must follow, so no shorter choice matches.
	`input "[a-zA-Z0-9_-]+"(?:,\s*"[a-zA-Z0-9_-]+")* {`: {matchInput, is('i'), false},
	// The leading run cannot give back a character ('-' is no space); the
	// trailing one can, down to a position where $ holds.
	`[^\S\r\n]*---[^\S\r\n]*$`: {matchSeparator, func(c uint16) bool { return c == '-' || isSpaceNotCRLF(c) }, false},
	// Lazy up to the first line terminator or the end: `.` cannot cross
	// one, and $ holds nowhere before it.
	`--.*?$`:   {lineComment('-'), is('-'), false},
	`\/\/.*?$`: {lineComment('/'), is('/'), false},
	// Lazy: up to the first "*/" after the opening "/*".
	`\/\*[\s\S]*?\*\/`: {matchBlockComment, is('/'), false},
	// One code unit.
	`[\s\S]+?`: {func(s []uint16, i int) int {
		if i < len(s) {
			return i + 1
		}
		return -1
	}, func(uint16) bool { return true }, true},
	// A quote, escaped quotes or backslashes or any code unit but a
	// newline, the quote or a backslash, then the quote. Where the
	// repetition stops there is no quote, and giving repetitions back
	// only reaches positions followed by a backslash or a non-quote.
	`'(?:\\['\\]|[^\n'\\])*'`: {quoted('\''), is('\''), false},
	`"(?:\\["\\]|[^\n"\\])*"`: {quoted('"'), is('"'), false},
	// Literals written as regexes: `\\` and `\${` followed by a backtick.
	`\\\\`:      literalPattern(`\\`),
	"\\\\\\${`": literalPattern("\\${`"),
}

func is(c uint16) func(uint16) bool { return func(d uint16) bool { return c == d } }

// literalPattern matches an ASCII string.
func literalPattern(lit string) pattern {
	units := make([]uint16, len(lit))
	for i := range lit {
		units[i] = uint16(lit[i])
	}
	return pattern{func(s []uint16, i int) int {
		if len(s)-i < len(units) {
			return -1
		}
		for k, c := range units {
			if s[i+k] != c {
				return -1
			}
		}
		return i + len(units)
	}, is(units[0]), false}
}

// isLineTerminator is JavaScript's LineTerminator.
func isLineTerminator(c uint16) bool {
	return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029
}

// isJSSpace is JavaScript's \s, and what String.prototype.trim removes:
// WhiteSpace and LineTerminator.
func isJSSpace(c uint16) bool {
	switch c {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return c >= 0x2000 && c <= 0x200A
}

func isSpaceNotCRLF(c uint16) bool { return c != '\r' && c != '\n' && isJSSpace(c) }

// atLineEnd is $ in multiline mode.
func atLineEnd(s []uint16, i int) bool { return i == len(s) || isLineTerminator(s[i]) }

func isInputNameChar(c uint16) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// inputName matches "[a-zA-Z0-9_-]+" at i.
func inputName(s []uint16, i int) int {
	if i >= len(s) || s[i] != '"' {
		return -1
	}
	j := i + 1
	for j < len(s) && isInputNameChar(s[j]) {
		j++
	}
	if j == i+1 || j >= len(s) || s[j] != '"' {
		return -1
	}
	return j + 1
}

var (
	inputHead = literalPattern(`input `).match
	inputTail = literalPattern(` {`).match
)

func matchInput(s []uint16, i int) int {
	j := inputHead(s, i)
	if j < 0 {
		return -1
	}
	if j = inputName(s, j); j < 0 {
		return -1
	}
	for j < len(s) && s[j] == ',' {
		k := j + 1
		for k < len(s) && isJSSpace(s[k]) {
			k++
		}
		if k = inputName(s, k); k < 0 {
			break
		}
		j = k
	}
	return inputTail(s, j)
}

func matchSeparator(s []uint16, i int) int {
	j := i
	for j < len(s) && isSpaceNotCRLF(s[j]) {
		j++
	}
	if len(s)-j < 3 || s[j] != '-' || s[j+1] != '-' || s[j+2] != '-' {
		return -1
	}
	j += 3
	k := j
	for k < len(s) && isSpaceNotCRLF(s[k]) {
		k++
	}
	for ; k >= j; k-- {
		if atLineEnd(s, k) {
			return k
		}
	}
	return -1
}

func lineComment(c uint16) func(s []uint16, i int) int {
	return func(s []uint16, i int) int {
		if len(s)-i < 2 || s[i] != c || s[i+1] != c {
			return -1
		}
		j := i + 2
		for j < len(s) && !isLineTerminator(s[j]) {
			j++
		}
		return j
	}
}

func matchBlockComment(s []uint16, i int) int {
	if len(s)-i < 2 || s[i] != '/' || s[i+1] != '*' {
		return -1
	}
	for j := i + 2; j+1 < len(s); j++ {
		if s[j] == '*' && s[j+1] == '/' {
			return j + 2
		}
	}
	return -1
}

func quoted(q uint16) func(s []uint16, i int) int {
	return func(s []uint16, i int) int {
		if i >= len(s) || s[i] != q {
			return -1
		}
		j := i + 1
		for j < len(s) {
			c := s[j]
			if c == '\\' && j+1 < len(s) && (s[j+1] == q || s[j+1] == '\\') {
				j += 2
				continue
			}
			if c == '\n' || c == q || c == '\\' {
				break
			}
			j++
		}
		if j < len(s) && s[j] == q {
			return j + 1
		}
		return -1
	}
}

// What SyntaxTreeNode.create does with a token: open a node (and make it
// the current one), append its text and close the current node, append a
// leaf node holding its text, or append its text.
type tokenKind uint8

const (
	kindText tokenKind = iota
	kindOpen
	kindClose
	kindLeaf
)

// Core's SyntaxTreeNodeType, by name; values are read from core.
const (
	ntJavaScript = iota
	ntPlaceholder
	ntSQL
	ntComment
	ntLiteral
	ntMultiline
	ntSeparator
	ntCount
)

var nodeTypeNames = [ntCount]string{
	"JAVASCRIPT", "JAVASCRIPT_TEMPLATE_STRING_PLACEHOLDER", "SQL", "SQL_COMMENT",
	"SQL_LITERAL_STRING", "SQL_LITERAL_MULTILINE_STRING", "SQL_STATEMENT_SEPARATOR",
}

// A lexPlan is a verified lexer: its states, each with its rules in order.
type lexPlan struct {
	start  int
	states []lexState
	// nodeTypes is known (and lexRule.node set) when the plan was
	// verified with core's SyntaxTreeNodeType.
	nodeTypes bool
}

type lexState struct {
	rules []lexRule
	// candidates[c] are the rules that can match at an ASCII code unit c,
	// in order; other is all rules, for any other code unit.
	candidates [128][]int
	other      []int
	// text[c]: the only rule that can match at ASCII code unit c matches
	// that unit alone, is a text token and stays in the state (most of
	// SQL and JavaScript).
	text [128]bool
}

type lexRule struct {
	typ   goja.Value // the token type, as core's string
	match func(s []uint16, i int) int
	push  int  // state pushed, or -1
	pop   bool // pops the state
	kind  tokenKind
	node  int // the node type an opening or leaf token makes (ntJavaScript, …)
}

// lexToken is a token: its rule and the code units it spans.
type lexToken struct {
	rule       *lexRule
	start, end int
}

// lex runs the plan over s as moo would, merging each run of consecutive
// text tokens into one (create() appends them to the same node, and push()
// merges adjacent strings). It returns false where no rule matches (moo
// throws there).
func (p *lexPlan) lex(s []uint16) ([]lexToken, bool) {
	out := make([]lexToken, 0, len(s)/8)
	state := p.start
	var stack []int
	for i := 0; i < len(s); {
		st := &p.states[state]
		cands := st.other
		if c := s[i]; c < 128 {
			cands = st.candidates[c]
		}
		var rule *lexRule
		end := -1
		for _, k := range cands {
			if end = st.rules[k].match(s, i); end >= 0 {
				rule = &st.rules[k]
				break
			}
		}
		if rule == nil || end <= i {
			return nil, false
		}
		if end == i+1 && st.text[s[i]&127] && s[i] < 128 {
			// Each following unit the same rule alone can match is a
			// token of its own, of the same text kind: take the run.
			for end < len(s) && s[end] < 128 && st.text[s[end]] {
				end++
			}
		}
		if n := len(out); rule.kind == kindText && n > 0 && out[n-1].rule.kind == kindText && out[n-1].end == i {
			out[n-1].end = end
		} else {
			out = append(out, lexToken{rule: rule, start: i, end: end})
		}
		i = end
		switch {
		case rule.pop:
			// moo's popState: setState(stack.pop()), which keeps the
			// state when the stack is empty.
			if n := len(stack); n > 0 {
				state = stack[n-1]
				stack = stack[:n-1]
			}
		case rule.push >= 0:
			stack = append(stack, state)
			state = rule.push
		}
	}
	return out, true
}

// utf16Units is s as JavaScript sees it.
func utf16Units(s goja.String) []uint16 {
	n := s.Length()
	units := make([]uint16, n)
	if str, ok := asciiString(s); ok { // one byte per code unit
		for i := 0; i < n; i++ {
			units[i] = uint16(str[i])
		}
		return units
	}
	for i := range units {
		units[i] = s.CharAt(i)
	}
	return units
}

// asciiString is s as a Go string when s is all ASCII. (A Go string
// imported with invalid UTF-8 may have as many bytes as code units without
// being ASCII: each invalid byte is U+FFFD in JavaScript.)
func asciiString(s goja.String) (string, bool) {
	str := s.String()
	if len(str) != s.Length() || !isASCII(str) {
		return "", false
	}
	return str, true
}

// verifyLexer returns the plan of a moo lexer whose states use only
// literals and sqlxPatterns, or why not. opening, closing and leaves are
// create()'s Map of token types that open a node (to its node type), Set
// of those that close one and Map of those that make a leaf. types, when
// not nil, is core's SyntaxTreeNodeType: the plan then knows the node
// type of each opening and leaf rule, which must be one of nodeTypeNames.
func verifyLexer(vm *goja.Runtime, lexer, opening, closing, leaves, types *goja.Object) (plan *lexPlan, err error) {
	defer func() {
		if r := recover(); r != nil { // a getter, has() or get() that throws, a missing object
			plan, err = nil, fmt.Errorf("%v", r)
		}
	}()
	obj := func(v goja.Value) *goja.Object {
		if o, ok := v.(*goja.Object); ok {
			return o
		}
		panic("not an object")
	}
	str := func(v goja.Value) (string, bool) {
		s, ok := v.(goja.String)
		if !ok {
			return "", false
		}
		return s.String(), true
	}
	method := func(o *goja.Object, name string) func(goja.Value) goja.Value {
		f, ok := goja.AssertFunction(o.Get(name))
		if !ok {
			panic("no " + name + "()")
		}
		return func(v goja.Value) goja.Value {
			res, err := f(o, v)
			if err != nil {
				panic(err)
			}
			return res
		}
	}
	openHas, openGet := method(opening, "has"), method(opening, "get")
	closeHas := method(closing, "has")
	leafHas, leafGet := method(leaves, "has"), method(leaves, "get")
	var typeValues [ntCount]goja.Value
	if types != nil {
		for k, name := range nodeTypeNames {
			v := types.Get(name)
			if v == nil || !isInteger(v) {
				return nil, fmt.Errorf("SyntaxTreeNodeType.%s is not an integer", name)
			}
			for _, prev := range typeValues[:k] {
				if prev.StrictEquals(v) {
					return nil, fmt.Errorf("SyntaxTreeNodeType.%s is not distinct", name)
				}
			}
			typeValues[k] = v
		}
	}
	nodeType := func(v goja.Value) int {
		for k, tv := range typeValues {
			if tv != nil && tv.StrictEquals(v) {
				return k
			}
		}
		return -1
	}

	states := obj(lexer.Get("states"))
	names := states.Keys()
	index := map[string]int{}
	for k, name := range names {
		index[name] = k
	}
	start, ok := str(lexer.Get("startState"))
	if !ok {
		return nil, errors.New("lexer.startState is not a string")
	}
	p := &lexPlan{states: make([]lexState, len(names)), nodeTypes: types != nil}
	if p.start, ok = index[start]; !ok {
		return nil, errors.New("lexer.startState names no state")
	}
	for k, name := range names {
		st := obj(states.Get(name))
		if fast := obj(st.Get("fast")); len(fast.Keys()) != 0 {
			return nil, fmt.Errorf("state %s has fast single-character rules", name)
		}
		if er := obj(st.Get("error")); er.Get("fallback").ToBoolean() || !er.Get("shouldThrow").ToBoolean() {
			return nil, fmt.Errorf("state %s has a fallback or non-throwing error rule", name)
		}
		re := obj(st.Get("regexp"))
		src, ok1 := str(re.Get("source"))
		flags, ok2 := str(re.Get("flags"))
		if re.ClassName() != "RegExp" || !ok1 || !ok2 || flags != "my" {
			return nil, fmt.Errorf("state %s: the regexp is not sticky and multiline", name)
		}
		groups := obj(st.Get("groups"))
		n := int(groups.Get("length").ToInteger())
		var alts []string
		var firsts []func(uint16) bool
		var oneUnit []bool
		for g := 0; g < n; g++ {
			gr := obj(groups.Get(strconv.Itoa(g)))
			typ, ok := str(gr.Get("defaultType"))
			if !ok || typ == "" || !isNullish(gr.Get("type")) || !isNullish(gr.Get("value")) || !isNullish(gr.Get("next")) ||
				gr.Get("error").ToBoolean() || gr.Get("fallback").ToBoolean() || gr.Get("shouldThrow").ToBoolean() ||
				!isNullish(gr.Get("include")) {
				return nil, fmt.Errorf("state %s, rule %d: a type or value transform, next, error, fallback or include", name, g)
			}
			rule := lexRule{typ: vm.ToValue(typ), push: -1, node: -1}
			if push := gr.Get("push"); !isNullish(push) {
				target, _ := str(push)
				if rule.push, ok = index[target]; !ok {
					return nil, fmt.Errorf("state %s, rule %s pushes an unknown state", name, typ)
				}
			}
			switch pop := gr.Get("pop"); {
			case pop.StrictEquals(vm.ToValue(1)) || pop.StrictEquals(vm.ToValue(true)):
				rule.pop = true // moo allows pop: 1 (or true)
			case !pop.StrictEquals(vm.ToValue(false)):
				return nil, fmt.Errorf("state %s, rule %s: pop is not 1", name, typ)
			}
			if rule.pop && rule.push >= 0 {
				return nil, fmt.Errorf("state %s, rule %s both pushes and pops", name, typ)
			}
			matches := obj(gr.Get("match"))
			if matches.Get("length").ToInteger() != 1 {
				return nil, fmt.Errorf("state %s, rule %s has more than one pattern", name, typ)
			}
			var pat pattern
			if lit, ok := str(matches.Get("0")); ok {
				if lit == "" || !isASCII(lit) {
					return nil, fmt.Errorf("state %s, rule %s: the literal is empty or not ASCII", name, typ)
				}
				pat = literalPattern(lit)
				alts = append(alts, "(?:"+mooEscape(lit)+")")
			} else {
				mre := obj(matches.Get("0"))
				msrc, ok1 := str(mre.Get("source"))
				mflags, ok2 := str(mre.Get("flags"))
				if pat, ok = sqlxPatterns[msrc]; mre.ClassName() != "RegExp" || !ok1 || !ok2 || mflags != "" || !ok {
					return nil, fmt.Errorf("state %s, rule %s: the pattern is not one of sqlxPatterns", name, typ)
				}
				alts = append(alts, msrc)
			}
			rule.match = pat.match
			firsts = append(firsts, pat.first)
			oneUnit = append(oneUnit, pat.oneUnit)
			// create() asks in this order.
			switch t := rule.typ; {
			case openHas(t).ToBoolean():
				rule.kind = kindOpen
				rule.node = nodeType(openGet(t))
			case closeHas(t).ToBoolean():
				rule.kind = kindClose
			case leafHas(t).ToBoolean():
				rule.kind = kindLeaf
				rule.node = nodeType(leafGet(t))
			}
			if types != nil && (rule.kind == kindOpen || rule.kind == kindLeaf) && rule.node < 0 {
				return nil, fmt.Errorf("token type %s makes a node of an unknown type", typ)
			}
			p.states[k].rules = append(p.states[k].rules, rule)
		}
		if src != mooCombined(alts) {
			return nil, fmt.Errorf("state %s: the combined regexp is not moo's", name)
		}
		st2 := &p.states[k]
		for r, first := range firsts {
			for c := range st2.candidates {
				if first(uint16(c)) {
					st2.candidates[c] = append(st2.candidates[c], r)
				}
			}
			st2.other = append(st2.other, r) // non-ASCII code units are rare: try every rule
		}
		for c, cands := range st2.candidates {
			if len(cands) == 1 {
				r := cands[0]
				rule := &st2.rules[r]
				st2.text[c] = rule.kind == kindText && oneUnit[r] && rule.push < 0 && !rule.pop
			}
		}
	}
	return p, nil
}

func isNullish(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

func isInteger(v goja.Value) bool {
	switch x := v.Export().(type) {
	case int64:
		return true
	case float64:
		return x == math.Trunc(x)
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// mooEscape is moo's reEscape of a literal.
func mooEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`-/\^$*+?.()|[]{}`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mooCombined is the source of the regex moo compiles a state to from its
// rules' single patterns: reUnion of each rule's capture group, the
// group being the reUnion of the rule's patterns.
func mooCombined(patterns []string) string {
	union := func(parts []string) string {
		if len(parts) == 0 {
			return "(?!)"
		}
		var b strings.Builder
		b.WriteString("(?:")
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('|')
			}
			b.WriteString("(?:" + p + ")")
		}
		b.WriteString(")")
		return b.String()
	}
	groups := make([]string, len(patterns))
	for i, p := range patterns {
		groups[i] = "(" + union([]string{p}) + ")"
	}
	return union(groups)
}
