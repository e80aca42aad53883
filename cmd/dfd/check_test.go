package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

func sqlCheckMetadata() string {
	return filepath.Join(testenv.RepoRoot(), "testdata", "metadata", "sql_check.json")
}

// dfd check prints the planted errors of sql_check as file:line:col lines
// and exits 1; --json gives the same findings with 1-based positions.
func TestCheckCommand(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sql_check"), testenv.CoreVersion)
	res := runDFD(t, "check", dir, "--metadata", sqlCheckMetadata())
	if res.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"definitions/marts/customer_totals.sqlx:9:7: error: Unrecognized name: amount_cent; Did you mean amount_cents? (acme-shop.shop.customer_totals)",
		"definitions/marts/by_country.js:6:10: error: Unrecognized name: contry; Did you mean country? (acme-shop.shop.by_country)",
		"definitions/staging/stg_refunds.sqlx:8:3: error: Unrecognized name: refund_amount (acme-shop.shop.stg_refunds)",
	} {
		if !strings.Contains(string(res.stdout), want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}
	if n := strings.Count(string(res.stdout), ": error: "); n != 6 {
		t.Errorf("%d errors, want the 6 planted ones:\n%s", n, res.stdout)
	}
	if strings.Contains(string(res.stdout), ": hint: ") {
		t.Errorf("hints without --verbose:\n%s", res.stdout)
	}
	if !strings.Contains(string(res.stderr), "6 error(s), 0 warning(s)") {
		t.Errorf("stderr lacks the summary:\n%s", res.stderr)
	}

	res = runDFD(t, "check", dir, "--metadata", sqlCheckMetadata(), "--json")
	if res.code != 1 {
		t.Fatalf("--json: exit %d:\n%s", res.code, res.stderr)
	}
	var findings []map[string]any
	if err := json.Unmarshal(res.stdout, &findings); err != nil {
		t.Fatalf("--json output: %v\n%s", err, res.stdout)
	}
	var got *map[string]any
	for i, f := range findings {
		if f["file"] == "definitions/marts/order_flags.sqlx" {
			got = &findings[i]
		}
	}
	// 'Größe → 🙂' precedes the error on its line: the column counts
	// UTF-16 code units (🙂 is two), as editors do.
	if got == nil || (*got)["line"] != 8.0 || (*got)["column"] != 26.0 || (*got)["severity"] != "error" || (*got)["action"] != "acme-shop.shop.order_flags" {
		t.Errorf("order_flags finding %v", got)
	}
	for _, key := range []string{"file", "line", "column", "endLine", "endColumn", "severity", "message", "action"} {
		if _, ok := findings[0][key]; !ok {
			t.Errorf("JSON finding lacks %q: %v", key, findings[0])
		}
	}
}

// A project without errors exits 0: the shipped example, including its JiT
// actions' SQL (their code run against the snapshot, billing nothing).
func TestCheckCommandExample(t *testing.T) {
	dir := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), "")
	res := runDFD(t, "check", dir, "--metadata", filepath.Join(dir, "metadata.json"), "--verbose")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if strings.Contains(string(res.stdout), ": error: ") || strings.Contains(string(res.stdout), ": warning: ") {
		t.Errorf("findings on the example:\n%s", res.stdout)
	}
	// Nor a hedged one: the example is what users copy.
	if strings.Contains(string(res.stdout), "GoogleSQL's analyzer reports") {
		t.Errorf("GoogleSQL doubts the example's SQL:\n%s", res.stdout)
	}
	if !strings.Contains(string(res.stderr), "statement(s) analysed") {
		t.Errorf("no summary:\n%s", res.stderr)
	}
}

// Against BigQuery (the emulator), a table BigQuery says does not exist is
// an error; the warehouse's schemas are the ones checked against.
func TestCheckCommandAgainstBigQuery(t *testing.T) {
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
	}}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":         "defaultProject: " + bqtest.Project + "\ndefaultDataset: clicks\ndefaultLocation: US\n",
		"definitions/raw_clicks.sqlx":    "config { type: \"declaration\", schema: \"landing\", name: \"raw_clicks\" }\n",
		"definitions/gone.sqlx":          "config { type: \"declaration\", schema: \"landing\", name: \"gone\" }\n",
		"definitions/by_country.sqlx":    "config { type: \"view\" }\nSELECT country, COUNT(*) AS n\nFROM ${ref(\"raw_clicks\")}\nGROUP BY country\n",
		"definitions/typo.sqlx":          "config { type: \"view\" }\nSELECT countyr FROM ${ref(\"raw_clicks\")}\n",
		"definitions/reads_missing.sqlx": "config { type: \"view\" }\nSELECT * FROM ${ref(\"gone\")}\n",
		"definitions/downstream_ok.sqlx": "config { type: \"view\" }\nSELECT n FROM ${ref(\"by_country\")}\n",
	})
	res := runDFD(t, "check", dir, "--endpoint", emu.URL)
	if res.code != 1 {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	out := string(res.stdout)
	for _, want := range []string{
		"definitions/typo.sqlx:2:8: error: Unrecognized name: countyr; Did you mean country?",
		"definitions/reads_missing.sqlx:2:15: error: Table not found: " + bqtest.Project + ".landing.gone (BigQuery has no such table)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, ": error: "); n != 2 {
		t.Errorf("%d errors, want 2:\n%s\n%s", n, out, res.stderr)
	}
}
