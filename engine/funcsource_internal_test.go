package engine

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// allArrows lists the arrow functions of prg in source order.
func allArrows(prg *ast.Program) []*ast.ArrowFunctionLiteral {
	f := &arrowFixer{base: prg.File.Base(), seen: map[*ast.ArrowFunctionLiteral]bool{}}
	var out []*ast.ArrowFunctionLiteral
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if v.Kind() == reflect.Pointer && !v.IsNil() {
			if a, ok := v.Interface().(*ast.ArrowFunctionLiteral); ok && !f.seen[a] {
				f.seen[a] = true
				out = append(out, a)
			}
		}
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if !v.IsNil() && v.Elem().Kind() == reflect.Struct && v.Elem().Type().PkgPath() == astPkgPath {
				walk(v.Elem())
			}
		case reflect.Struct:
			if v.Type().PkgPath() == astPkgPath {
				for _, i := range fieldsOf(v.Type()) {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(prg))
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// TestArrowSourcesMatchAcorn compares, over a large corpus (the core
// bundles dfd supports and the repository's JavaScript fixtures: thousands
// of arrow functions, most of them minified), the corrected text of every
// arrow function with its span as acorn (the parser of the CLI's vm2)
// reports it, which is V8's Function.prototype.toString text.
func TestArrowSourcesMatchAcorn(t *testing.T) {
	node := testenv.Node(t)
	nodeModules := filepath.Dir(filepath.Dir(filepath.Dir(testenv.CLIBundle(t))))
	acorn := filepath.Join(nodeModules, "acorn")
	if _, err := os.Stat(acorn); err != nil {
		t.Fatalf("acorn (the CLI's parser, the oracle here) not found next to the CLI: %v", err)
	}
	corpus := map[string]string{}
	for _, v := range []string{"3.0.62", "3.0.59", "3.0.52"} {
		b, err := os.ReadFile(filepath.Join(testenv.CoreDir(t, v), "bundle.js"))
		if err != nil {
			t.Fatal(err)
		}
		corpus["core "+v] = string(b)
	}
	addJS := func(dir string) {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".js") {
				if b, err := os.ReadFile(p); err == nil && !bytes.HasPrefix(b, []byte("#!")) {
					corpus[p] = string(b)
				}
			}
			return nil
		})
	}
	for _, dir := range []string{"testdata/projects", "examples"} {
		addJS(filepath.Join(testenv.RepoRoot(), dir))
	}
	// Unminified modern JavaScript from the CLI's own dependencies (those
	// that are ES modules are skipped: neither parser takes them as scripts).
	for _, dir := range []string{"@dataform/cli", "@grpc/grpc-js/build/src", "gaxios/build", "lru-cache/dist/commonjs", "glob/dist/commonjs", "web-streams-polyfill/dist"} {
		addJS(filepath.Join(nodeModules, dir))
	}
	script := `
const acorn = require(process.argv[1]);
const walk = (n, out) => {
  if (!n || typeof n.type !== "string") return;
  if (n.type === "ArrowFunctionExpression") out.push(n);
  for (const k of Object.keys(n)) {
    const v = n[k];
    if (Array.isArray(v)) v.forEach((c) => walk(c, out));
    else if (v && typeof v === "object") walk(v, out);
  }
};
const sources = JSON.parse(require("fs").readFileSync(0, "utf8"));
const result = {};
for (const [name, src] of Object.entries(sources)) {
  const out = [];
  try {
    walk(acorn.parse(src, { ecmaVersion: "latest" }), out);
  } catch (e) {
    continue; // a fixture with an intended syntax error
  }
  out.sort((a, b) => a.start - b.start);
  result[name] = out.map((n) => src.slice(n.start, n.end));
}
process.stdout.write(JSON.stringify(result));
`
	wrapped := map[string]string{}
	for name, src := range corpus {
		wrapped[name] = wrapModule(src)
	}
	in, _ := json.Marshal(wrapped)
	cmd := exec.Command(node, "-e", script, acorn)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var want map[string][]string
	if err := json.Unmarshal(stdout.Bytes(), &want); err != nil {
		t.Fatal(err)
	}
	total, corrected := 0, 0
	for name, src := range wrapped {
		if _, ok := want[name]; !ok {
			if _, err := goja.Parse(name, src); err == nil {
				t.Errorf("%s: acorn refuses it, goja parses it", name)
			}
			continue
		}
		prg, err := goja.Parse(name, src)
		if err != nil {
			t.Logf("skipped, goja cannot parse it: %v", err)
			continue
		}
		before := map[*ast.ArrowFunctionLiteral]string{}
		arrows := allArrows(prg)
		for _, a := range arrows {
			before[a] = a.Source
		}
		fixArrowSources(prg, src)
		if len(arrows) != len(want[name]) {
			t.Errorf("%s: goja has %d arrow functions, acorn %d", name, len(arrows), len(want[name]))
			continue
		}
		bad := 0
		for i, a := range arrows {
			total++
			if a.Source != before[a] {
				corrected++
			}
			if a.Source != want[name][i] {
				if bad++; bad <= 5 {
					t.Errorf("%s: arrow function %d:\n   dfd: %q\n acorn: %q", name, i, a.Source, want[name][i])
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d arrow functions differ", name, bad)
		}
	}
	if total < 1000 {
		t.Errorf("only %d arrow functions in the corpus", total)
	}
	t.Logf("%d arrow functions in %d files, all as acorn spans them; goja's own text was cut short (or overran) in %d", total, len(corpus), corrected)
}

// BenchmarkCompileModule is the cost of the correction on core 3.0.62's
// bundle (770 kB, minified), as a worst case for a module: the walk
// (fixArrowSources) against goja's parse and compile.
func BenchmarkCompileModule(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(testenv.CoreDir(b, "3.0.62"), "bundle.js"))
	if err != nil {
		b.Fatal(err)
	}
	code := wrapModule(string(src))
	b.Run("goja.Compile", func(b *testing.B) {
		for b.Loop() {
			if _, err := goja.Compile("bundle.js", code, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fixArrowSources", func(b *testing.B) {
		prg, err := goja.Parse("bundle.js", code)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			fixArrowSources(prg, code)
		}
	})
	b.Run("compileModule", func(b *testing.B) {
		for b.Loop() {
			if _, err := compileModule("bundle.js", code); err != nil {
				b.Fatal(err)
			}
		}
	})
}
