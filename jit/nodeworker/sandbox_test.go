package nodeworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/jit/nodeworker"
	dfproject "github.com/dfdtools/dfd/project"
)

// escapeProbes is JavaScript that tries the classic ways out of a vm
// context. Each attempt records "<name>: blocked (…)" or "<name>: ESCAPED"
// in `out`; an attempt escapes when it gets hold of the process object,
// Node's real require or a builtin module. It is run as project code (a
// definitions/*.js file) and as JiT code. `req` is the require at hand.
const escapeProbes = `
const isHost = (v) => v !== null && v !== undefined && (typeof v === "object" || typeof v === "function") &&
  (typeof v.pid === "number" || typeof v.readFileSync === "function" || typeof v.binding === "function" ||
   typeof v.mainModule === "object" || (typeof v === "function" && typeof v.cache === "object" && typeof v.resolve === "function" && v !== req));
const record = (name, v) => out.push(name + (isHost(v) ? ": ESCAPED" : ": blocked (" + typeof v + ")"));
const probe = (name, f) => {
  try { record(name, f()); } catch (e) { out.push(name + ": blocked (" + (e && e.message) + ")"); }
};
const viaCtor = (x) => x.constructor.constructor("return process")();
const viaCtorRequire = (x) => x.constructor.constructor("return require")();
probe("typeof process", () => typeof process === "undefined" ? undefined : process);
probe("typeof Buffer", () => typeof Buffer === "undefined" ? undefined : Buffer);
probe("this.constructor.constructor", () => (function () { return this; })().constructor.constructor("return process")());
probe("globalThis.constructor.constructor", () => viaCtor(globalThis));
probe("prototype of the global", () => viaCtor(Object.getPrototypeOf(globalThis)));
probe("require.constructor", () => req.constructor("return process")());
probe("require.resolve.constructor", () => viaCtor(req.resolve));
probe("require('fs')", () => req("fs"));
probe("require('node:child_process')", () => req("node:child_process"));
probe("require of a builtin, error's constructor", () => { try { req("fs"); } catch (e) { return viaCtor(e); } });
probe("require of a missing file, error's constructor", () => { try { req("./no/such/file"); } catch (e) { return viaCtor(e); } });
probe("require outside the root, error's constructor", () => { try { req("../../../../etc/passwd"); } catch (e) { return viaCtor(e); } });
probe("require with a non-string, error's constructor", () => { try { req({ toString() { return "fs"; } }); } catch (e) { return viaCtor(e); } });
probe("console.log.constructor", () => viaCtor(console.log));
probe("console.log's return", () => viaCtor(console.log("x") || {}));
probe("setTimeout.constructor", () => viaCtor(setTimeout));
probe("setTimeout's id", () => viaCtor(Object(setTimeout(() => {}, 1))));
probe("__dataform_current_file getter", () => viaCtor(Object.getOwnPropertyDescriptor(globalThis, "__dataform_current_file").get));
probe("Error.prepareStackTrace call sites", () => {
  const orig = Error.prepareStackTrace;
  Error.prepareStackTrace = (e, cs) => cs;
  const cs = new Error("x").stack;
  Error.prepareStackTrace = orig;
  if (!Array.isArray(cs)) return undefined;
  if (cs.length > 0) return { pid: -1, callSites: cs.length }; // call sites are not handed out at all
  return undefined;
});
probe("Error.prepareStackTrace getThis/getFunction through require", () => {
  const orig = Error.prepareStackTrace;
  let found;
  Error.prepareStackTrace = (e, cs) => {
    for (const c of cs) {
      for (const v of [c.getThis(), c.getFunction()]) {
        try { if (v) { const p = viaCtor(v); if (isHost(p)) found = p; } } catch (_) {}
      }
    }
    return "x";
  };
  try { req("./no/such/file"); } catch (e) { void e.stack; }
  try { null.x; } catch (e) { void e.stack; }
  Error.prepareStackTrace = orig;
  return found;
});
probe("replace the global Error to get call sites", () => {
  const E = globalThis.Error;
  let sites;
  try { globalThis.Error = { prepareStackTrace: (e, cs) => { sites = cs; return ""; } }; } catch (_) {}
  try { null.x; } catch (e) { void e.stack; }
  try { globalThis.Error = E; } catch (_) {}
  return sites && sites.length ? { pid: -2 } : undefined;
});
probe("Error.captureStackTrace", () => { const o = {}; Error.captureStackTrace(o); return viaCtor(o); });
probe("stack overflow, then require", () => {
  let err;
  const f = (n) => { try { return f(n + 1); } catch (e) { try { req("./no/such/file"); } catch (e2) { err = e2; } return 0; } };
  f(0);
  return err ? viaCtor(err) : undefined;
});
probe("stack overflow, then console.log", () => {
  let err;
  const f = (n) => { try { return f(n + 1); } catch (e) { try { console.log("deep"); } catch (e2) { err = e2; } return 0; } };
  f(0);
  return err ? viaCtor(err) : undefined;
});
probe("function.caller of a timer callback", () => { let c; setTimeout(function cb() { c = cb.caller; }, 1); return c; });
probe("arguments.callee.caller of a module", () => (function () { return arguments.callee.caller; })());
probe("eval", () => eval("typeof process === 'undefined' ? undefined : process"));
probe("new Function", () => new Function("return typeof process === 'undefined' ? undefined : process")());
probe("WebAssembly", () => { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); return undefined; });
probe("Symbol.for / globalThis keys", () => Object.getOwnPropertyNames(globalThis).filter((k) => /^(process|Buffer|require_?host|__dfd_bridge)$/.test(k)).length ? { pid: -3 } : undefined);
probe("__dfd_entry called by project code", () => { const v = globalThis.__dfd_entry(); return v; });
const asyncProbes = [
  ["import('fs')", () => import("fs")],
  ["import('fs'), error's constructor", () => import("fs").catch((e) => viaCtor(e))],
  ["eval(import())", () => eval("import('node:fs')").catch((e) => viaCtor(e))],
  ["new Function(import())", () => new Function("return import('child_process')")().catch((e) => viaCtor(e))],
  ["async function's promise", async () => viaCtor((async () => 1)())],
  ["rejected promise's error", () => Promise.reject(new Error("x")).catch((e) => viaCtor(e))],
  ["queueMicrotask", () => new Promise((r, j) => queueMicrotask(() => { try { r(viaCtor(queueMicrotask)); } catch (e) { j(e); } }))],
];
`

func parseProbes(t *testing.T, results []string, wantAtLeast int) {
	t.Helper()
	if len(results) < wantAtLeast {
		t.Errorf("%d probe results, want at least %d: %q", len(results), wantAtLeast, results)
	}
	for _, r := range results {
		if strings.Contains(r, "ESCAPED") {
			t.Errorf("sandbox escape: %s", r)
		} else {
			t.Log(r)
		}
	}
}

const syncProbeCount = 31
const asyncProbeCount = 7

// TestSandboxJit runs the escape probes as JiT code, where the adapter's
// promises and errors come from the host too.
func TestSandboxJit(t *testing.T) {
	root := workertest.Project(t, nil)
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	code := "async (jctx) => { const out = []; const req = require;\n" + escapeProbes + `
for (const [name, f] of asyncProbes) {
  try { record(name, await f()); } catch (e) { out.push(name + ": blocked (" + (e && e.message) + ")"); }
}
try { await jctx.adapter.getTable({ target: { name: "missing" } }); } catch (e) {
  try { record("adapter error's constructor", viaCtor(e)); } catch (e2) { out.push("adapter error's constructor: blocked (" + e2.message + ")"); }
}
try { record("adapter promise's constructor", viaCtor(jctx.adapter.listTables({ database: "proj", schema: "ds" }))); } catch (e) { out.push("adapter promise's constructor: blocked (" + e.message + ")"); }
try { record("adapter result's constructor", viaCtor(await jctx.adapter.listTables({ database: "proj", schema: "ds" }))); } catch (e) { out.push("adapter result's constructor: blocked (" + e.message + ")"); }
return "select " + JSON.stringify(out);
}`
	res, err := p.Jit(context.Background(), workertest.JitJob(code), (&workertest.Adapter{}).RPC)
	if err != nil {
		t.Fatal(err)
	}
	q := workertest.Query(t, res)
	var results []string
	if err := json.Unmarshal([]byte(strings.TrimPrefix(q, "select ")), &results); err != nil {
		t.Fatalf("query %q: %v", q, err)
	}
	parseProbes(t, results, syncProbeCount+asyncProbeCount+3)
	workertest.ExpectOK(t, p)
}

// TestSandboxCompile runs the synchronous probes as a project's JavaScript
// file at compile time, where `require` is the CommonJS loader's.
func TestSandboxCompile(t *testing.T) {
	root := workertest.Project(t, map[string]string{
		"definitions/escape.js": "const out = []; const req = require;\n" + escapeProbes +
			"\npublish('escape_results', { type: 'view' }).query(JSON.stringify(out));\n",
	})
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	pr, err := dfproject.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := pr.FilePaths()
	if err != nil {
		t.Fatal(err)
	}
	req, err := compile.Request(root, paths, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	r, err := compile.Decode(res.Response)
	if err != nil {
		t.Fatal(err)
	}
	if errs := r.Errors(); len(errs) > 0 {
		t.Fatalf("compilation errors: %v", errs)
	}
	var q string
	for _, tb := range r.Graph.GetTables() {
		if tb.GetTarget().GetName() == "escape_results" {
			q = tb.GetQuery()
		}
	}
	var results []string
	if err := json.Unmarshal([]byte(q), &results); err != nil {
		t.Fatalf("query %q: %v", q, err)
	}
	parseProbes(t, results, syncProbeCount)
}

// TestSandboxProcess checks the Node process itself, from the worker's own
// (host) realm after its setup: the permission model refuses files outside
// the root, core and the script, writes, processes and threads; networking
// is disabled.
func TestSandboxProcess(t *testing.T) {
	root := workertest.Project(t, nil)
	cmd := command(t, root, workertest.BundlePath(root))
	args := append(append([]string(nil), cmd[1:]...), "--bundle="+workertest.BundlePath(root), "--core-version="+testenv.CoreVersion, "--root="+root, "--self-test")
	c := exec.Command(cmd[0], args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) < 20 {
		t.Fatalf("self-test printed %d lines:\n%s", len(lines), stderr.String())
	}
	for _, l := range lines {
		t.Log(l)
		mustAllow := strings.Contains(l, "(must be allowed)")
		allowed := strings.HasSuffix(l, ": ALLOWED")
		if allowed != mustAllow {
			t.Errorf("%s", l)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "dfd-self-test.txt")); err == nil {
		t.Error("the worker could write into the project")
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout is for frames only: %q", stdout.String())
	}
}

// TestLoaderConfinement: symbolic links out of the project, ".." and
// absolute paths are refused with the goja engine's messages.
func TestLoaderConfinement(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.js"), []byte("module.exports = 'SECRET';"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := workertest.Project(t, map[string]string{
		"definitions/probe.js": `
const out = [];
for (const id of ["./link/secret.js", "../../` + filepath.Base(outside) + `/secret.js", "` + outside + `/secret.js", "includes/linkfile", "includes/dangling"]) {
  try { out.push(id + " => " + require(id)); } catch (e) { out.push(id + " => " + e.message); }
}
publish("probe", { type: "view" }).query(JSON.stringify(out));
`,
	})
	if err := os.Symlink(outside, filepath.Join(root, "definitions", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(root, "includes", "linkfile.js")); err != nil {
		if err := os.MkdirAll(filepath.Join(root, "includes"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(root, "includes", "linkfile.js")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(outside, "nothing-here.js"), filepath.Join(root, "includes", "dangling.js")); err != nil {
		t.Fatal(err)
	}
	p := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	req, err := compile.Request(root, []string{"definitions/probe.js", "workflow_settings.yaml"}, compile.Overrides{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Compile(context.Background(), jit.CompileJob{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	gojaResp := gojaCompile(t, &dfproject.Core{Version: testenv.CoreVersion, BundlePath: workertest.BundlePath(root)}, root, nil, req)
	compareResponses(t, gojaResp, res.Response, false)
	if bytes.Contains(res.Response, []byte("SECRET")) {
		t.Error("a file outside the project was loaded")
	}
	r, _ := compile.Decode(res.Response)
	for _, tb := range r.Graph.GetTables() {
		t.Log(tb.GetQuery())
	}
}

func TestFindNode(t *testing.T) {
	needNode(t)
	p, v, err := nodeworker.FindNode()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s at %s", v, p)
	t.Setenv("DFD_NODE", "/nonexistent/node")
	if _, _, err := nodeworker.FindNode(); err == nil {
		t.Error("a missing $DFD_NODE was accepted")
	}
	old := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(old, []byte("#!/bin/sh\necho v18.19.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DFD_NODE", old)
	if _, _, err := nodeworker.FindNode(); err == nil || !strings.Contains(err.Error(), "needs 20 or newer") {
		t.Errorf("Node 18 accepted or badly refused: %v", err)
	}
}

// TestPathModuleInSync: the script dfd writes carries engine/js/path.js
// verbatim (and no marker is left over).
func TestPathModuleInSync(t *testing.T) {
	want, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "engine", "js", "path.js"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(nodeworker.Script())
	const begin, end = "// BEGIN engine/js/path.js\n", "// END engine/js/path.js"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < 0 || s[i+len(begin):j] != string(want) {
		t.Fatal("the worker script does not carry engine/js/path.js between the BEGIN and END lines")
	}
	if strings.Contains(s, "@@ENGINE_PATH_JS@@") {
		t.Fatal("the path module marker was not replaced")
	}
}

func TestWriteScript(t *testing.T) {
	dir := t.TempDir()
	a, err := nodeworker.WriteScript(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := nodeworker.WriteScript(dir)
	if err != nil || a != b {
		t.Fatalf("%s %s %v", a, b, err)
	}
	got, _ := os.ReadFile(a)
	if !bytes.Equal(got, nodeworker.Script()) {
		t.Error("written script differs")
	}
	cmd := nodeworker.CommandFor("/usr/bin/node", a, "/p/root", "/p/root/node_modules/@dataform/core/bundle.js")
	joined := strings.Join(cmd, " ")
	if strings.Contains(joined, "--allow-fs-read=/p/root/node_modules") || !strings.Contains(joined, "--allow-fs-read=/p/root ") ||
		strings.Contains(joined, "allow-fs-write") || strings.Contains(joined, "allow-child-process") || strings.Contains(joined, "allow-worker") ||
		cmd[len(cmd)-1] != a {
		t.Errorf("command %q", cmd)
	}
	cmd = nodeworker.CommandFor("/usr/bin/node", a, "/p/root", "/cache/core/3.0.62/bundle.js")
	if !strings.Contains(strings.Join(cmd, " "), "--allow-fs-read=/cache/core/3.0.62 ") {
		t.Errorf("command %q", cmd)
	}
}
