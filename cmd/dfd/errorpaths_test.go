package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// The drop-in on its error paths: each test runs the official CLI
// (`dataform compile`, @dataform/cli 3.0.69) and `dfd compile` on the same
// project with the same arguments and compares what they print. What is the
// engine's own is left out of the comparison, and only that: the frames of
// the CLI's host (vm2 and its own bundle, under the CLI's install path) that
// follow a syntax error, a VMError or a refusal, and the line number in a
// syntax error's first line (vm2 wraps each file in three more lines).

// engines are the dfd engines each comparison runs on; node is skipped
// where no Node.js ≥ 20 is installed.
var engines = []string{engineGoja, engineNode}

// cliRun runs the official CLI with args, in colour (NO_COLOR unset) unless
// env says otherwise.
func cliRun(t *testing.T, env []string, args ...string) compileRun {
	t.Helper()
	cmd := exec.Command("node", append([]string{testenv.CLIBundle(t)}, args...)...)
	cmd.Env = append(environWithout("NO_COLOR"), env...)
	res, err := runCLIToFiles(cmd)
	if err != nil {
		t.Fatalf("running the official CLI: %v", err)
	}
	return res
}

// runCLIToFiles runs the official CLI with its stdout and stderr in files
// and returns what it wrote and its exit status. Not pipes: the CLI writes
// its last line (the empty one after a graph with errors) and calls
// process.exit at once, and Node drops a write to a pipe that is still
// pending then. With a reader slower than the CLI (a busy machine) its
// stdout then lacks that "\n" (measured: 1 run in 3 with a reader that
// waits 3 s); a file takes every write before the next.
func runCLIToFiles(cmd *exec.Cmd) (compileRun, error) {
	dir, err := os.MkdirTemp("", "dfd-cli-output-")
	if err != nil {
		return compileRun{}, err
	}
	defer os.RemoveAll(dir)
	var files [2]*os.File
	for i, name := range []string{"stdout", "stderr"} {
		if files[i], err = os.Create(filepath.Join(dir, name)); err != nil {
			return compileRun{}, err
		}
		defer files[i].Close()
	}
	cmd.Stdout, cmd.Stderr = files[0], files[1]
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return compileRun{}, err
	}
	stdout, err := os.ReadFile(files[0].Name())
	if err != nil {
		return compileRun{}, err
	}
	stderr, err := os.ReadFile(files[1].Name())
	if err != nil {
		return compileRun{}, err
	}
	return compileRun{stdout, stderr, code}, nil
}

func environWithout(name string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// dfdRun runs dfd in process with env (NAME=value) over the process's
// environment, NO_COLOR unset unless env sets it.
func dfdRun(t *testing.T, ctx context.Context, env []string, stdout, stderr *syncBuffer, args ...string) int {
	t.Helper()
	vars := map[string]string{"NO_COLOR": ""}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	getenv := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	return run(ctx, &cmdEnv{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr, getenv: getenv}, args)
}

func dfdCompile(t *testing.T, env []string, args ...string) compileRun {
	t.Helper()
	var stdout, stderr syncBuffer
	code := dfdRun(t, context.Background(), env, &stdout, &stderr, append([]string{"compile"}, args...)...)
	return compileRun{stdout.Bytes(), stderr.Bytes(), code}
}

// syncBuffer is a bytes.Buffer for a command that writes from another
// goroutine while the test reads (--watch).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

var (
	// A frame of the CLI's host, on a line of its own or inside a JSON
	// string; vm2's "    at CallSite {}" frames are kept.
	hostFrameRE = regexp.MustCompile(`(\n|\\n)    at [^\n"\\\x1b]*`)
	callSite    = "    at CallSite {}"
	// The first line of a syntax error's stack: path:line.
	syntaxLineRE = regexp.MustCompile(`(/[^\s:"\\\x1b]+\.(?:js|sqlx|sql|yaml|yml)):\d+(\n|\\n)`)
)

// engineNeutral removes what only the CLI's host prints (see above).
func engineNeutral(b []byte) string {
	s := strings.ReplaceAll(string(b), callSite, "\x00CALLSITE\x00")
	s = hostFrameRE.ReplaceAllString(s, "")
	s = syntaxLineRE.ReplaceAllString(s, "$1:<line>$2")
	return strings.ReplaceAll(s, "\x00CALLSITE\x00", callSite)
}

// compareWithCLI runs args through both and requires the same exit status
// and the same stdout and stderr, byte for byte once engineNeutral.
func compareWithCLI(t *testing.T, env []string, args ...string) compileRun {
	t.Helper()
	cli := cliRun(t, env, append([]string{"compile"}, args...)...)
	for _, eng := range engines {
		t.Run(eng, func(t *testing.T) {
			if eng == engineNode {
				needNode(t)
			}
			dfd := dfdCompile(t, env, append(append([]string(nil), args...), "--engine="+eng)...)
			if dfd.code != cli.code {
				t.Errorf("exit status: CLI %d, dfd %d", cli.code, dfd.code)
			}
			if got, want := engineNeutral(dfd.stdout), engineNeutral(cli.stdout); got != want {
				t.Errorf("stdout differs from the CLI's:\n%s", lineDiff(want, got))
			}
			if got, want := engineNeutral(dfd.stderr), engineNeutral(cli.stderr); got != want {
				t.Errorf("stderr differs from the CLI's:\n%s", lineDiff(want, got))
			}
		})
	}
	return cli
}

// lineDiff shows the first differing line of want (the CLI's) and got.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return "line " + itoa(i+1) + ":\n  CLI: " + quoteLine(wl, i < len(w)) + "\n  dfd: " + quoteLine(gl, i < len(g))
		}
	}
	return "(no line differs)"
}

func quoteLine(s string, present bool) string {
	if !present {
		return "(no line)"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// cliProject writes files into a fresh project with core 3.0.62 installed.
func cliProject(t *testing.T, files map[string]string) string {
	t.Helper()
	if _, ok := files["workflow_settings.yaml"]; !ok {
		files["workflow_settings.yaml"] = testSettings
	}
	if _, ok := files["package.json"]; !ok {
		files["package.json"] = `{"dependencies": {"@dataform/core": "` + testenv.CoreVersion + `"}}`
	}
	return testenv.WriteProject(t, testenv.CoreVersion, files)
}

// Compilation errors that are not the engine's (thrown by core or by the
// project): the CLI's stdout (the graph, then an empty line) and stderr (the
// list of errors with vm2's stacks), byte for byte, in colour, in every
// output mode. dfd used to write the empty line to stderr and to print its
// engine's stacks (host paths, Go frames).
func TestCompileErrorsPrintLikeCLI(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"definitions/ok.sqlx":         "config { type: 'table', tags: ['t'] }\nselect 1 as id",
		"definitions/throws.js":       "throw new Error('No VAT rate configured for: XX');",
		"definitions/no_message.js":   "throw new Error();",
		"definitions/a_string.js":     "throw 'thrown as a string';",
		"definitions/typo.sqlx":       "config { type: 'table', descripton: 'x' }\nselect 1",
		"definitions/missing.sqlx":    "config { type: 'view' }\nselect * from ${ref('nowhere')}",
		"definitions/dup_a.sqlx":      "config { type: 'view', name: 'dup' }\nselect 1",
		"definitions/dup_b.js":        "publish('dup').query('select 2');",
		"definitions/cycle_a.sqlx":    "config { type: 'view' }\nselect * from ${ref('cycle_b')}",
		"definitions/cycle_b.sqlx":    "config { type: 'view' }\nselect * from ${ref('cycle_a')}",
		"definitions/in_query.js":     "publish('in_query').query(ctx => { throw new TypeError('from a query closure'); });",
		"definitions/needs.js":        "require('./not_there');",
		"definitions/multi_line.sqlx": "config { type: 'table' }\njs { throw new Error('first line\\nsecond line'); }\nselect 1",
	})
	for _, c := range []struct {
		name string
		args []string
	}{
		{"json", []string{dir, "--json"}},
		{"summary", []string{dir}},
		{"quiet", []string{dir, "--quiet"}},
		{"json quiet", []string{dir, "--json", "--quiet"}},
		{"dot", []string{dir, "--dot"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cli := compareWithCLI(t, nil, c.args...)
			if cli.code != 1 {
				t.Fatalf("the CLI exited %d, the project has errors:\n%s", cli.code, cli.stderr)
			}
		})
	}
	t.Run("no engine frames", func(t *testing.T) {
		for _, eng := range engines {
			if eng == engineNode && !nodeAvailable() {
				continue
			}
			res := dfdCompile(t, nil, dir, "--json", "--engine="+eng)
			for _, noise := range []string{"github.com/", "(native)", "dfd:prelude", "<eval>", "bundle.js", "\tat "} {
				if bytes.Contains(res.stdout, []byte(noise)) || bytes.Contains(res.stderr, []byte(noise)) {
					t.Errorf("%s: the output has %q", eng, noise)
				}
			}
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		compareWithCLI(t, []string{"NO_COLOR=1"}, dir)
	})
}

// The compile_errors fixture has syntax errors too, whose text is V8's (or
// goja's) own. On the Node.js engine the message is V8's, as the CLI prints
// it (dfd used to add " (file:line:col)"); the stack is V8's layout; on
// both engines every other byte is the CLI's. The position stays where the
// daemon reads it, at the end of the message in the graph core returns.
func TestSyntaxErrorsPrintLikeCLI(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	dir := testenv.ProjectCopy(t, testenv.Fixture("compile_errors"), testenv.CoreVersion)
	cli := cliRun(t, nil, "compile", dir, "--json")
	cliErrs := errorsOf(t, cli.stdout)
	syntax := map[string]bool{}
	for f, e := range cliErrs {
		if strings.Contains(e.Stack, "\nSyntaxError: ") {
			syntax[f] = true
		}
	}
	if len(syntax) != 2 {
		t.Fatalf("the fixture should have two syntax errors: %v", syntax)
	}
	for _, eng := range engines {
		t.Run(eng, func(t *testing.T) {
			if eng == engineNode {
				needNode(t)
			}
			dfd := dfdCompile(t, nil, dir, "--json", "--engine="+eng)
			dfdErrs := errorsOf(t, dfd.stdout)
			for f := range syntax {
				c, d := cliErrs[f], dfdErrs[f]
				if eng == engineNode && d.Message != c.Message {
					t.Errorf("%s: message %q, the CLI's %q", f, d.Message, c.Message)
				}
				if posSuffix.MatchString(d.Message) {
					t.Errorf("%s: the message keeps dfd's position: %q", f, d.Message)
				}
				lines := strings.Split(d.Stack, "\n")
				if len(lines) != 5 || !strings.HasPrefix(lines[0], dir+"/"+f+":") || !strings.HasPrefix(lines[4], "SyntaxError: ") || lines[3] != "" {
					t.Errorf("%s: stack not laid out as V8's:\n%s", f, d.Stack)
				}
				if eng == engineNode && engineNeutral([]byte(d.Stack)) != engineNeutral([]byte(c.Stack)) {
					t.Errorf("%s: stack\n%s\nthe CLI's (without its host's frames)\n%s", f, d.Stack, engineNeutral([]byte(c.Stack)))
				}
			}
			if eng == engineNode {
				if got, want := engineNeutral(dfd.stdout), engineNeutral(cli.stdout); got != want {
					t.Errorf("stdout differs from the CLI's:\n%s", lineDiff(want, got))
				}
				if got, want := engineNeutral(dfd.stderr), engineNeutral(cli.stderr); got != want {
					t.Errorf("stderr differs from the CLI's:\n%s", lineDiff(want, got))
				}
			}
			// What the daemon maps: the graph as the engine returns it.
			res, err := compileForCLI(context.Background(), &cmdEnv{stderr: &bytes.Buffer{}, getenv: os.Getenv}, dir, compile.Options{}, eng, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Errors() {
				if syntax[e.GetFileName()] && !strings.HasSuffix(e.GetMessage(), ")") || syntax[e.GetFileName()] && !strings.Contains(e.GetMessage(), " ("+e.GetFileName()+":") {
					t.Errorf("%s: the engine's message %q has no position for the daemon", e.GetFileName(), e.GetMessage())
				}
			}
		})
	}
}

var posSuffix = regexp.MustCompile(`\(\S+:\d+:\d+\)$`)

type cliError struct {
	FileName, Message, Stack string
}

func errorsOf(t *testing.T, stdout []byte) map[string]cliError {
	t.Helper()
	var g struct {
		GraphErrors struct{ CompilationErrors []cliError }
	}
	if err := json.Unmarshal(stdout, &g); err != nil {
		t.Fatalf("no JSON graph: %v\n%s", err, stdout)
	}
	out := map[string]cliError{}
	for _, e := range g.GraphErrors.CompilationErrors {
		out[e.FileName] = e
	}
	return out
}

func nodeAvailable() bool {
	_, err := exec.LookPath("node")
	return err == nil
}

// Modules that cannot be loaded are vm2's "Cannot find module '<id>'",
// whatever the reason, and nothing outside the project is read. dfd used to
// add "(required from …)" and to word paths outside the project its own way.
func TestRequireErrorsLikeCLI(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.js"), []byte("module.exports = 'SECRET_OUTSIDE';"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(t.TempDir(), "x", "definitions"), filepath.Join(outside, "secret.js"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"includes/x.js":              "module.exports = { v: 1 };",
		"definitions/relative.js":    "require('./x');",
		"definitions/absolute.js":    "require('/includes/x');",
		"definitions/up.js":          "require('../../x');",
		"definitions/outside.js":     "require('" + filepath.Join(outside, "secret.js") + "');",
		"definitions/outside_rel.js": "require('" + rel + "');",
		"definitions/builtin.js":     "require('fs');",
		"definitions/builtin2.js":    "require('child_process');",
		"definitions/node_fs.js":     "require('node:fs');",
		"definitions/package.js":     "require('lodash');",
		"definitions/scoped.js":      "require('@dataform/nothing');",
		"definitions/bare.js":        "require('includes/missing');",
		"definitions/empty.js":       "require('');",
		"definitions/with_ext.js":    "require('./x.js');",
		"definitions/fine.js":        "const p = require('node:path'); const x = require('includes/x'); publish('fine').query(`select ${x.v} as '${p.extname('a.js')}'`);",
		"definitions/caught.js":      "let m = ''; try { require('fs'); } catch (e) { m = `${e.name} ${e.code} ${e.message}`; } publish('caught').query(`select '${m}' as m`);",
		"includes/helper.js":         "module.exports = require('../definitions/linked.js');",
	}
	dir := cliProject(t, files)
	if err := os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(dir, "definitions", "linked.js")); err != nil {
		t.Fatal(err)
	}
	compareWithCLI(t, nil, dir, "--json")
	for _, eng := range engines {
		if eng == engineNode && !nodeAvailable() {
			continue
		}
		res := dfdCompile(t, nil, dir, "--json", "--engine="+eng)
		if bytes.Contains(res.stdout, []byte("SECRET_OUTSIDE")) {
			t.Errorf("%s: a file outside the project was read", eng)
		}
	}
}

// A recursion without end in core's compile phase (a js {} block, a
// .query closure) is a RangeError on its file and the graph is printed, as
// with the CLI. On goja dfd used to print no graph at all.
func TestRecursionLikeCLI(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"definitions/ok.sqlx":    "config { type: 'table' }\nselect 1 as x",
		"definitions/js.sqlx":    "config { type: 'table' }\njs {\n  function f(n) { return f(n + 1); }\n}\nselect ${f(0)} as x",
		"definitions/query.js":   "function g(n) { return g(n + 1); }\npublish('query', {type: 'table'}).query(ctx => `select ${g(0)}`);",
		"definitions/loading.js": "function h(n) { return h(n + 1); }\nh(0);",
	})
	compareWithCLI(t, nil, dir, "--json")
}

// Exceptions that end core's compile (no graph): the CLI prints "Dataform
// encountered an error: " with the message's first line, then vm2's stack,
// and for any VMError "Cannot find module" only its advice to install
// dependencies. dfd used to print the exception's class in the first line,
// no stack, and the missing file's name.
func TestFatalErrorsLikeCLI(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
	}{
		{"actions.yaml names a file that does not exist", map[string]string{
			"definitions/actions.yaml": "actions:\n  - view:\n      filename: missing.sql\n",
		}},
		{"dataform.json that core refuses", map[string]string{
			"workflow_settings.yaml": "",
			"dataform.json":          `{"defaultSchema": "ds", "defaultDatabase": "proj", "warehouse": "bigquery", "useRunCache": false}`,
			"definitions/a.sqlx":     "config { type: 'table' }\nselect 1 as x",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := cliProject(t, c.files)
			if c.files["workflow_settings.yaml"] == "" {
				if err := os.Remove(filepath.Join(dir, "workflow_settings.yaml")); err != nil {
					t.Fatal(err)
				}
			}
			cli := compareWithCLI(t, nil, dir, "--json")
			if cli.code != 1 || len(cli.stdout) != 0 {
				t.Errorf("the CLI exited %d with %d bytes of graph, want 1 and none:\n%s", cli.code, len(cli.stdout), cli.stderr)
			}
		})
	}
}

// Cores the CLI refuses (not 3.x), with its message and exit status: a
// 2.9.0 core exports its version, 2.6.7 and 2.0.3 none ("0.0.0"), and a
// core whose own dependencies are not installed cannot even load. dfd used
// to compile 2.9.0 into a graph of invented errors and to fail 2.x with
// messages of its own.
func TestOldCoresRefusedLikeCLI(t *testing.T) {
	for _, c := range []struct {
		version string
		deps    bool // node_modules has the core's own dependencies, as npm installs it
	}{{"2.9.0", true}, {"2.6.7", true}, {"2.0.3", true}, {"2.6.7", false}} {
		name := c.version
		if !c.deps {
			name += " without its dependencies"
		}
		t.Run(name, func(t *testing.T) {
			dir := testenv.WriteProject(t, "", map[string]string{
				"workflow_settings.yaml": testSettings,
				"package.json":           `{"dependencies": {"@dataform/core": "` + c.version + `"}}`,
				"definitions/a.sqlx":     "config { type: 'table' }\nselect 1 as x",
			})
			src := testenv.CoreDir(t, c.version)
			if c.deps {
				src = filepath.Dir(filepath.Dir(src)) // the install's node_modules
				if err := testenv.CopyTree(src, filepath.Join(dir, "node_modules")); err != nil {
					t.Fatal(err)
				}
			} else if err := testenv.CopyTree(src, filepath.Join(dir, "node_modules", "@dataform", "core")); err != nil {
				t.Fatal(err)
			}
			cli := compareWithCLI(t, nil, dir, "--json")
			if cli.code != 1 {
				t.Errorf("the CLI exited %d:\n%s", cli.code, cli.stderr)
			}
		})
	}
}

// The CLI's checks of the project before it compiles, with its messages:
// a project dir that is missing or has no settings file; neither
// dataformCoreVersion nor a package.json; dataformCoreVersion together with
// node_modules, package.json or package-lock.json; a package.json without
// an installed core. dfd used to compile some of these and word the others
// its own way.
func TestProjectChecksLikeCLI(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	withVersion := "dataformCoreVersion: " + testenv.CoreVersion + "\n" + testSettings
	sqlx := "config { type: 'table' }\nselect 1 as x"
	cases := []struct {
		name  string
		files map[string]string
		core  bool // install core into node_modules
	}{
		{"no package.json and no dataformCoreVersion", map[string]string{"workflow_settings.yaml": testSettings, "definitions/a.sqlx": sqlx}, false},
		{"no package.json and no dataformCoreVersion, core installed", map[string]string{"workflow_settings.yaml": testSettings, "definitions/a.sqlx": sqlx}, true},
		{"dataformCoreVersion and node_modules", map[string]string{"workflow_settings.yaml": withVersion, "definitions/a.sqlx": sqlx}, true},
		{"dataformCoreVersion and package.json", map[string]string{"workflow_settings.yaml": withVersion, "package.json": "{}", "definitions/a.sqlx": sqlx}, false},
		{"dataformCoreVersion and package-lock.json", map[string]string{"workflow_settings.yaml": withVersion, "package-lock.json": "{}", "definitions/a.sqlx": sqlx}, false},
		{"package.json without node_modules", map[string]string{"workflow_settings.yaml": testSettings, "package.json": "{}", "definitions/a.sqlx": sqlx}, false},
		{"dataform.json without package.json", map[string]string{"dataform.json": `{"defaultSchema": "ds", "defaultDatabase": "proj", "warehouse": "bigquery"}`, "definitions/a.sqlx": sqlx}, true},
		{"no settings file", map[string]string{"definitions/a.sqlx": sqlx}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			version := ""
			if c.core {
				version = testenv.CoreVersion
			}
			dir := testenv.WriteProject(t, version, c.files)
			cli := compareWithCLI(t, nil, dir, "--json")
			if cli.code != 1 {
				t.Errorf("the CLI exited %d:\n%s", cli.code, cli.stderr)
			}
		})
	}
	t.Run("a directory that does not exist", func(t *testing.T) {
		compareWithCLI(t, nil, filepath.Join(t.TempDir(), "nope"), "--json")
	})
	t.Run("relative, with a symbolic link", func(t *testing.T) {
		dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{"workflow_settings.yaml": withVersion, "definitions/a.sqlx": sqlx})
		link := filepath.Join(t.TempDir(), "linked")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}
		t.Chdir(filepath.Dir(link))
		compareWithCLI(t, nil, "linked", "--json")
	})
}

// Every flag of the CLI's compile, with its behaviour: --output-actions and
// --output-tags (array options, comma-separated or several values) with
// --output-include-deps/-dependents prune the printed graph (a plain object
// under the CLI: empty arrays printed, keys in its order); --dot; --quiet;
// --verbose; the CLI's checks of flag combinations; --timeout. dfd used to
// reject most of them (exit 2).
func TestCompileFlagsLikeCLI(t *testing.T) {
	dir := cliProject(t, map[string]string{
		"definitions/a.sqlx":     "config { type: 'table', tags: ['base'] }\nselect 1 as x",
		"definitions/b.sqlx":     "config { type: 'view', tags: ['t1'] }\nselect * from ${ref('a')}",
		"definitions/c.sqlx":     "config { type: 'table', tags: ['t2'], assertions: { nonNull: ['x'] } }\nselect * from ${ref('ds', 'b')}",
		"definitions/d.sqlx":     "config { type: 'operations', tags: ['t2'] }\nselect 1",
		"definitions/decl.js":    "declare({schema: 'raw', name: 'src'});",
		"definitions/other.sqlx": "config { type: 'view', schema: 'other', name: 'b' }\nselect * from ${ref('raw', 'src')}",
		"definitions/inc.sqlx":   "config { type: 'incremental', disabled: true }\nselect 1 as x",
	})
	for _, args := range [][]string{
		{dir},
		{dir, "--quiet"},
		{dir, "--verbose"},
		{dir, "--json", "--verbose"},
		{dir, "--json", "--output-actions", "ds.b", "c"},
		{dir, "--output-actions=proj.ds.b,c", "--output-tags", "t1", "--output-include-deps"},
		{dir, "--json", "--output-actions=proj.ds.b,c", "--output-tags", "t1", "--output-include-deps"},
		{dir, "--json", "--output-tags", "t2", "--output-include-dependents"},
		{dir, "--json", "--output-tags=t1,t2", "--output-tags", "base"},
		{dir, "--json", "--output-actions", "proj.ds.a", "--output-include-dependents", "--output-include-deps"},
		{dir, "--json", "--output-actions", "nothing_like_it"},
		{dir, "--json", "--output-actions"},
		{dir, "--json", "--output-actions="},
		{dir, "--json", "--output-actions", "b"}, // ambiguous: ds.b and other.b
		{dir, "--dot"},
		{dir, "--dot", "--output-tags", "t2", "--output-include-dependents"},
		{dir, "--quiet", "--output-tags", "t2"},
		{dir, "--json", "--dot"},
		{dir, "--quiet", "--verbose"},
		{dir, "--output-include-deps"},
		{dir, "--json", "--output-include-dependents"},
		{dir, "--schema-suffix=not-valid"},
		{dir, "--json", "--timeout", "30s", "--schema-suffix", "dev", "--vars=a=1,b=2"},
		// The CLI prints vars in the order given; dfd's request wrote them
		// in Go's random map order (this case failed half the time).
		{dir, "--json", "--vars=zeta=1,alpha=2,mid=3,beta=4,alpha=5"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			compareWithCLI(t, nil, args...)
		})
	}
	t.Run("output-actions before the directory", func(t *testing.T) {
		// An array option takes the arguments after it: here the directory
		// too, so the project is the working directory's.
		t.Chdir(dir)
		compareWithCLI(t, nil, "--json", "--output-actions", "c", ".")
	})
}

// --watch compiles, says it is watching, and compiles and prints again
// after each change, until interrupted (exit status 1). The same edits of
// the project make the same output, byte for byte.
func TestCompileWatchLikeCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the watchers")
	}
	files := map[string]string{
		"definitions/a.sqlx": "config { type: 'table' }\nselect 1 as x",
	}
	edits := []struct{ file, content string }{
		{"definitions/b.sqlx", "config { type: 'view' }\nselect * from ${ref('a')}"},
		{"definitions/a.sqlx", "config { type: 'table' }\nselect 2 as x, ${ref('missing')} as y"},
	}
	const ready = "Watching for changes..."
	// watch applies the edits to dir once out says it is ready each time,
	// then stops the command with stop; it returns the final output.
	watch := func(t *testing.T, dir string, out func() []byte, stop func()) string {
		t.Helper()
		wait := func(n int) {
			deadline := time.Now().Add(90 * time.Second)
			for strings.Count(string(out()), ready) < n {
				if time.Now().After(deadline) {
					t.Fatalf("no %q #%d within 90s:\n%s", ready, n, out())
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(500 * time.Millisecond) // chokidar may still be settling after "ready"
		}
		wait(1)
		for i, e := range edits {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(e.file)), []byte(e.content), 0o644); err != nil {
				t.Fatal(err)
			}
			wait(i + 2)
		}
		stop()
		return string(out())
	}

	cliDir := cliProject(t, copyFiles(files))
	cmd := exec.Command("node", testenv.CLIBundle(t), "compile", cliDir, "--json", "--watch")
	cmd.Env = environWithout("NO_COLOR")
	var cliOut syncBuffer
	cmd.Stdout, cmd.Stderr = &cliOut, &cliOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cliText := watch(t, cliDir, cliOut.Bytes, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
	err := cmd.Wait()
	cliCode := 0
	if ee, ok := err.(*exec.ExitError); ok {
		cliCode = ee.ExitCode()
	}
	cliText = strings.ReplaceAll(string(cliOut.Bytes()), cliDir, "<dir>")

	dfdDir := cliProject(t, copyFiles(files))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dfdOut syncBuffer
	done := make(chan int)
	go func() { done <- dfdRun(t, ctx, nil, &dfdOut, &dfdOut, "compile", dfdDir, "--json", "--watch") }()
	watch(t, dfdDir, dfdOut.Bytes, cancel)
	dfdCode := <-done
	dfdText := strings.ReplaceAll(string(dfdOut.Bytes()), dfdDir, "<dir>")

	if cliCode != dfdCode {
		t.Errorf("exit status after the interrupt: CLI %d, dfd %d", cliCode, dfdCode)
	}
	if got, want := engineNeutral([]byte(dfdText)), engineNeutral([]byte(cliText)); got != want {
		t.Errorf("output differs from the CLI's:\n%s", lineDiff(want, got))
	}
}

func copyFiles(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
