package compile

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

var callSites = strings.Repeat("\n    at CallSite {}", 10)

func TestCLIError(t *testing.T) {
	cases := []struct {
		name               string
		msg, stack         string
		wantMsg, wantStack string
	}{
		{
			name:      "goja error from core",
			msg:       "Could not resolve \"x\"",
			stack:     "Error: Could not resolve \"x\"\n\tat construct (native)\n\tat DataformError (dfd:prelude.js:11:32(10))\n\tat resolve (/p/node_modules/@dataform/core/bundle.js:16:1(2))\n",
			wantMsg:   "Could not resolve \"x\"",
			wantStack: "Error: Could not resolve \"x\"" + callSites,
		},
		{
			name:      "V8 error with a message of two lines",
			msg:       "Duplicate action name detected:\n\"{}\"",
			stack:     "Error: Duplicate action name detected:\n\"{}\"\n    at o (/p/node_modules/@dataform/core/bundle.js:16:1)\n    at Array.filter (<anonymous>)",
			wantMsg:   "Duplicate action name detected:\n\"{}\"",
			wantStack: "Error: Duplicate action name detected:\n\"{}\"" + callSites,
		},
		{
			name:      "goja syntax error",
			msg:       "Unexpected token ; (definitions/a.js:2:37)",
			stack:     "/p/definitions/a.js:2\npublish('x').query(ctx => `select 1`;\n                                    ^\n\nSyntaxError: Unexpected token ;",
			wantMsg:   "Unexpected token ;",
			wantStack: "/p/definitions/a.js:2\npublish('x').query(ctx => `select 1`;\n                                    ^\n\nSyntaxError: Unexpected token ;",
		},
		{
			name:      "VMError",
			msg:       "Cannot find module './x'",
			stack:     "VMError: Cannot find module './x'\n\tat construct (native)\n",
			wantMsg:   "Cannot find module './x'",
			wantStack: "VMError: Cannot find module './x'",
		},
		{
			// vm2 throws it inside the sandbox, not from its host resolver.
			name:      "VMError for a node: builtin",
			msg:       "Cannot find module 'node:fs'",
			stack:     "VMError: Cannot find module 'node:fs'\n\tat construct (native)\n",
			wantMsg:   "Cannot find module 'node:fs'",
			wantStack: "VMError: Cannot find module 'node:fs'" + callSites,
		},
		{
			name:      "a position that is the user's own",
			msg:       "bad thing (definitions/a.js:1:2)",
			stack:     "Error: bad thing (definitions/a.js:1:2)\n\tat f (/p/definitions/a.js:1:2(3))\n",
			wantMsg:   "bad thing (definitions/a.js:1:2)",
			wantStack: "Error: bad thing (definitions/a.js:1:2)" + callSites,
		},
		{name: "no stack", msg: "thrown as a string", wantMsg: "thrown as a string"},
		{name: "a stack set by the project", msg: "m", stack: "custom text", wantMsg: "m", wantStack: "custom text"},
		{name: "goja stack without frames", msg: "m", stack: "Error: m\n", wantMsg: "m", wantStack: "Error: m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, s := CLIError(c.msg, c.stack)
			if m != c.wantMsg || s != c.wantStack {
				t.Errorf("CLIError(%q, %q)\n= %q, %q\nwant %q, %q", c.msg, c.stack, m, s, c.wantMsg, c.wantStack)
			}
		})
	}
}

func TestCLIGraphWire(t *testing.T) {
	g := &dataformpb.CompiledGraph{
		Tables:              []*dataformpb.Table{{Target: &dataformpb.Target{Schema: "s", Name: "t"}, Query: "select 1"}},
		DataformCoreVersion: "3.0.62",
		GraphErrors: &dataformpb.GraphErrors{CompilationErrors: []*dataformpb.CompilationError{
			{FileName: "definitions/a.js", Message: "boom", Stack: "Error: boom\n\tat f (native)\n", ActionName: "p.s.a"},
			{FileName: "definitions/b.js", Message: "as a string"},
		}},
	}
	wire, err := proto.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	out, err := CLIGraphWire(wire)
	if err != nil {
		t.Fatal(err)
	}
	var got dataformpb.CompiledGraph
	if err := proto.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	errs := got.GetGraphErrors().GetCompilationErrors()
	if len(errs) != 2 || errs[0].GetStack() != "Error: boom"+callSites || errs[0].GetActionName() != "p.s.a" || errs[0].GetMessage() != "boom" ||
		errs[1].GetStack() != "" || errs[1].GetMessage() != "as a string" {
		t.Errorf("errors: %v", errs)
	}
	g.GraphErrors.CompilationErrors[0].Stack = "Error: boom" + callSites
	if !proto.Equal(g, &got) {
		t.Errorf("graph changed beyond the stack:\n%v\n%v", g, &got)
	}
	// Nothing to change: the same bytes.
	same, err := CLIGraphWire(out)
	if err != nil || !bytes.Equal(same, out) {
		t.Errorf("a graph in the CLI's form was rewritten (%v)", err)
	}
}

func TestCLICompatible(t *testing.T) {
	for v, want := range map[string]bool{
		"3.0.0": true, "3.0.62": true, "3.1.0": true, "3.0.0-beta.0": false, "2.9.0": false,
		"0.0.0": false, "4.0.0": false, "x": false,
	} {
		if got := cliCompatible(v); got != want {
			t.Errorf("cliCompatible(%q) = %v, want %v", v, got, want)
		}
	}
}
