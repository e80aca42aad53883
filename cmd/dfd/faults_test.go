package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// faultsJitStmt is the database call of faultsProject's JiT action.
const faultsJitStmt = "SELECT 1 AS n"

// faultsProject reads a warehouse table through a view, and has a JiT
// action whose code asks BigQuery a query.
func faultsProject(t *testing.T) string {
	return testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\ndefaultLocation: US\n",
		"definitions/src.sqlx":   "config { type: \"declaration\", schema: \"raw\", name: \"src\" }\n",
		"definitions/a.sqlx":     "config { type: \"view\" }\nSELECT id, name FROM ${ref(\"src\")}\n",
		"definitions/q.js": `publish("q", { type: "table" }).jitCode(async (jctx) => {
  await jctx.adapter.execute({ statement: "` + faultsJitStmt + `", fetchResults: true });
  return "SELECT 1 AS n";
});
`,
	})
}

// faultsOutcome is what one command must do under one mode, as
// docs/commands.md ("Exit status", "When dfd check could not look") and
// docs/bigquery.md ("When BigQuery refuses or fails", "Timeouts, retries
// and an unresponsive BigQuery") say.
type faultsOutcome struct {
	code int
	say  []string // substrings of stderr
}

// The fault-injection matrix of issue 25: every mode of the stand-in for
// BigQuery's REST API against dfd check, dfd metadata refresh and dfd jit,
// each ending with its documented exit status and a message that says
// what BigQuery said, within a generous multiple of the documented bound
// (one call limit, here 2 s, for the whole command; the JiT deadline for
// a slow job), and the metadata cache, primed before the fault, intact
// afterwards.
func TestFaultMatrix(t *testing.T) {
	dir := faultsProject(t)
	t.Setenv("DFD_BIGQUERY_TIMEOUT", "2s")
	const bound = 20 * time.Second // 10× the call limit
	unchecked := func(s ...string) faultsOutcome { return faultsOutcome{exitUnchecked, s} }
	failed := func(s ...string) faultsOutcome { return faultsOutcome{1, s} }
	ok := faultsOutcome{code: exitOK}
	for _, tc := range []struct {
		mode                string
		fault               *bqrecorder.Fault
		tables              int  // tables of dataset raw
		slow                bool // the JiT action's query job never ends
		check, refresh, jit faultsOutcome
	}{
		{mode: "401", fault: bqrecorder.FaultUnauthenticated,
			check:   unchecked("refused the credentials", "UNAUTHENTICATED", "(HTTP 401)"),
			refresh: failed("refresh p.raw: ", "UNAUTHENTICATED", "(HTTP 401)"),
			jit:     failed("UNAUTHENTICATED", "(HTTP 401)")},
		{mode: "403", fault: bqrecorder.FaultForbidden,
			check:   unchecked("denied access", "PERMISSION_DENIED", "(HTTP 403)"),
			refresh: failed("refresh p.raw: ", "PERMISSION_DENIED", "(HTTP 403)"),
			jit:     failed("PERMISSION_DENIED", "(HTTP 403)")},
		{mode: "429+Retry-After", fault: bqrecorder.Status(429, 1),
			check:   unchecked("RESOURCE_EXHAUSTED", "(HTTP 429)"),
			refresh: failed("refresh p.raw: ", "RESOURCE_EXHAUSTED", "(HTTP 429)"),
			jit:     failed("RESOURCE_EXHAUSTED", "(HTTP 429)")},
		{mode: "503", fault: bqrecorder.FaultUnavailable,
			check:   unchecked("could not answer", "UNAVAILABLE", "(HTTP 503)"),
			refresh: failed("refresh p.raw: ", "UNAVAILABLE", "(HTTP 503)"),
			jit:     failed("UNAVAILABLE", "(HTTP 503)")},
		{mode: "hang", fault: bqrecorder.FaultHang,
			check:   unchecked("did not answer in time", "DEADLINE_EXCEEDED"),
			refresh: failed("refresh p.raw: ", "no answer within 2s"),
			jit:     failed("DEADLINE_EXCEEDED")},
		{mode: "body cut short", fault: &bqrecorder.Fault{CutBody: true},
			check:   unchecked("UNAVAILABLE"),
			refresh: failed("refresh p.raw: ", "UNAVAILABLE"),
			jit:     failed("UNAVAILABLE")},
		{mode: "malformed JSON", fault: &bqrecorder.Fault{Malformed: true},
			check:   unchecked("UNAVAILABLE"),
			refresh: failed("refresh p.raw: ", "UNAVAILABLE"),
			jit:     failed("UNAVAILABLE")},
		{mode: "5000 tables", tables: 5000, check: ok, refresh: ok, jit: ok},
		{mode: "slow job", slow: true, check: ok, refresh: ok, jit: failed("cancelled")},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			rec := bqrecorder.Start(t, bqrecorder.Options{
				Tables: func(ds string) int {
					return map[string]int{"other": 3, "raw": tc.tables}[ds]
				},
				SlowJob: func(stmt string) bool { return tc.slow && stmt == faultsJitStmt },
			})
			// Prime the cache while BigQuery answers.
			if res := runDFD(t, "metadata", "refresh", "--datasets", "other", "--endpoint", rec.URL, "--project", "p"); res.code != 0 {
				t.Fatalf("priming: exit %d:\n%s", res.code, res.stderr)
			}
			rec.SetFault(tc.fault)
			for _, c := range []struct {
				name string
				args []string
				want faultsOutcome
			}{
				{"check", []string{"check", dir, "--endpoint", rec.URL}, tc.check},
				{"metadata refresh", []string{"metadata", "refresh", "--datasets", "raw", "--endpoint", rec.URL, "--project", "p"}, tc.refresh},
				{"jit", []string{"jit", dir, "--action", "q", "--endpoint", rec.URL, "--jit-timeout", "3s"}, tc.jit},
			} {
				start := time.Now()
				res := runDFD(t, c.args...)
				took := time.Since(start)
				if res.code != c.want.code {
					t.Errorf("%s: exit %d, want %d:\n%s", c.name, res.code, c.want.code, res.stderr)
				}
				for _, s := range c.want.say {
					if !strings.Contains(string(res.stderr), s) {
						t.Errorf("%s: stderr lacks %q:\n%s", c.name, s, res.stderr)
					}
				}
				if took > bound {
					t.Errorf("%s: took %s", c.name, took.Round(time.Millisecond))
				}
			}
			if tc.slow && len(rec.Cancels()) == 0 {
				t.Errorf("the slow job was never cancelled")
			}
			// The cache opens, and what was primed is still there.
			rec.SetFault(nil)
			res := runDFD(t, "metadata", "status", "--json", "--endpoint", rec.URL, "--project", "p")
			var st struct{ Tables, Lists int }
			if err := json.Unmarshal(res.stdout, &st); err != nil || res.code != 0 {
				t.Fatalf("metadata status: exit %d (%v):\n%s%s", res.code, err, res.stdout, res.stderr)
			}
			if st.Tables < 3 || st.Lists < 1 {
				t.Errorf("after the fault the cache holds %d tables, %d listings; the 3 tables of p.other were primed", st.Tables, st.Lists)
			}
			if tc.tables > 0 && st.Tables < 3+tc.tables {
				t.Errorf("after refreshing %d tables the cache holds %d", tc.tables, st.Tables)
			}
		})
	}
}
