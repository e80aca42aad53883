package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// dfd rows against the emulator, which executes queries: a table action's
// query, a JiT action's query (the SQL its code produced), an assertion's
// failing rows, and a built table read with --table.
func TestRowsCommandEmulator(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	emu, err := bqtest.Start(context.Background(), bqtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Stop)
	ctx := context.Background()
	client := emu.Client(t)
	if err := client.Dataset("shop").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := client.Dataset("shop").Table("orders").Create(ctx, &bigquery.TableMetadata{Schema: bigquery.Schema{
		{Name: "id", Type: bigquery.IntegerFieldType},
		{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
		{Name: "buyer", Type: bigquery.RecordFieldType, Schema: bigquery.Schema{{Name: "name", Type: bigquery.StringFieldType}}},
	}}); err != nil {
		t.Fatal(err)
	}
	job, err := client.Query(`INSERT INTO shop.orders (id, tags, buyer) VALUES (1, ['x'], STRUCT('Ann')), (2, [], NULL)`).Run(ctx)
	if err == nil {
		_, err = job.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":      "defaultProject: " + bqtest.Project + "\ndefaultDataset: shop\ndefaultLocation: US\n",
		"definitions/orders.sqlx":     "config { type: \"declaration\" }\n",
		"definitions/big_orders.sqlx": "config { type: \"view\" }\nSELECT id, buyer.name AS who, tags FROM ${ref(\"orders\")} ORDER BY id\n",
		"definitions/jit_orders.js": `publish("jit_orders").jitCode(async (jctx) => {
  const t = await jctx.adapter.getTable({target: {database: "` + bqtest.Project + `", schema: "shop", name: "orders"}});
  return "SELECT " + t.fields.map(f => f.name).join(", ") + " FROM shop.orders WHERE id = 2";
});`,
		"definitions/no_nulls.sqlx": "config { type: \"assertion\" }\nSELECT id FROM ${ref(\"orders\")} WHERE buyer IS NULL\n",
	})

	type out struct {
		Source  string           `json:"source"`
		Columns []map[string]any `json:"columns"`
		Rows    json.RawMessage  `json:"rows"`
		JobID   string           `json:"jobId"`
		Console string           `json:"consoleUrl"`
	}
	for _, tc := range []struct {
		name string
		args []string
		rows string
	}{
		{"query", []string{"--action", "big_orders"}, `[{"id":1,"who":"Ann","tags":["x"]},{"id":2,"who":null,"tags":[]}]`},
		{"JiT query", []string{"--action", "jit_orders"}, `[{"id":2,"tags":[],"buyer":null}]`},
		{"assertion", []string{"--action", "no_nulls"}, `[{"id":2}]`},
		{"table", []string{"--action", "orders", "--table", "--limit", "1"}, `[{"id":1,"tags":["x"],"buyer":{"name":"Ann"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"rows", dir, "--endpoint", emu.URL, "--json"}, tc.args...)
			res := runDFD(t, args...)
			if res.code != 0 {
				t.Fatalf("exit %d:\n%s", res.code, res.stderr)
			}
			var o out
			if err := json.Unmarshal(res.stdout, &o); err != nil {
				t.Fatalf("%v:\n%s", err, res.stdout)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, o.Rows); err != nil {
				t.Fatal(err)
			}
			if compact.String() != tc.rows {
				t.Errorf("rows:\n got %s\nwant %s", compact.String(), tc.rows)
			}
			if tc.name == "table" {
				if o.Source != "table" || o.JobID != "" || !strings.Contains(o.Console, "t=orders") {
					t.Errorf("table preview: %+v", o)
				}
				if !strings.Contains(string(res.stderr), "1 of 2 row(s) of test.shop.orders (tabledata.list: no query, nothing billed)") {
					t.Errorf("stderr:\n%s", res.stderr)
				}
			} else if o.Source != "query" || !strings.HasPrefix(o.JobID, "dfd-rows-") || !strings.Contains(o.Console, "j=bq%3AUS%3Adfd-rows-") {
				t.Errorf("query preview: %+v", o)
			}
		})
	}

	t.Run("text", func(t *testing.T) {
		res := runDFD(t, "rows", dir, "--endpoint", emu.URL, "--action", "big_orders")
		if res.code != 0 {
			t.Fatalf("exit %d:\n%s", res.code, res.stderr)
		}
		want := "id       who     tags\n" +
			"INTEGER  STRING  ARRAY<STRING>\n" +
			"-------  ------  -------------\n" +
			"1        Ann     [\"x\"]\n" +
			"2        NULL    []\n"
		if string(res.stdout) != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", res.stdout, want)
		}
	})

	t.Run("a view has no rows to list", func(t *testing.T) {
		// big_orders is only compiled, not built: the table is missing.
		res := runDFD(t, "rows", dir, "--endpoint", emu.URL, "--action", "big_orders", "--table")
		if res.code != 1 || !strings.Contains(string(res.stderr), "NOT_FOUND") {
			t.Errorf("exit %d:\n%s", res.code, res.stderr)
		}
	})
}

// dfd rows on the wire: a dry run before the query, which carries the cap
// and the label; above --threshold nothing runs without --yes; an
// operation's DML is never sent at all.
func TestRowsCommandOnTheWire(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: EU\n",
		"definitions/v.sqlx":     "config { type: \"view\" }\nSELECT 1 AS n\n",
		"definitions/op.sqlx":    "config { type: \"operations\" }\nDELETE FROM d.t WHERE TRUE\n",
	})
	rec := bqrecorder.Start(t, bqrecorder.Options{})

	res := runDFD(t, "rows", dir, "--endpoint", rec.URL, "--action", "v", "--threshold", "1000")
	if res.code != 1 || !strings.Contains(string(res.stderr), "would process 1.0 KiB, more than --threshold 1000 B: pass --yes") {
		t.Errorf("above the threshold: exit %d:\n%s", res.code, res.stderr)
	}
	for _, j := range rec.Jobs() {
		if !j.DryRun {
			t.Errorf("a query ran above the threshold: %s", j.Statement)
		}
	}
	rec.Reset()

	res = runDFD(t, "rows", dir, "--endpoint", rec.URL, "--action", "v", "--threshold", "1000", "--yes", "--max-bytes-billed", "5000000")
	if res.code != 0 {
		t.Fatalf("with --yes: exit %d:\n%s", res.code, res.stderr)
	}
	jobs := rec.Jobs()
	if len(jobs) != 2 || !jobs[0].DryRun || jobs[1].DryRun {
		t.Fatalf("want a dry run, then the query; got %d jobs", len(jobs))
	}
	if q := jobs[1]; q.MaximumBytesBilled != 5000000 || q.Labels[policy.PreviewLabelKey] != policy.PreviewLabelValue || strings.TrimSpace(q.Statement) != "SELECT 1 AS n" {
		t.Errorf("query sent: cap %d, labels %v, %q", q.MaximumBytesBilled, q.Labels, q.Statement)
	}
	if !strings.Contains(string(res.stderr), "10.0 MiB billed") || !strings.Contains(string(res.stderr), "j=bq%3AEU%3Adfd-rows-") {
		t.Errorf("summary:\n%s", res.stderr)
	}
	rec.Reset()

	res = runDFD(t, "rows", dir, "--endpoint", rec.URL, "--action", "op", "--yes")
	if res.code != 1 || !strings.Contains(string(res.stderr), "only read-only queries are previewed") {
		t.Errorf("DML: exit %d:\n%s", res.code, res.stderr)
	}
	if n := len(rec.Jobs()); n != 0 {
		t.Errorf("%d jobs sent for a DELETE", n)
	}
}
