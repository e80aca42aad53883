package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Recursion without end in core's compile phase (a SQLX js {} block, a
// .query(ctx => …) closure) is an uncatchable stack overflow in goja; it
// must end as the CLI has it: a RangeError on the action's file, and the
// rest of the graph compiled.
func TestRecursionInCompilePhase(t *testing.T) {
	g, err := compileFiles(t, time.Minute, map[string]string{
		"definitions/ok.sqlx":  "config { type: 'table' }\nselect 1 as id",
		"definitions/js.sqlx":  "config { type: 'table' }\njs {\n  function f(n) { return f(n + 1); }\n}\nselect ${f(0)} as x",
		"definitions/query.js": "function g(n) { return g(n + 1); }\npublish('query', {type: 'table'}).query(ctx => `select ${g(0)}`);",
	})
	if err != nil {
		t.Fatalf("the compile failed instead of reporting the recursion on its file: %v", err)
	}
	byFile := map[string]*dataformpb.CompilationError{}
	for _, e := range g.GetGraphErrors().GetCompilationErrors() {
		byFile[e.GetFileName()] = e
	}
	for file, action := range map[string]string{"definitions/js.sqlx": "proj.ds.js", "definitions/query.js": "proj.ds.query"} {
		e := byFile[file]
		if e == nil {
			t.Errorf("no error on %s (all: %v)", file, errorsByFile(g))
			continue
		}
		if e.GetMessage() != "Maximum call stack size exceeded" || !strings.HasPrefix(e.GetStack(), "RangeError: Maximum call stack size exceeded") {
			t.Errorf("%s: message %q, stack %q", file, e.GetMessage(), e.GetStack())
		}
		if e.GetActionName() != action {
			t.Errorf("%s: actionName %q, want %q", file, e.GetActionName(), action)
		}
	}
	if len(byFile) != 2 {
		t.Errorf("errors on %d files, want 2: %v", len(byFile), errorsByFile(g))
	}
	queries := map[string]string{}
	for _, tb := range g.GetTables() {
		queries[tb.GetTarget().GetName()] = tb.GetQuery()
	}
	if _, ok := queries["ok"]; !ok {
		t.Errorf("the other actions were not compiled: %v", queries)
	}
}
