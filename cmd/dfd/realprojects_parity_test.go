package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit/nodeworker"
)

// Real public Dataform projects (testdata/realprojects, with their
// licences) compiled by the official CLI and by dfd on both engines, as
// they are and broken in the ways users break them.

// realEdit replaces old, which must occur exactly once in file, with new.
type realEdit struct{ file, old, new string }

// realVariant is a broken copy of a real project, made at test time. The
// CLI must show the breakage as intended — compilation errors on every file
// of errorFiles, or, with fatal set, no graph and fatal in its stderr —
// before dfd is compared with it, so that a variant that no longer breaks
// anything fails instead of comparing two clean compiles. Where the CLI
// prints no graph, dfd must print none either and the CLI's stderr.
type realVariant struct {
	name       string
	edits      []realEdit
	errorFiles []string
	fatal      string
}

// realVariants are the broken variants of each real project; every fixture
// must have at least one.
var realVariants = map[string][]realVariant{
	"dfe_analytics_dataform": {{
		name: "syntax-error-in-includes",
		edits: []realEdit{{"includes/events.js",
			"const {decodeUriComponent} = require('./data_functions');",
			"const {decodeUriComponent} = require('./data_functions';"}},
		// The includes file itself, and the definitions file whose
		// require("../") reaches it through index.js.
		errorFiles: []string{"includes/events.js", "definitions/bat_register_airbyte_test.js"},
	}},
	"marketing_analytics_jumpstart": {{
		name: "config-syntax-error-and-missing-ref",
		edits: []realEdit{
			{"definitions/ads_domain/def/dim_ads.sqlx", "hasOutput: true,", "hasOutput: true,,"},
			{"definitions/digital_analytics_domain/base/pseudo_users.sqlx", `ref("ga4_pseudo_users")`, `ref("ga4_pseudo_userz")`},
		},
		errorFiles: []string{"definitions/ads_domain/def/dim_ads.sqlx", "definitions/digital_analytics_domain/base/pseudo_users.sqlx"},
	}, {
		// Old dataform.json files often carry "useRunCache": false; core 3
		// refuses the whole file ("Unexpected empty value").
		name:  "legacy-dataform-json-rejected",
		edits: []realEdit{{"dataform.json", `"warehouse": "bigquery",`, `"warehouse": "bigquery",` + "\n  \"useRunCache\": false,"}},
		fatal: `Dataform json error: Unexpected empty value for "useRunCache".`,
	}},
	"stackoverflow_reporter": {{
		name: "config-syntax-error-and-missing-ref",
		edits: []realEdit{
			{"definitions/reporting/user_stats.sqlx", `tags: ["daily"],`, `tags: ["daily"],,`},
			{"definitions/reporting/posts_combined.sqlx", `ref("stg_posts_answers")`, `ref("stg_posts_answer")`},
		},
		errorFiles: []string{"definitions/reporting/user_stats.sqlx", "definitions/reporting/posts_combined.sqlx"},
	}},
	"extreme_weather_programming": {{
		name: "missing-dependency-in-actions-yaml",
		edits: []realEdit{{"definitions/actions.yaml",
			"        - name: repositories_that_mention_extreme_weather",
			"        - name: repositories_that_mention_extreme_weathr"}},
		errorFiles: []string{"definitions/repositories_created_during_extreme_weather.sql"},
	}, {
		// The CLI prints no graph, only "Could not find NPM dependencies.
		// Have you run 'dataform install'?": its yargs fail handler's text
		// for any VMError whose message has "Cannot find module", here
		// core's require() of the notebook. dfd used to name the file in
		// its own words.
		name:  "missing-notebook-file",
		edits: []realEdit{{"definitions/actions.yaml", "filename: snowy_repository_creation.ipynb", "filename: snowy_repository_creatio.ipynb"}},
		fatal: "Could not find NPM dependencies.",
	}},
	"fivetran_log": {{
		name:       "type-error-in-query-closure",
		edits:      []realEdit{{"includes/user.js", `ctx.ref(params.fivetranLogSchema, "user")`, `ctx.refs(params.fivetranLogSchema, "user")`}},
		errorFiles: []string{"definitions/example.js"},
	}},
}

type realExpectation struct {
	name   string
	counts map[string]int
}

var realExpectationRE = regexp.MustCompile(`^([a-z0-9_]+): expect=ok counts=(\S+)$`)

func realProjectsDir() string { return filepath.Join(testenv.RepoRoot(), "testdata", "realprojects") }

// realExpectations reads testdata/realprojects/README.md's outcome block
// and checks that it names every fixture directory, and that every fixture
// has its licence, its SOURCE note and broken variants.
func realExpectations(t *testing.T) []realExpectation {
	t.Helper()
	f, err := os.Open(filepath.Join(realProjectsDir(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []realExpectation
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := realExpectationRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		e := realExpectation{name: m[1], counts: map[string]int{}}
		for _, kv := range strings.Split(m[2], ",") {
			k, v, _ := strings.Cut(kv, ":")
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("testdata/realprojects/README.md: %s: bad count %q", m[1], kv)
			}
			e.counts[k] = n
		}
		out = append(out, e)
		listed[e.name] = true
	}
	entries, err := os.ReadDir(realProjectsDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		if !listed[d.Name()] {
			t.Errorf("testdata/realprojects/%s has no line in README.md's outcome block", d.Name())
		}
		for _, f := range []string{"LICENSE", "SOURCE", "package.json"} {
			if _, err := os.Stat(filepath.Join(realProjectsDir(), d.Name(), f)); err != nil {
				t.Errorf("testdata/realprojects/%s: %v", d.Name(), err)
			}
		}
		if len(realVariants[d.Name()]) == 0 {
			t.Errorf("testdata/realprojects/%s has no broken variants in realVariants", d.Name())
		}
	}
	if len(out) == 0 {
		t.Fatal("no expectations found in testdata/realprojects/README.md")
	}
	return out
}

// applyEdits applies a variant's edits to the project copy at dir.
func applyEdits(t *testing.T, dir string, edits []realEdit) {
	t.Helper()
	for _, e := range edits {
		p := filepath.Join(dir, filepath.FromSlash(e.file))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), e.old); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once (did the fixture change?)", e.file, e.old, n)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// realTimeout is given to both tools: the CLI's default, 60 s, is not
// enough for dfe_analytics_dataform on a busy machine (30–55 s measured).
const realTimeout = "--timeout=10m"

// cliResult is an official CLI compile started ahead of its comparison.
type cliResult struct {
	done chan struct{}
	run  compileRun
	err  error
}

// startOfficialCLI runs `node bundle compile dir --json` in the background,
// at most limit at a time (sem), so that the CLI's slow compiles overlap
// with dfd's.
func startOfficialCLI(bundle, dir string, sem chan struct{}) *cliResult {
	r := &cliResult{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		sem <- struct{}{}
		defer func() { <-sem }()
		cmd := exec.Command("node", append([]string{bundle, "compile", dir, "--json"}, realTimeout)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		r.run, r.err = runCLIToFiles(cmd)
	}()
	return r
}

// errorTextRE matches the texts of errors in a printed graph: their
// messages are compared, normalised, in the parsed graph; blanking them
// here lets the rest of the output be compared byte for byte.
var errorTextRE = regexp.MustCompile(`("(?:message|stack)": )"(?:[^"\\]|\\.)*"`)

func graphCounts(graph any) map[string]int {
	g, _ := graph.(map[string]any)
	out := map[string]int{}
	for _, k := range []string{"tables", "operations", "assertions", "declarations", "notebooks"} {
		a, _ := g[k].([]any)
		out[k] = len(a)
	}
	return out
}

// TestRealProjectsParityWithOfficialCLI compiles every real project of
// testdata/realprojects and its broken variants (realVariants) with the
// official `dataform compile --json` and with `dfd compile --json
// --engine=goja|node` on the same copy, with core testenv.CoreVersion, and
// requires the same exit status; the same graph (stacks and engine-worded
// messages aside, as TestParityWithOfficialCLI); byte-identical stdout for
// clean projects and, with errors, byte-identical stdout once error texts
// are blanked; dfd's stderr naming every file the CLI's errors name; and,
// where the CLI prints no graph, no graph from dfd either and the CLI's
// stderr, byte for byte once its host's frames are left out
// (engineNeutral). The CLI runs two at a time in the background;
// dfd's compiles run one at a time (goja's memory limit watches the whole
// Go heap).
func TestRealProjectsParityWithOfficialCLI(t *testing.T) {
	testenv.Node(t)
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	bundle := testenv.CLIBundle(t)
	testenv.CoreDir(t, testenv.CoreVersion)
	_, _, nodeErr := nodeworker.FindNode()

	type job struct {
		project string
		variant *realVariant // nil: the project as it is
		want    map[string]int
		dir     string
		cli     *cliResult
	}
	sem := make(chan struct{}, 2)
	var jobs []*job
	for _, e := range realExpectations(t) {
		jobs = append(jobs, &job{project: e.name, want: e.counts})
		for i := range realVariants[e.name] {
			jobs = append(jobs, &job{project: e.name, variant: &realVariants[e.name][i]})
		}
	}
	// Slowest first: the JavaScript-heavy project's clean compile takes the
	// CLI the longest.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].variant == nil && jobs[j].variant != nil })
	for _, j := range jobs {
		j.dir = testenv.ProjectCopy(t, filepath.Join(realProjectsDir(), j.project), testenv.CoreVersion)
		if j.variant != nil {
			applyEdits(t, j.dir, j.variant.edits)
		}
	}
	for _, j := range jobs {
		j.cli = startOfficialCLI(bundle, j.dir, sem)
	}
	// Registered after the copies' own cleanups, so it runs before them: no
	// CLI process outlives its directory.
	t.Cleanup(func() {
		for _, j := range jobs {
			<-j.cli.done
		}
	})

	for _, j := range jobs {
		name := j.project
		if j.variant != nil {
			name += "/" + j.variant.name
		}
		t.Run(name, func(t *testing.T) {
			<-j.cli.done
			if j.cli.err != nil {
				t.Fatalf("running the official CLI: %v", j.cli.err)
			}
			cli := j.cli.run
			fatal := j.variant != nil && j.variant.fatal != ""
			var cliGraph any
			switch {
			case fatal:
				if cli.code != 1 || len(cli.stdout) != 0 || !bytes.Contains(cli.stderr, []byte(j.variant.fatal)) {
					t.Fatalf("the variant is meant to make the CLI fail with %q and no graph; it exited %d:\nstdout:\n%.2000s\nstderr:\n%s", j.variant.fatal, cli.code, cli.stdout, cli.stderr)
				}
			case len(cli.stdout) == 0:
				t.Fatalf("the official CLI printed no graph (exit %d):\n%s", cli.code, cli.stderr)
			case j.variant == nil:
				cliGraph = normalize(parseGraph(t, "the CLI", cli.stdout))
				if cli.code != 0 || len(compilationErrors(cliGraph)) > 0 {
					t.Fatalf("the official CLI exited %d on the unchanged project (want 0 and no compilation errors):\n%s", cli.code, cli.stderr)
				}
				if got := graphCounts(cliGraph); !cmp.Equal(got, j.want) {
					t.Errorf("the CLI's graph has %v, testdata/realprojects/README.md says %v", got, j.want)
				}
			default:
				cliGraph = normalize(parseGraph(t, "the CLI", cli.stdout))
				files := map[string]bool{}
				for _, f := range compilationErrors(cliGraph) {
					files[f] = true
				}
				for _, f := range j.variant.errorFiles {
					if !files[f] {
						t.Errorf("the variant is meant to give the CLI an error on %s; its errors are on %v", f, compilationErrors(cliGraph))
					}
				}
				if cli.code != 1 {
					t.Errorf("the official CLI exited %d on a broken variant, want 1", cli.code)
				}
			}
			if t.Failed() {
				return
			}
			for _, eng := range []string{engineGoja, engineNode} {
				t.Run(eng, func(t *testing.T) {
					if eng == engineNode && nodeErr != nil {
						t.Fatalf("--engine=node cannot be tested: %v", nodeErr)
					}
					dfd := dfdCompile(t, []string{"NO_COLOR=1"}, j.dir, "--json", "--engine="+eng, realTimeout)
					if cli.code != dfd.code {
						t.Errorf("exit status: CLI %d, dfd %d\nCLI stderr:\n%s\ndfd stderr:\n%s", cli.code, dfd.code, cli.stderr, dfd.stderr)
					}
					if fatal {
						if len(dfd.stdout) != 0 {
							t.Errorf("the CLI prints no graph, dfd printed:\n%.2000s", dfd.stdout)
						}
						if got, want := engineNeutral(dfd.stderr), engineNeutral(cli.stderr); got != want {
							t.Errorf("stderr differs from the CLI's:\n%s", lineDiff(want, got))
						}
						return
					}
					dfdGraph := normalize(parseGraph(t, "dfd", dfd.stdout))
					if d := cmp.Diff(cliGraph, dfdGraph); d != "" {
						t.Errorf("graphs differ (-CLI +dfd):\n%s", d)
					}
					if j.variant == nil {
						if !bytes.Equal(vm2CatchRE.ReplaceAll(cli.stdout, nil), dfd.stdout) {
							t.Errorf("stdout is not byte-identical to the CLI's although the graphs are equal")
						}
					} else {
						c, d := errorTextRE.ReplaceAll(cli.stdout, []byte(`$1""`)), errorTextRE.ReplaceAll(dfd.stdout, []byte(`$1""`))
						if !bytes.Equal(c, d) {
							t.Errorf("stdout differs from the CLI's beyond error messages and stacks: %s", firstLineDiff(c, d))
						}
					}
					for _, e := range compilationErrors(cliGraph) {
						if !bytes.Contains(dfd.stderr, []byte(e)) {
							t.Errorf("dfd's stderr does not name %q:\n%s", e, dfd.stderr)
						}
					}
				})
			}
		})
	}
}

// firstLineDiff names the first line where a and b differ.
func firstLineDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			return fmt.Sprintf("line %d: CLI %q, dfd %q (CLI %d lines, dfd %d)", i+1, x, y, len(al), len(bl))
		}
	}
	return "equal"
}
