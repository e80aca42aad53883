package source

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// layoutCases are SQLX files covering every block kind and lexer state.
var layoutCases = map[string]string{
	"plain.sqlx":        "SELECT 1",
	"config_only.sqlx":  "config {\n  type: \"view\",\n  description: \"a } in a string\"\n}\nSELECT 1\n",
	"unterminated.sqlx": "config {\n  type: \"table\"\n\nSELECT a\nFROM b\n",
	"js.sqlx": "config { type: \"table\" }\njs {\n  const x = `a ${1 + {a: 1}.a} }`;\n  // a } in a comment\n}\n" +
		"SELECT ${x} AS a -- comment with ${notjs}\n/* block } */\nFROM ${ref(\"t\")}\njs { const y = 2; }\nWHERE 1 = 1\n",
	"ops.sqlx": "config { type: \"incremental\" }\npre_operations {\n  DECLARE x INT64;\n  ---\n  SET x = 1\n}\n" +
		"post_operations {\n  SELECT '${self()}'\n}\nincremental_where {\n  ts > (SELECT MAX(ts) FROM ${self()})\n}\n" +
		"SELECT * FROM ${ref(\"src\")}\n---\nSELECT 2\n",
	"strings.sqlx": "config { type: \"operations\" }\nSELECT 'it''s ${name()}', \"${x}\", '''multi\nline ${y} ''', \"\"\"a\n\"\"\"\n---\nSELECT `a`.b, '\\\\'\n",
	"test.sqlx":    "config { type: \"test\", dataset: \"x\" }\ninput \"a\" {\n  SELECT 1 AS x\n}\ninput \"b\" { SELECT 2 }\nSELECT 1 AS x\n",
	"utf8.sqlx":    "config {\n  description: \"Umsätze 📈 pro Tag\"\n}\nSELECT 'é' AS c, ${ref(\"ü\")}\n",
}

// coreCompile runs core's own SQLX compiler on files, in one node process.
func coreCompile(t *testing.T, bundle string, files []string) map[string]string {
	t.Helper()
	script := `const core = require(process.argv[1]); const fs = require("fs"); const out = {};
for (const f of process.argv.slice(2)) out[f] = core.compiler(fs.readFileSync(f, "utf8"), f);
process.stdout.write(JSON.stringify(out));`
	out, err := exec.Command("node", append([]string{"-e", script, bundle}, files...)...).Output()
	if err != nil {
		t.Fatalf("core compiler: %v", err)
	}
	var res map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func normalizeLine(s string) string {
	return strings.ReplaceAll(s, `\`, "")
}

// TestCompileLayoutMatchesCore compiles SQLX files with core's own compiler
// (in node) and checks that CompileLayout predicts the generated code line
// by line, so that error positions map back to the right SQLX line.
func TestCompileLayoutMatchesCore(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is needed to run core's compiler")
	}
	bundle := filepath.Join(testenv.CoreDir(t, testenv.CoreVersion), "bundle.js")
	dir := t.TempDir()
	files := map[string]string{}
	for name, text := range layoutCases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		files[p] = text
	}
	fixtures, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata", "projects", "*", "definitions", "*", "*.sqlx"))
	more, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "testdata", "projects", "*", "definitions", "*.sqlx"))
	for _, f := range append(fixtures, more...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	compiled := coreCompile(t, bundle, paths)
	for path, text := range files {
		want := strings.Split(compiled[path], "\n")
		layout := CompileLayout([]byte(text))
		got := strings.Split(layout.Text(), "\n")
		if len(got) != len(want) {
			t.Errorf("%s: layout has %d lines, core generated %d\ncore:\n%s\nlayout:\n%s", filepath.Base(path), len(got), len(want),
				strings.Join(want, "\n"), strings.Join(got, "\n"))
			continue
		}
		for i := range want {
			g, w := got[i], want[i]
			if strings.Contains(g, `"NAME"`) || strings.Contains(g, "sqlStatementCount: N") || strings.Contains(g, `["INPUT"]`) {
				continue
			}
			if normalizeLine(g) != normalizeLine(w) {
				t.Errorf("%s line %d:\n got %q\nwant %q", filepath.Base(path), i+1, g, w)
			}
		}
	}
}

func TestSourceOffset(t *testing.T) {
	src := "config {\n  type: \"view\"\n}\n\nSELECT 1\nFROM ${ref(\"missing\")}\n"
	c := CompileLayout([]byte(src))
	m := NewMapper([]byte(src))
	// Line 5 of the generated code is "    ...{" (the config's brace).
	off, ok := c.SourceOffset(5, 8)
	if !ok || m.LineOf(off) != 0 || src[off] != '{' {
		t.Errorf("SourceOffset(5, 8) = %d, %v; want the config brace", off, ok)
	}
	// The ref is on generated line 23 (see TestCompileLayoutMatchesCore).
	text := strings.Split(c.Text(), "\n")
	for i, l := range text {
		if strings.Contains(l, "missing") {
			col := strings.Index(l, "ref") + 1
			off, ok := c.SourceOffset(i+1, col)
			if !ok || !strings.HasPrefix(src[off:], "ref(") {
				t.Errorf("SourceOffset(%d, %d) = %d, %v", i+1, col, off, ok)
			}
		}
	}
	if _, ok := c.SourceOffset(2, 3); ok {
		t.Error("template text mapped to the source")
	}
}
