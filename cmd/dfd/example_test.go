package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// TestJitExamplePreviews runs the JiT previews that scripts/demo.sh shows,
// on the shipped example (examples/clickstream, which names its core in
// dataformCoreVersion) with its own offline snapshot, and requires SQL
// built from the snapshot's answers: the assertion's threshold from its
// AVG(clicks), the operation's session count from its COUNT(*). JiT code
// that misreads the rows (BigQuery's f/v form) falls back without a word;
// the example did, printing `HAVING SUM(clicks) < 1` and `sessions` null.
func TestJitExamplePreviews(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	dir := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), "")
	snapshot := filepath.Join(dir, "metadata.json")

	// The first cell of the snapshot's answer to statement.
	b, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Queries []struct {
			Statement string
			Response  struct {
				Rows []struct {
					F []struct{ V any }
				}
			}
		}
	}
	if err := json.Unmarshal(b, &snap); err != nil {
		t.Fatal(err)
	}
	cell := func(statement string) string {
		for _, q := range snap.Queries {
			if q.Statement == statement && len(q.Response.Rows) > 0 && len(q.Response.Rows[0].F) > 0 {
				if s, ok := q.Response.Rows[0].F[0].V.(string); ok {
					return s
				}
			}
		}
		t.Fatalf("the snapshot has no answer to %s", statement)
		return ""
	}
	avg, err := strconv.ParseFloat(cell("SELECT AVG(clicks) AS avg_clicks FROM `acme-clickstream.clicks.daily_clicks`"), 64)
	if err != nil {
		t.Fatal(err)
	}
	sessions := cell("SELECT COUNT(*) AS n FROM `acme-clickstream.clicks.click_sessions`")

	cases := []struct {
		action string
		args   []string
		want   []string // in stdout
	}{
		{"daily_clicks", nil, []string{"-- query", "LEFT JOIN `acme-clickstream.clicks.campaigns` AS c USING (campaign_id)"}},
		{"click_sessions", nil, []string{"-- incremental query", "-- query"}},
		// checks.js: 10 % of the average.
		{"daily_clicks_volume", nil, []string{fmt.Sprintf("HAVING SUM(clicks) < %d;", int(math.Floor(avg*0.1)))}},
		// housekeeping.js: two scratch tables (their deletes refused) and the count.
		{"drop_stale_scratch_tables", []string{"--execution-data"}, []string{fmt.Sprintf("VALUES (CURRENT_TIMESTAMP(), 2, %s);", sessions)}},
	}
	for _, c := range cases {
		t.Run(c.action, func(t *testing.T) {
			res := runDFD(t, append([]string{"jit", dir, "--action", c.action, "--metadata", snapshot}, c.args...)...)
			if res.code != 0 {
				t.Fatalf("exit %d:\n%s", res.code, res.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(string(res.stdout), w) {
					t.Errorf("stdout lacks %q (from the snapshot's answers):\n%s", w, res.stdout)
				}
			}
		})
	}
}
