package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
)

// dfd diff --cost against the recording stand-in: a branch that widens
// one table (a new figure), adds an action and removes the assertion.
// Each figure is the stand-in's, the totals' change adds up, an action
// whose figure did not change is not listed, every job is a dry run and
// a statement both revisions share is dry-run once.
func TestDiffCost(t *testing.T) {
	needGit(t)
	dir := costProject(t)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	gitRun(t, dir, "init", "-q", "-b", "main")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "base")
	gitRun(t, dir, "checkout", "-q", "-b", "feature")
	editFile(t, dir, "definitions/a.sqlx", "SELECT id, name FROM", "SELECT id, name, 'v2' AS version FROM")
	writeFile(t, dir, "definitions/n.sqlx", "config { type: \"table\" }\nSELECT id AS new_id FROM ${ref(\"src\")}\n")
	gitRun(t, dir, "rm", "-q", "definitions/chk.sqlx")
	gitRun(t, dir, "add", "-A")
	gitRun(t, dir, "commit", "-q", "-m", "feature")

	rec := bqrecorder.Start(t, bqrecorder.Options{
		Bytes: func(stmt string) int64 {
			switch {
			case strings.Contains(stmt, "'v2'"):
				return 4 << 30
			case strings.Contains(stmt, "new_id"):
				return 1 << 20
			}
			return costBytes(stmt)
		},
		DryRunError: func(stmt string) *bqrecorder.Fault {
			if strings.Contains(stmt, "`p.d.a`") {
				return bqrecorder.TableNotFound("p.d.a")
			}
			return nil
		},
	})

	res := runDFD(t, "diff", "--project", dir, "--endpoint", rec.URL, "--cost", "--format", "json")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	validateDiffJSON(t, diffSchema(t), res.stdout)
	var out struct {
		Cost *drycost.Comparison `json:"cost"`
	}
	if err := json.Unmarshal(res.stdout, &out); err != nil || out.Cost == nil {
		t.Fatalf("no cost (%v):\n%s", err, res.stdout)
	}
	c := out.Cost
	baseFull := int64(3<<30 + 2<<30 + 512<<20 + 7<<20)
	headFull := int64(4<<30 + 2<<30 + 1<<20 + 7<<20)
	if !c.Available || c.Base == nil || c.Head == nil || c.Base.TotalBytesProcessed != baseFull || c.Head.TotalBytesProcessed != headFull ||
		c.DeltaBytesProcessed != headFull-baseFull || c.DeltaCostUSD == nil {
		t.Fatalf("cost %+v (base %+v, head %+v), want %d → %d", c, c.Base, c.Head, baseFull, headFull)
	}
	var got []string
	for _, a := range c.Actions {
		s := a.Target + " " + runText(a.Base) + " → " + runText(a.Head)
		if a.DeltaBytesProcessed != nil {
			s += " " + signedBytes(*a.DeltaBytesProcessed)
		}
		got = append(got, s)
	}
	want := []string{
		"p.d.a 3.0 GiB · $0.02 → 4.0 GiB · $0.02 +1.0 GiB",
		"p.d.chk 512 MiB · <$0.01 → — −512 MiB",
		"p.d.n — → 1.0 MiB · <$0.01 +1.0 MiB",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	seen := map[string]bool{}
	for _, j := range rec.Jobs() {
		if !j.DryRun {
			t.Errorf("a job that is not a dry run reached BigQuery: %q", j.Statement)
		}
		if seen[j.Statement] {
			t.Errorf("dry-run twice: %q", j.Statement)
		}
		seen[j.Statement] = true
	}
	// Base: a, inc ×2, v, b, chk, j; head adds its a and n.
	if len(seen) != 9 {
		t.Errorf("%d distinct statements dry-run, want 9", len(seen))
	}

	for _, tc := range []struct{ format, want string }{
		{"text", "\ncost of one run (BigQuery dry runs of both revisions against the warehouse as it is now; on-demand at $6.25 per TiB):\n  base    5.5 GiB · $0.03 (3.6 GiB · $0.02 incremental), 1 without a figure\n  head    6.0 GiB · $0.04 (4.1 GiB · $0.03 incremental), 1 without a figure\n  change  +513 MiB +<$0.01\n"},
		{"markdown", "| **Project** | 5.5 GiB · $0.03 (3.6 GiB · $0.02 incremental), 1 without a figure | 6.0 GiB · $0.04 (4.1 GiB · $0.03 incremental), 1 without a figure | +513 MiB +<$0.01 |\n| `p.d.a` | 3.0 GiB · $0.02 | 4.0 GiB · $0.02 | +1.0 GiB |\n"},
		{"github", "::notice title=dfd diff%3A cost::one run: 5.5 GiB · $0.03"},
	} {
		res := runDFD(t, "diff", "--project", dir, "--endpoint", rec.URL, "--cost", "--format", tc.format)
		if res.code != 0 || !strings.Contains(string(res.stdout), tc.want) {
			t.Errorf("%s: exit %d, output lacks %q:\n%s\n%s", tc.format, res.code, tc.want, res.stdout, res.stderr)
		}
	}

	// Without BigQuery there is no figure, and dfd diff says why.
	res = runDFD(t, "diff", "--project", dir, "--offline", "--cost")
	if res.code != 0 || !strings.Contains(string(res.stdout), "cost: not available: no BigQuery (--offline)") ||
		!strings.Contains(string(res.stderr), "dfd diff: cost not available: no BigQuery (--offline)") {
		t.Errorf("offline: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = runDFD(t, "diff", "--project", dir, "--offline", "--cost", "--billing", "flat")
	if res.code != exitUsage {
		t.Errorf("--billing flat: exit %d, want %d", res.code, exitUsage)
	}
}
