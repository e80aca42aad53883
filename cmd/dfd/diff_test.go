package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dfdtools/dfd/changes"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// gitRun runs git in dir with a fixed identity and dates, failing the test
// on error.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=dfd", "-c", "user.email=dfd@localhost", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editFile replaces old by new in the file, which must hold old once.
func editFile(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), old); n != 1 {
		t.Fatalf("%s holds %q %d times, want once:\n%s", rel, old, n, b)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

const diffClicks = `config {
  type: "table",
  description: "Clicks, typed.",
  columns: {
    click_id: "The click.",
    visitor_id: "Who clicked."
  }
}

SELECT
  click_id,
  visitor_id,
  country,
  clicked_at
FROM
  ${ref("raw_clicks")}
`

const diffVisitors = `config {
  type: "view"
}

SELECT
  visitor_id,
  COUNT(*) AS clicks,
  MAX(clicked_at) AS last_click
FROM
  ${ref("clicks")}
GROUP BY visitor_id
`

// diffStep is one commit of the fixture history: edit makes it, want is
// what dfd diff HEAD~1 HEAD reports, one changeKey each.
type diffStep struct {
	name string
	edit func(t *testing.T, dir string)
	want []string
}

// changeKey is a change as the test expects it: the action's last name,
// its status and category, the columns and config fields that changed,
// and its readers with how they fare at HEAD.
func changeKey(c changes.Change) string {
	short := func(s string) string { return s[strings.LastIndexByte(s, '.')+1:] }
	var cols, cfg, imp []string
	for _, col := range c.Columns {
		cols = append(cols, col.Column+":"+col.Change)
	}
	for _, cf := range c.Config {
		cfg = append(cfg, cf.Field)
	}
	seen := map[string]bool{}
	for _, im := range c.Impact {
		k := short(im.Action)
		if im.Column != "" {
			k += "." + im.Column
		}
		k += ":" + im.AtHead
		if !seen[k] {
			seen[k] = true
			imp = append(imp, k)
		}
	}
	sort.Strings(cols)
	sort.Strings(cfg)
	sort.Strings(imp)
	key := short(c.Action) + " " + c.Status + " " + string(c.Category)
	for _, part := range []struct {
		name string
		list []string
	}{{"columns", cols}, {"config", cfg}, {"impact", imp}} {
		if len(part.list) > 0 {
			key += " " + part.name + "=" + strings.Join(part.list, ",")
		}
	}
	return key
}

func diffFixtureSteps() []diffStep {
	return []diffStep{
		{"layout by hand", func(t *testing.T, dir string) {
			writeFile(t, dir, "definitions/visitors.sqlx", "config {\n  type: \"view\"\n}\n\n-- one row per visitor\nselect visitor_id, count(*) as clicks,\n    max(clicked_at) AS last_click\nfrom ${ref(\"clicks\")} group by visitor_id\n")
		}, []string{"visitors modified metadata-only"}},
		{"dfd format", func(t *testing.T, dir string) {
			before, _ := os.ReadFile(filepath.Join(dir, "definitions", "visitors.sqlx"))
			if res := runDFD(t, "format", dir); res.code != 0 {
				t.Fatalf("dfd format: exit %d\n%s", res.code, res.stderr)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "definitions", "visitors.sqlx"))
			if bytes.Equal(before, after) {
				t.Fatal("dfd format changed nothing: the step would test nothing")
			}
		}, []string{"visitors modified metadata-only"}},
		{"add an action", func(t *testing.T, dir string) {
			writeFile(t, dir, "definitions/sessions.sqlx", "config {\n  type: \"table\"\n}\n\nSELECT\n  click_id,\n  1 AS n\nFROM\n  ${ref(\"clicks\")}\n")
		}, []string{"sessions added non-breaking columns=click_id:added,n:added"}},
		{"add a column", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", "  country,\n", "  country,\n  campaign_id,\n")
		}, []string{"clicks modified non-breaking columns=campaign_id:added"}},
		{"retype a column read downstream", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", "  clicked_at\n", "  DATE(clicked_at) AS clicked_at\n")
		}, []string{
			"clicks modified breaking columns=clicked_at:type impact=visitors.last_click:clean",
			"visitors modified non-breaking columns=last_click:type",
		}},
		{"rename a column read downstream", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", "  visitor_id,\n", "  visitor_id AS visitor,\n")
		}, []string{"clicks modified breaking columns=visitor:renamed impact=visitors.visitor_id:errors"}},
		{"follow the rename downstream", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/visitors.sqlx", "SELECT\n  visitor_id,", "SELECT\n  visitor AS visitor_id,")
			editFile(t, dir, "definitions/visitors.sqlx", "GROUP BY visitor_id", "GROUP BY visitor")
		}, []string{"visitors modified non-breaking"}},
		{"remove a column nothing reads", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", "  campaign_id,\n", "")
		}, []string{"clicks modified non-breaking columns=campaign_id:removed"}},
		{"descriptions", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", `"Clicks, typed."`, `"Clicks, typed, one row each."`)
			editFile(t, dir, "definitions/clicks.sqlx", `"The click."`, `"The click's id."`)
		}, []string{"clicks modified metadata-only columns=click_id:description config=description"}},
		{"tags", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/visitors.sqlx", "type: \"view\"", "type: \"view\",\n  tags: [\"daily\"]")
		}, []string{"visitors modified metadata-only config=tags"}},
		{"add an incremental table", func(t *testing.T, dir string) {
			writeFile(t, dir, "definitions/click_log.sqlx", "config {\n  type: \"incremental\",\n  uniqueKey: [\"click_id\"],\n  bigquery: {\n    partitionBy: \"clicked_at\",\n    clusterBy: [\"country\"]\n  }\n}\n\nSELECT\n  click_id,\n  clicked_at,\n  country\nFROM\n  ${ref(\"clicks\")}\n")
		}, []string{"click_log added non-breaking columns=click_id:added,clicked_at:added,country:added"}},
		{"partitioning of an incremental table", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/click_log.sqlx", `partitionBy: "clicked_at"`, `partitionBy: "DATE_TRUNC(clicked_at, MONTH)"`)
		}, []string{"click_log modified breaking config=partitionBy"}},
		{"unique key", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/click_log.sqlx", `uniqueKey: ["click_id"]`, `uniqueKey: ["click_id", "country"]`)
		}, []string{"click_log modified non-breaking config=uniqueKey"}},
		{"view to table", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/visitors.sqlx", `type: "view"`, `type: "table"`)
		}, []string{"visitors modified non-breaking config=type"}},
		{"assertions", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", `type: "table",`, "type: \"table\",\n  assertions: {\n    nonNull: [\"click_id\"]\n  },")
		}, []string{"clicks modified non-breaking config=assertions"}},
		{"dependencies", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/visitors.sqlx", `tags: ["daily"]`, "tags: [\"daily\"],\n  dependencies: [\"campaigns\"]")
		}, []string{"visitors modified non-breaking config=dependencies"}},
		{"disable an action read downstream", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", `type: "table",`, "type: \"table\",\n  disabled: true,")
		}, []string{"clicks modified breaking config=disabled impact=click_log.click_id:clean,click_log.clicked_at:clean,click_log.country:clean,sessions.click_id:clean,visitors.last_click:clean,visitors.visitor_id:clean"}},
		{"enable it again", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/clicks.sqlx", "\n  disabled: true,", "")
		}, []string{"clicks modified non-breaking config=disabled"}},
		{"rename an action", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/sessions.sqlx", `type: "table"`, "type: \"table\",\n  name: \"visit_sessions\"")
		}, []string{"visit_sessions renamed non-breaking"}},
		{"mode", func(t *testing.T, dir string) {
			editFile(t, dir, "definitions/visitors.sqlx", "max(clicked_at) AS last_click", "ARRAY_AGG(clicked_at) AS last_click")
		}, []string{"visitors modified non-breaking columns=last_click:mode"}},
		{"remove an action nothing reads", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "definitions", "sessions.sqlx")); err != nil {
				t.Fatal(err)
			}
		}, []string{"visit_sessions removed non-breaking"}},
	}
}

// diffFixture is examples/clickstream with two AoT actions more, in a
// git repository of its own: the base commit on main.
func diffFixture(t *testing.T) string {
	t.Helper()
	needGit(t)
	dir := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), "")
	writeFile(t, dir, "definitions/clicks.sqlx", diffClicks)
	writeFile(t, dir, "definitions/visitors.sqlx", diffVisitors)
	gitRun(t, dir, "init", "-q", "-b", "main")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "base")
	return dir
}

// decodeDiff reads dfd diff --format json.
func decodeDiff(t *testing.T, out []byte) *changes.Report {
	t.Helper()
	var rep changes.Report
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("dfd diff --format json: %v\n%s", err, out)
	}
	return &rep
}

// A history with one commit per kind of change: dfd diff of each commit
// against its parent reports exactly the expected changes and categories,
// in JSON (checked against docs/diff.schema.json) and in the other
// formats, and --fail-on breaking exits 1 exactly on the breaking ones.
func TestDiffFixtureHistory(t *testing.T) {
	dir := diffFixture(t)
	schema := diffSchema(t)
	for i, step := range diffFixtureSteps() {
		step.edit(t, dir)
		gitRun(t, dir, "add", "-A")
		gitRun(t, dir, "commit", "-q", "-m", step.name)
		res := runDFD(t, "diff", "HEAD~1", "HEAD", "--project", dir, "--metadata", filepath.Join(dir, "metadata.json"), "--no-jit", "--format", "json", "--fail-on", "breaking")
		breaking := false
		for _, w := range step.want {
			breaking = breaking || strings.Contains(w, " breaking")
		}
		wantCode := 0
		if breaking {
			wantCode = 1
		}
		if res.code != wantCode {
			t.Errorf("step %d (%s): exit %d, want %d\n%s", i+1, step.name, res.code, wantCode, res.stderr)
		}
		validateDiffJSON(t, schema, res.stdout)
		rep := decodeDiff(t, res.stdout)
		var got []string
		for _, c := range rep.Changes {
			got = append(got, changeKey(c))
		}
		sort.Strings(got)
		want := append([]string(nil), step.want...)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("step %d (%s):\n got: %s\nwant: %s\nstderr: %s", i+1, step.name, strings.Join(got, "\n      "), strings.Join(want, "\n      "), res.stderr)
			continue
		}
		checkDiffFormats(t, step.name, rep)
	}
}

// checkDiffFormats renders rep in the other formats and checks that each
// names every change under its category.
func checkDiffFormats(t *testing.T, step string, rep *changes.Report) {
	t.Helper()
	for _, format := range []string{"text", "markdown", "github"} {
		var buf bytes.Buffer
		if err := writeDiff(&buf, rep, nil, format, ""); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := buf.String()
		for _, c := range rep.Changes {
			switch format {
			case "text":
				// Under its category's heading.
				at := strings.Index(out, "\n"+string(c.Category)+":\n")
				if at < 0 || !strings.Contains(out[at:], "  "+c.Action+" (") {
					t.Errorf("%s: text: %s not under %q:\n%s", step, c.Action, c.Category, out)
				}
			case "markdown":
				title := map[changes.Category]string{changes.Breaking: "Breaking", changes.NonBreaking: "Non-breaking", changes.MetadataOnly: "Metadata-only"}[c.Category]
				at := strings.Index(out, "### "+title+" (")
				if at < 0 || !strings.Contains(out[at:], "| `"+c.Action+"` |") {
					t.Errorf("%s: markdown: %s not in the %s table:\n%s", step, c.Action, title, out)
				}
				if len(c.Columns)+len(c.Config)+len(c.Impact)+len(c.Statements) > 0 && !strings.Contains(out, "<details><summary><code>"+c.Action+"</code></summary>") {
					t.Errorf("%s: markdown: no details of %s:\n%s", step, c.Action, out)
				}
			case "github":
				title := ghProp("dfd diff: " + string(c.Category) + ": " + c.Action)
				errors, notices := 0, 0
				for _, line := range strings.Split(out, "\n") {
					if !strings.Contains(line, "file="+ghProp(c.File)+",") || !strings.Contains(line, ",title="+title+"::") {
						continue
					}
					switch {
					case strings.HasPrefix(line, "::error "):
						errors++
					case strings.HasPrefix(line, "::notice "):
						notices++
					}
				}
				if c.Category == changes.Breaking && errors == 0 || c.Category != changes.Breaking && (errors > 0 || notices == 0) {
					t.Errorf("%s: github: %s (%s) has %d error and %d notice annotations:\n%s", step, c.Action, c.Category, errors, notices, out)
				}
			}
		}
	}
}

func diffSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(testenv.RepoRoot(), "docs", "diff.schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("diff.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("diff.schema.json")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

func validateDiffJSON(t *testing.T, s *jsonschema.Schema, out []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("dfd diff --format json is not JSON: %v\n%s", err, out)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("dfd diff --format json does not follow docs/diff.schema.json: %v\n%s", err, out)
	}
}

// Through the command, in every format: a branch off main with a
// commit and an unsaved-to-git edit in the working tree (the defaults:
// BASE the merge base with main, HEAD the working tree), JiT actions
// analysed on both sides.
func TestDiffCommandFormats(t *testing.T) {
	dir := diffFixture(t)
	gitRun(t, dir, "checkout", "-q", "-b", "feature")
	editFile(t, dir, "definitions/clicks.sqlx", "  country,\n", "  country,\n  campaign_id,\n")
	gitRun(t, dir, "commit", "-q", "-am", "add campaign_id")
	// Not committed: the working tree is HEAD.
	editFile(t, dir, "definitions/clicks.sqlx", "  visitor_id,\n", "  visitor_id AS visitor,\n")
	md := filepath.Join(dir, "metadata.json")

	res := runDFD(t, "diff", "--project", dir, "--metadata", md, "--format", "json")
	if res.code != 0 {
		t.Fatalf("json: exit %d\n%s", res.code, res.stderr)
	}
	validateDiffJSON(t, diffSchema(t), res.stdout)
	rep := decodeDiff(t, res.stdout)
	if !strings.HasPrefix(rep.Base, "merge base with main (") || rep.Head != "working tree" {
		t.Errorf("base %q, head %q", rep.Base, rep.Head)
	}
	var got []string
	for _, c := range rep.Changes {
		got = append(got, changeKey(c))
	}
	want := "clicks modified breaking columns=campaign_id:added,visitor:renamed impact=visitors.visitor_id:errors"
	if strings.Join(got, "\n") != want {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	// The JiT actions were analysed on both sides: their schemas were
	// compared and found equal, so no note says otherwise.
	for _, n := range rep.Notes {
		if strings.Contains(n, "daily_clicks") {
			t.Errorf("a JiT action was not compared: %s", n)
		}
	}

	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"dfd diff: merge base with main (", " → working tree: 1 breaking, 0 non-breaking, 0 metadata-only\n", "\nbreaking:\n  acme-clickstream.clicks.clicks (table, definitions/clicks.sqlx:", "column visitor_id renamed to visitor", "impact: acme-clickstream.clicks.visitors.visitor_id reads visitor_id; at HEAD: errors: definitions/visitors.sqlx:6:3: Unrecognized name: visitor_id"}},
		{"markdown", []string{"## dfd diff: merge base with main (", "### Breaking (1)\n\n| Action | Kind | Change | Why | File |", "| `acme-clickstream.clicks.clicks` | table | modified | read downstream by acme-clickstream.clicks.visitors | `definitions/clicks.sqlx` |", "<details><summary><code>acme-clickstream.clicks.clicks</code></summary>"}},
		{"github", []string{"::error file=definitions/clicks.sqlx,line=12,title=dfd diff%3A breaking%3A acme-clickstream.clicks.clicks::column visitor_id renamed to visitor%0Aread downstream by acme-clickstream.clicks.visitors.visitor_id (errors at HEAD)\n", "::notice file=definitions/clicks.sqlx,line=14,title=dfd diff%3A breaking%3A acme-clickstream.clicks.clicks::column campaign_id added (STRING)\n"}},
	} {
		res := runDFD(t, "diff", "--project", dir, "--metadata", md, "--format", tc.format, "--fail-on", "breaking")
		if res.code != 1 {
			t.Errorf("%s --fail-on breaking: exit %d, want 1\n%s", tc.format, res.code, res.stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(res.stdout), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.format, w, res.stdout)
			}
		}
	}
}

// Usage errors exit 2; a project outside git, or a revision git does
// not know, exit 3 (could not compare), saying why.
func TestDiffCommandErrors(t *testing.T) {
	needGit(t)
	noGit := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), "")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"a", "b", "c"}, 2, "at most two revisions"},
		{[]string{"--format", "yaml"}, 2, `--format "yaml"`},
		{[]string{"--fail-on", "everything"}, 2, `--fail-on "everything"`},
		{[]string{"--project", noGit, "--offline"}, 3, "is not in a git repository"},
	} {
		res := runDFD(t, append([]string{"diff"}, tc.args...)...)
		if res.code != tc.code || !strings.Contains(string(res.stderr), tc.want) {
			t.Errorf("dfd diff %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), res.code, res.stderr, tc.code, tc.want)
		}
	}
	dir := diffFixture(t)
	res := runDFD(t, "diff", "no-such-rev", "--project", dir, "--offline")
	if res.code != 3 || !strings.Contains(string(res.stderr), `"no-such-rev" names no commit`) {
		t.Errorf("unknown revision: exit %d, stderr %s", res.code, res.stderr)
	}
	// The same commit on both sides: nothing changed, exit 0 even with
	// --fail-on metadata-only.
	res = runDFD(t, "diff", "HEAD", "HEAD", "--project", dir, "--offline", "--fail-on", "metadata-only")
	if res.code != 0 || !strings.Contains(string(res.stdout), "no change") {
		t.Errorf("HEAD HEAD: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// A project in a subdirectory of its repository, added by the change:
// the base has no project there (every action is added), and the GitHub
// annotations name files from the repository's top.
func TestDiffProjectInSubdirectory(t *testing.T) {
	needGit(t)
	repo, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, repo, "README.md", "a repository with a Dataform project in warehouse/\n")
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "readme")
	dir := filepath.Join(repo, "warehouse")
	if err := testenv.CopyTree(filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), dir); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "definitions/clicks.sqlx", diffClicks)
	gitRun(t, repo, "checkout", "-q", "-b", "feature")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "the project")

	res := runDFD(t, "diff", "--project", dir, "--metadata", filepath.Join(dir, "metadata.json"), "--no-jit", "--format", "json")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	rep := decodeDiff(t, res.stdout)
	added := map[string]bool{}
	for _, c := range rep.Changes {
		if c.Status != changes.Added || c.Category != changes.NonBreaking {
			t.Errorf("%s: %s %s, want added non-breaking", c.Action, c.Status, c.Category)
		}
		added[c.Action] = true
	}
	for _, want := range []string{"acme-clickstream.clicks.clicks", "acme-clickstream.clicks.top_countries", "acme-collector.landing.raw_clicks"} {
		if !added[want] {
			t.Errorf("%s is not reported added: %v", want, added)
		}
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "no Dataform project in warehouse/") {
		t.Errorf("no note that the base has no project: %q", rep.Notes)
	}

	// Edited since: a column renamed, annotated at warehouse/….
	gitRun(t, repo, "checkout", "-q", "main")
	gitRun(t, repo, "merge", "-q", "--ff-only", "feature")
	editFile(t, dir, "definitions/clicks.sqlx", "  country,\n", "  country AS country_code,\n")
	res = runDFD(t, "diff", "--project", dir, "--metadata", filepath.Join(dir, "metadata.json"), "--no-jit", "--format", "github")
	want := "::notice file=warehouse/definitions/clicks.sqlx,line=13,title=dfd diff%3A non-breaking%3A acme-clickstream.clicks.clicks::column country renamed to country_code\n"
	if res.code != 0 || !strings.Contains(string(res.stdout), want) {
		t.Errorf("exit %d; output lacks %q:\n%s\n%s", res.code, want, res.stdout, res.stderr)
	}
}

// The VS Code extension's tests read dfd diff reports captured from this
// command (vscode-extension/test/fixtures/diff-*.json): each must still
// follow docs/diff.schema.json, so the extension is tested on reports dfd
// can give.
func TestExtensionDiffFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "vscode-extension", "test", "fixtures", "diff-*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no diff-*.json fixtures: %v", err)
	}
	s := diffSchema(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		validateDiffJSON(t, s, data)
	}
}
