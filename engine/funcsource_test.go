package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dop251/goja"
)

// functionShapes are expressions whose value is a function, each of a shape
// whose Function.prototype.toString text matters to core (`.jitCode(fn)`
// stores fn.toString()).
var functionShapes = []string{
	// Arrow functions with a parenthesised body or a body ending in one.
	`(x) => ({a: 1})`,
	`x => (x)`,
	`(x) => (1 + 2)`,
	`async (jctx) => ({ query: "SELECT 1" })`,
	`async jctx => ({ query: ` + "`SELECT * FROM ${jctx.ref(\"t\")}`" + ` })`,
	"async (jctx) =>\n  ({\n    query: `SELECT 1`,\n    preOps: [`SELECT ${(1)}`]\n  })",
	`(x) => (x /* comment */ )`,
	"(x) => (x // comment\n)",
	"(x)   =>   (  x  )   ",
	`x => ((((x))))`,
	`(a) => ((b) => (a + b))`,
	`((a) => ((b) => (a + b)))(1)`,
	`x => y => (z)`,
	`x => async () => (1)`,
	`x => a + (b)`,
	`x => (a, b)`,
	`x => ((x), (y))`,
	`x => c ? d : (e)`,
	`x => x = (1)`,
	`x => x += (1)`,
	`x => -(x)`,
	`x => !(x)`,
	`x => typeof (x)`,
	`x => void (0)`,
	`x => delete (x.y)`,
	`async x => await (x)`,
	`x => (x) in (y)`,
	`x => new (Foo)`,
	`x => new Foo()`,
	`x => new Foo`,
	`x => (x)++`,
	`x => x ++`,
	`x => ((x)) --`,
	`x => x++`,
	`x => (")")`,
	`x => (/\)/)`,
	"x => (`)${(x)}`)",
	"x => `${`${(x)}`}`",
	"x => tag`a${(x)}b`",
	`x => ({a: (x)})`,
	`x => [(x)]`,
	`x => (x) /* after the function */`,
	`x => (a)?.b`,
	`x => a?.(b)`,
	`x => (a)?.[b]`,
	`x => (a ?? (b))`,
	`x => \u0061`,
	`x => (café)`,
	`x => ({}).a`,
	`(x = (1)) => x`,
	`(x = () => (1)) => (x())`,
	`({ a, b: [c] } = {}) => ({ a, c })`,
	`(...rest) => (rest)`,
	// Arrow functions inside arrays, objects, calls and classes.
	`[(x) => (1), 2][0]`,
	`({ m: (x) => (x) }).m`,
	`((f) => f)((x) => ({ x }))`,
	`new (class { constructor() { this.f = () => (this) } })().f`,
	`new (class { f = (x) => (x) })().f`,
	`new (class { #p = 1; f = () => (this.#p) })().f`,
	`new (class { #p = 1; f = () => this.#p })().f`,
	// Arrow functions with a block body.
	`(x) => x`,
	`(x) => { return (1) }`,
	`async (jctx) => { return { query: "SELECT 1" }; }`,
	`x => function () { return (1) }`,
	`x => class {}`,
	// Regular functions, methods, getters, setters and classes.
	`function f(a) { return (a); }`,
	`(function (a) { return a })`,
	`async function g() { await (1) }`,
	`function* gen() { yield (1) }`,
	`({ m(a) { return (a) } }).m`,
	`({ async m() { return ({}) } }).m`,
	`({ *m() {} }).m`,
	`({ ['comp' + 'uted']() {} }).computed`,
	`Object.getOwnPropertyDescriptor({ get x() { return (1) } }, 'x').get`,
	`Object.getOwnPropertyDescriptor({ set x(v) { } }, 'x').set`,
	`Object.getOwnPropertyDescriptor(class { static get y() { return (2) } }, 'y').get`,
	`class A { m() { return (1) } }`,
	`(class B extends Object { constructor() { super() } })`,
	`(class { static s() { return (1) } }).s`,
	`(class { m() { return () => (super.toString) } }).prototype.m()`,
	`Math.max`,
}

// TestFunctionSource checks that Function.prototype.toString gives, for
// functions defined in project files (through dfd's runtime: core's
// `.jitCode(fn)` stores fn.toString()), exactly the text V8 gives.
func TestFunctionSource(t *testing.T) {
	node := testenv.Node(t) // the reference for Function.prototype.toString
	var src strings.Builder
	src.WriteString("const shapes = [];\n")
	for _, s := range functionShapes {
		fmt.Fprintf(&src, "shapes.push(%s\n);\n", s)
	}
	src.WriteString("shapes.forEach((f, i) => publish(\"shape_\" + i).jitCode(f));\n")

	// V8: the same file, run with a publish that records what core records.
	nodeScript := `
const vm = require("vm");
const src = require("fs").readFileSync(0, "utf8");
const out = [];
const publish = (name) => ({ jitCode(f) { out[Number(name.slice(6))] = f.toString(); } });
vm.runInNewContext(src, { publish });
process.stdout.write(JSON.stringify(out));
`
	cmd := exec.Command(node, "-e", nodeScript)
	cmd.Stdin = strings.NewReader(src.String())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var want []string
	if err := json.Unmarshal(stdout.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(functionShapes) {
		t.Fatalf("node gave %d texts for %d shapes", len(want), len(functionShapes))
	}

	g, err := compileFiles(t, time.Minute, map[string]string{"definitions/shapes.js": src.String()})
	if err != nil {
		t.Fatal(err)
	}
	if errs := errorsByFile(g); len(errs) > 0 {
		t.Fatalf("compilation errors: %v", errs)
	}
	got := map[string]string{}
	for _, tb := range g.GetTables() {
		got[tb.GetTarget().GetName()] = tb.GetJitCode()
	}
	same := 0
	for i, shape := range functionShapes {
		name := fmt.Sprintf("shape_%d", i)
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: no action %s in the graph", shape, name)
		case g != want[i]:
			t.Errorf("Function.prototype.toString of %s:\n dfd: %q\nnode: %q", shape, g, want[i])
		default:
			same++
		}
	}
	t.Logf("%d of %d function shapes give V8's text", same, len(functionShapes))
}

// TestGojaArrowSourceUpstream documents what goja itself does (the reason
// for compileModule's correction): when it stops cutting the text of these
// arrow functions short, the correction can go.
func TestGojaArrowSourceUpstream(t *testing.T) {
	for src, gojaText := range map[string]string{
		`(x) => ({a: 1})`:       `(x) => ({a: 1}`,
		`x => (x /* c */ )`:     `x => (x`,
		`x => c ? d : (e)`:      `x => c ? d : (e`,
		`x => (x)++`:            `x => (x)+`,
		`x => new Foo()`:        `x => new Foo`,
		`(a) => ((b) => (a+b))`: `(a) => ((b) => (a+b`,
	} {
		v, err := goja.New().RunString("String(" + src + ")")
		if err != nil {
			t.Fatal(err)
		}
		if v.String() != gojaText {
			t.Errorf("goja now gives %q for %s (it gave %q): check whether engine/funcsource.go is still needed", v.String(), src, gojaText)
		}
	}
}
