package rows_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"

	"github.com/dfdtools/dfd/adapters"
	bqa "github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/adapters/rows"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func TestMain(m *testing.M) { bqtest.Main(m) }

func adapterAt(t *testing.T, endpoint string) *bqa.Adapter {
	t.Helper()
	a, err := bqa.New(context.Background(), bqa.Options{
		Project:       bqtest.Project,
		ClientOptions: []option.ClientOption{option.WithEndpoint(endpoint), option.WithoutAuthentication()},
		Retry:         bqa.Retry{Attempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The rows of a built table, read with tabledata.list, and of a query run
// by the emulator: types, NULLs and nested values as BigQuery sends them,
// decoded.
func TestEmulatorRows(t *testing.T) {
	emu := bqtest.Shared(t)
	c := emu.Client(t)
	ctx := context.Background()
	ds := "rows_emulator"
	if err := c.Dataset(ds).Create(ctx, &bigquery.DatasetMetadata{}); err != nil {
		t.Fatal(err)
	}
	schema := bigquery.Schema{
		{Name: "id", Type: bigquery.IntegerFieldType, Required: true, Description: "order id"},
		{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
		{Name: "amount", Type: bigquery.NumericFieldType},
		{Name: "ts", Type: bigquery.TimestampFieldType},
		{Name: "paid", Type: bigquery.BooleanFieldType},
		{Name: "ratio", Type: bigquery.FloatFieldType},
		{Name: "customer", Type: bigquery.RecordFieldType, Schema: bigquery.Schema{
			{Name: "name", Type: bigquery.StringFieldType},
			{Name: "addresses", Type: bigquery.RecordFieldType, Repeated: true, Schema: bigquery.Schema{
				{Name: "city", Type: bigquery.StringFieldType},
			}},
		}},
	}
	if err := c.Dataset(ds).Table("orders").Create(ctx, &bigquery.TableMetadata{Schema: schema}); err != nil {
		t.Fatal(err)
	}
	q := c.Query(`INSERT INTO ` + ds + `.orders (id, tags, amount, ts, paid, ratio, customer) VALUES
		(1, ['a', 'b'], NUMERIC '12.50', TIMESTAMP '2024-01-02 03:04:05.123456 UTC', TRUE, 0.25, STRUCT('Ann', [STRUCT('Oslo'), STRUCT('Bergen')])),
		(2, [], NULL, NULL, NULL, NULL, NULL)`)
	job, err := q.Run(ctx)
	if err == nil {
		_, err = job.Wait(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	a := adapterAt(t, emu.URL)

	t.Run("table", func(t *testing.T) {
		res, err := rows.Table(ctx, a, &dataformpb.Target{Schema: ds, Name: "orders"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if res.Source != rows.SourceTable || res.Target != "test."+ds+".orders" || res.TotalRows != 2 || res.Truncated {
			t.Errorf("result %+v", res)
		}
		var types []string
		for _, col := range res.Columns {
			types = append(types, col.Name+" "+col.Type+" "+col.Mode)
		}
		if got, want := strings.Join(types, ", "), "id INTEGER REQUIRED, tags STRING REPEATED, amount NUMERIC NULLABLE, ts TIMESTAMP NULLABLE, paid BOOLEAN NULLABLE, ratio FLOAT NULLABLE, customer RECORD NULLABLE"; got != want {
			t.Errorf("columns:\n got %s\nwant %s", got, want)
		}
		if len(res.Columns) == 7 && jsonOf(t, res.Columns[6].Fields) != `[{"name":"name","type":"STRING","mode":"NULLABLE"},{"name":"addresses","type":"RECORD","mode":"REPEATED","fields":[{"name":"city","type":"STRING","mode":"NULLABLE"}]}]` {
			t.Errorf("customer's fields: %s", jsonOf(t, res.Columns[6].Fields))
		}
		got := jsonOf(t, res.Rows)
		want := `[{"id":1,"tags":["a","b"],"amount":"12.5","ts":"2024-01-02 03:04:05.123456 UTC","paid":true,"ratio":0.25,"customer":{"name":"Ann","addresses":[{"city":"Oslo"},{"city":"Bergen"}]}},` +
			`{"id":2,"tags":[],"amount":null,"ts":null,"paid":null,"ratio":null,"customer":null}]`
		if got != want {
			t.Errorf("rows:\n got %s\nwant %s", got, want)
		}

		one, err := rows.Table(ctx, a, &dataformpb.Target{Schema: ds, Name: "orders"}, 1)
		if err != nil || len(one.Rows) != 1 || !one.Truncated || one.TotalRows != 2 {
			t.Errorf("limit 1: %+v, %v", one, err)
		}
	})

	t.Run("missing table", func(t *testing.T) {
		_, err := rows.Table(ctx, a, &dataformpb.Target{Schema: ds, Name: "nope"}, 10)
		if adapters.CodeOf(err) != adapters.NotFound {
			t.Errorf("missing table: %v", err)
		}
	})

	t.Run("query", func(t *testing.T) {
		res, err := rows.Query(ctx, a, rows.QueryRequest{
			Statement: `SELECT id, tags, customer.name AS who, ARRAY_LENGTH(customer.addresses) AS n, amount FROM ` + ds + `.orders ORDER BY id`,
			Limit:     10,
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Refused != "" || res.NeedsConfirmation {
			t.Fatalf("not run: %+v", res)
		}
		got := jsonOf(t, res.Rows)
		want := `[{"id":1,"tags":["a","b"],"who":"Ann","n":2,"amount":"12.5"},{"id":2,"tags":[],"who":null,"n":null,"amount":null}]`
		if got != want {
			t.Errorf("rows:\n got %s\nwant %s", got, want)
		}
		if res.JobID == "" || !strings.HasPrefix(res.JobID, "dfd-rows-") {
			t.Errorf("job id %q", res.JobID)
		}
		if res.TotalRows != 2 || res.Truncated {
			t.Errorf("totalRows %d truncated %v", res.TotalRows, res.Truncated)
		}
	})

	t.Run("query values", func(t *testing.T) {
		res, err := rows.Query(ctx, a, rows.QueryRequest{
			Statement: `SELECT CAST(NULL AS STRING) AS s, 9007199254740993 AS big, -5 AS small, 1.5 AS fl, ` +
				`STRUCT(1 AS x, [STRUCT('a' AS y)] AS z) AS st, DATE '2024-02-29' AS d, FALSE AS f`,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := jsonOf(t, res.Rows)
		want := `[{"s":null,"big":"9007199254740993","small":-5,"fl":1.5,"st":{"x":1,"z":[{"y":"a"}]},"d":"2024-02-29","f":false}]`
		if got != want {
			t.Errorf("rows:\n got %s\nwant %s", got, want)
		}
	})
}

// What a query preview sends, on the wire: the dry run first, then the
// query with the preview's byte cap and label; nothing at all for a
// statement GoogleSQL does not read as a query, no query for one BigQuery's
// dry run does not call a SELECT, and none above the threshold without
// confirmation.
func TestQueryOnTheWire(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		stmt      string
		stmtType  string
		req       rows.QueryRequest
		wantRun   bool
		wantDry   int
		refused   string
		needsConf bool
	}{
		{name: "select runs", stmt: "SELECT 1 AS n", wantRun: true, wantDry: 1},
		{name: "cap of the policy", stmt: "SELECT 2 AS n", req: rows.QueryRequest{Policy: policy.Policy{MaxBytesBilled: 5 << 20}}, wantRun: true, wantDry: 1},
		{name: "delete never sent", stmt: "DELETE FROM d.t WHERE TRUE", wantDry: 0, refused: "DELETE"},
		{name: "script never sent", stmt: "SELECT 1; DROP TABLE d.t", wantDry: 0, refused: "script"},
		{name: "BigQuery says not a SELECT", stmt: "SELECT 3 AS n", stmtType: "SCRIPT", wantDry: 1, refused: "SCRIPT"},
		{name: "above the threshold", stmt: "SELECT 4 AS n", req: rows.QueryRequest{Threshold: 1000}, wantDry: 1, needsConf: true},
		{name: "above the threshold, confirmed", stmt: "SELECT 5 AS n", req: rows.QueryRequest{Threshold: 1000, Confirmed: true}, wantRun: true, wantDry: 1},
		{name: "above the cap", stmt: "SELECT 6 AS n", req: rows.QueryRequest{Policy: policy.Policy{MaxBytesBilled: 1000}, Confirmed: true}, wantDry: 1, refused: "cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := bqrecorder.Options{}
			if tc.stmtType != "" {
				opts.StatementType = func(string) string { return tc.stmtType }
			}
			srv := bqrecorder.Start(t, opts)
			req := tc.req
			req.Statement = tc.stmt
			res, err := rows.Query(ctx, adapterAt(t, srv.URL), req)
			if err != nil {
				t.Fatal(err)
			}
			jobs := srv.Jobs()
			dry, real := 0, 0
			for i, j := range jobs {
				if j.DryRun {
					dry++
					if real > 0 {
						t.Errorf("job %d: a dry run after the query", i)
					}
					continue
				}
				real++
				wantCap := policy.Policy{MaxBytesBilled: tc.req.Policy.MaxBytesBilled}.Cap()
				if j.MaximumBytesBilled != wantCap {
					t.Errorf("maximumBytesBilled = %d, want %d", j.MaximumBytesBilled, wantCap)
				}
				if j.Labels[policy.PreviewLabelKey] != policy.PreviewLabelValue {
					t.Errorf("labels %v", j.Labels)
				}
				if j.Statement != tc.stmt {
					t.Errorf("statement %q", j.Statement)
				}
			}
			if dry != tc.wantDry || (real == 1) != tc.wantRun || real > 1 {
				t.Errorf("%d dry runs and %d queries sent, want %d and run=%v", dry, real, tc.wantDry, tc.wantRun)
			}
			if tc.refused == "" && res.Refused != "" || !strings.Contains(res.Refused, tc.refused) {
				t.Errorf("refused %q, want it to say %q", res.Refused, tc.refused)
			}
			if res.NeedsConfirmation != tc.needsConf {
				t.Errorf("needsConfirmation = %v", res.NeedsConfirmation)
			}
			if tc.wantDry > 0 && res.EstimatedBytes != 1024 { // bqrecorder's dry runs say 1024
				t.Errorf("estimate %d", res.EstimatedBytes)
			}
			if tc.wantRun {
				if res.JobID == "" || res.TotalBytesBilled != 10<<20 || res.TotalBytesProcessed != 100 || jsonOf(t, res.Rows) != `[{"n":1}]` {
					t.Errorf("result %+v rows %s", res, jsonOf(t, res.Rows))
				}
			} else if len(res.Rows) != 0 {
				t.Errorf("rows without a query: %s", jsonOf(t, res.Rows))
			}
		})
	}
}

func TestNoDryRunNoQuery(t *testing.T) {
	_, err := rows.Query(context.Background(), adapters.UnimplementedAdapter{}, rows.QueryRequest{Statement: "SELECT 1"})
	if err != rows.ErrNoDryRun {
		t.Errorf("err = %v", err)
	}
}

func TestConsoleURLs(t *testing.T) {
	if got, want := rows.ConsoleTableURL("bill", "p", "d", "t"), "https://console.cloud.google.com/bigquery?d=d&p=p&page=table&project=bill&t=t"; got != want {
		t.Errorf("table: %s", got)
	}
	if got, want := rows.ConsoleJobURL("bill", "EU", "dfd-rows-1"), "https://console.cloud.google.com/bigquery?j=bq%3AEU%3Adfd-rows-1&page=queryresults&project=bill"; got != want {
		t.Errorf("job: %s", got)
	}
	if got, want := rows.ConsoleJobURL("bill", "", "dfd-rows-1"), "https://console.cloud.google.com/bigquery?page=jobs&project=bill"; got != want {
		t.Errorf("job without location: %s", got)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 1 << 30: "1.0 GiB", 5 << 40: "5.0 TiB"} {
		if got := rows.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
