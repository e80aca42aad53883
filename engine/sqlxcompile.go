package engine

import (
	"strconv"
	"sync/atomic"

	"github.com/dop251/goja"
)

// The natives the patched bundle calls (see sqlx.go), and compileSqlx in Go.

// maxSQLXDepth bounds the nesting of the tree Go builds. Deeper trees are
// left to core, whose recursive concatenate() then fails as it does under
// the CLI.
const maxSQLXDepth = 1000

// sqlxStats count what the natives did, process-wide (for tests).
var sqlxStats struct {
	lexed, compiled, declined atomic.Int64
}

// sqlxCore is one core's lexer as the patched bundle registered it.
type sqlxCore struct {
	get                             goja.Callable // returns [lexer, opening, closing, leaves, types]
	verified                        bool
	lexer, opening, closing, leaves *goja.Object
	types                           *goja.Object
	plan                            *lexPlan // nil when not a known lexer
}

// installSQLX defines the read-only globals the patched bundle calls:
//
//	__dfdSqlxLex(lexer, code, opening, closing, leaves): create()'s tokens
//	as {type, value} objects, or null;
//	__dfdSqlxRegister(SyntaxTreeNode, get): records the function that
//	returns the lexer and create()'s maps and types;
//	__dfdSqlxCompile(code, basename, contextLines, expectLines,
//	SyntaxTreeNode, SyntaxTreeNodeType): compile()'s result for a .sqlx
//	file, or null.
func (r *Runtime) installSQLX() {
	vm := r.vm
	g := vm.GlobalObject()
	define := func(name string, fn func(goja.FunctionCall) goja.Value) {
		_ = g.DefineDataProperty(name, vm.ToValue(fn), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	}

	var lexCache struct {
		lexer, w, x, e *goja.Object
		plan           *lexPlan
	}
	define("__dfdSqlxLex", func(call goja.FunctionCall) goja.Value {
		lexer, _ := call.Argument(0).(*goja.Object)
		code, isString := call.Argument(1).(goja.String)
		w, _ := call.Argument(2).(*goja.Object)
		x, _ := call.Argument(3).(*goja.Object)
		e, _ := call.Argument(4).(*goja.Object)
		if lexer == nil || !isString || w == nil || x == nil || e == nil {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		c := &lexCache
		if c.lexer != lexer || c.w != w || c.x != x || c.e != e {
			c.lexer, c.w, c.x, c.e = lexer, w, x, e
			c.plan, _ = verifyLexer(vm, lexer, w, x, e, nil)
		}
		if c.plan == nil {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		toks, ok := c.plan.lex(utf16Units(code))
		if !ok {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		items := make([]any, len(toks))
		for k, t := range toks {
			o := vm.NewObject()
			_ = o.Set("type", t.rule.typ)
			_ = o.Set("value", code.Substring(t.start, t.end))
			items[k] = o
		}
		sqlxStats.lexed.Add(1)
		return vm.NewArray(items...)
	})

	cores := map[*goja.Object]*sqlxCore{}
	define("__dfdSqlxRegister", func(call goja.FunctionCall) goja.Value {
		class, _ := call.Argument(0).(*goja.Object)
		get, ok := goja.AssertFunction(call.Argument(1))
		if class != nil && ok {
			cores[class] = &sqlxCore{get: get}
		}
		return goja.Undefined()
	})

	define("__dfdSqlxCompile", func(call goja.FunctionCall) goja.Value {
		code, ok1 := call.Argument(0).(goja.String)
		basename, ok2 := goja.AssertFunction(call.Argument(1))
		contextLines, ok3 := call.Argument(2).(goja.String)
		expectLines, ok4 := call.Argument(3).(goja.String)
		class, _ := call.Argument(4).(*goja.Object)
		types, _ := call.Argument(5).(*goja.Object)
		core := cores[class]
		if !ok1 || !ok2 || !ok3 || !ok4 || core == nil || types == nil {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		if !core.verified {
			core.verified = true
			core.plan = core.verify(vm)
		}
		if core.plan == nil || !types.SameAs(core.types) {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		s := utf16Units(code)
		toks, ok := core.plan.lex(s)
		if !ok {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		root, ok := buildSQLXTree(toks)
		if !ok {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		parts, ok := compileSQLXTree(s, root)
		if !ok {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		// core calls escapedBasename after parsing; so do we (an exception
		// it throws is core's).
		base, err := basename(goja.Undefined())
		if err != nil {
			r.throw(err)
		}
		baseStr, ok := base.(goja.String)
		if !ok {
			sqlxStats.declined.Add(1)
			return goja.Null()
		}
		out := parts.module(utf16Units(baseStr), utf16Units(contextLines), utf16Units(expectLines))
		sqlxStats.compiled.Add(1)
		return unitsValue(vm, out)
	})
}

// verify returns the plan of the registered lexer, or nil.
func (c *sqlxCore) verify(vm *goja.Runtime) (plan *lexPlan) {
	defer func() {
		if recover() != nil {
			plan = nil
		}
	}()
	v, err := c.get(goja.Undefined())
	if err != nil {
		return nil
	}
	arr, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	objs := make([]*goja.Object, 5)
	for k := range objs {
		if objs[k], ok = arr.Get(strconv.Itoa(k)).(*goja.Object); !ok {
			return nil
		}
	}
	c.lexer, c.opening, c.closing, c.leaves, c.types = objs[0], objs[1], objs[2], objs[3], objs[4]
	plan, _ = verifyLexer(vm, c.lexer, c.opening, c.closing, c.leaves, c.types)
	return plan
}

// unitsValue is a JavaScript string of UTF-16 code units.
func unitsValue(vm *goja.Runtime, u []uint16) goja.Value {
	b := make([]byte, len(u))
	for i, c := range u {
		if c >= 0x80 {
			return goja.StringFromUTF16(u)
		}
		b[i] = byte(c)
	}
	return vm.ToValue(string(b))
}

// sqlxNode is a SyntaxTreeNode; its text children are spans of the code.
type sqlxNode struct {
	typ  int // ntJavaScript, …
	kids []sqlxKid
}

type sqlxKid struct {
	node       *sqlxNode // nil for text
	start, end int       // the text's span in the code's units
}

// buildSQLXTree is SyntaxTreeNode.create on the tokens: false where core
// would throw, or the tree is too deep.
func buildSQLXTree(toks []lexToken) (*sqlxNode, bool) {
	root := &sqlxNode{typ: ntSQL}
	cur := root
	stack := []*sqlxNode{root}
	push := func(n *sqlxNode, k sqlxKid) bool {
		if last := len(n.kids) - 1; k.node == nil && last >= 0 && n.kids[last].node == nil {
			if n.kids[last].end != k.start {
				return false // adjacent strings are always adjacent text
			}
			n.kids[last].end = k.end
			return true
		}
		n.kids = append(n.kids, k)
		return true
	}
	for _, t := range toks {
		if cur == nil {
			return nil, false // create()'s r is undefined: TypeError
		}
		text := sqlxKid{start: t.start, end: t.end}
		switch t.rule.kind {
		case kindOpen:
			if t.rule.node == ntSQL && cur.typ != ntSQL {
				return nil, false // "SQL syntax tree nodes may only be children of other SQL nodes."
			}
			n := &sqlxNode{typ: t.rule.node, kids: []sqlxKid{text}}
			if !push(cur, sqlxKid{node: n}) {
				return nil, false
			}
			stack = append(stack, n)
			if len(stack) > maxSQLXDepth {
				return nil, false
			}
			cur = n
		case kindClose:
			if !push(cur, text) {
				return nil, false
			}
			stack = stack[:len(stack)-1]
			cur = nil
			if len(stack) > 0 {
				cur = stack[len(stack)-1]
			}
		case kindLeaf:
			if !push(cur, sqlxKid{node: &sqlxNode{typ: t.rule.node, kids: []sqlxKid{text}}}) {
				return nil, false
			}
		default:
			if !push(cur, text) {
				return nil, false
			}
		}
	}
	return root, true
}

// sqlxParts are what compileSqlx extracts from the tree.
type sqlxParts struct {
	s              []uint16   // the code
	config, js     []uint16   // config block (after "config "), js blocks' bodies
	sql, pre, post [][]uint16 // statements
	incremental    []uint16
	inputs         []sqlxInput
}

type sqlxInput struct {
	labels [][]uint16
	value  []uint16
}

// compileSQLXTree is compileSqlx's parse of the tree: false where core
// would throw.
func compileSQLXTree(s []uint16, root *sqlxNode) (*sqlxParts, bool) {
	p := &sqlxParts{s: s}
	text := func(k sqlxKid) []uint16 { return s[k.start:k.end] }
	for _, k := range root.kids {
		if k.node == nil || k.node.typ != ntJavaScript {
			continue
		}
		n := p.concat(nil, k.node, false)
		if hasPrefix(n, "config") {
			p.config = jsSlice(n, 7, len(n))
		} else {
			p.js = append(p.js, jsSlice(n, 4, -1)...)
		}
	}
	var items []sqlxKid
	for _, k := range root.kids {
		if k.node == nil {
			items = append(items, k)
			continue
		}
		switch k.node.typ {
		case ntPlaceholder, ntComment, ntLiteral, ntMultiline, ntSeparator:
			items = append(items, k)
		}
	}
	p.sql = p.statements(items)
	for _, k := range root.kids {
		if k.node == nil || k.node.typ != ntSQL {
			continue
		}
		kids := k.node.kids
		first, last := kids[0], kids[len(kids)-1]
		if first.node != nil || last.node != nil {
			return nil, false // t.slice / r.slice of a node: TypeError
		}
		t := text(first)
		var list []sqlxKid
		if len(kids) == 1 {
			a, b := jsSliceBounds(len(t), indexOf(t, '{')+1, lastIndexOf(t, '}'))
			list = []sqlxKid{{start: first.start + a, end: first.start + b}}
		} else {
			a, b := jsSliceBounds(len(t), indexOf(t, '{')+1, len(t))
			list = append(list, sqlxKid{start: first.start + a, end: first.start + b})
			list = append(list, kids[1:len(kids)-1]...)
			rt := text(last)
			a, b = jsSliceBounds(len(rt), 0, lastIndexOf(rt, '}'))
			list = append(list, sqlxKid{start: last.start + a, end: last.start + b})
		}
		n := p.statements(list)
		switch {
		case hasPrefix(t, "incremental_where"):
			if len(n) > 1 {
				return nil, false // "'incremental_where' code blocks may only contain a single SQL statement."
			}
			p.incremental = n[0]
		case hasPrefix(t, "pre_operations"):
			p.pre = n
		case hasPrefix(t, "post_operations"):
			p.post = n
		case hasPrefix(t, "input"):
			if len(n) > 1 {
				return nil, false // "'input' code blocks may only contain a single SQL statement."
			}
			a, b := jsSliceBounds(len(t), indexOf(t, '"'), lastIndexOf(t, '"')+1)
			var in sqlxInput
			for _, part := range split(t[a:b], ',') {
				part = trim(part)
				x, y := jsSliceBounds(len(part), 1, -1)
				in.labels = append(in.labels, part[x:y])
			}
			in.value = n[0]
			p.inputs = append(p.inputs, in)
		}
	}
	return p, true
}

// statements is core's createEscapedStatements: the items' text, escaped
// as SQL, split at statement separators.
func (p *sqlxParts) statements(items []sqlxKid) [][]uint16 {
	size := 0
	for _, k := range items {
		size += kidExtent(k)
	}
	out := [][]uint16{make([]uint16, 0, size+size/64)}
	for _, k := range items {
		last := len(out) - 1
		switch {
		case k.node == nil:
			out[last] = escapeLiteral(out[last], p.s[k.start:k.end])
		case k.node.typ != ntSeparator:
			out[last] = p.concat(out[last], k.node, true)
		default:
			out = append(out, []uint16{})
		}
	}
	return out
}

// kidExtent is the number of code units a child spans.
func kidExtent(k sqlxKid) int {
	if k.node == nil {
		return k.end - k.start
	}
	first, last := k.node, k.node
	for len(first.kids) > 0 && first.kids[0].node != nil {
		first = first.kids[0].node
	}
	for len(last.kids) > 0 && last.kids[len(last.kids)-1].node != nil {
		last = last.kids[len(last.kids)-1].node
	}
	if len(first.kids) == 0 || len(last.kids) == 0 {
		return 0
	}
	return last.kids[len(last.kids)-1].end - first.kids[0].start
}

// concat appends node.concatenate(escapes ? the escapes Map : undefined):
// the node's own text escaped for its type, its children's text as is.
func (p *sqlxParts) concat(out []uint16, n *sqlxNode, escapes bool) []uint16 {
	esc := func(out, t []uint16) []uint16 { return append(out, t...) }
	if escapes {
		switch n.typ {
		case ntComment:
			esc = escapeComment
		case ntLiteral, ntMultiline:
			esc = escapeLiteral
		}
	}
	for _, k := range n.kids {
		if k.node == nil {
			out = esc(out, p.s[k.start:k.end])
		} else {
			out = p.concat(out, k.node, false)
		}
	}
	return out
}

// escapeComment is e.replace(/`/g,"\\`").replace(/\${/g,"\\${").
func escapeComment(out, t []uint16) []uint16 {
	last := 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '`':
			out = append(append(out, t[last:i]...), '\\', '`')
			last = i + 1
		case c == '$' && i+1 < len(t) && t[i+1] == '{':
			out = append(append(out, t[last:i]...), '\\', '$', '{')
			i++
			last = i + 1
		}
	}
	return append(out, t[last:]...)
}

// escapeLiteral is e.replace(/\\/g,"\\\\").replace(/\`/g,"\\`").
func escapeLiteral(out, t []uint16) []uint16 {
	last := 0
	for i, c := range t {
		if c == '\\' || c == '`' {
			out = append(append(out, t[last:i]...), '\\', c)
			last = i + 1
		}
	}
	return append(out, t[last:]...)
}

// module is compileSqlx's template: the action's module text.
func (p *sqlxParts) module(base, contextLines, expectLines []uint16) []uint16 {
	size := len(p.config) + 4*len(p.js) + 2048
	for _, st := range p.sql {
		size += len(st) + 3
	}
	out := make([]uint16, 0, size)
	w := func(s string) {
		for i := 0; i < len(s); i++ {
			out = append(out, uint16(s[i]))
		}
	}
	u := func(s []uint16) { out = append(out, s...) }
	list := func(sts [][]uint16) {
		for k, st := range sts {
			if k > 0 {
				w(",")
			}
			w("`")
			u(st)
			w("`")
		}
	}
	head := func() {
		w("(ctx) => {\n    ")
		u(contextLines)
		w("\n    ")
		u(expectLines)
		w("\n    ")
		u(p.js)
		w("\n    return ")
	}
	w("dataform.sqlxAction({\n  sqlxConfig: {\n    name: \"")
	u(base)
	w("\",\n    type: \"operations\",\n    ...")
	if len(p.config) > 0 {
		u(p.config)
	} else {
		w("{}")
	}
	w("\n  },\n  sqlStatementCount: ")
	w(strconv.Itoa(len(p.sql)))
	w(",\n  sqlContextable: ")
	head()
	w("[")
	list(p.sql)
	w("];\n  },\n  incrementalWhereContextable: ")
	if len(p.incremental) > 0 {
		head()
		w("`")
		u(p.incremental)
		w("`\n  }")
	} else {
		w("undefined")
	}
	for _, ops := range []struct {
		name string
		sts  [][]uint16
	}{{"preOperationsContextable", p.pre}, {"postOperationsContextable", p.post}} {
		w(",\n  " + ops.name + ": ")
		if len(ops.sts) > 0 {
			head()
			w("[")
			list(ops.sts)
			w("];\n  }")
		} else {
			w("undefined")
		}
	}
	w(",\n  inputContextables: [\n    ")
	for k, in := range p.inputs {
		if k > 0 {
			w(",")
		}
		w("{\n            refName: [")
		for m, l := range in.labels {
			if m > 0 {
				w(", ")
			}
			w("\"")
			u(l)
			w("\"")
		}
		w("],\n            contextable: (ctx) => {\n              ")
		u(p.js)
		w("\n              return `")
		u(in.value)
		w("`;\n            }\n          }")
	}
	w("\n  ]\n});\n")
	return out
}

// JavaScript string operations on code units.

func hasPrefix(s []uint16, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if s[i] != uint16(prefix[i]) {
			return false
		}
	}
	return true
}

func indexOf(s []uint16, c uint16) int {
	for i, d := range s {
		if d == c {
			return i
		}
	}
	return -1
}

func lastIndexOf(s []uint16, c uint16) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// jsSliceBounds are the bounds String.prototype.slice(start, end) takes
// of a string of length n.
func jsSliceBounds(n, start, end int) (int, int) {
	clamp := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	a, b := clamp(start), clamp(end)
	if b < a {
		b = a
	}
	return a, b
}

func jsSlice(s []uint16, start, end int) []uint16 {
	a, b := jsSliceBounds(len(s), start, end)
	return s[a:b]
}

// split is String.prototype.split with a one-unit separator.
func split(s []uint16, sep uint16) [][]uint16 {
	var out [][]uint16
	last := 0
	for i, c := range s {
		if c == sep {
			out = append(out, s[last:i])
			last = i + 1
		}
	}
	return append(out, s[last:])
}

// trim is String.prototype.trim.
func trim(s []uint16) []uint16 {
	a, b := 0, len(s)
	for a < b && isJSSpace(s[a]) {
		a++
	}
	for b > a && isJSSpace(s[b-1]) {
		b--
	}
	return s[a:b]
}
