package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

const settings = "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\ndefaultAssertionDataset: checks\n"

func runtimeFor(t testing.TB, root string) *engine.Runtime {
	t.Helper()
	b, err := engine.LoadBundle(filepath.Join(root, "node_modules/@dataform/core/bundle.js"), testenv.CoreVersion)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := b.NewRuntime(engine.Options{Root: root, Log: func(level, msg string) { t.Logf("console.%s: %s", level, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// compileFiles compiles a scratch project holding files and returns the
// graph, or the engine's error.
func compileFiles(t *testing.T, timeout time.Duration, files map[string]string) (*dataformpb.CompiledGraph, error) {
	t.Helper()
	files["workflow_settings.yaml"] = settings
	root := testenv.WriteProject(t, testenv.CoreVersion, files)
	var paths []string
	for name := range files {
		paths = append(paths, name)
	}
	return compileAt(t, root, paths, timeout)
}

func compileAt(t *testing.T, root string, paths []string, timeout time.Duration) (*dataformpb.CompiledGraph, error) {
	t.Helper()
	req, err := proto.Marshal(&dataformpb.CoreExecutionRequest{Request: &dataformpb.CoreExecutionRequest_Compile{
		Compile: &dataformpb.CompileExecutionRequest{CompileConfig: &dataformpb.CompileConfig{ProjectDir: root, FilePaths: paths}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := runtimeFor(t, root).Compile(ctx, files, req)
	if err != nil {
		return nil, err
	}
	var resp dataformpb.CoreExecutionResponse
	if err := proto.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.GetCompile().GetCompiledGraph(), nil
}

func errorsByFile(g *dataformpb.CompiledGraph) map[string]string {
	m := map[string]string{}
	for _, e := range g.GetGraphErrors().GetCompilationErrors() {
		m[e.GetFileName()] += e.GetMessage() + "\n"
	}
	return m
}

func TestCompileSmallProject(t *testing.T) {
	g, err := compileFiles(t, time.Minute, map[string]string{
		"definitions/orders.sqlx":  "config { type: \"table\" }\nselect ${constants.answer} as id",
		"definitions/summary.sqlx": "config { type: \"view\" }\nselect * from ${ref(\"orders\")}",
		"definitions/more.js":      "const path = require('path');\npublish('more').query(ctx => `select '${path.extname('a.sqlx')}' from ${ctx.ref('summary')}`);",
		"includes/constants.js":    "module.exports = { answer: 42 };",
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := errorsByFile(g); len(errs) > 0 {
		t.Fatalf("unexpected compilation errors: %v", errs)
	}
	queries := map[string]string{}
	for _, tb := range g.GetTables() {
		queries[tb.GetTarget().GetName()] = strings.TrimSpace(tb.GetQuery())
	}
	want := map[string]string{
		"orders":  "select 42 as id",
		"summary": "select * from `proj.ds.orders`",
		"more":    "select '.sqlx' from `proj.ds.summary`",
	}
	for name, q := range want {
		if queries[name] != q {
			t.Errorf("%s: query %q, want %q", name, queries[name], q)
		}
	}
}

// Bad input must end as a compilation error on the file that caused it, or
// as an error of the request: never a crash or a hang.
func TestBadInput(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.js")
	if err := os.WriteFile(outside, []byte("module.exports = 'secret';"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		files    map[string]string
		file     string // the file the error must be reported on
		contains string
	}{
		{"require fs", map[string]string{"definitions/a.js": "require('fs').readFileSync('/etc/passwd');"}, "definitions/a.js", "Cannot find module 'fs'"},
		{"require node:fs", map[string]string{"definitions/a.js": "require('node:fs');"}, "definitions/a.js", "Cannot find module 'node:fs'"},
		{"require child_process", map[string]string{"definitions/a.js": "require('child_process').execSync('id');"}, "definitions/a.js", "Cannot find module 'child_process'"},
		{"require outside by relative path", map[string]string{"definitions/a.js": "require('../../outside');"}, "definitions/a.js", "Cannot find module '../../outside'"},
		{"require outside by absolute path", map[string]string{"definitions/a.js": "require(" + jsString(outside) + ");"}, "definitions/a.js", "Cannot find module '" + outside + "'"},
		{"require a missing module", map[string]string{"definitions/a.js": "require('left-pad');"}, "definitions/a.js", "Cannot find module 'left-pad'"},
		{"infinite recursion", map[string]string{"definitions/a.js": "function f(n) { return f(n + 1) + 1; }\nf(0);"}, "definitions/a.js", "Maximum call stack size exceeded"},
		{"throw", map[string]string{"definitions/a.js": "throw new Error('boom from user code');"}, "definitions/a.js", "boom from user code"},
		{"syntax error", map[string]string{"definitions/a.js": "publish('x').query(ctx => `select 1`;"}, "definitions/a.js", "(definitions/a.js:1:37)"},
		{"no process", map[string]string{"definitions/a.js": "publish('x').query(process.env.HOME);"}, "definitions/a.js", "process is not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := compileFiles(t, time.Minute, c.files)
			if err != nil {
				t.Fatalf("compile failed instead of reporting a compilation error: %v", err)
			}
			got := errorsByFile(g)[c.file]
			if !strings.Contains(got, c.contains) {
				t.Fatalf("errors on %s: %q, want one containing %q (all: %v)", c.file, got, c.contains, errorsByFile(g))
			}
		})
	}
}

func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", "\\'") + "'" }

func TestSymlinkLeavingTheProject(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "evil.js")
	if err := os.WriteFile(outside, []byte("publish('evil').query('select 1');"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": settings,
		"definitions/ok.sqlx":    "config { type: 'view' }\nselect 1",
		"includes/helper.js":     "module.exports = require('../definitions/linked.js');",
	})
	if err := os.Symlink(outside, filepath.Join(root, "definitions", "linked.js")); err != nil {
		t.Fatal(err)
	}
	g, err := compileAt(t, root, []string{"definitions/linked.js", "definitions/ok.sqlx", "includes/helper.js", "workflow_settings.yaml"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	errs := errorsByFile(g)
	for _, f := range []string{"definitions/linked.js", "includes/helper.js"} {
		if !strings.Contains(errs[f], "Cannot find module") {
			t.Errorf("%s: errors %q, want a refusal to leave the project", f, errs[f])
		}
	}
	for _, tb := range g.GetTables() {
		if tb.GetTarget().GetName() == "evil" {
			t.Error("the file behind the symbolic link was compiled")
		}
	}
}

func TestInfiniteLoopHitsDeadline(t *testing.T) {
	start := time.Now()
	_, err := compileFiles(t, 300*time.Millisecond, map[string]string{
		"definitions/a.js": "while (true) {}",
	})
	if !errors.Is(err, engine.ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the loop was stopped only after %s", d)
	}
}

func TestNonUTF8File(t *testing.T) {
	g, err := compileFiles(t, time.Minute, map[string]string{
		"definitions/latin1.sqlx": "config { type: 'view' }\nselect 'caf\xe9' as word",
	})
	if err != nil {
		t.Fatal(err)
	}
	if errs := errorsByFile(g); len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	if q := g.GetTables()[0].GetQuery(); !strings.Contains(q, "caf\uFFFD") {
		t.Errorf("query %q, want the invalid byte as U+FFFD", q)
	}
}

func bigSQLX(size int) string {
	const line = "  'abcdefghijklmnopqrstuvwxyz0123456789' as c,\n"
	return "config { type: 'view' }\nselect\n" + strings.Repeat(line, size/len(line)) + "  1 as last"
}

// A large file compiles completely (the SQLX parser is linear here; see
// concatPatches).
func TestLargeFile(t *testing.T) {
	g, err := compileFiles(t, 5*time.Minute, map[string]string{"definitions/big.sqlx": bigSQLX(512 << 10)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(g.GetTables()[0].GetQuery()); n < 512<<10-100 {
		t.Errorf("query of %d bytes, want the whole file", n)
	}
}

// A 10 MB file takes goja minutes to parse; under a deadline it must end
// with a timeout error on time, not a hang or a crash.
func TestHugeFileEndsAtDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and parses 10 MB")
	}
	start := time.Now()
	g, err := compileFiles(t, 10*time.Second, map[string]string{"definitions/huge.sqlx": bigSQLX(10 << 20)})
	switch {
	case errors.Is(err, engine.ErrTimeout):
	case err == nil && len(g.GetTables()) == 1:
	default:
		t.Fatalf("err = %v, want a complete graph or ErrTimeout", err)
	}
	// Interrupt reaches native code (regexp2) only between calls.
	if d := time.Since(start); d > 40*time.Second {
		t.Errorf("returned after %s, long past its 10s deadline", d)
	}
}

func TestRuntimeServesOneRequest(t *testing.T) {
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{"workflow_settings.yaml": settings})
	rt := runtimeFor(t, root)
	files, _ := engine.OpenDir(root)
	defer files.Close()
	req, _ := proto.Marshal(&dataformpb.CoreExecutionRequest{Request: &dataformpb.CoreExecutionRequest_Compile{
		Compile: &dataformpb.CompileExecutionRequest{CompileConfig: &dataformpb.CompileConfig{ProjectDir: root}},
	}})
	if _, err := rt.Compile(context.Background(), files, req); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Compile(context.Background(), files, req); !errors.Is(err, engine.ErrUsed) {
		t.Fatalf("second compile: err = %v, want ErrUsed", err)
	}
}

// JavaScript globals set by one compile must not be seen by the next.
func TestNoGlobalsLeakBetweenRuntimes(t *testing.T) {
	files := map[string]string{
		"definitions/a.js": "publish('a').query(typeof globalThis.leaked === 'undefined' ? 'select 1' : 'select 2');\nglobalThis.leaked = true;",
	}
	for i := 0; i < 2; i++ {
		g, err := compileFiles(t, time.Minute, files)
		if err != nil {
			t.Fatal(err)
		}
		if q := g.GetTables()[0].GetQuery(); q != "select 1" {
			t.Fatalf("compile %d: query %q: a global leaked from an earlier compile", i, q)
		}
	}
}
