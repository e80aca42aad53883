package engine_test

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/source"
)

// source.JitGlobals, the names the JiT free-name check takes as defined,
// are the JiT runtime's globals: every global of the runtime is among
// them (else code using it would be flagged), and every one of them the
// runtime lacks is one the official CLI's vm2 sandbox or a newer
// ECMAScript has (code using it works there).
func TestJitGlobalsAreTheRuntimes(t *testing.T) {
	resp, _, err := runJit(t, 20*time.Second, "async (jctx) => ({query: Object.getOwnPropertyNames(globalThis).join(',')})", table)
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, n := range strings.Split(resp.GetTable().GetQuery(), ",") {
		have[n] = true
		internal := strings.HasPrefix(n, "__dfd") || strings.HasPrefix(n, "__dataform") || strings.HasPrefix(n, "_DF_")
		if !source.JitGlobals[n] && !internal {
			t.Errorf("the JiT runtime defines %s, which source.JitGlobals lacks", n)
		}
	}
	elsewhere := map[string]bool{
		// ECMAScript that goja does not implement; V8 (the CLI) does.
		"Atomics": true, "FinalizationRegistry": true, "Intl": true, "Iterator": true,
		"SharedArrayBuffer": true, "WeakRef": true, "WebAssembly": true,
		// vm2's NodeVM sandbox (the CLI's JiT worker).
		"Buffer": true, "process": true, "VMError": true,
	}
	var missing []string
	for n := range source.JitGlobals {
		if !have[n] && !elsewhere[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("source.JitGlobals has %v, which the JiT runtime does not define", missing)
	}
}

// source.JitThrowOffset finds, in the stack of JiT code that failed, the
// place in the code that threw — through core's new Function wrapper, on
// the first line of the code too, in nested functions, after an await.
func TestJitThrowOffsetFromTheRuntimesStack(t *testing.T) {
	for _, c := range []struct{ code, at string }{
		{"async (jctx) => {\n  const a = 1;\n  throw new Error(\"kaboom\");\n}", `new Error("kaboom")`},
		{"async (jctx) => {\n  await null;\n  return missing.x;\n}", "missing.x"},
		{"(jctx) => { const o = jctx.nothing; return o.field; }", "o.field"},
		{"async (jctx) => {\n  const f = (x) => {\n    return x.y.z;\n  };\n  return f({});\n}", "x.y.z"},
		{"async (jctx) => `SELECT ${jctx.ref(\"undeclared\")}`", `jctx.ref("undeclared")`},
	} {
		_, _, err := runJit(t, 20*time.Second, c.code, table)
		var se *engine.ScriptError
		if !errors.As(err, &se) {
			t.Fatalf("%q: %v", c.code, err)
		}
		off, ok := source.JitThrowOffset(se.Stack, c.code)
		if !ok {
			t.Errorf("%q: no position in %q", c.code, se.Stack)
			continue
		}
		want := strings.Index(c.code, c.at)
		line := func(o int) int { return strings.Count(c.code[:o], "\n") }
		if line(off) != line(want) || off < want || off > want+len(c.at) {
			t.Errorf("%q (%s): at %d (%q), want within %q", c.code, se.Message, off, c.code[off:], c.at)
		}
	}
}
