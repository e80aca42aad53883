package source

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	jsparser "github.com/dop251/goja/parser"
	"github.com/dop251/goja/token"
)

// JiT code travels as text. Core keeps a jitCode function as its source
// (fn.toString()) and its jitCompiler runs it later, in another sandbox:
//
//	new Function("jctx", "const mainAsync = " + jitCode + ";\nreturn mainAsync(jctx);")
//
// so a name from the function's module — a const next to the publish(),
// an includes function, a require()d helper — is not defined there, and
// the code fails with a ReferenceError only when it runs. JitFreeNames
// finds those names as the code is typed.

// FreeName is a use, in JiT code, of a name that is not defined where the
// code runs.
type FreeName struct {
	Name string
	Span Span // within the code
	// Within are the spans of the functions around the use, innermost
	// first, the whole code last: text that may also be found where the
	// code was written when the code was put together from pieces.
	Within []Span
}

// jitPrefix and jitSuffix put JiT code where core's jitCompiler puts it:
// in a function of jctx, as the initializer of const mainAsync.
const (
	jitPrefix = "(function (jctx) {\nconst mainAsync = "
	jitSuffix = ";\nreturn mainAsync(jctx);\n})"
)

// JitFreeNames returns, in order, the uses of names in JiT code that are
// neither declared in it (parameters, var/let/const/function/class and
// catch bindings, at their scopes) nor defined where it runs: the globals
// of the JiT runtime (JitGlobals) and what core's wrapper defines (jctx,
// mainAsync, arguments). To be free of false alarms it leaves out what
// may still work: a name also assigned with = somewhere in the code (in
// sloppy mode that creates a global), the operand of typeof, and code it
// cannot follow (ok false: it does not parse, or uses with or a direct
// eval).
func JitFreeNames(code string) (uses []FreeName, ok bool) {
	prog, err := jsparser.ParseFile(nil, "", jitPrefix+code+jitSuffix, 0, jsparser.WithDisableSourceMaps)
	if err != nil {
		return nil, false
	}
	w := &scopeWalker{base: int(prog.File.Base()), start: len(jitPrefix), end: len(jitPrefix) + len(code), assigned: map[string]bool{}}
	w.cur = &scope{names: map[string]bool{}, fn: true}
	for _, st := range prog.Body {
		w.stmt(st)
	}
	if w.bail {
		return nil, false
	}
	for _, u := range w.uses {
		if w.assigned[u.Name] {
			continue
		}
		if sp := (Span{Start: u.Span.Start - w.start, End: u.Span.End - w.start}); sp.Start >= 0 && sp.End <= len(code) {
			var within []Span
			for _, f := range u.Within {
				if f := (Span{Start: f.Start - w.start, End: f.End - w.start}); f.Start >= 0 && f.End <= len(code) && f != (Span{0, len(code)}) {
					within = append(within, f)
				}
			}
			uses = append(uses, FreeName{Name: u.Name, Span: sp, Within: append(within, Span{0, len(code)})})
		}
	}
	return uses, true
}

// JitFunctionsAround are the spans of the functions of JiT code around
// offset off, innermost first, then the whole code: the text to look for
// where the code was written when the code was put together from pieces.
func JitFunctionsAround(code string, off int) []Span {
	prog, err := jsparser.ParseFile(nil, "", jitPrefix+code+jitSuffix, 0, jsparser.WithDisableSourceMaps)
	if err != nil {
		return []Span{{0, len(code)}}
	}
	w := &scopeWalker{base: int(prog.File.Base()), start: len(jitPrefix), end: len(jitPrefix) + len(code), assigned: map[string]bool{}, around: len(jitPrefix) + off}
	w.cur = &scope{names: map[string]bool{}, fn: true}
	for _, st := range prog.Body {
		w.stmt(st)
	}
	var out []Span
	for i := len(w.aroundSpans) - 1; i >= 0; i-- {
		if f := (Span{Start: w.aroundSpans[i].Start - w.start, End: w.aroundSpans[i].End - w.start}); f.Start >= 0 && f.End <= len(code) && f != (Span{0, len(code)}) {
			out = append(out, f)
		}
	}
	return append(out, Span{0, len(code)})
}

// jitStackFrameRE is a stack frame in the function core's jitCompiler
// makes of JiT code with new Function: goja names its source "<eval>",
// V8 "<anonymous>" ("at mainAsync (<eval>:5:9(5))", "at mainAsync (eval
// at o (…/bundle.js:16:…), <anonymous>:5:9)"); goja writes an anonymous
// function's frame without a name or parentheses ("at <eval>:5:31(6)").
var jitStackFrameRE = regexp.MustCompile(`(?m)^\s*at (?:.*[(, ])?(?:<eval>|<anonymous>):(\d+):(\d+)`)

// jitFunctionHeader is the text goja and V8 put before the body of a
// function made with new Function("jctx", body): "(function
// anonymous(jctx\n) {\n"; the body starts on its third line, and core's
// body starts with jitBodyPrefix.
const (
	jitFunctionHeaderLines = 2
	jitBodyPrefix          = "const mainAsync = "
)

// JitThrowOffset is where in JiT code the error whose JavaScript stack is
// stack was thrown: the first frame in the code, as an offset into it.
func JitThrowOffset(stack, code string) (int, bool) {
	m := jitStackFrameRE.FindStringSubmatch(stack)
	if m == nil {
		return 0, false
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	line -= jitFunctionHeaderLines
	if line == 1 {
		col -= len(jitBodyPrefix)
	}
	if line < 1 || col < 1 {
		return 0, false
	}
	start := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(code[start:], '\n')
		if i < 0 {
			return 0, false
		}
		start += i + 1
	}
	end := len(code)
	if i := strings.IndexByte(code[start:], '\n'); i >= 0 {
		end = start + i
	}
	if start+col-1 > end {
		return 0, false
	}
	return start + col - 1, true
}

// JitGlobals are the names defined in the global scope of every JiT
// runtime: ECMAScript's built-ins, and what the sandboxes add — dfd's goja
// runtime (engine.Runtime.JitCompile: console, timers, require, …) and
// the official CLI's vm2 NodeVM (Buffer, process, VMError, …), so that
// code that works in either is never flagged.
var JitGlobals = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{
		// ECMAScript
		"globalThis", "Infinity", "NaN", "undefined", "eval", "isFinite", "isNaN", "parseFloat", "parseInt",
		"decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape",
		"AggregateError", "Array", "ArrayBuffer", "Atomics", "BigInt", "BigInt64Array", "BigUint64Array",
		"Boolean", "DataView", "Date", "Error", "EvalError", "FinalizationRegistry", "Float32Array",
		"Float64Array", "Function", "Int8Array", "Int16Array", "Int32Array", "Intl", "Iterator", "JSON", "Map",
		"Math", "Number", "Object", "Promise", "Proxy", "RangeError", "ReferenceError", "Reflect", "RegExp",
		"Set", "SharedArrayBuffer", "String", "Symbol", "SyntaxError", "TypeError", "Uint8Array",
		"Uint8ClampedArray", "Uint16Array", "Uint32Array", "URIError", "WeakMap", "WeakRef", "WeakSet",
		"WebAssembly",
		// the sandboxes
		"global", "console", "require", "setTimeout", "clearTimeout", "setInterval", "clearInterval",
		"setImmediate", "clearImmediate", "queueMicrotask", "GoError", "Buffer", "process", "VMError",
		"VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL",
	} {
		m[n] = true
	}
	return m
}()

type scope struct {
	parent *scope
	names  map[string]bool
	fn     bool // a function's scope: var declarations go here
}

func (s *scope) declared(name string) bool {
	for ; s != nil; s = s.parent {
		if s.names[name] {
			return true
		}
	}
	return false
}

type scopeWalker struct {
	base        int // file.Idx of offset 0
	start, end  int // the JiT code within the parsed text
	cur         *scope
	funcs       []Span     // the functions being walked, outermost first
	around      int        // JitFunctionsAround: the functions around this offset …
	aroundSpans []Span     // … outermost first
	uses        []FreeName // offsets in the parsed text
	assigned    map[string]bool
	bail        bool
}

func (w *scopeWalker) push(fn bool) { w.cur = &scope{parent: w.cur, names: map[string]bool{}, fn: fn} }
func (w *scopeWalker) pop()         { w.cur = w.cur.parent }

func (w *scopeWalker) declare(name string) { w.cur.names[name] = true }

func (w *scopeWalker) declareVar(name string) {
	s := w.cur
	for !s.fn {
		s = s.parent
	}
	s.names[name] = true
}

func (w *scopeWalker) ref(id *ast.Identifier) {
	if id == nil {
		return
	}
	name := id.Name.String()
	if w.cur.declared(name) || JitGlobals[name] {
		return
	}
	off := int(id.Idx) - w.base
	within := make([]Span, 0, len(w.funcs))
	for i := len(w.funcs) - 1; i >= 0; i-- {
		within = append(within, w.funcs[i])
	}
	w.uses = append(w.uses, FreeName{Name: name, Span: Span{Start: off, End: off + len(name)}, Within: within})
}

// ---- declarations

// bindingNames calls f for each name a binding target declares.
func bindingNames(t ast.Expression, f func(string)) {
	switch t := t.(type) {
	case *ast.Identifier:
		f(t.Name.String())
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			bindingNames(e, f)
		}
		bindingNames(t.Rest, f)
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				f(p.Name.Name.String())
			case *ast.PropertyKeyed:
				bindingNames(p.Value, f)
			case *ast.SpreadElement:
				bindingNames(p.Expression, f)
			}
		}
		bindingNames(t.Rest, f)
	case *ast.AssignExpression: // a default: target = value
		bindingNames(t.Left, f)
	case *ast.Binding:
		bindingNames(t.Target, f)
	}
}

// hoist declares, in the current function scope, the var declarations and
// function declarations of body, at any depth short of nested functions
// (function declarations in blocks too: sloppy mode makes them visible in
// the function).
func (w *scopeWalker) hoist(list []ast.Statement) {
	for _, st := range list {
		w.hoistStmt(st)
	}
}

func (w *scopeWalker) hoistStmt(st ast.Statement) {
	switch st := st.(type) {
	case *ast.VariableStatement:
		for _, b := range st.List {
			bindingNames(b.Target, w.declareVar)
		}
	case *ast.FunctionDeclaration:
		if st.Function.Name != nil {
			w.declareVar(st.Function.Name.Name.String())
		}
	case *ast.BlockStatement:
		w.hoist(st.List)
	case *ast.IfStatement:
		w.hoistStmt(st.Consequent)
		if st.Alternate != nil {
			w.hoistStmt(st.Alternate)
		}
	case *ast.ForStatement:
		if v, ok := st.Initializer.(*ast.ForLoopInitializerVarDeclList); ok {
			for _, b := range v.List {
				bindingNames(b.Target, w.declareVar)
			}
		}
		w.hoistStmt(st.Body)
	case *ast.ForInStatement:
		if v, ok := st.Into.(*ast.ForIntoVar); ok {
			bindingNames(v.Binding.Target, w.declareVar)
		}
		w.hoistStmt(st.Body)
	case *ast.ForOfStatement:
		if v, ok := st.Into.(*ast.ForIntoVar); ok {
			bindingNames(v.Binding.Target, w.declareVar)
		}
		w.hoistStmt(st.Body)
	case *ast.WhileStatement:
		w.hoistStmt(st.Body)
	case *ast.DoWhileStatement:
		w.hoistStmt(st.Body)
	case *ast.LabelledStatement:
		w.hoistStmt(st.Statement)
	case *ast.TryStatement:
		w.hoist(st.Body.List)
		if st.Catch != nil {
			w.hoist(st.Catch.Body.List)
		}
		if st.Finally != nil {
			w.hoist(st.Finally.List)
		}
	case *ast.SwitchStatement:
		for _, c := range st.Body {
			w.hoist(c.Consequent)
		}
	case *ast.WithStatement:
		w.hoistStmt(st.Body)
	}
}

// lexical declares the let/const/class/function declarations of a block
// in the current (block) scope.
func (w *scopeWalker) lexical(list []ast.Statement) {
	for _, st := range list {
		switch st := st.(type) {
		case *ast.LexicalDeclaration:
			for _, b := range st.List {
				bindingNames(b.Target, w.declare)
			}
		case *ast.ClassDeclaration:
			if st.Class.Name != nil {
				w.declare(st.Class.Name.Name.String())
			}
		case *ast.FunctionDeclaration:
			if st.Function.Name != nil {
				w.declare(st.Function.Name.Name.String())
			}
		}
	}
}

// ---- functions and classes

func (w *scopeWalker) function(node ast.Node, name *ast.Identifier, params *ast.ParameterList, body ast.ConciseBody, arrow bool) {
	w.push(true)
	sp := Span{Start: int(node.Idx0()) - w.base, End: int(node.Idx1()) - w.base}
	w.funcs = append(w.funcs, sp)
	if sp.Start <= w.around && w.around < sp.End {
		w.aroundSpans = append(w.aroundSpans, sp)
	}
	defer func() { w.funcs = w.funcs[:len(w.funcs)-1]; w.pop() }()
	if name != nil {
		w.declare(name.Name.String())
	}
	if !arrow {
		w.declare("arguments")
	}
	if params != nil {
		for _, b := range params.List {
			bindingNames(b.Target, w.declare)
		}
		bindingNames(params.Rest, w.declare)
		for _, b := range params.List {
			w.patternRefs(b.Target)
			w.expr(b.Initializer)
		}
		w.patternRefs(params.Rest)
	}
	switch b := body.(type) {
	case *ast.BlockStatement:
		w.hoist(b.List)
		w.lexical(b.List)
		for _, st := range b.List {
			w.stmt(st)
		}
	case *ast.ExpressionBody:
		w.expr(b.Expression)
	}
}

func (w *scopeWalker) class(c *ast.ClassLiteral) {
	w.expr(c.SuperClass)
	w.push(false)
	defer w.pop()
	if c.Name != nil {
		w.declare(c.Name.Name.String())
	}
	for _, el := range c.Body {
		switch el := el.(type) {
		case *ast.MethodDefinition:
			if el.Computed {
				w.expr(el.Key)
			}
			w.expr(el.Body)
		case *ast.FieldDefinition:
			if el.Computed {
				w.expr(el.Key)
			}
			w.push(true)
			w.declare("arguments")
			w.expr(el.Initializer)
			w.pop()
		case *ast.ClassStaticBlock:
			w.push(true)
			w.hoist(el.Block.List)
			w.lexical(el.Block.List)
			for _, st := range el.Block.List {
				w.stmt(st)
			}
			w.pop()
		}
	}
}

// ---- statements

func (w *scopeWalker) block(list []ast.Statement) {
	w.push(false)
	defer w.pop()
	w.lexical(list)
	for _, st := range list {
		w.stmt(st)
	}
}

func (w *scopeWalker) bindings(list []*ast.Binding) {
	for _, b := range list {
		w.patternRefs(b.Target)
		w.expr(b.Initializer)
	}
}

func (w *scopeWalker) stmt(st ast.Statement) {
	switch st := st.(type) {
	case nil:
	case *ast.BlockStatement:
		w.block(st.List)
	case *ast.ExpressionStatement:
		w.expr(st.Expression)
	case *ast.VariableStatement:
		w.bindings(st.List)
	case *ast.LexicalDeclaration:
		w.bindings(st.List)
	case *ast.FunctionDeclaration:
		w.function(st.Function, nil, st.Function.ParameterList, st.Function.Body, false)
	case *ast.ClassDeclaration:
		w.class(st.Class)
	case *ast.IfStatement:
		w.expr(st.Test)
		w.stmt(st.Consequent)
		w.stmt(st.Alternate)
	case *ast.ForStatement:
		w.push(false)
		switch in := st.Initializer.(type) {
		case *ast.ForLoopInitializerExpression:
			w.expr(in.Expression)
		case *ast.ForLoopInitializerVarDeclList:
			w.bindings(in.List)
		case *ast.ForLoopInitializerLexicalDecl:
			for _, b := range in.LexicalDeclaration.List {
				bindingNames(b.Target, w.declare)
			}
			w.bindings(in.LexicalDeclaration.List)
		}
		w.expr(st.Test)
		w.expr(st.Update)
		w.stmt(st.Body)
		w.pop()
	case *ast.ForInStatement:
		w.forInto(st.Into, st.Source, st.Body)
	case *ast.ForOfStatement:
		w.forInto(st.Into, st.Source, st.Body)
	case *ast.WhileStatement:
		w.expr(st.Test)
		w.stmt(st.Body)
	case *ast.DoWhileStatement:
		w.stmt(st.Body)
		w.expr(st.Test)
	case *ast.LabelledStatement:
		w.stmt(st.Statement)
	case *ast.ReturnStatement:
		w.expr(st.Argument)
	case *ast.ThrowStatement:
		w.expr(st.Argument)
	case *ast.TryStatement:
		w.block(st.Body.List)
		if c := st.Catch; c != nil {
			w.push(false)
			bindingNames(c.Parameter, w.declare)
			w.patternRefs(c.Parameter)
			w.block(c.Body.List)
			w.pop()
		}
		if st.Finally != nil {
			w.block(st.Finally.List)
		}
	case *ast.SwitchStatement:
		w.expr(st.Discriminant)
		w.push(false)
		for _, c := range st.Body {
			w.lexical(c.Consequent)
		}
		for _, c := range st.Body {
			w.expr(c.Test)
			for _, s := range c.Consequent {
				w.stmt(s)
			}
		}
		w.pop()
	case *ast.WithStatement:
		w.bail = true // names resolve against an object: nothing can be said
	case *ast.BranchStatement, *ast.DebuggerStatement, *ast.EmptyStatement:
	case *ast.BadStatement:
		w.bail = true
	}
}

func (w *scopeWalker) forInto(into ast.ForInto, source ast.Expression, body ast.Statement) {
	w.push(false)
	defer w.pop()
	switch in := into.(type) {
	case *ast.ForIntoVar:
		w.patternRefs(in.Binding.Target)
	case *ast.ForDeclaration:
		bindingNames(in.Target, w.declare)
		w.patternRefs(in.Target)
	case *ast.ForIntoExpression:
		w.assignTarget(in.Expression)
	}
	w.expr(source)
	w.stmt(body)
}

// ---- expressions

// patternRefs walks what a declaration's binding target evaluates: default
// values and computed keys (the names it declares are not uses).
func (w *scopeWalker) patternRefs(t ast.Expression) {
	switch t := t.(type) {
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			w.patternRefs(e)
		}
		w.patternRefs(t.Rest)
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				w.expr(p.Initializer)
			case *ast.PropertyKeyed:
				if p.Computed {
					w.expr(p.Key)
				}
				w.patternRefs(p.Value)
			case *ast.SpreadElement:
				w.patternRefs(p.Expression)
			}
		}
		w.patternRefs(t.Rest)
	case *ast.AssignExpression:
		w.patternRefs(t.Left)
		w.expr(t.Right)
	}
}

// assignTarget walks the target of a plain assignment: a name assigned
// there is not read (and, undeclared, becomes a global in sloppy mode).
func (w *scopeWalker) assignTarget(t ast.Expression) {
	switch t := t.(type) {
	case *ast.Identifier:
		w.assigned[t.Name.String()] = true
	case *ast.ArrayPattern:
		for _, e := range t.Elements {
			w.assignTarget(e)
		}
		w.assignTarget(t.Rest)
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				w.assigned[p.Name.Name.String()] = true
				w.expr(p.Initializer)
			case *ast.PropertyKeyed:
				if p.Computed {
					w.expr(p.Key)
				}
				w.assignTarget(p.Value)
			case *ast.SpreadElement:
				w.assignTarget(p.Expression)
			}
		}
		w.assignTarget(t.Rest)
	case *ast.AssignExpression: // a default inside a pattern
		w.assignTarget(t.Left)
		w.expr(t.Right)
	default:
		w.expr(t)
	}
}

func (w *scopeWalker) exprs(list []ast.Expression) {
	for _, e := range list {
		w.expr(e)
	}
}

func (w *scopeWalker) expr(e ast.Expression) {
	switch e := e.(type) {
	case nil:
	case *ast.Identifier:
		w.ref(e)
	case *ast.FunctionLiteral:
		w.function(e, e.Name, e.ParameterList, e.Body, false)
	case *ast.ArrowFunctionLiteral:
		w.function(e, nil, e.ParameterList, e.Body, true)
	case *ast.ClassLiteral:
		w.class(e)
	case *ast.AssignExpression:
		if e.Operator == token.ASSIGN {
			w.assignTarget(e.Left)
		} else {
			w.expr(e.Left)
		}
		w.expr(e.Right)
	case *ast.UnaryExpression:
		if _, ok := e.Operand.(*ast.Identifier); ok && e.Operator == token.TYPEOF {
			return // typeof of an undeclared name is "undefined", not an error
		}
		w.expr(e.Operand)
	case *ast.BinaryExpression:
		w.expr(e.Left)
		w.expr(e.Right)
	case *ast.ConditionalExpression:
		w.expr(e.Test)
		w.expr(e.Consequent)
		w.expr(e.Alternate)
	case *ast.SequenceExpression:
		w.exprs(e.Sequence)
	case *ast.CallExpression:
		if id, ok := e.Callee.(*ast.Identifier); ok && id.Name == "eval" {
			w.bail = true // a direct eval may declare names
		}
		w.expr(e.Callee)
		w.exprs(e.ArgumentList)
	case *ast.NewExpression:
		w.expr(e.Callee)
		w.exprs(e.ArgumentList)
	case *ast.DotExpression:
		w.expr(e.Left)
	case *ast.PrivateDotExpression:
		w.expr(e.Left)
	case *ast.BracketExpression:
		w.expr(e.Left)
		w.expr(e.Member)
	case *ast.OptionalChain:
		w.expr(e.Expression)
	case *ast.Optional:
		w.expr(e.Expression)
	case *ast.ArrayLiteral:
		w.exprs(e.Value)
	case *ast.ObjectLiteral:
		for _, p := range e.Value {
			switch p := p.(type) {
			case *ast.PropertyShort:
				w.ref(&p.Name)
			case *ast.PropertyKeyed:
				if p.Computed {
					w.expr(p.Key)
				}
				w.expr(p.Value)
			case *ast.SpreadElement:
				w.expr(p.Expression)
			}
		}
	case *ast.SpreadElement:
		w.expr(e.Expression)
	case *ast.TemplateLiteral:
		w.expr(e.Tag)
		w.exprs(e.Expressions)
	case *ast.AwaitExpression:
		w.expr(e.Argument)
	case *ast.YieldExpression:
		w.expr(e.Argument)
	case *ast.ArrayPattern, *ast.ObjectPattern:
		w.assignTarget(e)
	case *ast.BadExpression:
		w.bail = true
	case *ast.ThisExpression, *ast.SuperExpression, *ast.MetaProperty,
		*ast.StringLiteral, *ast.NumberLiteral, *ast.BooleanLiteral, *ast.NullLiteral, *ast.RegExpLiteral:
	}
}
