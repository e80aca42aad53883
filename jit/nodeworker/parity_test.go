package nodeworker_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/graphjson"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
	dfproject "github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The compile parity test: for every fixture of testdata/projects and every
// core it is meant for, the node worker's CoreExecutionResponse must be
// byte-identical to the goja engine's (which cmd/dfd's parity test proves
// equal to the official CLI's). Graphs with compilation errors carry
// engine-made stacks and messages, so for those the decoded graphs are
// compared as cmd/dfd's parity test compares dfd's with the CLI's.

type fixtureExpectation struct {
	name   string
	cores  []string
	errors bool
}

var expectationRE = regexp.MustCompile(`^([a-z0-9_]+): cores=([0-9.,]+) expect=(ok|errors)( errors=[0-9]+)? counts=(\S+)$`)

func fixtureExpectations(t *testing.T) []fixtureExpectation {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "testdata", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fixtureExpectation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := expectationRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		out = append(out, fixtureExpectation{name: m[1], cores: strings.Split(m[2], ","), errors: m[3] == "errors"})
	}
	if len(out) == 0 {
		t.Fatal("no fixture expectations found in testdata/README.md")
	}
	return out
}

// fixtureOverrides reads <fixture>/dfd-test-flags.txt (the CLI's override
// flags, one per line) into compile.Overrides.
func fixtureOverrides(t *testing.T, dir string) compile.Overrides {
	var o compile.Overrides
	b, err := os.ReadFile(filepath.Join(dir, "dfd-test-flags.txt"))
	if os.IsNotExist(err) {
		return o
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimPrefix(l, "--"), "=")
		switch name {
		case "default-database":
			o.DefaultDatabase = value
		case "default-schema":
			o.DefaultSchema = value
		case "default-location":
			o.DefaultLocation = value
		case "assertion-schema":
			o.AssertionSchema = value
		case "database-suffix":
			o.DatabaseSuffix = value
		case "schema-suffix":
			o.SchemaSuffix = value
		case "table-prefix":
			o.TablePrefix = value
		case "vars":
			o.Vars = compile.ParseVars(value)
		case "disable-assertions":
			o.DisableAssertions = true
		case "default-reservation":
			o.DefaultReservation = value
		default:
			t.Fatalf("unknown flag %q in %s/dfd-test-flags.txt", l, dir)
		}
	}
	return o
}

var engineErrorRE = regexp.MustCompile(`(?m)^(SyntaxError|TypeError|ReferenceError|RangeError):`)

// normalize drops what may differ between two engines: stack texts, and the
// message of an engine-made error (its class must still match).
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if k == "stack" {
				continue
			}
			out[k] = normalize(val)
		}
		if stack, ok := x["stack"].(string); ok {
			if m := engineErrorRE.FindStringSubmatch(stack); m != nil {
				out["message"] = "<" + m[1] + " worded by the engine>"
			}
		}
		if msg, ok := x["message"].(string); ok {
			if m := engineErrorRE.FindStringSubmatch(msg); m != nil {
				out["message"] = "<" + m[1] + " worded by the engine>"
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

func graphValue(t *testing.T, resp []byte) (any, *compile.Result) {
	t.Helper()
	r, err := compile.Decode(resp)
	if err != nil {
		t.Fatal(err)
	}
	js, err := graphjson.Marshal((&dataformpb.CompiledGraph{}).ProtoReflect().Descriptor(), r.GraphWire)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	return v, r
}

// gojaCompile runs the request in the goja engine, in this process.
func gojaCompile(t *testing.T, core *dfproject.Core, root string, overlay map[string][]byte, req []byte) []byte {
	t.Helper()
	bundle, err := engine.LoadBundle(core.BundlePath, core.Version)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := bundle.NewRuntime(engine.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	files, closeFiles, err := engine.OpenFiles(root, overlay)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFiles()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := rt.Compile(ctx, files, req)
	if err != nil {
		t.Fatalf("goja: %v", err)
	}
	return resp
}

// compareResponses checks the node worker's response against goja's.
func compareResponses(t *testing.T, gojaResp, nodeResp []byte, errorsExpected bool) {
	t.Helper()
	gv, gr := graphValue(t, gojaResp)
	nv, nr := graphValue(t, nodeResp)
	if len(gr.Errors()) > 0 != errorsExpected {
		t.Errorf("goja: %d compilation errors, expected errors: %v: %v", len(gr.Errors()), errorsExpected, gr.Errors())
	}
	if len(nr.Errors()) != len(gr.Errors()) {
		t.Errorf("node: %d compilation errors, goja %d:\nnode: %v\ngoja: %v", len(nr.Errors()), len(gr.Errors()), nr.Errors(), gr.Errors())
	}
	if !errorsExpected {
		if !bytes.Equal(gojaResp, nodeResp) {
			t.Errorf("responses are not byte-identical (%d vs %d bytes); the graphs (-goja +node):\n%s", len(gojaResp), len(nodeResp), cmp.Diff(gv, nv))
		}
		return
	}
	if d := cmp.Diff(normalize(gv), normalize(nv)); d != "" {
		t.Errorf("graphs differ (-goja +node):\n%s", d)
	}
	if t.Failed() {
		for i, e := range nr.Errors() {
			t.Logf("node error %d: %s: %s", i, e.GetFileName(), e.GetMessage())
		}
	}
}

func TestCompileParity(t *testing.T) {
	needNode(t)
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	var identical, compared int
	for _, fx := range fixtureExpectations(t) {
		for _, core := range fx.cores {
			t.Run(fx.name+"@"+core, func(t *testing.T) {
				src := testenv.Fixture(fx.name)
				install := core
				if _, err := os.Stat(filepath.Join(src, "package.json")); os.IsNotExist(err) {
					install = ""
				}
				root := testenv.ProjectCopy(t, src, install)
				p, err := dfproject.Open(root)
				if err != nil {
					t.Fatal(err)
				}
				c, err := (&dfproject.CoreResolver{}).Resolve(context.Background(), p)
				if err != nil {
					t.Fatal(err)
				}
				if c.Version != core {
					t.Fatalf("resolved core %s, want %s", c.Version, core)
				}
				paths, err := p.FilePaths()
				if err != nil {
					t.Fatal(err)
				}
				req, err := compile.Request(root, paths, fixtureOverrides(t, src), time.Minute)
				if err != nil {
					t.Fatal(err)
				}
				gojaResp := gojaCompile(t, c, root, nil, req)
				pool := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, BundlePath: c.BundlePath, CoreVersion: c.Version})
				// Twice: the second compile reads core's compiler() output and
				// the module scripts from the worker's caches.
				for i := 0; i < 2; i++ {
					res, err := pool.Compile(context.Background(), jit.CompileJob{Request: req})
					if err != nil {
						t.Fatalf("node (compile %d): %v", i+1, err)
					}
					compareResponses(t, gojaResp, res.Response, fx.errors)
					compared++
					if bytes.Equal(gojaResp, res.Response) {
						identical++
					}
				}
			})
		}
	}
	t.Logf("%d node compiles compared with goja, %d byte-identical (the others are the error fixtures, compared normalized)", compared, identical)
}

// TestCompileOverlayParity: unsaved buffers replace and add files.
func TestCompileOverlayParity(t *testing.T) {
	needNode(t)
	for _, core := range []string{"3.0.62", "3.0.52"} {
		t.Run(core, func(t *testing.T) {
			root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), core)
			p, err := dfproject.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			paths, err := p.FilePaths()
			if err != nil {
				t.Fatal(err)
			}
			var sqlx string
			for _, f := range paths {
				if strings.HasSuffix(f, ".sqlx") && strings.HasPrefix(f, "definitions/") {
					sqlx = f
					break
				}
			}
			overlay := map[string][]byte{
				"definitions/unsaved_new.sqlx": []byte("config { type: \"view\", description: \"only in the editor\" }\nselect 42 as answer"),
				"includes/unsaved_helper.js":   []byte("module.exports = { k: 7 };"),
				"definitions/unsaved_js.js":    []byte("const h = require('includes/unsaved_helper'); const q = require('includes/unsaved_pkg'); publish('unsaved_js').query('select ' + h.k + ' + ' + q.m);"),
				// New files in new folders: a folder of unsaved files is a
				// folder, for definitions and for require.
				"definitions/unsaved_dir/unsaved_deep.sqlx": []byte("config { type: \"view\" }\nselect 1 as one"),
				"includes/unsaved_pkg/index.js":             []byte("module.exports = { m: 9 };"),
			}
			// An existing file, changed in the editor.
			orig, err := os.ReadFile(filepath.Join(root, sqlx))
			if err != nil {
				t.Fatal(err)
			}
			overlay[sqlx] = append(append([]byte(nil), orig...), []byte("\n-- edited in the editor\n")...)
			paths = append(paths, "definitions/unsaved_new.sqlx", "includes/unsaved_helper.js", "definitions/unsaved_js.js",
				"definitions/unsaved_dir/unsaved_deep.sqlx", "includes/unsaved_pkg/index.js")
			req, err := compile.Request(root, paths, compile.Overrides{}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			c := &dfproject.Core{Version: core, BundlePath: workertest.BundlePath(root), Dir: filepath.Dir(workertest.BundlePath(root))}
			gojaResp := gojaCompile(t, c, root, overlay, req)
			pool := nodeWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1, CoreVersion: core})
			res, err := pool.Compile(context.Background(), jit.CompileJob{Request: req, Overlay: overlay})
			if err != nil {
				t.Fatal(err)
			}
			compareResponses(t, gojaResp, res.Response, false)
			_, r := graphValue(t, res.Response)
			found := 0
			for _, tb := range r.Graph.GetTables() {
				switch tb.GetTarget().GetName() {
				case "unsaved_new", "unsaved_js", "unsaved_deep":
					found++
				}
			}
			if bytes.Contains(res.Response, []byte("edited in the editor")) {
				found++
			}
			if found != 4 {
				t.Errorf("the overlay's files show %d times in the graph, want 4 (errors: %v)", found, r.Errors())
			}
			// Without the overlay, the disk's content again (no stale cache).
			req2, err := compile.Request(root, paths[:len(paths)-5], compile.Overrides{}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			res2, err := pool.Compile(context.Background(), jit.CompileJob{Request: req2})
			if err != nil {
				t.Fatal(err)
			}
			compareResponses(t, gojaCompile(t, c, root, nil, req2), res2.Response, false)
		})
	}
}
