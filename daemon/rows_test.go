package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/lsp"
)

// rowsResult is a dfd/rows result, with its rows as sent (a Go map would
// lose the order of their keys).
type rowsResult struct {
	lsp.RowsResult
	raw json.RawMessage
}

func (s *session) rows(t *testing.T, path string, params map[string]any) *rowsResult {
	t.Helper()
	var raw json.RawMessage
	params["textDocument"] = map[string]any{"uri": uri.File(path)}
	if err := s.ed.Call(s.ctx, lsp.MethodRows, params, &raw); err != nil {
		t.Fatalf("dfd/rows %s: %v", path, err)
	}
	res := &rowsResult{}
	var rows struct {
		Rows json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(raw, &res.RowsResult); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	res.raw = rows.Rows
	return res
}

func rowsJSON(t *testing.T, res *rowsResult) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, res.raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// dfd/rows against the emulator, which executes queries: a view's query,
// a JiT action's (the SQL its code produced), and a declared table's rows
// by tabledata.list; types, NULLs and nested values as BigQuery sends
// them.
func TestRowsAgainstTheEmulator(t *testing.T) {
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
	job, err := client.Query(`INSERT INTO shop.orders (id, tags, buyer) VALUES (1, ['x', 'y'], STRUCT('Ann')), (2, [], NULL)`).Run(ctx)
	if err == nil {
		_, err = job.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml":  "defaultProject: " + bqtest.Project + "\ndefaultDataset: shop\ndefaultLocation: US\n",
		"definitions/orders.sqlx": "config { type: \"declaration\" }\n",
		"definitions/buyers.sqlx": "config { type: \"view\" }\nSELECT id, buyer, tags FROM ${ref(\"orders\")} ORDER BY id\n",
		"definitions/jit_one.js": `publish("jit_one").jitCode(async (jctx) => {
  const t = await jctx.adapter.getTable({target: {database: "` + bqtest.Project + `", schema: "shop", name: "orders"}});
  return "SELECT " + t.fields.map(f => f.name).join(", ") + " FROM shop.orders WHERE id = 1";
});`,
	})
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": emu.URL},
		"jit":      map[string]any{"timeoutMs": 60000},
	}})})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")

	res := s.rows(t, filepath.Join(root, "definitions", "buyers.sqlx"), map[string]any{})
	if res.Error != "" || res.Refused != "" || res.Unavailable != "" {
		t.Fatalf("view query: %+v", res)
	}
	if got, want := rowsJSON(t, res), `[{"id":1,"buyer":{"name":"Ann"},"tags":["x","y"]},{"id":2,"buyer":null,"tags":[]}]`; got != want {
		t.Errorf("view query rows:\n got %s\nwant %s", got, want)
	}
	if len(res.Columns) != 3 || res.Columns[1].Type != "RECORD" || len(res.Columns[1].Fields) != 1 || res.Columns[2].Mode != "REPEATED" {
		t.Errorf("columns %+v", res.Columns)
	}
	if res.Action != "test.shop.buyers" || res.Source != "query" || !strings.HasPrefix(res.JobID, "dfd-rows-") || !strings.Contains(res.JobURL, "dfd-rows-") || !strings.Contains(res.TableURL, "t=buyers") {
		t.Errorf("result %+v", res)
	}

	res = s.rows(t, filepath.Join(root, "definitions", "jit_one.js"), map[string]any{})
	if got, want := rowsJSON(t, res), `[{"id":1,"tags":["x","y"],"buyer":{"name":"Ann"}}]`; got != want || !strings.Contains(res.Statement, "WHERE id = 1") {
		t.Errorf("JiT query: %+v\nrows %s", res, got)
	}

	res = s.rows(t, filepath.Join(root, "definitions", "orders.sqlx"), map[string]any{"source": "table", "limit": 1})
	if got, want := rowsJSON(t, res), `[{"id":1,"tags":["x","y"],"buyer":{"name":"Ann"}}]`; got != want || res.TotalRows != 2 || !res.Truncated || res.JobID != "" {
		t.Errorf("table rows: %+v\nrows %s", res, got)
	}

	res = s.rows(t, filepath.Join(root, "definitions", "orders.sqlx"), map[string]any{})
	if res.Unavailable == "" || len(res.Rows.Rows) != 0 {
		t.Errorf("a declaration's query: %+v", res)
	}
	res = s.rows(t, filepath.Join(root, "definitions", "buyers.sqlx"), map[string]any{"source": "table"})
	if !strings.Contains(res.Error, "NOT_FOUND") {
		t.Errorf("a view not built: %+v", res)
	}
}

// dfd/rows on the wire: above dfd.preview.rowsConfirmBytes nothing but the
// dry run is sent until the request is confirmed; then the query carries
// the preview's cap and label. An operation's DML sends nothing at all, and
// without the BigQuery source there are no rows, and the answer says why.
func TestRowsOnTheWire(t *testing.T) {
	rec := bqrecorder.Start(t, bqrecorder.Options{})
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\ndefaultLocation: EU\n",
		"definitions/v.sqlx":     "config { type: \"view\" }\nSELECT 1 AS n\n",
		"definitions/op.sqlx":    "config { type: \"operations\" }\nDELETE FROM d.t WHERE TRUE\n",
	})
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd": map[string]any{
		"metadata": map[string]any{"source": "bigquery"},
		"bigquery": map[string]any{"endpoint": rec.URL},
		"preview":  map[string]any{"rowsConfirmBytes": 1000, "maxBytesBilled": 5000000},
	}})})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	v := filepath.Join(root, "definitions", "v.sqlx")

	rec.Reset()
	res := s.rows(t, v, map[string]any{})
	if !res.NeedsConfirmation || res.EstimatedBytesProcessed != 1024 || res.Threshold != 1000 || !strings.Contains(res.Confirmation, "≈ 1.0 KiB") {
		t.Errorf("above the threshold: %+v", res)
	}
	for _, j := range rec.Jobs() {
		if !j.DryRun {
			t.Errorf("a query ran before confirmation: %q", j.Statement)
		}
	}

	rec.Reset()
	res = s.rows(t, v, map[string]any{"confirmed": true})
	if res.NeedsConfirmation || res.TotalBytesBilled != 10<<20 || res.TotalBytesProcessed != 100 || !strings.Contains(res.JobURL, "bq%3AEU%3Adfd-rows-") {
		t.Errorf("confirmed: %+v", res)
	}
	var real []bqrecorder.Request
	for _, j := range rec.Jobs() {
		if !j.DryRun {
			real = append(real, j)
		}
	}
	if len(real) != 1 || real[0].MaximumBytesBilled != 5000000 || real[0].Labels[policy.PreviewLabelKey] != policy.PreviewLabelValue {
		t.Errorf("queries sent: %+v", real)
	}

	rec.Reset()
	res = s.rows(t, filepath.Join(root, "definitions", "op.sqlx"), map[string]any{"confirmed": true})
	if !strings.Contains(res.Refused, "only read-only queries") || len(rec.Jobs()) != 0 {
		t.Errorf("DML: %+v, %d jobs sent", res, len(rec.Jobs()))
	}
}

func TestRowsWithoutBigQuery(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{
		"workflow_settings.yaml": "defaultProject: test\ndefaultDataset: d\n",
		"definitions/v.sqlx":     "config { type: \"view\" }\nSELECT 1 AS n\n",
	})
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	res := s.rows(t, filepath.Join(root, "definitions", "v.sqlx"), map[string]any{})
	if !strings.Contains(res.Unavailable, "dfd.metadata.source") || len(res.Rows.Rows) != 0 || res.Rows.Rows == nil {
		t.Errorf("without BigQuery: %+v", res)
	}
}
