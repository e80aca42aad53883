package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// The SARIF 2.1.0 schema, copied from the OASIS TC's repository (see
// testdata/sarif/SOURCE.md).
var sarifSchemaFile = filepath.Join(testenv.RepoRoot(), "cmd", "dfd", "testdata", "sarif", "sarif-schema-2.1.0.json")

// validateSARIF checks out against the official SARIF 2.1.0 JSON schema.
func validateSARIF(t *testing.T, out []byte) map[string]any {
	t.Helper()
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(sarifSchemaFile)
	if err != nil {
		t.Fatalf("compiling the SARIF schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("SARIF output is not JSON: %v\n%s", err, out)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("SARIF output does not validate against the 2.1.0 schema: %v\n%s", err, out)
	}
	var log map[string]any
	if err := json.Unmarshal(out, &log); err != nil {
		t.Fatal(err)
	}
	return log
}

// The schema must reject what is not SARIF, or the validation above
// proves nothing.
func TestSARIFSchemaRejects(t *testing.T) {
	good, err := json.Marshal(sarifReport([]checkFinding{{File: "a.sqlx", Line: 1, Column: 1, EndLine: 1, EndColumn: 3, Severity: "error", Message: "m", Code: "unknown-column"}}, "", false, nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	validateSARIF(t, good)
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(sarifSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ name, from, to string }{
		{"wrong version", `"version":"2.1.0"`, `"version":"2.0.0"`},
		{"unknown level", `"level":"error","message"`, `"level":"fatal","message"`},
		{"line 0", `"startLine":1`, `"startLine":0`},
		{"unknown property", `"ruleId"`, `"rule"`},
	} {
		b := []byte(strings.Replace(string(good), bad.from, bad.to, 1))
		if bytes.Equal(b, good) {
			t.Fatalf("%s: %s not in %s", bad.name, bad.from, good)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if sch.Validate(inst) == nil {
			t.Errorf("%s: the schema accepts %s", bad.name, b)
		}
	}
}

// ghLine is a parsed workflow command.
type ghLine struct {
	command string
	props   map[string]string
	message string
}

var ghRE = regexp.MustCompile(`^::(error|warning|notice) ([^:]*)::(.*)$`)

func ghUnescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

func parseGitHub(t *testing.T, out []byte) []ghLine {
	t.Helper()
	var lines []ghLine
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		if l == "" {
			continue
		}
		m := ghRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a workflow command: %q", l)
		}
		g := ghLine{command: m[1], props: map[string]string{}, message: ghUnescape(m[3])}
		for _, p := range strings.Split(m[2], ",") {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				t.Fatalf("property %q of %q", p, l)
			}
			g.props[k] = ghUnescape(v)
		}
		lines = append(lines, g)
	}
	return lines
}

// dfd check --format github on the planted errors of sql_check: one
// ::error per finding of the text output, on its file, line and column,
// the files named from the working directory (the repository's root in a
// CI job), so GitHub puts each annotation on its line.
func TestCheckFormatGitHub(t *testing.T) {
	repo := t.TempDir()
	dir := filepath.Join(repo, "warehouse", "dataform")
	if err := testenv.CopyTree(testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion), dir); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	text := runDFD(t, "check", "warehouse/dataform", "--metadata", sqlCheckMetadata())
	gh := runDFD(t, "check", "warehouse/dataform", "--metadata", sqlCheckMetadata(), "--format", "github")
	if text.code != 1 || gh.code != 1 {
		t.Fatalf("exit %d (text), %d (github), want 1:\n%s", text.code, gh.code, gh.stderr)
	}
	// file:line:column: severity: message (action)
	textRE := regexp.MustCompile(`^([^:]+):(\d+):(\d+): (\w+): (.*)$`)
	textLines := strings.Split(strings.TrimSpace(string(text.stdout)), "\n")
	got := parseGitHub(t, gh.stdout)
	if len(got) != 6 || len(textLines) != 6 {
		t.Fatalf("%d annotations, %d text lines; want the 6 planted errors:\n%s\n%s", len(got), len(textLines), gh.stdout, text.stdout)
	}
	for i, g := range got {
		m := textRE.FindStringSubmatch(textLines[i])
		if m == nil {
			t.Fatalf("text line %q", textLines[i])
		}
		want := map[string]string{"file": "warehouse/dataform/" + m[1], "line": m[2], "col": m[3]}
		for k, v := range want {
			if g.props[k] != v {
				t.Errorf("annotation %d: %s=%q, want %q (text: %s)", i, k, g.props[k], v, textLines[i])
			}
		}
		if g.command != m[4] {
			t.Errorf("annotation %d: ::%s, want ::%s", i, g.command, m[4])
		}
		if first, _, _ := strings.Cut(g.message, "\n"); first != m[5] {
			t.Errorf("annotation %d: message %q, want %q", i, first, m[5])
		}
		if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(g.props["file"]))); err != nil {
			t.Errorf("annotation %d names a file that is not there: %v", i, err)
		}
	}
	// Two planted errors in full: the span, the rule in the title, and
	// the analyzer's further lines (the candidate signatures) kept in the
	// message, escaped so the command stays on one line.
	for _, want := range []string{
		"::error file=warehouse/dataform/definitions/marts/customer_totals.sqlx,line=9,col=7,endLine=9,endColumn=18,title=dfd unknown-column::Unrecognized name: amount_cent; Did you mean amount_cents? (acme-shop.shop.customer_totals)\n",
		"::error file=warehouse/dataform/definitions/marts/order_flags.sqlx,line=8,col=26,endLine=8,endColumn=38,title=dfd type-mismatch::No matching signature for operator + (acme-shop.shop.order_flags)%0AArgument types: INT64, STRING%0A",
	} {
		if !strings.Contains(string(gh.stdout), want) {
			t.Errorf("github output lacks %q:\n%s", want, gh.stdout)
		}
	}
	if !bytes.Equal(text.stderr, gh.stderr) {
		t.Errorf("stderr differs between text and github:\n%s\n---\n%s", text.stderr, gh.stderr)
	}
}

// dfd check --format sarif: valid SARIF 2.1.0, one result per planted
// error at its place, each rule listed with its help text.
func TestCheckFormatSARIF(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	text := runDFD(t, "check", dir, "--metadata", sqlCheckMetadata(), "--json")
	res := runDFD(t, "check", dir, "--metadata", sqlCheckMetadata(), "--format", "sarif")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", res.code, res.stderr)
	}
	log := validateSARIF(t, res.stdout)
	var sarif sarifLog
	if err := json.Unmarshal(res.stdout, &sarif); err != nil {
		t.Fatal(err)
	}
	var findings []checkFinding
	if err := json.Unmarshal(text.stdout, &findings); err != nil {
		t.Fatal(err)
	}
	run := sarif.Runs[0]
	if len(run.Results) != 6 || len(findings) != 6 {
		t.Fatalf("%d results, %d findings; want the 6 planted errors", len(run.Results), len(findings))
	}
	want := map[string]bool{}
	for _, f := range findings {
		want[fmt.Sprintf("%s:%d:%d-%d:%d %s %s", f.File, f.Line, f.Column, f.EndLine, f.EndColumn, f.Code, f.Severity)] = true
	}
	for _, r := range run.Results {
		loc := r.Locations[0].PhysicalLocation
		k := fmt.Sprintf("%s:%d:%d-%d:%d %s %s", loc.ArtifactLocation.URI, loc.Region.StartLine, loc.Region.StartColumn, loc.Region.EndLine, loc.Region.EndColumn, r.RuleID, r.Level)
		if !want[k] {
			t.Errorf("result %s is none of the findings %v", k, want)
		}
		delete(want, k)
		if !strings.HasSuffix(loc.ArtifactLocation.URI, ".sqlx") && !strings.HasSuffix(loc.ArtifactLocation.URI, ".js") {
			t.Errorf("result placed in %s, not in a .sqlx or .js file", loc.ArtifactLocation.URI)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(loc.ArtifactLocation.URI))); err != nil {
			t.Errorf("result names a file that is not there: %v", err)
		}
		rule := run.Tool.Driver.Rules[r.RuleIndex]
		if rule.ID != r.RuleID || rule.Help.Text == "" || rule.ShortDescription.Text == "" {
			t.Errorf("result's rule %d is %+v, want %s with help text", r.RuleIndex, rule, r.RuleID)
		}
	}
	if run.ColumnKind != "utf16CodeUnits" {
		t.Errorf("columnKind %q", run.ColumnKind)
	}
	if inv := run.Invocations[0]; !inv.ExecutionSuccessful || inv.ExitCode != 1 {
		t.Errorf("invocation %+v", inv)
	}
	if log["version"] != "2.1.0" {
		t.Errorf("version %v", log["version"])
	}
}

// --format sarif where the check could not look: the causes are the
// invocation's notifications and the run is not successful (exit 3), so
// a code-scanning page does not show a clean project.
func TestCheckFormatSARIFUnchecked(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	res := runDFD(t, "check", dir, "--offline", "--format", "sarif")
	if res.code != exitUnchecked && res.code != exitFindings {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	validateSARIF(t, res.stdout)
	var sarif sarifLog
	if err := json.Unmarshal(res.stdout, &sarif); err != nil {
		t.Fatal(err)
	}
	inv := sarif.Runs[0].Invocations[0]
	if inv.ExitCode != res.code || len(inv.Notifications) == 0 || !strings.Contains(inv.Notifications[0].Message.Text, "not checked") {
		t.Errorf("exit %d, invocation %+v", res.code, inv)
	}
	gh := runDFD(t, "check", dir, "--offline", "--format", "github")
	var causes int
	for _, g := range parseGitHub(t, gh.stdout) {
		if g.props["title"] == "dfd check could not check" {
			causes++
		}
	}
	if causes == 0 || gh.code != res.code {
		t.Errorf("exit %d, %d cause annotations:\n%s", gh.code, causes, gh.stdout)
	}
}

// --fail-on warning makes a warning fail the check; by default only
// errors do. --json is --format json; contradicting or unknown values
// are usage errors.
func TestCheckFailOnAndFormatFlags(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	for _, sub := range []string{"marts", "staging", "ops", "assertions"} {
		if err := os.RemoveAll(filepath.Join(dir, "definitions", sub)); err != nil {
			t.Fatal(err)
		}
	}
	// A column neither grouped nor aggregated: a warning (a rule of
	// BigQuery's that GoogleSQL applies the same way).
	if err := os.WriteFile(filepath.Join(dir, "definitions", "by_country.sqlx"), []byte("config { type: \"view\" }\n\nSELECT customer_id, country\nFROM ${ref(\"customers\")}\nGROUP BY customer_id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	md := sqlCheckMetadata()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 0},
		{[]string{"--fail-on", "error"}, 0},
		{[]string{"--fail-on", "warning"}, 1},
		{[]string{"--fail-on=warning", "--format", "github"}, 1},
		{[]string{"--fail-on", "hint"}, 2},
		{[]string{"--format", "xml"}, 2},
		{[]string{"--json", "--format", "sarif"}, 2},
	} {
		res := runDFD(t, append([]string{"check", dir, "--metadata", md}, tc.args...)...)
		if res.code != tc.code {
			t.Errorf("%v: exit %d, want %d:\n%s\n%s", tc.args, res.code, tc.code, res.stdout, res.stderr)
		}
		if tc.code == 2 && !strings.Contains(string(res.stderr), "dfd check: --") {
			t.Errorf("%v: usage error not said: %s", tc.args, res.stderr)
		}
	}
	res := runDFD(t, "check", dir, "--metadata", md, "--format", "github")
	got := parseGitHub(t, res.stdout)
	if len(got) != 1 || got[0].command != "warning" || got[0].props["line"] != "3" || got[0].props["title"] != "dfd sql" {
		t.Errorf("github output %q", res.stdout)
	}
	a := runDFD(t, "check", dir, "--metadata", md, "--json")
	b := runDFD(t, "check", dir, "--metadata", md, "--format", "json")
	c := runDFD(t, "check", dir, "--metadata", md, "--format", "json", "--json")
	if !bytes.Equal(a.stdout, b.stdout) || !bytes.Equal(a.stdout, c.stdout) || !strings.Contains(string(a.stdout), `"severity": "warning"`) {
		t.Errorf("--json and --format json differ:\n%s\n%s\n%s", a.stdout, b.stdout, c.stdout)
	}
}

// dfd format --check in the CI formats: an unformatted file is an error
// at its first changed line, a part left as written a warning (failing
// only with --fail-on warning); SARIF validates.
func TestFormatCheckFormats(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	files := map[string]string{
		"defs/a.sqlx":  "config { type: \"view\" }\n\n-- per country\nselect country,sum(clicks) as clicks from ${ref(\"daily_clicks\")} group by country\n",
		"defs/ok.sqlx": "config { type: \"view\" }\n\nSELECT\n  1 AS x\n",
		"defs/ph.sqlx": "config { type: \"view\" }\n\nselect ${when(true, \"a,\", \"\")} b from t\n",
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gh := runDFD(t, "format", "--check", "--format", "github", "defs")
	if gh.code != 1 {
		t.Fatalf("exit %d:\n%s", gh.code, gh.stderr)
	}
	got := parseGitHub(t, gh.stdout)
	if len(got) != 2 {
		t.Fatalf("%d annotations:\n%s", len(got), gh.stdout)
	}
	if g := got[0]; g.command != "error" || g.props["file"] != "defs/a.sqlx" || g.props["line"] != "4" || g.props["title"] != "dfd unformatted" {
		t.Errorf("unformatted file's annotation %+v", g)
	}
	// The formatter leaves the placeholder's line as written; dfd format
	// says where.
	if g := got[1]; g.command != "warning" || g.props["file"] != "defs/ph.sqlx" || g.props["title"] != "dfd format-left-as-written" {
		t.Errorf("left-as-written annotation %+v", g)
	} else if n, _ := strconv.Atoi(g.props["line"]); n != 3 {
		t.Errorf("left-as-written annotation on line %d", n)
	}
	text := runDFD(t, "format", "--check", "defs/ph.sqlx")
	if text.code != 0 || len(text.stdout) != 0 {
		t.Errorf("ph.sqlx: exit %d, stdout %q: a part left as written fails only with --fail-on warning", text.code, text.stdout)
	}
	if res := runDFD(t, "format", "--check", "--fail-on", "warning", "defs/ph.sqlx"); res.code != 1 {
		t.Errorf("--fail-on warning: exit %d, want 1", res.code)
	}
	sarif := runDFD(t, "format", "--check", "--format", "sarif", "defs")
	if sarif.code != 1 {
		t.Fatalf("sarif: exit %d:\n%s", sarif.code, sarif.stderr)
	}
	validateSARIF(t, sarif.stdout)
	if res := runDFD(t, "format", "--format", "sarif", "defs"); res.code != 2 || !strings.Contains(string(res.stderr), "needs --check") {
		t.Errorf("--format sarif without --check: exit %d, %s", res.code, res.stderr)
	}
	if b, _ := os.ReadFile("defs/a.sqlx"); string(b) != files["defs/a.sqlx"] {
		t.Errorf("--check changed a file")
	}
}

func TestGitHubEscaping(t *testing.T) {
	var b bytes.Buffer
	printGitHub(&b, []checkFinding{{File: "a,b:c%.sqlx", Line: 2, Column: 3, EndLine: 4, EndColumn: 1, Severity: "info", Message: "50% off\nnext", Code: "sql"}}, "sub/", false)
	want := "::notice file=sub/a%2Cb%3Ac%25.sqlx,line=2,col=3,endLine=4,title=dfd sql::50%25 off%0Anext\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
	g := parseGitHub(t, b.Bytes())[0]
	if g.props["file"] != "sub/a,b:c%.sqlx" || g.message != "50% off\nnext" {
		t.Errorf("round trip: %+v", g)
	}
}
