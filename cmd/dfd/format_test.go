package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// formatFixtures are the projects whose every .sqlx is formatted and
// compiled again: the test fixtures, the real public projects, and two
// generated projects (bench/projectgen, with JiT actions; the seeds give
// different shapes).
func formatFixtures(t *testing.T) []string {
	var out []string
	for _, seed := range []int64{1, 7} {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("generated-seed%d", seed))
		if err := projectgen.Generate(dir, projectgen.Options{Actions: 150, CoreVersion: testenv.CoreVersion, JiT: true, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		out = append(out, dir)
	}
	for _, dir := range []string{filepath.Join(testenv.RepoRoot(), "testdata", "projects"), realProjectsDir()} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

// sqlKeys are the graph's fields holding SQL, where formatting may change
// whitespace, keyword case and the tokens the formatter spells out.
var sqlKeys = map[string]bool{"query": true, "incrementalQuery": true, "preOps": true, "postOps": true,
	"incrementalPreOps": true, "incrementalPostOps": true, "queries": true, "testQuery": true, "expectedOutputQuery": true}

// sameGraph compares two compiled graphs (JSON values), SQL fields by
// gsql.SameSQL and everything else exactly.
func sameGraph(t *testing.T, path, key string, a, b any) {
	t.Helper()
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			t.Errorf("%s: objects differ: %v vs %v", path, a, b)
			return
		}
		for k, v := range x {
			sameGraph(t, path+"."+k, k, v, y[k])
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			t.Errorf("%s: arrays differ", path)
			return
		}
		for i := range x {
			sameGraph(t, path, key, x[i], y[i])
		}
	case string:
		y, ok := b.(string)
		if !ok {
			t.Errorf("%s: %q vs %v", path, x, b)
			return
		}
		if x == y {
			return
		}
		if !sqlKeys[key] {
			t.Errorf("%s: %q became %q", path, x, y)
			return
		}
		if err := gsql.SameSQL(x, y); err != nil {
			t.Errorf("%s: SQL changed (%v):\n%s\n----\n%s", path, err, x, y)
		}
	default:
		if a != b {
			t.Errorf("%s: %v vs %v", path, a, b)
		}
	}
}

// Every .sqlx of every fixture and real project formatted in a copy: the
// compiled graph is the one before, up to what formatting may change in
// SQL; a second `dfd format --check` finds nothing to do.
func TestFormatFixturesKeepGraph(t *testing.T) {
	for _, src := range formatFixtures(t) {
		name := filepath.Base(src)
		t.Run(name, func(t *testing.T) {
			core := testenv.CoreVersion
			if ws, err := os.ReadFile(filepath.Join(src, "workflow_settings.yaml")); err == nil && strings.Contains(string(ws), "dataformCoreVersion") {
				core = ""
			}
			dir := testenv.ProjectCopy(t, src, core)
			before := runDFD(t, "compile", dir, "--json")
			res := runDFD(t, "format", filepath.Join(dir, "definitions"))
			if res.code != 0 {
				t.Fatalf("dfd format: exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
			}
			changed := strings.Count(string(res.stdout), "\n")
			t.Logf("%d file(s) reformatted; left as written:\n%s", changed, res.stderr)
			after := runDFD(t, "compile", dir, "--json")
			if before.code != after.code || string(before.stderr) != string(after.stderr) {
				t.Fatalf("compile before: exit %d %s\nafter: exit %d %s", before.code, before.stderr, after.code, after.stderr)
			}
			var a, b any
			if err := json.Unmarshal(before.stdout, &a); err != nil {
				t.Fatalf("graph before: %v\n%s\n%s", err, before.stdout, before.stderr)
			}
			if err := json.Unmarshal(after.stdout, &b); err != nil {
				t.Fatalf("graph after: %v", err)
			}
			sameGraph(t, "graph", "", a, b)
			if again := runDFD(t, "format", "--check", "--quiet", dir); again.code != 0 {
				t.Errorf("not idempotent: dfd format --check after formatting: exit %d\n%s", again.code, again.stdout)
			}
		})
	}
}

// dfd format --check: exit 1 and the file listed when a file would change,
// nothing written; 0 once formatted; 2 for a path that does not exist.
func TestFormatCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	messy := filepath.Join(dir, "definitions", "a.sqlx")
	clean := filepath.Join(dir, "definitions", "b.sqlx")
	commented := filepath.Join(dir, "definitions", "c.sqlx")
	broken := filepath.Join(dir, "definitions", "d.sqlx")
	for p, text := range map[string]string{
		messy:     "config { type: \"view\" }\nselect a,b from ${ref(\"x\")}\n",
		clean:     "SELECT\n  1\n",
		commented: "select a, -- kept\n b from t\n",
		broken:    "select from where\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runDFD(t, "format", "--check", dir)
	if res.code != 1 || strings.TrimSpace(string(res.stdout)) != messy+"\n"+commented {
		t.Fatalf("--check: exit %d, stdout %q; want 1 and %s, %s", res.code, res.stdout, messy, commented)
	}
	if !strings.Contains(string(res.stderr), broken+":1: GoogleSQL cannot parse it") {
		t.Errorf("--check: stderr lacks the unparsable file's message:\n%s", res.stderr)
	}
	if got, _ := os.ReadFile(messy); !strings.Contains(string(got), "select a,b") {
		t.Errorf("--check wrote the file:\n%s", got)
	}
	if res := runDFD(t, "format", dir); res.code != 0 {
		t.Fatalf("format: exit %d\n%s", res.code, res.stderr)
	}
	if got, _ := os.ReadFile(messy); string(got) != "config { type: \"view\" }\nSELECT\n  a,\n  b\nFROM\n  ${ref(\"x\")}\n" {
		t.Errorf("formatted file:\n%s", got)
	}
	if got, _ := os.ReadFile(commented); string(got) != "SELECT\n  a, -- kept\n  b\nFROM\n  t\n" {
		t.Errorf("a file with a comment inside its SQL:\n%s", got)
	}
	if got, _ := os.ReadFile(broken); string(got) != "select from where\n" {
		t.Errorf("a file GoogleSQL cannot parse changed:\n%s", got)
	}
	if res := runDFD(t, "format", "--check", dir); res.code != 0 {
		t.Errorf("--check after format: exit %d\n%s", res.code, res.stdout)
	}
	if res := runDFD(t, "format", "--check", filepath.Join(dir, "nope")); res.code != 2 {
		t.Errorf("missing path: exit %d, want 2", res.code)
	}
}

// A Windows-authored project (every .sqlx with CRLF line ends, one with a
// UTF-8 byte order mark too) is formatted like its LF twin: `format
// --check` lists the same files, `format` gives each the LF twin's result
// with CRLF line ends (and the mark) back, and the project compiles to the
// graph of the formatted LF twin, up to those line ends.
func TestFormatCRLFProject(t *testing.T) {
	for _, src := range []string{
		// The JiT fixture, not the example it was made from: the example
		// is formatted already (TestExampleIsFormatted), so it would prove
		// nothing here.
		filepath.Join(testenv.RepoRoot(), "testdata", "projects", "jit_actions"),
		filepath.Join(testenv.RepoRoot(), "testdata", "projects", "sqlx_warehouse"),
	} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			core := testenv.CoreVersion
			if ws, err := os.ReadFile(filepath.Join(src, "workflow_settings.yaml")); err == nil && strings.Contains(string(ws), "dataformCoreVersion") {
				core = ""
			}
			lf := testenv.ProjectCopy(t, src, core)
			win := testenv.ProjectCopy(t, src, core)
			var files []string // relative to the project
			err := filepath.WalkDir(filepath.Join(win, "definitions"), func(p string, d os.DirEntry, err error) error {
				if err != nil || !strings.HasSuffix(p, ".sqlx") {
					return err
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(win, p)
				text := strings.ReplaceAll(string(b), "\n", "\r\n")
				if len(files) == 0 {
					text = bom + text
				}
				files = append(files, rel)
				return os.WriteFile(p, []byte(text), 0o644)
			})
			if err != nil || len(files) < 2 {
				t.Fatalf("making the CRLF copy: %v (%d files)", err, len(files))
			}
			listed := func(dir string, out []byte) string {
				return strings.ReplaceAll(string(out), dir, "<dir>")
			}
			lfCheck := runDFD(t, "format", "--check", "--quiet", lf)
			winCheck := runDFD(t, "format", "--check", "--quiet", win)
			if winCheck.code != lfCheck.code || listed(win, winCheck.stdout) != listed(lf, lfCheck.stdout) {
				t.Fatalf("--check on CRLF: exit %d\n%s\non LF: exit %d\n%s", winCheck.code, winCheck.stdout, lfCheck.code, lfCheck.stdout)
			}
			if lfCheck.code != 1 {
				t.Fatalf("the fixture has nothing to format (exit %d): the test would prove nothing", lfCheck.code)
			}
			for _, dir := range []string{lf, win} {
				if res := runDFD(t, "format", "--quiet", dir); res.code != 0 {
					t.Fatalf("dfd format %s: exit %d\n%s", dir, res.code, res.stderr)
				}
			}
			for i, rel := range files {
				want, err := os.ReadFile(filepath.Join(lf, rel))
				if err != nil {
					t.Fatal(err)
				}
				w := strings.ReplaceAll(string(want), "\n", "\r\n")
				if i == 0 {
					w = bom + w
				}
				if got, _ := os.ReadFile(filepath.Join(win, rel)); string(got) != w {
					t.Errorf("%s: formatted CRLF file is not the LF twin's with CRLF:\n%q\nwant\n%q", rel, got, w)
				}
			}
			if again := runDFD(t, "format", "--check", "--quiet", win); again.code != 0 {
				t.Errorf("format --check after format: exit %d\n%s", again.code, again.stdout)
			}
			a, b := runDFD(t, "compile", lf, "--json"), runDFD(t, "compile", win, "--json")
			if a.code != 0 || b.code != 0 {
				t.Fatalf("compile: LF exit %d %s; CRLF exit %d %s", a.code, a.stderr, b.code, b.stderr)
			}
			// Up to line ends (JSON spells a CR \r), the byte order mark
			// (part of the file: the compile keeps it at the start of that
			// file's query; format only has to keep it) and the project's
			// path.
			norm := func(dir string, out []byte) string {
				s := strings.ReplaceAll(string(out), `\r\n`, `\n`)
				s = strings.Replace(s, bom, "", 1)
				return strings.ReplaceAll(s, dir, "<dir>")
			}
			if na, nb := norm(lf, a.stdout), norm(win, b.stdout); na != nb {
				t.Errorf("graphs differ:\n%s", lineDiff(na, nb))
			}
		})
	}
}

// bom is the UTF-8 byte order mark.
const bom = "\xef\xbb\xbf"
