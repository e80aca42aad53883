package engine

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"

	"github.com/dop251/goja"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// The cores in testdata; SQLX in Go must give each one's own results.
var sqlxCores = []string{"3.0.62", "3.0.59", "3.0.52"}

// sqlxCase is one compiler(code, path) call. units, when set, is the
// code as UTF-16 code units (for strings a Go string cannot hold).
type sqlxCase struct {
	name, path, code string
	units            []uint16
}

func (in sqlxCase) value(vm *goja.Runtime) goja.Value {
	if in.units != nil {
		return goja.StringFromUTF16(in.units)
	}
	return vm.ToValue(in.code)
}

// sqlxResult is compiler()'s output as code units, or the error it threw
// ("Error: message").
type sqlxResult struct {
	out []uint16
	err string
}

// sqlxPair is one core twice: with SQLX in Go and as core ships it.
type sqlxPair struct {
	version      string
	native, core *Runtime
}

func newSQLXPair(t testing.TB, version string) *sqlxPair {
	t.Helper()
	path := testenv.CoreDir(t, version) + "/bundle.js"
	nb, err := compileBundleNatives(path, version, true)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := compileBundleNatives(path, version, false)
	if err != nil {
		t.Fatal(err)
	}
	p := &sqlxPair{version: version}
	if p.native, err = nb.NewRuntime(Options{Root: os.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if p.core, err = cb.NewRuntime(Options{Root: os.TempDir()}); err != nil {
		t.Fatal(err)
	}
	return p
}

func transpileWith(r *Runtime, in sqlxCase) sqlxResult {
	v, err := r.compiler(goja.Undefined(), in.value(r.vm), r.vm.ToValue(in.path))
	if err != nil {
		if ex, ok := err.(*goja.Exception); ok {
			return sqlxResult{err: ex.Value().String()}
		}
		return sqlxResult{err: err.Error()}
	}
	s, ok := v.(goja.String)
	if !ok {
		return sqlxResult{err: fmt.Sprintf("compiler() returned %v", v)}
	}
	return sqlxResult{out: utf16Units(s)}
}

// compare reports the first difference between two results.
func (a sqlxResult) diff(b sqlxResult) string {
	if a.err != b.err {
		return fmt.Sprintf("error %q vs %q", a.err, b.err)
	}
	if slices.Equal(a.out, b.out) {
		return ""
	}
	i := 0
	for i < len(a.out) && i < len(b.out) && a.out[i] == b.out[i] {
		i++
	}
	ctx := func(u []uint16) string {
		lo, hi := max(0, i-80), min(len(u), i+80)
		return string(utf16.Decode(u[lo:hi]))
	}
	return fmt.Sprintf("output differs at code unit %d of %d/%d:\n%q\nvs\n%q", i, len(a.out), len(b.out), ctx(a.out), ctx(b.out))
}

// sqlxTricky are inputs at the lexer's and compileSqlx's edges.
func sqlxTricky() []sqlxCase {
	p := "definitions/tricky.sqlx"
	cases := []string{
		"",
		"select 1",
		"config {",
		"config { type: \"table\" }\nselect 1",
		"config { type: \"view\" } config { type: \"table\" }\nselect 1",
		"js { const a = `x${1}y`; }\nselect ${a}",
		"js { a } js { b }\nselect 1",
		"js { // comment }\n }\nselect 1",
		"js { /* } */ }\nselect 1",
		"js { 'str}' \"s}\" '\\'' \"\\\"\" }\nselect 1",
		"js { 'unterminated }\nselect 1",
		"js { `tmpl ${ {a:1}.a } \\${` \\\\ ` }\nselect 1",
		"js { `a\\${b}` }",
		"select ${ {a: '}'}.a }",
		"select '${ref(\"a\")}' \"${x}\" '''${y}''' \"\"\"${z}\"\"\"",
		"select '''a\n${b}\n''' \"\"\"c \"d\" e\"\"\"",
		"select '\\'' 'a\\\\' 'unterminated",
		"select \"\\\"\" \"a\\\\\" \"unterminated",
		"select \\` ` `` \\\\ \\n",
		"select 1 ---\nselect 2",
		"select 1\n \t---\t \nselect 2\n---",
		"select 1\r\n---\r\nselect 2\r\n",
		"select 1\n---\u00a0\u2028select 2",
		"select 1\n--- x\nselect 2",
		"select 1 -- comment `with` ${x} and '\nselect 2",
		"select 1 // not a comment in SQL\n",
		"/* block `x` ${y} \\ */ select",
		"/* unclosed",
		"/*/ x */",
		"}}}} select",
		"${",
		"${ unclosed { nested",
		"pre_operations { select 1 --- \n select 2 }\npost_operations { select `x` --- select 'y' }\nselect 3",
		"pre_operations { } } select",
		"pre_operations {}",
		"pre_operations { select '}' }",
		"pre_operations { unclosed",
		"pre_operations { a ${b} }",
		"incremental_where { a --- \n b }\nselect 1",
		"incremental_where { x } incremental_where { y }\nselect 1",
		"incremental_where { ${when(true, 'a', \"b\")} }",
		"input \"a\", \"b\" { select 1 }\nselect 2",
		"input \"a\",\n\t\"b-c\" {select 1}",
		"input \"a\" { select 1 --- select 2 }",
		"input \"a\" {}",
		"input \"x\",\"\" { select 1 }",
		"input a { select }",
		"config { type: \"operations\", hasOutput: true }\nselect 1;\n---\nselect 2;\n---\n",
		"select 'ü' -- ✓\n/* ♥ */ \"😀\" '''\U0001F600'''",
		"\ufeffselect 1",
		"select '\x96\xff' -- \xc3\n\x96",
		"select 1 -- " + strings.Repeat("\xe2\x82", 10) + "\n",
		"select\u2028--- \u2029 '\u2028' -- x\u2028y",
		"select 1\n\u3000---\u3000\nselect 2",
		"js {" + strings.Repeat("{", 300) + strings.Repeat("}", 300) + "}\nselect 1",
		"select " + strings.Repeat("${", 300) + strings.Repeat("}", 300),
	}
	var out []sqlxCase
	for i, c := range cases {
		out = append(out, sqlxCase{name: fmt.Sprintf("tricky-%d", i), path: p, code: c})
	}
	// Strings no Go string holds: lone surrogates, inside and outside strings.
	lone := []uint16{'s', 'e', 'l', 0xD800, ' ', '\'', 0xDC00, '\'', ' ', '-', '-', 0xDBFF, '\n', '$', '{', 0xDFFF, '}'}
	out = append(out, sqlxCase{name: "lone-surrogates", path: p, units: lone})
	// Other extensions do not go through the SQLX code.
	out = append(out, sqlxCase{name: "sql-file", path: "definitions/x.sql", code: "select `${x}` \\"})
	out = append(out, sqlxCase{name: "odd-path", path: "definitions/we\\ird name.sqlx", code: "select 1"})
	return out
}

// sqlxFixtures are every .sqlx file of the fixture projects and of a
// generated project.
func sqlxFixtures(t testing.TB) []sqlxCase {
	t.Helper()
	var out []sqlxCase
	root := filepath.Join(testenv.RepoRoot(), "testdata", "projects")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".sqlx") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.SplitN(filepath.ToSlash(rel), "/", 2)
		out = append(out, sqlxCase{name: rel, path: parts[1], code: string(b)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 40 {
		t.Fatalf("found %d fixture .sqlx files, want the fixtures' 40+", len(out))
	}
	gen, err := projectgen.Plan(projectgen.Options{Actions: 120, JiT: true, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range gen.Files {
		if strings.HasSuffix(name, ".sqlx") {
			out = append(out, sqlxCase{name: "generated/" + name, path: name, code: content})
		}
	}
	slices.SortFunc(out, func(a, b sqlxCase) int { return strings.Compare(a.name, b.name) })
	return out
}

func sqlxBig(size int) sqlxCase {
	return sqlxCase{name: fmt.Sprintf("big-%dKB", size>>10), path: projectgen.BigSQLXPath, code: projectgen.BigSQLX(size, 1, "dim_calendar")}
}

// compiler() of the bundle with SQLX in Go equals the unpatched bundle's,
// output and errors, on every fixture, a generated project, tricky inputs
// and a generated 256 KB file, for every core (except where goja's
// regexps differ from JavaScript's: see gojaRegexpsDiffer); and the Go
// code did the work (no silent fallback to core's).
func TestSQLXDifferential(t *testing.T) {
	inputs := append(sqlxFixtures(t), sqlxTricky()...)
	inputs = append(inputs, sqlxBig(256<<10))
	for _, v := range sqlxCores {
		t.Run(v, func(t *testing.T) {
			p := newSQLXPair(t, v)
			compiled, declined := sqlxStats.compiled.Load(), sqlxStats.declined.Load()
			errors := 0
			var deviations []string
			for _, in := range inputs {
				got, want := transpileWith(p.native, in), transpileWith(p.core, in)
				if d := got.diff(want); d != "" {
					if gojaRegexpsDiffer(utf16Units(in.value(p.native.vm).(goja.String))) {
						deviations = append(deviations, in.name) // TestSQLXMatchesNode has them
					} else {
						t.Errorf("%s: %s", in.name, d)
					}
				}
				if want.err != "" {
					errors++
				}
			}
			if len(deviations) > 0 {
				t.Logf("differ from core in goja where goja's regexps are not JavaScript's (checked against Node.js): %s", strings.Join(deviations, ", "))
			}
			nc, nd := sqlxStats.compiled.Load()-compiled, sqlxStats.declined.Load()-declined
			t.Logf("%d inputs (%d errors in core): %d compiled in Go, %d left to core", len(inputs), errors, nc, nd)
			// Every .sqlx input that core compiles, Go compiles, except
			// the trees nested too deep for Go (none here).
			sqlx := 0
			for _, in := range inputs {
				if strings.HasSuffix(in.path, ".sqlx") {
					sqlx++
				}
			}
			if int(nc) < sqlx-errors {
				t.Errorf("Go compiled %d of the %d .sqlx inputs core compiles", nc, sqlx-errors)
			}
		})
	}
}

// The lexer of every core in testdata is one Go implements, and the
// patches apply to every bundle.
func TestSQLXPatchesApply(t *testing.T) {
	for _, v := range sqlxCores {
		b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
		if err != nil {
			t.Fatal(err)
		}
		patched, level := patchSQLX(string(b))
		if level != SQLXInGo {
			t.Errorf("core %s: level %d, want SQLXInGo", v, level)
		}
		if got := SQLXSupport(testenv.CoreDir(t, v) + "/bundle.js"); got != SQLXInGo {
			t.Errorf("core %s: SQLXSupport %d, want SQLXInGo", v, got)
		}
		for _, want := range []string{"__dfdSqlxLex(", "__dfdSqlxRegister(", "__dfdSqlxCompile("} {
			if strings.Count(patched, want) != 1 {
				t.Errorf("core %s: %s appears %d times in the patched bundle, want 1", v, want, strings.Count(patched, want))
			}
		}
		// The other patches still apply after this one.
		after := patchQuadraticConcat(patched)
		if !strings.Contains(after, "__dfdFlush(){") || !strings.Contains(after, `t.map((p=>p.join("")))`) {
			t.Errorf("core %s: the concatenation patches no longer apply after patchSQLX", v)
		}
	}
}

// Unknown code is left alone: a change anywhere in the code a patch
// depends on turns that patch off, and the bundle still works.
func TestSQLXUnknownCoreUnpatched(t *testing.T) {
	b, err := os.ReadFile(testenv.CoreDir(t, "3.0.62") + "/bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	code := string(b)
	for _, tc := range []struct {
		name, old, new string
		lex, compile   bool // which patches still apply
	}{
		{"moo changed", `"boolean"==typeof(new RegExp).sticky;`, `"boolean"==typeof(new RegExp).sticky;void 0;`, false, false},
		{"create changed", `throw new Error("Undefined token type encountered.")`, `throw new Error("Undefined token type!")`, false, false},
		{"class changed", `children(){return this.allChildren.slice()}`, `children(){return this.allChildren.slice(0)}`, true, false},
		{"compile changed", `"'incremental_where' code blocks may only contain a single SQL statement."`, `"one statement only"`, true, false},
		{"escapes changed", `[a.SyntaxTreeNodeType.SQL_COMMENT,e=>e.replace(/` + "`" + `/g,`, `[a.SyntaxTreeNodeType.SQL_COMMENT,e=>e.replace(/x/g,`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Count(code, tc.old) != 1 {
				t.Fatalf("%q is not in the bundle once", tc.old)
			}
			changed := strings.Replace(code, tc.old, tc.new, 1)
			patched, level := patchSQLX(changed)
			want := map[[2]bool]SQLXLevel{{false, false}: SQLXInCore, {true, false}: SQLXLexerInGo, {true, true}: SQLXInGo}[[2]bool{tc.lex, tc.compile}]
			if level != want {
				t.Errorf("level %d, want %d", level, want)
			}
			if got := strings.Contains(patched, "__dfdSqlxLex("); got != tc.lex {
				t.Errorf("lexer patch applied: %v, want %v", got, tc.lex)
			}
			if got := strings.Contains(patched, "__dfdSqlxCompile("); got != tc.compile {
				t.Errorf("compile patch applied: %v, want %v", got, tc.compile)
			}
		})
	}
}

// A lexer whose states use a pattern Go does not implement is left to moo
// (the natives return null), with core's results.
func TestSQLXUnknownLexerDeclined(t *testing.T) {
	b, err := os.ReadFile(testenv.CoreDir(t, "3.0.62") + "/bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	// One pattern changed in a way the fingerprints do not cover (the
	// states are checked at run time): "--" comments end at "!" too.
	const old = `e[f.SINGLE_LINE_COMMENT]=/--.*?$/`
	code := string(b)
	if strings.Count(code, old) != 1 {
		t.Fatalf("%q is not in the bundle once", old)
	}
	path := filepath.Join(t.TempDir(), "bundle.js")
	if err := os.WriteFile(path, []byte(strings.Replace(code, old, `e[f.SINGLE_LINE_COMMENT]=/--[^!]*?$/`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bundle, err := compileBundleNatives(path, "3.0.62", true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := bundle.NewRuntime(Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	declined := sqlxStats.declined.Load()
	res := transpileWith(r, sqlxCase{path: "definitions/a.sqlx", code: "select 1 -- a comment\n"})
	if res.err != "" || !strings.Contains(string(utf16.Decode(res.out)), "-- a comment") {
		t.Fatalf("compile: %+v", res)
	}
	if sqlxStats.declined.Load()-declined < 2 {
		t.Errorf("the natives did not decline the unknown lexer")
	}
}

// nodeSQLXScript runs core's compiler() in Node.js on a JSON list of
// inputs and writes the results (output as base64 of UTF-16LE, or the
// error as String(e)).
const nodeSQLXScript = `
const fs = require("fs");
const [bundle, input, output] = process.argv.slice(2);
const core = require(bundle);
const items = JSON.parse(fs.readFileSync(input, "utf8"));
const results = items.map((it) => {
  let code = it.code;
  if (it.units) {
    code = "";
    for (const u of it.units) code += String.fromCharCode(u);
  }
  try {
    return { out: Buffer.from(core.compiler(code, it.path), "utf16le").toString("base64") };
  } catch (e) {
    return { err: String(e) };
  }
});
fs.writeFileSync(output, JSON.stringify(results));
`

// nodeTranspile runs the inputs through core's compiler() in Node.js.
func nodeTranspile(t *testing.T, version string, inputs []sqlxCase) []sqlxResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to compare with core in Node.js: %v", err)
	}
	dir := t.TempDir()
	type item struct {
		Path  string   `json:"path"`
		Code  string   `json:"code,omitempty"`
		Units []uint16 `json:"units,omitempty"`
	}
	items := make([]item, len(inputs))
	for i, in := range inputs {
		items[i] = item{in.path, in.code, in.units}
	}
	b, _ := json.Marshal(items)
	script, in, out := filepath.Join(dir, "run.js"), filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	if err := os.WriteFile(script, []byte(nodeSQLXScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--stack-size=4000", script, testenv.CoreDir(t, version)+"/bundle.js", in, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, msg)
	}
	b, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct{ Out, Err string }
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	res := make([]sqlxResult, len(raw))
	for i, r := range raw {
		if r.Err != "" {
			res[i].err = r.Err
			continue
		}
		le, err := base64.StdEncoding.DecodeString(r.Out)
		if err != nil {
			t.Fatal(err)
		}
		res[i].out = make([]uint16, len(le)/2)
		for k := range res[i].out {
			res[i].out[k] = binary.LittleEndian.Uint16(le[2*k:])
		}
	}
	return res
}

// engineError reports whether err is thrown by the engine rather than by
// core (V8 and goja word those differently; the class must match).
func engineError(err string) (string, bool) {
	for _, c := range []string{"TypeError", "RangeError", "SyntaxError", "ReferenceError"} {
		if strings.HasPrefix(err, c+":") {
			return c, true
		}
	}
	return "", false
}

// compiler() with SQLX in Go equals core's compiler() in Node.js (what the
// official CLI runs) on the same inputs, the kept fuzz corpus and
// generated 2 MB files (and 10 MB with DFD_SQLX_HUGE=1), for every core.
func TestSQLXMatchesNode(t *testing.T) {
	inputs := append(sqlxFixtures(t), sqlxTricky()...)
	inputs = append(inputs, sqlxFuzzCorpus(t)...)
	inputs = append(inputs, sqlxBig(2<<20))
	if os.Getenv("DFD_SQLX_HUGE") == "1" {
		inputs = append(inputs, sqlxBig(10<<20))
	}
	for _, v := range sqlxCores {
		t.Run(v, func(t *testing.T) {
			p := newSQLXPair(t, v)
			want := nodeTranspile(t, v, inputs)
			for i, in := range inputs {
				got := transpileWith(p.native, in)
				if gc, ok := engineError(got.err); ok {
					if wc, _ := engineError(want[i].err); wc != gc {
						t.Errorf("%s: error %q in goja, %q in Node", in.name, got.err, want[i].err)
					}
					continue
				}
				if d := got.diff(want[i]); d != "" {
					t.Errorf("%s: %s", in.name, d)
				}
			}
		})
	}
}

// sqlxFuzzCorpus is the kept corpus of FuzzSQLX.
func sqlxFuzzCorpus(t testing.TB) []sqlxCase {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", "FuzzSQLX")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []sqlxCase
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		code, ok := parseFuzzString(string(b))
		if !ok {
			t.Fatalf("%s: not a corpus file of one string", e.Name())
		}
		out = append(out, sqlxCase{name: "fuzz/" + e.Name(), path: "definitions/fuzz.sqlx", code: code})
	}
	if len(out) == 0 {
		t.Fatal("the fuzz corpus is empty")
	}
	return out
}

// parseFuzzString reads a "go test fuzz v1" file holding one string.
func parseFuzzString(s string) (string, bool) {
	head, body, ok := strings.Cut(s, "\n")
	if !ok || head != "go test fuzz v1" {
		return "", false
	}
	body = strings.TrimSpace(body)
	if !strings.HasPrefix(body, "string(") || !strings.HasSuffix(body, ")") {
		return "", false
	}
	var v string
	if _, err := fmt.Sscanf(body[len("string("):len(body)-1], "%q", &v); err != nil {
		return "", false
	}
	return v, true
}

// nodeOracleScript answers compiler(code, path) requests, one JSON line
// each ({units: base64 of UTF-16LE, path}), with a JSON line as
// nodeSQLXScript's results.
const nodeOracleScript = `
const core = require(process.argv[2]);
const rl = require("readline").createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const it = JSON.parse(line);
  const b = Buffer.from(it.units, "base64");
  let code = "";
  for (let i = 0; i + 1 < b.length; i += 2) code += String.fromCharCode(b.readUInt16LE(i));
  let res;
  try {
    res = { out: Buffer.from(core.compiler(code, it.path), "utf16le").toString("base64") };
  } catch (e) {
    res = { err: String(e) };
  }
  process.stdout.write(JSON.stringify(res) + "\n");
});
`

// A nodeOracle is core's compiler() in a Node.js process kept for many
// requests.
type nodeOracle struct {
	cmd *exec.Cmd
	in  *json.Encoder
	out *json.Decoder
}

func startNodeOracle(t testing.TB, version string) *nodeOracle {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to compare with core in Node.js: %v", err)
	}
	script := filepath.Join(os.TempDir(), fmt.Sprintf("dfd-sqlx-oracle-%d.js", os.Getpid()))
	if err := os.WriteFile(script, []byte(nodeOracleScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--stack-size=4000", script, testenv.CoreDir(t, version)+"/bundle.js")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &nodeOracle{cmd: cmd, in: json.NewEncoder(stdin), out: json.NewDecoder(stdout)}
}

func (o *nodeOracle) transpile(t testing.TB, units []uint16, path string) sqlxResult {
	le := make([]byte, 2*len(units))
	for i, u := range units {
		binary.LittleEndian.PutUint16(le[2*i:], u)
	}
	if err := o.in.Encode(map[string]string{"units": base64.StdEncoding.EncodeToString(le), "path": path}); err != nil {
		t.Fatalf("node oracle: %v", err)
	}
	var r struct{ Out, Err string }
	if err := o.out.Decode(&r); err != nil {
		t.Fatalf("node oracle: %v", err)
	}
	if r.Err != "" {
		return sqlxResult{err: r.Err}
	}
	b, err := base64.StdEncoding.DecodeString(r.Out)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]uint16, len(b)/2)
	for k := range out {
		out[k] = binary.LittleEndian.Uint16(b[2*k:])
	}
	return sqlxResult{out: out}
}

// gojaRegexpsDiffer reports whether code has a line terminator other than
// \n: goja runs core's lexer regexes on Go's regexp, whose multiline $ and
// . know only \n, where JavaScript's also know \r, U+2028 and U+2029. On
// such input core in goja differs from core under the CLI, and SQLX in Go
// gives the CLI's results (TestSQLXMatchesNode, FuzzSQLX).
func gojaRegexpsDiffer(units []uint16) bool {
	for _, c := range units {
		if c == '\r' || c == 0x2028 || c == 0x2029 {
			return true
		}
	}
	return false
}

var (
	fuzzOnce   sync.Once
	fuzzPair   *sqlxPair
	fuzzOracle *nodeOracle
)

// FuzzSQLX compares compiler() with SQLX in Go with core's compiler() in
// Node.js (what the CLI runs) and, where goja's regexps are not known to
// differ from JavaScript's, with the unpatched core in goja; core 3.0.62
// (all three cores in testdata have the same SQLX code, by the
// fingerprints). The corpus in testdata/fuzz/FuzzSQLX runs with the tests.
func FuzzSQLX(f *testing.F) {
	for _, in := range sqlxTricky() {
		if in.units == nil && strings.HasSuffix(in.path, ".sqlx") && len(in.code) < 200 {
			f.Add(in.code)
		}
	}
	f.Fuzz(func(t *testing.T, code string) {
		fuzzOnce.Do(func() {
			fuzzPair = newSQLXPair(t, "3.0.62")
			fuzzOracle = startNodeOracle(t, "3.0.62")
		})
		if fuzzPair == nil || fuzzOracle == nil {
			t.Fatal("no runtimes")
		}
		in := sqlxCase{path: "definitions/fuzz.sqlx", code: code}
		got := transpileWith(fuzzPair.native, in)
		units := utf16Units(in.value(fuzzPair.native.vm).(goja.String))
		if !gojaRegexpsDiffer(units) {
			if d := got.diff(transpileWith(fuzzPair.core, in)); d != "" {
				t.Errorf("%q: vs core in goja: %s", code, d)
			}
		}
		want := fuzzOracle.transpile(t, units, in.path)
		if gc, ok := engineError(got.err); ok {
			if wc, _ := engineError(want.err); wc != gc {
				t.Errorf("%q: error %q in goja, %q in Node", code, got.err, want.err)
			}
			return
		}
		if d := got.diff(want); d != "" {
			t.Errorf("%q: vs core in Node.js: %s", code, d)
		}
	})
}
