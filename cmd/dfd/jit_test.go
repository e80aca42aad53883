package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
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
		{"no metadata and no BigQuery credentials", []string{"jit", dir, "--action", "drop_stale_scratch_tables", "--credentials", filepath.Join(dir, "no-such-key.json")}, 1, "--metadata"},
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

// Without --metadata, dfd jit answers the JiT code's calls from BigQuery
// (here the emulator) through the metadata cache, under the preview policy.
func TestJitCommandAgainstBigQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the BigQuery emulator")
	}
	emu, err := bqtest.Start(context.Background(), bqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	ctx := context.Background()
	client := emu.Client(t)
	if err := client.Dataset("landing").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := client.Dataset("landing").Table("raw_clicks").Create(ctx, &bigquery.TableMetadata{Schema: bigquery.Schema{
		{Name: "clicked_at", Type: bigquery.TimestampFieldType},
		{Name: "country", Type: bigquery.StringFieldType},
		{Name: "campaign_id", Type: bigquery.StringFieldType},
	}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: " + bqtest.Project + "\ndefaultDataset: clicks\ndefaultLocation: US\n",
		"definitions/daily.js": `publish("daily").jitCode(async (jctx) => {
  const t = await jctx.adapter.getTable({target: {database: "` + bqtest.Project + `", schema: "landing", name: "raw_clicks"}});
  const cols = t.fields.map(f => f.name).join(", ");
  let missing = "";
  try { await jctx.adapter.getTable({target: {database: "` + bqtest.Project + `", schema: "landing", name: "nope"}}); } catch (e) { missing = e.message; }
  return "SELECT " + cols + " FROM landing.raw_clicks -- " + missing;
});`,
	})
	res := runDFD(t, "jit", dir, "--action", "daily", "--endpoint", emu.URL)
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	for _, want := range []string{"SELECT clicked_at, country, campaign_id FROM landing.raw_clicks", "NOT_FOUND"} {
		if !strings.Contains(string(res.stdout), want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
}
