package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testenv"
)

func snapshotPath() string {
	return filepath.Join(testenv.RepoRoot(), "testdata", "metadata", "clickstream.json")
}

// dfd jit runs each kind of JiT action of the fixture in a real worker
// process, answering its database calls from the offline snapshot.
func TestJitCommand(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), testenv.CoreVersion)
	cases := []struct {
		action string
		want   []string // in stdout
	}{
		{"daily_clicks", []string{"-- query", "FROM `acme-collector.landing.raw_clicks` AS r", "-- post_operations"}},
		{"clicks.click_sessions", []string{"-- incremental query", "SELECT MAX(session_date) FROM `acme-clickstream.clicks.click_sessions`"}},
		{"acme-clickstream.clicks_assertions.daily_clicks_volume", []string{"-- assertion", "HAVING SUM(clicks) <"}},
		{"refresh_campaign_cache", []string{"-- operation"}},
	}
	for _, c := range cases {
		t.Run(c.action, func(t *testing.T) {
			res := runDFD(t, "jit", dir, "--action", c.action, "--metadata", snapshotPath())
			if res.code != 0 {
				t.Fatalf("exit %d:\n%s", res.code, res.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(string(res.stdout), w) {
					t.Errorf("stdout lacks %q:\n%s", w, res.stdout)
				}
			}
			if !strings.Contains(string(res.stderr), "JiT-compiled in") {
				t.Errorf("stderr has no timing line:\n%s", res.stderr)
			}
		})
	}
}

// In a preview, deleteTable never reaches the warehouse: the JiT code sees
// PERMISSION_DENIED, and the call list says so.
func TestJitCommandPreviewRefusesDeletes(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), testenv.CoreVersion)
	res := runDFD(t, "jit", dir, "--action", "drop_stale_scratch_tables", "--metadata", snapshotPath(), "--execution-data", "--json")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	var out struct {
		Operation struct{ Queries []string }
	}
	if err := json.Unmarshal(res.stdout, &out); err != nil {
		t.Fatalf("--json output: %v\n%s", err, res.stdout)
	}
	joined := strings.Join(out.Operation.Queries, "\n")
	if !strings.Contains(joined, "failed: PERMISSION_DENIED: dfd preview: DeleteTable") {
		t.Errorf("the JiT code did not see the refusal:\n%s", joined)
	}
	if !strings.Contains(string(res.stderr), "DeleteTable") || !strings.Contains(string(res.stderr), "PERMISSION_DENIED") {
		t.Errorf("the call list does not show the refused delete:\n%s", res.stderr)
	}
}

func TestJitCommandErrors(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), testenv.CoreVersion)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no action flag", []string{"jit", dir}, 2, "--action"},
		{"unknown action", []string{"jit", dir, "--action", "nope", "--metadata", snapshotPath()}, 1, "nope"},
		{"AoT action", []string{"jit", dir, "--action", "top_countries", "--metadata", snapshotPath()}, 1, "ahead of time"},
		{"no metadata", []string{"jit", dir, "--action", "daily_clicks"}, 2, "--metadata"},
		{"missing snapshot", []string{"jit", dir, "--action", "daily_clicks", "--metadata", filepath.Join(dir, "none.json")}, 1, "none.json"},
		{"JiT code fails", []string{"jit", dir, "--action", "drop_stale_scratch_tables", "--metadata", snapshotPath()}, 1, "executionId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := runDFD(t, c.args...)
			if res.code != c.code {
				t.Errorf("exit %d, want %d:\n%s", res.code, c.code, res.stderr)
			}
			if !strings.Contains(string(res.stderr), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, res.stderr)
			}
		})
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
