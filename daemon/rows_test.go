package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"go.lsp.dev/protocol"
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
	if dir := os.Getenv("DFD_CAPTURE_ROWS"); dir != "" {
		// The extension's unit tests render these answers
		// (vscode-extension/test/fixtures/rows-*.json).
		source, _ := params["source"].(string)
		if source == "" {
			source = "query"
		}
		if params["confirmed"] == true {
			source += "-confirmed"
		}
		name := fmt.Sprintf("rows-%s-%s.json", strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), source)
		var b bytes.Buffer
		_ = json.Indent(&b, raw, "", "  ")
		b.WriteByte('\n')
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
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
		{Name: "amount", Type: bigquery.NumericFieldType},
		{Name: "placed", Type: bigquery.TimestampFieldType},
		{Name: "paid", Type: bigquery.BooleanFieldType},
	}}); err != nil {
		t.Fatal(err)
	}
	job, err := client.Query(`INSERT INTO shop.orders (id, tags, buyer, amount, placed, paid) VALUES
		(1, ['x', 'y'], STRUCT('Ann'), NUMERIC '19.99', TIMESTAMP '2024-06-01 08:30:00 UTC', TRUE),
		(2, [], NULL, NULL, NULL, NULL)`).Run(ctx)
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
		"definitions/buyers.sqlx": "config { type: \"view\" }\nSELECT id, buyer, tags, amount, placed, paid FROM ${ref(\"orders\")} ORDER BY id\n",
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
	if got, want := rowsJSON(t, res), `[{"id":1,"buyer":{"name":"Ann"},"tags":["x","y"],"amount":"19.99","placed":"2024-06-01 08:30:00 UTC","paid":true},`+
		`{"id":2,"buyer":null,"tags":[],"amount":null,"placed":null,"paid":null}]`; got != want {
		t.Errorf("view query rows:\n got %s\nwant %s", got, want)
	}
	if len(res.Columns) != 6 || res.Columns[1].Type != "RECORD" || len(res.Columns[1].Fields) != 1 || res.Columns[2].Mode != "REPEATED" {
		t.Errorf("columns %+v", res.Columns)
	}
	if res.Action != "test.shop.buyers" || res.Source != "query" || !strings.HasPrefix(res.JobID, "dfd-rows-") || !strings.Contains(res.JobURL, "dfd-rows-") || !strings.Contains(res.TableURL, "t=buyers") {
		t.Errorf("result %+v", res)
	}

	res = s.rows(t, filepath.Join(root, "definitions", "jit_one.js"), map[string]any{})
	if got, want := rowsJSON(t, res), `[{"id":1,"tags":["x","y"],"buyer":{"name":"Ann"},"amount":"19.99","placed":"2024-06-01 08:30:00 UTC","paid":true}]`; got != want || !strings.Contains(res.Statement, "WHERE id = 1") {
		t.Errorf("JiT query: %+v\nrows %s", res, got)
	}

	res = s.rows(t, filepath.Join(root, "definitions", "orders.sqlx"), map[string]any{"source": "table", "limit": 1})
	if got, want := rowsJSON(t, res), `[{"id":1,"tags":["x","y"],"buyer":{"name":"Ann"},"amount":"19.99","placed":"2024-06-01 08:30:00 UTC","paid":true}]`; got != want || res.TotalRows != 2 || !res.Truncated || res.JobID != "" {
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

	// With the BigQuery source, each action has data lenses; an
	// operation has no table to open.
	for file, want := range map[string]string{"v.sqlx": "Preview SQL|Preview data|Open in BigQuery|0 dependents", "op.sqlx": "Preview SQL|Preview data|0 dependents"} {
		if got := lensTitles(t, s, filepath.Join(root, "definitions", file)); got != want {
			t.Errorf("code lenses of %s: %s, want %s", file, got, want)
		}
	}

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
		"workflow_settings.yaml":    "defaultProject: test\ndefaultDataset: d\n",
		"definitions/nosource.sqlx": "config { type: \"view\" }\nSELECT 1 AS n\n",
	})
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	if got := lensTitles(t, s, filepath.Join(root, "definitions", "nosource.sqlx")); got != "Preview SQL|0 dependents" {
		t.Errorf("code lenses without BigQuery: %s", got)
	}
	res := s.rows(t, filepath.Join(root, "definitions", "nosource.sqlx"), map[string]any{})
	if !strings.Contains(res.Unavailable, "dfd.metadata.source") || len(res.Rows.Rows) != 0 || res.Rows.Rows == nil {
		t.Errorf("without BigQuery: %+v", res)
	}
}

func lensTitles(t *testing.T, s *session, path string) string {
	t.Helper()
	lenses, err := s.ed.Server.CodeLens(s.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, l := range lenses {
		titles = append(titles, l.Command.Title)
		if l.Command.Command == lsp.CommandPreviewData && len(l.Command.Arguments) != 3 {
			t.Errorf("Preview data lens arguments: %v", l.Command.Arguments)
		}
	}
	return strings.Join(titles, "|")
}
