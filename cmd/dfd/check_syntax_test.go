package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// A statement GoogleSQL cannot parse is an error of `dfd check` (exit 1)
// at the token the parser stopped at, in the .sqlx or .js that wrote it —
// not at 1:1 of the file; a kind of statement BigQuery runs and GoogleSQL
// lacks is a hint naming the kind, and no error.
func TestCheckCommandSyntaxErrors(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	for name, text := range map[string]string{
		"definitions/broken/selec.sqlx":          "config { type: \"view\" }\n\n-- a typo\nSELEC customer_id\nFROM ${ref(\"customers\")}\n",
		"definitions/broken/trailing_where.sqlx": "config {\n  type: \"view\"\n}\n\nSELECT customer_id\nFROM ${ref(\"customers\")}\nWHERE\n",
		"definitions/broken/unclosed.js":         "publish(\"unclosed\", { type: \"view\" }).query(\n  (ctx) => `\nSELECT customer_id\nFROM ${ctx.ref(\"customers\")}\nWHERE country = 'FR\n`\n);\n",
		"definitions/broken/second_part.sqlx":    "config { type: \"operations\" }\n\nSELECT 1\n---\nDELETE FROM ${ref(\"customers\")} WHERE customer_id IS NULL AND\n",
		// Both variants of an incremental table fail: one error.
		"definitions/broken/incremental.sqlx":     "config { type: \"incremental\" }\n\nSELECT customer_id\nFROM ${ref(\"customers\")}\n${when(incremental(), \"WHERE customer_id > 0\")}\nGROUP\n",
		"definitions/broken/project_options.sqlx": "config { type: \"operations\" }\n\nALTER PROJECT `acme-shop` SET OPTIONS (`region-us.default_time_zone` = 'Europe/Paris')\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := runDFD(t, "check", dir, "--metadata", sqlCheckMetadata(), "--verbose")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	out := string(res.stdout)
	for _, want := range []string{
		`definitions/broken/selec.sqlx:4:1: error: Syntax error: Unexpected identifier "SELEC" (acme-shop.shop.selec)`,
		`definitions/broken/trailing_where.sqlx:7:6: error: Syntax error: Unexpected end of script (acme-shop.shop.trailing_where)`,
		`definitions/broken/unclosed.js:5:17: error: Syntax error: Unclosed string literal (acme-shop.shop.unclosed)`,
		`definitions/broken/second_part.sqlx:5:62: error: Syntax error: Unexpected end of script (queries[1]) (acme-shop.shop.second_part)`,
		`definitions/broken/incremental.sqlx:6:6: error: Syntax error: Expected @ for hint or keyword BY but got end of script (acme-shop.shop.incremental)`,
		`definitions/broken/project_options.sqlx:1:1: hint: SQL not checked: GoogleSQL does not know ALTER PROJECT statements yet; not analysed (queries[0]) (acme-shop.shop.project_options)`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, ": error: Syntax error"); n != 5 {
		t.Errorf("%d syntax errors, want the 5 planted ones:\n%s", n, out)
	}
	if n := strings.Count(out, ": error: "); n != 6+5 {
		t.Errorf("%d errors, want sql_check's 6 and the 5 syntax errors:\n%s", n, out)
	}

	// A compilation error comes first: core makes the missing ref()
	// nothing, and the SQL left would not parse. As in the editor, the
	// SQL of a project with compilation errors is not analysed at all,
	// and dfd check says so.
	broken := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	path := filepath.Join(broken, "definitions", "broken", "missing_ref.sqlx")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("config { type: \"view\" }\n\nSELECT * FROM ${ref(\"nowhere\")} AS n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runDFD(t, "check", broken, "--metadata", sqlCheckMetadata(), "--verbose")
	if res.code != 1 || !strings.Contains(string(res.stdout), `definitions/broken/missing_ref.sqlx:3:`) ||
		strings.Contains(string(res.stdout), "Syntax error") || !strings.Contains(string(res.stderr), "SQL not analysed: fix the project's") {
		t.Errorf("a missing ref: exit %d, want 1 with the compilation error, no syntax error, and SQL not analysed:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// TestNoSyntaxErrorsOnPublishedSQL parses every statement of every real
// project (testdata/realprojects), every fixture (testdata/projects) and
// the shipped example, as compiled, with GoogleSQL: published, working
// Dataform code BigQuery runs, so a syntax error on any of it is a false
// one. It logs how many statements were parsed and, by kind, those dfd
// leaves to BigQuery (kinds GoogleSQL's parser lacks, or doubts): the
// measurement behind "syntax errors are errors". JiT actions' SQL,
// produced when their code runs, is covered by the check tests
// (TestRealProjectsCheckNoFalseErrors, TestCheckCommandExample).
func TestNoSyntaxErrorsOnPublishedSQL(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	type proj struct {
		name, dir, core string
		flags           []string
	}
	var projects []proj
	entries, err := os.ReadDir(realProjectsDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if d.IsDir() {
			projects = append(projects, proj{name: "realprojects/" + d.Name(), dir: filepath.Join(realProjectsDir(), d.Name()), core: testenv.CoreVersion})
		}
	}
	seen := map[string]bool{}
	for _, fx := range fixtureExpectations(t) {
		if seen[fx.name] {
			continue // another core version's line
		}
		seen[fx.name] = true
		src := testenv.Fixture(fx.name)
		core := fx.cores[0]
		if _, err := os.Stat(filepath.Join(src, "package.json")); os.IsNotExist(err) {
			core = "" // dataformCoreVersion: dfd installs core itself
		}
		projects = append(projects, proj{name: "projects/" + fx.name, dir: src, core: core, flags: fixtureFlags(t, src)})
	}
	projects = append(projects, proj{name: "examples/clickstream", dir: filepath.Join(testenv.RepoRoot(), "examples", "clickstream")})

	ctx := context.Background()
	var statements, parsed, syntaxErrors int
	doubts := map[string]int{} // the hint's reason → statements
	for _, p := range projects {
		dir := testenv.ProjectCopy(t, p.dir, p.core)
		res := runDFD(t, append([]string{"compile", dir, "--json"}, p.flags...)...)
		var g dataformpb.CompiledGraph
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(res.stdout, &g); err != nil {
			t.Fatalf("%s: compile --json (exit %d): %v\n%s", p.name, res.code, err, res.stderr)
		}
		broken := map[string]bool{} // files with a compilation error: their SQL is what core made of them
		for _, e := range g.GetGraphErrors().GetCompilationErrors() {
			broken[e.GetFileName()] = true
		}
		type stmt struct{ file, sql string }
		var all []stmt
		add := func(file string, sqls ...string) {
			for _, s := range sqls {
				if strings.TrimSpace(s) != "" && !broken[file] {
					all = append(all, stmt{file, s})
				}
			}
		}
		for _, a := range g.GetTables() {
			add(a.GetFileName(), a.GetQuery(), a.GetIncrementalQuery())
			add(a.GetFileName(), a.GetPreOps()...)
			add(a.GetFileName(), a.GetPostOps()...)
			add(a.GetFileName(), a.GetIncrementalPreOps()...)
			add(a.GetFileName(), a.GetIncrementalPostOps()...)
		}
		for _, a := range g.GetOperations() {
			add(a.GetFileName(), a.GetQueries()...)
		}
		for _, a := range g.GetAssertions() {
			add(a.GetFileName(), a.GetQuery())
		}
		// One catalog per project, with no tables: every statement is
		// parsed before dfd looks for the tables it reads.
		cat, err := gsql.NewCatalog(g.GetProjectConfig().GetDefaultDatabase())
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range all {
			an, err := cat.Analyze(ctx, s.sql)
			if err != nil {
				t.Fatalf("%s: %s: %v", p.name, s.file, err)
			}
			if an.Empty {
				continue
			}
			statements++
			n++
			switch {
			case an.Problem != nil && (an.Problem.Kind == gsql.SyntaxError || strings.Contains(an.Problem.Message, "supported object type")):
				syntaxErrors++
				t.Errorf("%s: %s: %s at %d:%d of\n%s", p.name, s.file, an.Problem.Message, an.Problem.Line, an.Problem.Column, s.sql)
			case strings.HasPrefix(an.Skipped, "GoogleSQL does not know "), strings.HasSuffix(an.Skipped, "; not analysed"):
				doubts[an.Skipped]++
			default:
				parsed++
			}
		}
		t.Logf("%s: %d statement(s)", p.name, n)
	}
	t.Logf("%d project(s), %d statement(s): %d parsed, %d syntax error(s), %d left to BigQuery", len(projects), statements, parsed, syntaxErrors, statements-parsed-syntaxErrors)
	for why, n := range doubts {
		t.Logf("  %3d  %s", n, why)
	}
	if statements < 1000 {
		t.Errorf("only %d statements: the projects no longer compile as they did", statements)
	}
}
