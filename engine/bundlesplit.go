package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
)

// Compiling core's bundle is most of a cold `dfd compile` of a small
// project: goja parses and compiles all of its 0.65–0.77 MB eagerly, about
// 160 ms on one core (GOGC 400), before the project's first line runs.
// Every module of the bundle runs when core loads, so none can be left out,
// but the work splits: one webpack module, protobufjs's static code for
// core's protos, is 63% of the bytes of every 3.x bundle and about half of
// the compile time. That module is compiled on its own goroutine while the
// rest compiles (≈95 ms instead of ≈160 on two cores); the bundle's copy
// of it becomes a stub that forwards to it.
//
// A webpack module is a method of the bundle's module map,
// `ID(e,t,r){…}`, called as module.call(exports, module, exports,
// require), and it reaches everything through those parameters and the
// CommonJS wrapper's names (require, module, …). That webpack's modules do
// not close over its runtime's locals is assumed, not checked: it holds
// for every 3.x bundle we test (the protobufjs module declares its own
// e, t, r and n, the runtime's names), and one that did would fail to load
// with a ReferenceError, which the parity tests would show. So the module
// compiled on its own, inside a wrapper with the CommonJS names and the
// same (sloppy) mode, is the same function, and the stub
// `ID(){return __dfd_split$.apply(this,arguments)}` behaves as the
// original did for webpack's call. What changes is what nothing reads: the
// line and column of frames inside the bundle, two more frames (the stub,
// apply) under the module's first run, and the stub's length and text.
// The CLI's output has `CallSite {}` for every frame, and diagnostics map
// frames of project files.
//
// The cut is found by text (the heads of webpack's module methods) and
// then checked on the parsed programs, which the compile needs anyway: the
// stub must be a method of the object literal that webpack's runtime
// declares first, and the module's text must parse as exactly one method
// property. When a check fails (another bundler's output, a damaged file)
// the bundle compiles whole, as before.

// splitParam is the name the stub calls: a parameter of the bundle's
// wrapper, appended after the CommonJS ones.
const splitParam = "__dfd_split$"

// minSplitShare is the smallest share of the bundle a module must have for
// a split to be worth a goroutine.
const minSplitShare = 0.3

// moduleHeads finds the heads of webpack's module methods in the module
// map: `{ID(` or `},ID(` followed by at most three parameters and the
// body's brace, as [start, keyStart, keyEnd] where start is the offset of
// the `{` or `}`. In every 3.x bundle these are exactly the modules' heads
// (whatever else matched would fail the checks of compileSplit). A plain
// scan: Go's regexp took 25 ms over a bundle.
func moduleHeads(code string) [][3]int {
	var heads [][3]int
	for i := 0; ; {
		j := strings.IndexByte(code[i:], '(')
		if j < 0 {
			return heads
		}
		p := i + j // the '('
		i = p + 1
		k := p
		for k > 0 && code[k-1] >= '0' && code[k-1] <= '9' {
			k--
		}
		if k == p || k == 0 {
			continue
		}
		var start int
		switch {
		case code[k-1] == '{':
			start = k - 1
		case code[k-1] == ',' && k >= 2 && code[k-2] == '}':
			start = k - 2
		default:
			continue
		}
		if q := paramsEnd(code, p+1); q >= 0 && q < len(code) && code[q] == '{' {
			heads = append(heads, [3]int{start, k, p})
		}
	}
}

// paramsEnd returns the offset after `a,b,c)` (at most three identifiers)
// starting at i, or -1.
func paramsEnd(code string, i int) int {
	for n := 0; n <= 3; n++ {
		if i < len(code) && code[i] == ')' && (n == 0 || code[i-1] != ',') {
			return i + 1
		}
		if n == 3 {
			return -1
		}
		if n > 0 {
			if i >= len(code) || code[i] != ',' {
				return -1
			}
			i++
		}
		if i >= len(code) || !isIdentStart(code[i]) {
			return -1
		}
		for i < len(code) && isNameByte(code[i]) {
			i++
		}
	}
	return -1
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// bundleSplit is the bundle's source cut in two, each half wrapped as it
// is compiled.
type bundleSplit struct {
	// rest is the bundle with the module's method replaced by the stub,
	// wrapped by splitWrapperPrefix; the stub is rest[stubAt:stubEnd].
	rest            string
	stubAt, stubEnd int
	// module is the module's method `ID(e,t,r){…}` in an object literal,
	// wrapped by splitModulePrefix so that the wrapper returns the method;
	// the method is module[methodAt:methodEnd].
	module              string
	methodAt, methodEnd int
}

// splitBundle finds the largest module of a webpack bundle's module map.
// ok is false when there is none worth splitting out.
func splitBundle(code string) (s bundleSplit, ok bool) {
	if strings.Contains(code, splitParam) {
		return s, false
	}
	heads := moduleHeads(code)
	best, bestLen := -1, 0
	for i := 0; i+1 < len(heads); i++ {
		// A module runs from its ID to the `}` that precedes the next
		// head's comma. The last module is never chosen: what follows
		// it is the map's end, not a head.
		start, end := heads[i][1], heads[i+1][0]+1
		if code[heads[i+1][0]] != '}' {
			continue
		}
		if n := end - start; n > bestLen {
			best, bestLen = i, n
		}
	}
	if best < 0 || float64(bestLen) < minSplitShare*float64(len(code)) {
		return s, false
	}
	start, end := heads[best][1], heads[best+1][0]+1
	key := code[heads[best][1]:heads[best][2]]
	stub := key + "(){return " + splitParam + ".apply(this,arguments)}"
	s.stubAt = len(splitWrapperPrefix) + start
	s.stubEnd = s.stubAt + len(stub)
	s.rest = splitWrapperPrefix + code[:start] + stub + code[end:] + moduleSuffix
	s.methodAt = len(splitModulePrefix)
	s.methodEnd = s.methodAt + end - start
	s.module = splitModulePrefix + code[start:end] + "}[" + key + "]" + moduleSuffix
	return s, true
}

// splitWrapperPrefix is modulePrefix with splitParam after the CommonJS
// names: the bundle's wrapper when the module is compiled apart.
const splitWrapperPrefix = "(function (" + commonJSParams + ", " + splitParam + ") {"

// splitModulePrefix wraps the module alone: the CommonJS names it may use,
// and an object literal holding its method, as the module map does, whose
// method the wrapper returns.
const splitModulePrefix = "(function (" + commonJSParams + ") {return {"

// compileSplit compiles the two halves of s concurrently and checks that
// they are what splitBundle meant them to be.
func compileSplit(path string, s bundleSplit) (rest, module *goja.Program, err error) {
	var wg sync.WaitGroup
	var moduleErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		module, moduleErr = compileChecked(path, s.module, func(p *ast.Program) bool {
			return isSplitModule(p, s.methodAt, s.methodEnd)
		})
	}()
	rest, err = compileChecked(path, s.rest, func(p *ast.Program) bool {
		return hasStubInModuleMap(p, s.stubAt, s.stubEnd)
	})
	wg.Wait()
	if err == nil {
		err = moduleErr
	}
	if err != nil {
		return nil, nil, err
	}
	return rest, module, nil
}

// compileChecked parses src, checks its tree and compiles it.
func compileChecked(path, src string, check func(*ast.Program) bool) (*goja.Program, error) {
	p, err := goja.Parse(path, src)
	if err != nil {
		return nil, err
	}
	if !check(p) {
		return nil, fmt.Errorf("split of %s: not the expected shape", path)
	}
	return goja.CompileAST(p, false)
}

// wrapperBody is the statements of a program that is one parenthesised
// function expression, as wrapModule makes it.
func wrapperBody(p *ast.Program) []ast.Statement {
	if len(p.Body) != 1 {
		return nil
	}
	es, ok := p.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	fn, ok := es.Expression.(*ast.FunctionLiteral)
	if !ok || fn.Body == nil {
		return nil
	}
	return fn.Body.List
}

// isSplitModule reports whether p is splitModulePrefix's wrapper returning
// a member of an object literal of exactly one method, spanning [from, to)
// of the source.
func isSplitModule(p *ast.Program, from, to int) bool {
	body := wrapperBody(p)
	if len(body) != 1 {
		return false
	}
	ret, ok := body[0].(*ast.ReturnStatement)
	if !ok {
		return false
	}
	member, ok := ret.Argument.(*ast.BracketExpression)
	if !ok {
		return false
	}
	obj, ok := member.Left.(*ast.ObjectLiteral)
	if !ok || len(obj.Value) != 1 {
		return false
	}
	return isMethodSpanning(obj.Value[0], from, to)
}

// hasStubInModuleMap reports whether the stub at [from, to) of the source
// is a method of webpack's module map: the first declaration of the arrow
// function that the bundle calls as its first statement.
func hasStubInModuleMap(p *ast.Program, from, to int) bool {
	// The call must be the bundle's first statement: a directive before it
	// ("use strict") would make the module strict in the bundle but not in
	// splitModulePrefix's wrapper.
	body := wrapperBody(p)
	if len(body) == 0 {
		return false
	}
	es, ok := body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	call, ok := es.Expression.(*ast.CallExpression)
	if !ok {
		return false
	}
	arrow, ok := call.Callee.(*ast.ArrowFunctionLiteral)
	if !ok {
		return false
	}
	block, ok := arrow.Body.(*ast.BlockStatement)
	if !ok || len(block.List) == 0 {
		return false
	}
	vs, ok := block.List[0].(*ast.VariableStatement)
	if !ok || len(vs.List) == 0 {
		return false
	}
	obj, ok := vs.List[0].Initializer.(*ast.ObjectLiteral)
	if !ok {
		return false
	}
	for _, prop := range obj.Value {
		if isMethodSpanning(prop, from, to) {
			return true
		}
	}
	return false
}

// isMethodSpanning reports whether prop is a method `ID(…){…}` with a
// plain numeric key that spans [from, to) of the source.
func isMethodSpanning(prop ast.Property, from, to int) bool {
	pk, ok := prop.(*ast.PropertyKeyed)
	if !ok || pk.Kind != ast.PropertyKindMethod || pk.Computed {
		return false
	}
	if _, ok := pk.Key.(*ast.NumberLiteral); !ok {
		return false
	}
	fn, ok := pk.Value.(*ast.FunctionLiteral)
	if !ok {
		return false
	}
	// goja's positions are 1-based offsets into the source.
	return int(pk.Key.Idx0())-1 == from && int(fn.Idx1())-1 == to
}
