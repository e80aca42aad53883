package source

import (
	"strings"
	"testing"
)

// CallAt finds the innermost call around the cursor (marked |) and the
// argument it is in, through strings, nested calls, objects and
// templates.
func TestCallAt(t *testing.T) {
	for _, c := range []struct {
		src    string
		callee string
		arg    int
		ok     bool
	}{
		{`ref(|`, "ref", 0, true},
		{`ref("a", |)`, "ref", 1, true},
		{`ref("a, b", "c|")`, "ref", 1, true},
		{`ctx.ref({schema: "s", |name: "n"})`, "ctx.ref", 0, true},
		{`jctx.adapter.execute({statement: "SELECT 1"|})`, "jctx.adapter.execute", 0, true},
		{`when(incremental(), "a", f(1, 2)|)`, "when", 2, true},
		{`when(incremental(|), "a")`, "incremental", 0, true},
		{"`SELECT ${ctx.ref(\"x\"|)}`", "ctx.ref", 0, true},
		{`ref("a")|`, "", 0, false},
		{`f()(|)`, "", 0, false},
		{`x = (1, |2)`, "", 0, false},
	} {
		off := strings.Index(c.src, "|")
		src := []byte(strings.Replace(c.src, "|", "", 1))
		callee, arg, ok := CallAt(src, 0, len(src), off)
		if callee != c.callee || arg != c.arg || ok != c.ok {
			t.Errorf("%s: %q %d %v, want %q %d %v", c.src, callee, arg, ok, c.callee, c.arg, c.ok)
		}
	}
}

func TestSignaturesFor(t *testing.T) {
	for callee, want := range map[string]int{"ref": 3, "ctx.resolve": 3, "jctx.when": 1, "jctx.adapter.getTable": 1, "foo.ref": 0, "console.log": 0, "self": 1} {
		if got := len(SignaturesFor(callee)); got != want {
			t.Errorf("%s: %d forms, want %d", callee, got, want)
		}
	}
	for _, forms := range builtinSignatures {
		for _, f := range forms {
			for _, p := range f.Params {
				if !strings.Contains(f.Label, p) {
					t.Errorf("%s: parameter %q not in the label", f.Label, p)
				}
			}
		}
	}
}
