package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// realCheckMinAnalysed is, for each real project, how many of its
// statements `dfd check` analysed with the project's snapshot of
// testdata/realprojects-metadata when the snapshot was written. Fewer means
// the check has stopped measuring something (a snapshot no longer matched,
// a table no longer resolved) and the zero-error result would prove less;
// more is progress, and the number here should be raised.
var realCheckMinAnalysed = map[string]int{
	// The rest read the service's Airbyte tables (undocumented, not in
	// the snapshot), INFORMATION_SCHEMA, or actions that do.
	"dfe_analytics_dataform": 299,
	// samples.github_timeline's schema is not in the snapshot, and one
	// view reads two-part names that are no table.
	"extreme_weather_programming": 1,
	"fivetran_log":                25,
	// The Google Ads transfer views' schemas are not in the snapshot.
	"marketing_analytics_jumpstart": 66,
	"stackoverflow_reporter":        9,
}

var checkSummaryRE = regexp.MustCompile(`dfd check: (\d+) statement\(s\) analysed, (\d+) not`)

func realMetadataDir() string {
	return filepath.Join(testenv.RepoRoot(), "testdata", "realprojects-metadata")
}

// TestRealProjectsCheckNoFalseErrors runs `dfd check --offline` on every
// real project of testdata/realprojects with the metadata snapshot of its
// declared sources (testdata/realprojects-metadata/<project>.json, schemas
// from their documentation) and requires no error and no warning: the
// projects are published, working Dataform code, so anything dfd reports
// on them is a false alarm (issue 14). It logs how many statements were
// analysed and how many skipped, which is what the zero is measured over,
// and fails when fewer are analysed than realCheckMinAnalysed records.
func TestRealProjectsCheckNoFalseErrors(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	entries, err := os.ReadDir(realProjectsDir())
	if err != nil {
		t.Fatal(err)
	}
	totalAnalysed, totalSkipped := 0, 0
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		name := d.Name()
		t.Run(name, func(t *testing.T) {
			minAnalysed, ok := realCheckMinAnalysed[name]
			if !ok {
				t.Fatalf("testdata/realprojects/%s has no entry in realCheckMinAnalysed", name)
			}
			snapshot := filepath.Join(realMetadataDir(), name+".json")
			if _, err := os.Stat(snapshot); err != nil {
				t.Fatalf("no metadata snapshot for the project's sources: %v", err)
			}
			// A copy: the project directory must stay exactly what the
			// parity test gives the official CLI.
			dir := testenv.ProjectCopy(t, filepath.Join(realProjectsDir(), name), testenv.CoreVersion)
			res := runDFD(t, "check", dir, "--offline", "--metadata", snapshot, "--json", realTimeout)
			var findings []checkFinding
			if err := json.Unmarshal(res.stdout, &findings); err != nil {
				t.Fatalf("--json output (exit %d): %v\n%.2000s\nstderr:\n%s", res.code, err, res.stdout, res.stderr)
			}
			falseAlarms, syntaxErrors, notYet := 0, 0, 0
			for _, f := range findings {
				if f.Code == "sql-syntax" {
					// GoogleSQL's parser rejects what BigQuery runs: a kind
					// of statement for gsql's notYetInGoogleSQL list.
					syntaxErrors++
				}
				if strings.Contains(f.Message, "GoogleSQL does not know ") {
					notYet++
				}
				if f.Severity == "error" || f.Severity == "warning" {
					falseAlarms++
					t.Errorf("false %s (%s): %s:%d:%d: %s (%s)", f.Severity, f.Code, f.File, f.Line, f.Column, f.Message, f.Action)
				}
			}
			if res.code != 0 {
				t.Errorf("exit %d, want 0:\n%s", res.code, res.stderr)
			}
			m := checkSummaryRE.FindSubmatch(res.stderr)
			if m == nil {
				t.Fatalf("stderr has no summary line:\n%s", res.stderr)
			}
			analysed, _ := strconv.Atoi(string(m[1]))
			skipped, _ := strconv.Atoi(string(m[2]))
			totalAnalysed += analysed
			totalSkipped += skipped
			t.Logf("%d statement(s) analysed, %d skipped, %d false error(s)/warning(s), %d of them syntax errors; %d action(s) of a kind GoogleSQL does not know yet",
				analysed, skipped, falseAlarms, syntaxErrors, notYet)
			if analysed < minAnalysed {
				t.Errorf("%d statement(s) analysed, %d when the snapshot was written (realCheckMinAnalysed)", analysed, minAnalysed)
			}
		})
	}
	t.Logf("real projects: %d statement(s) analysed against their sources' documented schemas, %d skipped", totalAnalysed, totalSkipped)
}
