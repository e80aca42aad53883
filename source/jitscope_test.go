package source_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/source"
)

// Names JiT code uses but does not define are found at each use; what it
// defines (at any scope), the JiT runtime's globals and core's wrapper
// (jctx, arguments) are not.
func TestJitFreeNames(t *testing.T) {
	cases := []struct {
		name, code string
		want       []string // "name@offset-of-its-first-use-marker"
	}{
		{"module const", "async (jctx) => `SELECT * FROM ${jctx.ref(TABLE)} LIMIT ${LIMIT}`", []string{"TABLE", "LIMIT"}},
		{"includes helper", "async (jctx) => { const r = await jctx.adapter.execute({statement: 'SELECT 1'}); return rowsOf(r)[0].q; }", []string{"rowsOf"}},
		{"every use", "(jctx) => helper(1) + helper(2)", []string{"helper", "helper"}},
		{"shorthand property", "(jctx) => ({ query, preOps: [] })", []string{"query"}},
		{"params and locals", `async (jctx, extra = 1) => {
  const { adapter, ref: r } = jctx;
  let [a, , b = a, ...rest] = [1, 2];
  var v = 1;
  function inner(x) { return x + v + hoisted(); }
  function hoisted() { return arguments.length; }
  class K { m() { return K; } static s = 1; }
  for (const t of rest) { a += t; }
  for (let i = 0; i < 2; i++) { b += i; }
  for (var k in {}) {}
  try { throw 1; } catch ({ message }) { return message; } finally {}
  label: for (;;) { break label; }
  switch (a) { case 1: let z = 1; return z; }
  return inner(a) + b + k + new K().m() + adapter + r + extra;
}`, nil},
		{"globals", `async (jctx) => {
  console.log(JSON.stringify([Math.max(1, 2), new Date(), Promise.resolve(), parseInt("1"), undefined, NaN, globalThis, require]));
  await new Promise((res) => setTimeout(res, 10));
  return { query: String(Number.MAX_SAFE_INTEGER) + mainAsync.name + arguments.length };
}`, nil},
		{"block scope ends", "(jctx) => { { const inner = 1; } return inner; }", []string{"inner"}},
		{"property names are not uses", "(jctx) => { const o = {a: 1, ['b' + 1]: 2, get c() { return 3; }}; return o.a + o.missing + jctx.x.y; }", nil},
		{"computed key", "(jctx) => ({ [KEY]: 1 })", []string{"KEY"}},
		{"typeof is safe", "(jctx) => typeof window === 'undefined' ? 'SELECT 1' : window.x", []string{"window"}},
		{"assigned in sloppy mode", "(jctx) => { counter = 1; return counter; }", nil},
		{"compound assignment reads", "(jctx) => { total += 1; return 'x'; }", []string{"total"}},
		{"default of a parameter", "(jctx, n = LIMIT) => n", []string{"LIMIT"}},
		{"nested function", "async (jctx) => [1].map(function (x) { return x * FACTOR; })", []string{"FACTOR"}},
		{"a string's text", `async (jctx) => {
  jctx.rows = function rowsOf(response) { return response.rows.map((r) => value(r)); };
  return (async (jctx) => jctx.rows(await jctx.adapter.execute({})))(jctx);
}`, []string{"value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			uses, ok := source.JitFreeNames(c.code)
			if !ok {
				t.Fatalf("not analysed: %s", c.code)
			}
			var got []string
			for _, u := range uses {
				if c.code[u.Span.Start:u.Span.End] != u.Name {
					t.Errorf("span %v of %s covers %q", u.Span, u.Name, c.code[u.Span.Start:u.Span.End])
				}
				got = append(got, u.Name)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("free names %v, want %v", got, c.want)
			}
		})
	}
}

// Code the analysis cannot follow is not analysed (no warnings).
func TestJitFreeNamesGivesUp(t *testing.T) {
	for _, code := range []string{
		"(jctx) => { with (jctx) { return ref('x'); } }",
		"(jctx) => eval('var q = 1') || q",
		"(jctx) => {",
	} {
		if uses, ok := source.JitFreeNames(code); ok {
			t.Errorf("%q analysed: %v", code, uses)
		}
	}
	// Positions are in the code, also after non-ASCII text.
	code := "(jctx) => `é ${MISSING}`"
	uses, _ := source.JitFreeNames(code)
	if len(uses) != 1 || code[uses[0].Span.Start:uses[0].Span.End] != "MISSING" || !strings.Contains(code, "é") {
		t.Errorf("uses %v", uses)
	}
}

// A use knows the functions around it, so that code put together from
// pieces (a helper's text inside a template) can still be placed.
func TestJitFreeNamesWithin(t *testing.T) {
	inner := "(jctx) => helper(jctx)"
	code := "async (jctx) => { return (" + inner + ")(jctx); }"
	uses, _ := source.JitFreeNames(code)
	if len(uses) != 1 {
		t.Fatalf("uses %v", uses)
	}
	var texts []string
	for _, sp := range uses[0].Within {
		texts = append(texts, code[sp.Start:sp.End])
	}
	if len(texts) != 2 || texts[0] != inner || texts[1] != code {
		t.Errorf("within %q", texts)
	}
}

// The first frame in the JiT code decides, named or not: goja writes an
// anonymous function's frame as "at <eval>:L:C(n)", V8 inside "eval at".
func TestJitThrowOffset(t *testing.T) {
	code := "async (jctx) => (async (jctx) => {\n  const cols = null;\n  return { query: \"SELECT \" + cols.join(\", \") };\n})(jctx)"
	at := strings.Index(code, "cols.join")
	for _, c := range []struct{ name, stack string }{
		{"goja, anonymous", "TypeError: x\n\tat <eval>:5:31(6)\n\tat mainAsync (<eval>:6:3(4))\n"},
		{"goja, named", "TypeError: x\n\tat inner (<eval>:5:31(6))\n\tat mainAsync (<eval>:6:3(4))\n"},
		{"V8", "TypeError: x\n    at eval (eval at o (/p/bundle.js:16:1), <anonymous>:5:31)\n    at mainAsync (eval at o (/p/bundle.js:16:1), <anonymous>:6:3)\n"},
	} {
		off, ok := source.JitThrowOffset(c.stack, code)
		if !ok || off != at {
			t.Errorf("%s: offset %d %v, want %d (cols.join)", c.name, off, ok, at)
		}
	}
	if _, ok := source.JitThrowOffset("Error: no frame in the code\n    at /p/bundle.js:16:1\n", code); ok {
		t.Errorf("a stack without a frame in the code gave an offset")
	}
}
