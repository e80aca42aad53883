package engine

import (
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
)

// The source text of arrow functions.
//
// Function.prototype.toString returns the source text of a function, and
// core relies on it: `.jitCode(fn)` stores `fn.toString()` as the action's
// jitCode, which the JiT compiler later evaluates as
// `const mainAsync = ${jitCode};`. goja takes that text from the parser
// (ast.ArrowFunctionLiteral.Source), which slices the source up to the end
// its AST reports for the arrow's concise body, and that end is wrong in
// two ways:
//
//   - the AST keeps no parenthesised-expression node, so a body that ends in
//     a parenthesised expression ends, for goja, where the expression inside
//     the parentheses ends: `(x) => ({a: 1})` becomes `(x) => ({a: 1}`, and
//     so do `x => (x)`, `x => a + (b)`, `x => c ? d : (e)`, `x => (a, b)`,
//     `async (jctx) => ({ query: "…" })` (a common way to return an object
//     from JiT code) — with any whitespace and comments before those
//     closing parentheses dropped too;
//   - a few end positions are computed rather than recorded and miss the
//     last characters of the token: postfix `x ++` / `(x)++` (operand end
//     + 2), `new Foo()` without arguments (the callee's end), identifiers
//     written with escapes or non-ASCII letters (the decoded name's
//     length), private names `this.#p`.
//
// Regular functions, methods, getters/setters and classes end with a `}`
// the parser records, and are right. compileModule therefore parses a
// module with goja's parser, recomputes the end of every arrow function
// whose body is an expression, corrects its Source when it differs, and
// compiles the corrected AST (goja.Parse + goja.CompileAST, which is what
// goja.Compile does). The end is found from the AST and the source text:
// the end of the last token of the body expression (following the AST's
// "last operand" chain and rescanning the tokens whose end goja computes),
// then as many `)` as there are grouping parentheses left open between the
// arrow's start and that point, skipping whitespace and comments before
// each. Counting skips string, template and regexp literals (their spans
// are in the AST) and comments, so no JavaScript lexer is needed. Whatever
// does not fit (which should not happen) keeps goja's own text.
//
// The result is V8's Function.prototype.toString text: TestFunctionSource
// compares 81 shapes of functions with Node's, and TestArrowSourcesMatchAcorn
// every arrow function of a corpus of real code (core bundles, the CLI and
// its dependencies: 2,762, of which goja cuts 110 short) with acorn's spans.
// A walk skips blocks, objects and arrays with no "=>" in them, so the
// correction costs about 1 % of goja's parse and compile (2 ms of 200 ms on
// core's 770 kB bundle). It covers every function defined in a
// project file, the only source core stringifies; functions made at run
// time from strings (eval, new Function, including the JiT code that core
// itself evaluates) are parsed inside goja and keep its text.

// compileModule compiles a module's wrapped source as goja.Compile(name,
// src, false) does, with arrow functions' source text corrected.
func compileModule(name, src string) (*goja.Program, error) {
	prg, err := goja.Parse(name, src)
	if err != nil {
		return nil, err
	}
	fixArrowSources(prg, src)
	return goja.CompileAST(prg, false)
}

// fixArrowSources corrects the Source of every arrow function of prg (parsed
// from src) whose body is an expression.
func fixArrowSources(prg *ast.Program, src string) {
	if prg == nil || prg.File == nil || !strings.Contains(src, "=>") {
		return
	}
	// Each correction stands on its own; should this code ever trip over an
	// AST it does not expect, the module still compiles, with goja's text
	// for the arrows not yet corrected.
	defer func() { _ = recover() }()
	f := &arrowFixer{src: src, base: prg.File.Base(), seen: map[*ast.ArrowFunctionLiteral]bool{}, ends: map[*ast.ArrowFunctionLiteral]int{}}
	for i := 0; ; {
		j := strings.Index(src[i:], "=>")
		if j < 0 {
			break
		}
		f.arrowTokens = append(f.arrowTokens, i+j)
		i += j + 2
	}
	f.walk(reflect.ValueOf(prg))
	if len(f.arrows) == 0 {
		return
	}
	sort.Slice(f.spans, func(i, j int) bool { return f.spans[i].start < f.spans[j].start })
	for _, a := range f.arrows {
		start := f.off(a.Start)
		end := f.arrowEnd(a)
		if start < 0 || end <= start || end > len(src) {
			continue
		}
		if text := src[start:end]; text != a.Source {
			a.Source = text
		}
	}
}

type literalSpan struct{ start, end int }

type arrowFixer struct {
	src    string
	base   int
	arrows []*ast.ArrowFunctionLiteral // concise-bodied, in walk order
	seen   map[*ast.ArrowFunctionLiteral]bool
	spans  []literalSpan // string, template and regexp literals inside arrows
	ends   map[*ast.ArrowFunctionLiteral]int
	// arrowTokens are the offsets of every "=>" in src (some may be in
	// strings or comments); inArrow counts the concise-bodied arrow
	// functions the walk is in.
	arrowTokens []int
	inArrow     int
}

// noArrowIn reports whether src[from:to] has no "=>".
func (f *arrowFixer) noArrowIn(from, to int) bool {
	i := sort.SearchInts(f.arrowTokens, from)
	return i == len(f.arrowTokens) || f.arrowTokens[i] >= to
}

// off converts a parser position to an offset in src.
func (f *arrowFixer) off(idx file.Idx) int { return int(idx) - f.base }

var (
	astPkgPath = reflect.TypeOf(ast.Program{}).PkgPath()
	// astFields caches, per AST struct type, the fields worth walking.
	astFields sync.Map // reflect.Type → []int
)

// fieldsOf lists the fields of an AST struct type that may hold nodes. The
// DeclarationList of functions and programs repeats, in new declarations,
// bindings that are also in the body: walking it would only visit them
// again (and, nested, exponentially often).
func fieldsOf(t reflect.Type) []int {
	if v, ok := astFields.Load(t); ok {
		return v.([]int)
	}
	var idx []int
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Name == "DeclarationList" {
			continue
		}
		switch sf.Type.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Struct:
			idx = append(idx, i)
		}
	}
	astFields.Store(t, idx)
	return idx
}

// walk visits every node reachable from v, collecting concise-bodied arrow
// functions and the spans of literals that may contain parentheses.
func (f *arrowFixer) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			f.walk(v.Elem())
		}
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkgPath {
			return
		}
		switch n := v.Interface().(type) {
		case *ast.StringLiteral:
			if f.inArrow > 0 {
				f.spans = append(f.spans, literalSpan{f.off(n.Idx), f.off(n.Idx) + len(n.Literal)})
			}
			return
		case *ast.RegExpLiteral:
			if f.inArrow > 0 {
				f.spans = append(f.spans, literalSpan{f.off(n.Idx), f.off(n.Idx) + len(n.Literal)})
			}
			return
		case *ast.TemplateLiteral:
			// Its expressions are walked for arrows; their literals lie inside
			// this span and are skipped with it.
			if f.inArrow > 0 {
				f.spans = append(f.spans, literalSpan{f.off(n.OpenQuote), f.off(n.CloseQuote) + 1})
			} else if f.noArrowIn(f.off(n.OpenQuote), f.off(n.CloseQuote)+1) {
				return
			}
		case *ast.BlockStatement:
			// Outside arrow functions only arrows matter: a block without
			// "=>" has none. (Inside one, its literals count.)
			if f.inArrow == 0 && f.noArrowIn(f.off(n.LeftBrace), f.off(n.RightBrace)+1) {
				return
			}
		case *ast.ObjectLiteral:
			if f.inArrow == 0 && f.noArrowIn(f.off(n.LeftBrace), f.off(n.RightBrace)+1) {
				return
			}
		case *ast.ArrayLiteral:
			if f.inArrow == 0 && f.noArrowIn(f.off(n.LeftBracket), f.off(n.RightBracket)+1) {
				return
			}
		case *ast.ArrowFunctionLiteral:
			if _, ok := n.Body.(*ast.ExpressionBody); ok {
				if !f.seen[n] {
					f.seen[n] = true
					f.arrows = append(f.arrows, n)
				}
				f.inArrow++
				f.walk(v.Elem())
				f.inArrow--
				return
			}
		}
		f.walk(v.Elem())
	case reflect.Struct:
		if v.Type().PkgPath() != astPkgPath {
			return
		}
		for _, i := range fieldsOf(v.Type()) {
			f.walk(v.Field(i))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			f.walk(v.Index(i))
		}
	}
}

// arrowEnd is the offset just past the last token of a concise-bodied arrow
// function, or goja's own end when the text does not look as expected.
func (f *arrowFixer) arrowEnd(a *ast.ArrowFunctionLiteral) int {
	if e, ok := f.ends[a]; ok {
		return e
	}
	fallback := f.off(a.Idx1())
	f.ends[a] = fallback // a cycle cannot happen; this only guards against one
	body, ok := a.Body.(*ast.ExpressionBody)
	if !ok {
		return fallback
	}
	start := f.off(a.Start)
	end, ok := f.exprEnd(body.Expression)
	if !ok || end < start || end > len(f.src) {
		return fallback
	}
	open := f.unclosedParens(start, end)
	if open < 0 {
		return fallback
	}
	for ; open > 0; open-- {
		end = f.skipSpace(end)
		if end >= len(f.src) || f.src[end] != ')' {
			return fallback
		}
		end++
	}
	f.ends[a] = end
	return end
}

// exprEnd is the offset just past the last token of e, not counting
// grouping parentheses that close after it: the end of e's last operand
// where goja's AST derives e's end from it, and rescanned tokens where goja
// computes an end instead of recording it.
func (f *arrowFixer) exprEnd(e ast.Node) (int, bool) {
	switch n := e.(type) {
	case nil:
		return 0, false
	case *ast.ArrowFunctionLiteral:
		if _, ok := n.Body.(*ast.ExpressionBody); ok {
			return f.arrowEnd(n), true
		}
	case *ast.ExpressionBody:
		return f.exprEnd(n.Expression)
	case *ast.AssignExpression:
		return f.exprEnd(n.Right)
	case *ast.BinaryExpression:
		return f.exprEnd(n.Right)
	case *ast.ConditionalExpression:
		return f.exprEnd(n.Alternate)
	case *ast.AwaitExpression:
		return f.exprEnd(n.Argument)
	case *ast.YieldExpression:
		if n.Argument != nil {
			return f.exprEnd(n.Argument)
		}
	case *ast.SequenceExpression:
		if len(n.Sequence) > 0 {
			return f.exprEnd(n.Sequence[len(n.Sequence)-1])
		}
	case *ast.UnaryExpression:
		end, ok := f.exprEnd(n.Operand)
		if !ok || !n.Postfix {
			return end, ok
		}
		// `x ++`, `(x)++`: the operator follows the operand's closing
		// parentheses (no line break may come before it).
		for {
			end = f.skipSpace(end)
			if end < len(f.src) && f.src[end] == ')' {
				end++
				continue
			}
			break
		}
		if op := f.src[end:min(end+2, len(f.src))]; op == "++" || op == "--" {
			return end + 2, true
		}
		return 0, false
	case *ast.NewExpression:
		if n.RightParenthesis > 0 {
			return f.off(n.RightParenthesis) + 1, true
		}
		return f.exprEnd(n.Callee)
	case *ast.OptionalChain:
		return f.exprEnd(n.Expression)
	case *ast.Optional:
		return f.exprEnd(n.Expression)
	case *ast.DotExpression:
		return f.identEnd(n.Identifier.Idx), true
	case *ast.PrivateDotExpression:
		return f.identEnd(n.Identifier.Idx), true
	case *ast.Identifier:
		return f.identEnd(n.Idx), true
	case *ast.PrivateIdentifier:
		return f.identEnd(n.Idx), true
	case *ast.MetaProperty:
		return f.identEnd(n.Property.Idx), true
	}
	return f.off(e.Idx1()), true
}

// identEnd is the offset just past the identifier (or #private name) that
// starts at idx: goja reports its end as start + the length of the decoded
// name, which is short for escapes and non-ASCII letters.
func (f *arrowFixer) identEnd(idx file.Idx) int {
	s := f.src
	i := f.off(idx)
	if i < 0 || i >= len(s) {
		return i
	}
	if s[i] == '#' {
		i++
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == '$' || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			i++
		case c == '\\' && i+1 < len(s) && s[i+1] == 'u':
			if i+2 < len(s) && s[i+2] == '{' {
				j := strings.IndexByte(s[i:], '}')
				if j < 0 {
					return len(s)
				}
				i += j + 1
			} else {
				i = min(i+6, len(s))
			}
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[i:])
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nl, unicode.Pc, unicode.Other_ID_Start, unicode.Other_ID_Continue) || r == '\u200c' || r == '\u200d') {
				return i
			}
			i += w
		default:
			return i
		}
	}
	return i
}

// unclosedParens counts the '(' of src[from:to] that are not closed within
// it, ignoring literals and comments; -1 if a ')' closes one opened before
// from.
func (f *arrowFixer) unclosedParens(from, to int) int {
	s := f.src
	si := sort.Search(len(f.spans), func(i int) bool { return f.spans[i].start >= from })
	depth := 0
	for i := from; i < to; {
		for si < len(f.spans) && f.spans[si].start < i {
			si++
		}
		if si < len(f.spans) && f.spans[si].start == i {
			i = f.spans[si].end
			continue
		}
		switch c := s[i]; {
		case c == '/' && i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '*'):
			i = f.skipComment(i)
		case c == '(':
			depth++
			i++
		case c == ')':
			if depth--; depth < 0 {
				return -1
			}
			i++
		default:
			i++
		}
	}
	return depth
}

// skipComment returns the offset past the comment that starts at i.
func (f *arrowFixer) skipComment(i int) int {
	s := f.src
	if s[i+1] == '*' {
		if j := strings.Index(s[i+2:], "*/"); j >= 0 {
			return i + 2 + j + 2
		}
		return len(s)
	}
	for j := i + 2; j < len(s); {
		r, w := utf8.DecodeRuneInString(s[j:])
		if r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029' {
			return j
		}
		j += w
	}
	return len(s)
}

// skipSpace returns the first offset from i that is neither whitespace, a
// line terminator nor inside a comment.
func (f *arrowFixer) skipSpace(i int) int {
	s := f.src
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			i++
		case c == '/' && i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '*'):
			i = f.skipComment(i)
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[i:])
			if r != '\u00a0' && r != '\ufeff' && r != '\u2028' && r != '\u2029' && !unicode.Is(unicode.Zs, r) {
				return i
			}
			i += w
		default:
			return i
		}
	}
	return i
}
