package engine_test

import (
	"strings"
	"testing"
	"time"
)

// Whatever keeps a module from loading — missing, a builtin, a path out of
// the project — is vm2's VMError "Cannot find module '<id>'", as under the
// CLI, and user code that catches it sees the same name and code.
func TestModuleNotFoundIsVMError(t *testing.T) {
	g, err := compileFiles(t, time.Minute, map[string]string{
		"definitions/a.js": "const seen = [];\n" +
			"for (const id of ['./x', '/includes/x', '../../../etc/passwd', 'fs', 'node:fs', 'lodash', '']) {\n" +
			"  try { require(id); } catch (e) { seen.push(`${e.name}|${e.code}|${e.message}`); }\n" +
			"}\n" +
			"publish('seen').query(ctx => seen.join('\\n'));",
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := errorsByFile(g); len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := strings.Join([]string{
		"VMError|ENOTFOUND|Cannot find module './x'",
		"VMError|ENOTFOUND|Cannot find module '/includes/x'",
		"VMError|ENOTFOUND|Cannot find module '../../../etc/passwd'",
		"VMError|ENOTFOUND|Cannot find module 'fs'",
		"VMError|ENOTFOUND|Cannot find module 'node:fs'",
		"VMError|ENOTFOUND|Cannot find module 'lodash'",
		"VMError|ENOTFOUND|Cannot find module ''",
	}, "\n")
	if got := g.GetTables()[0].GetQuery(); got != want {
		t.Errorf("caught errors:\n%s\nwant:\n%s", got, want)
	}
}

// A syntax error keeps its position at the end of the message (the daemon
// maps it) and has the stack V8 gives it under the CLI: file:line, the
// line, a caret, then the error without the position.
func TestSyntaxErrorStack(t *testing.T) {
	files := map[string]string{"definitions/a.js": "const x = 1;\npublish('x').query(ctx => `select 1`;\n"}
	g, err := compileFiles(t, time.Minute, files)
	if err != nil {
		t.Fatal(err)
	}
	errs := g.GetGraphErrors().GetCompilationErrors()
	if len(errs) != 1 {
		t.Fatalf("errors: %v", errorsByFile(g))
	}
	e := errs[0]
	if want := "Unexpected token ; (definitions/a.js:2:37)"; e.GetMessage() != want {
		t.Errorf("message %q, want %q", e.GetMessage(), want)
	}
	lines := strings.Split(e.GetStack(), "\n")
	if len(lines) != 5 || !strings.HasSuffix(lines[0], "/definitions/a.js:2") || lines[1] != "publish('x').query(ctx => `select 1`;" ||
		lines[2] != strings.Repeat(" ", 36)+"^" || lines[3] != "" || lines[4] != "SyntaxError: Unexpected token ;" {
		t.Errorf("stack:\n%s", e.GetStack())
	}
}
