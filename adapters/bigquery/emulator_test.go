package bigquery

// Integration tests against goccy/bigquery-emulator (see internal/testkit/bqtest).
// Known emulator differences, which dfd is not bent to match: times are in
// seconds instead of milliseconds, syntax errors and missing tables come
// back as jobInternalError (INTERNAL here, INVALID_ARGUMENT/NOT_FOUND on
// BigQuery), dry runs carry no schema, and ARRAY parameters of non-strings
// arrive as strings.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// dataset creates a dataset of its own for a test, with the given tables
// (name → schema), and returns its name.
func dataset(t testing.TB, c *bigquery.Client, tables map[string]bigquery.Schema) string {
	t.Helper()
	name := strings.NewReplacer("/", "_", " ", "_", "-", "_").Replace(t.Name())
	ctx := context.Background()
	if err := c.Dataset(name).Create(ctx, &bigquery.DatasetMetadata{Description: "dfd test"}); err != nil {
		t.Fatal(err)
	}
	for tn, schema := range tables {
		if err := c.Dataset(name).Table(tn).Create(ctx, &bigquery.TableMetadata{Schema: schema}); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

func run(t testing.TB, c *bigquery.Client, sql string) {
	t.Helper()
	job, err := c.Query(sql).Run(context.Background())
	if err == nil {
		_, err = job.Wait(context.Background())
	}
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

var nestedSchema = bigquery.Schema{
	{Name: "id", Type: bigquery.IntegerFieldType, Required: true, Description: "order id"},
	{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
	{Name: "amount", Type: bigquery.NumericFieldType},
	{Name: "at", Type: bigquery.TimestampFieldType},
	{Name: "customer", Type: bigquery.RecordFieldType, Description: "who", Schema: bigquery.Schema{
		{Name: "name", Type: bigquery.StringFieldType},
		{Name: "addresses", Type: bigquery.RecordFieldType, Repeated: true, Schema: bigquery.Schema{
			{Name: "city", Type: bigquery.StringFieldType},
			{Name: "zip", Type: bigquery.StringFieldType},
		}},
	}},
}

func TestEmulatorGetTable(t *testing.T) {
	a, w := emulatorAdapter(t, Options{})
	c := bqtest.Shared(t).Client(t)
	ds := dataset(t, c, map[string]bigquery.Schema{"orders": nestedSchema})
	ctx := context.Background()
	if _, err := c.Dataset(ds).Table("orders").Update(ctx, bigquery.TableMetadataToUpdate{Description: "All orders"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Dataset(ds).Table("orders_v").Create(ctx, &bigquery.TableMetadata{ViewQuery: "SELECT id FROM " + ds + ".orders"}); err != nil {
		t.Fatal(err)
	}

	m, err := a.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "test", Schema: ds, Name: "orders"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &dataformpb.TableMetadata{
		Target:      &dataformpb.Target{Database: "test", Schema: ds, Name: "orders"},
		Type:        dataformpb.TableMetadata_TABLE,
		Description: "All orders",
		Fields: []*dataformpb.Field{
			{Name: "id", Description: "order id", Type: prim(dataformpb.Field_INTEGER)},
			{Name: "tags", Flags: repeated, Type: prim(dataformpb.Field_STRING)},
			{Name: "amount", Type: prim(dataformpb.Field_NUMERIC)},
			{Name: "at", Type: prim(dataformpb.Field_TIMESTAMP)},
			{Name: "customer", Description: "who", Type: record(
				&dataformpb.Field{Name: "name", Type: prim(dataformpb.Field_STRING)},
				&dataformpb.Field{Name: "addresses", Flags: repeated, Type: record(
					&dataformpb.Field{Name: "city", Type: prim(dataformpb.Field_STRING)},
					&dataformpb.Field{Name: "zip", Type: prim(dataformpb.Field_STRING)},
				)},
			)},
		},
		Bigquery: &dataformpb.TableMetadata_BigQuery{},
	}
	if m.GetLastUpdatedMillis() <= 0 {
		t.Errorf("lastUpdatedMillis = %d", m.GetLastUpdatedMillis())
	}
	m.LastUpdatedMillis = 0
	if !proto.Equal(m, want) {
		t.Errorf("GetTable:\n got %v\nwant %v", protojson.Format(m), protojson.Format(want))
	}

	// A target without a project is in the default database.
	v, err := a.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Schema: ds, Name: "orders_v"}})
	if err != nil || v.GetType() != dataformpb.TableMetadata_VIEW || v.GetTarget().GetDatabase() != "test" {
		t.Errorf("view: %v %v", v, err)
	}

	// Missing table and missing dataset: NOT_FOUND, asked once (no retries).
	w.reset()
	for _, tg := range []*dataformpb.Target{{Database: "test", Schema: ds, Name: "nope"}, {Database: "test", Schema: "no_such_ds", Name: "t"}} {
		_, err = a.GetTable(ctx, &dataformpb.GetTableRequest{Target: tg})
		if adapters.CodeOf(err) != adapters.NotFound || !strings.Contains(err.Error(), "tables.get "+adapters.TargetString(tg)) {
			t.Errorf("missing %s: %v", adapters.TargetString(tg), err)
		}
	}
	if n := len(w.requests()); n != 2 {
		t.Errorf("%d requests for two missing tables", n)
	}
}

var repeated = []dataformpb.Field_Flag{dataformpb.Field_REPEATED}

func prim(p dataformpb.Field_Primitive) *dataformpb.Field_Primitive_ {
	return &dataformpb.Field_Primitive_{Primitive: p}
}

func record(fs ...*dataformpb.Field) *dataformpb.Field_Struct {
	return &dataformpb.Field_Struct{Struct: &dataformpb.Fields{Fields: fs}}
}

func TestEmulatorListTablesPaging(t *testing.T) {
	a, w := emulatorAdapter(t, Options{PageSize: 5, Concurrency: 3})
	c := bqtest.Shared(t).Client(t)
	tables := map[string]bigquery.Schema{}
	for i := range 13 {
		tables[fmt.Sprintf("t%02d", i)] = bigquery.Schema{{Name: "x", Type: bigquery.StringFieldType}}
	}
	ds := dataset(t, c, tables)
	ctx := context.Background()
	resp, err := a.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "test", Schema: ds})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range resp.GetTables() {
		names = append(names, m.GetTarget().GetName())
		if m.GetTarget().GetDatabase() != "test" || m.GetTarget().GetSchema() != ds || len(m.GetFields()) != 1 {
			t.Errorf("table %v", m)
		}
	}
	if len(names) != 13 || !slices.IsSorted(names) {
		t.Errorf("names = %v", names)
	}
	// The emulator answers tables.list in one page whatever maxResults
	// says; paging itself is tested against a fake (TestFakeListPaging).
	if n := w.count("GET", "/datasets/"+ds+"/tables/"); n != 13 {
		t.Errorf("%d tables.get requests, want 13", n)
	}
	for _, r := range w.requests() {
		if strings.HasSuffix(r.Path, "/tables") && !strings.Contains(r.Query, "maxResults=5") {
			t.Errorf("list without page size: %s?%s", r.Path, r.Query)
		}
	}

	// No dataset: every dataset of the project.
	resp, err = a.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "test"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range resp.GetTables() {
		if m.GetTarget().GetSchema() == ds {
			n++
		}
	}
	if n != 13 {
		t.Errorf("project listing has %d tables of %s", n, ds)
	}

	// The request's project is honoured, never swapped for the default.
	w.reset()
	_, err = a.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "other-project", Schema: ds})
	if err == nil || !strings.Contains(w.requests()[0].Path, "/projects/other-project/datasets/"+ds+"/tables") {
		t.Errorf("other project: err=%v, first request %+v", err, w.requests()[0])
	}
	// No project: the default, with a note on the call record.
	rec := adapters.NewRecorder(a)
	if _, err := rec.ListTables(ctx, &dataformpb.ListTablesRequest{Schema: ds}); err != nil {
		t.Fatal(err)
	}
	if notes := rec.Calls()[0].Notes; len(notes) != 1 || !strings.Contains(notes[0], "default database test") {
		t.Errorf("notes = %q", notes)
	}
	// An empty or missing dataset.
	if resp, err := a.ListTables(ctx, &dataformpb.ListTablesRequest{Database: "test", Schema: "no_such_dataset"}); adapters.CodeOf(err) != adapters.NotFound {
		t.Errorf("missing dataset: %v %v", resp, err)
	}
}

func TestEmulatorExecute(t *testing.T) {
	a, w := emulatorAdapter(t, Options{PageSize: 4})
	c := bqtest.Shared(t).Client(t)
	ds := dataset(t, c, map[string]bigquery.Schema{"orders": nestedSchema})
	run(t, c, fmt.Sprintf(`INSERT INTO %s.orders (id, tags, amount, customer) VALUES
		(1, ['a', 'b'], NUMERIC '1.5', STRUCT('ann', [STRUCT('paris', '75001')])),
		(2, [], NULL, NULL),
		(3, ['c'], NUMERIC '10', STRUCT('bob', ARRAY<STRUCT<city STRING, zip STRING>>[]))`, ds))
	ctx := context.Background()

	t.Run("rows in BigQuery's raw form", func(t *testing.T) {
		resp, err := a.Execute(ctx, &dataformpb.ExecuteRequest{
			Statement:    fmt.Sprintf("SELECT id, tags, amount, customer FROM %s.orders ORDER BY id", ds),
			FetchResults: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetRows()) != 3 {
			t.Fatalf("%d rows", len(resp.GetRows()))
		}
		got, _ := protojson.Marshal(resp.GetRows()[0])
		want := `{"f":[{"v":"1"},{"v":[{"v":"a"},{"v":"b"}]},{"v":"1.5"},{"v":{"f":[{"v":"ann"},{"v":[{"v":{"f":[{"v":"paris"},{"v":"75001"}]}}]}]}}]}`
		if !jsonEqual(t, got, want) {
			t.Errorf("row 0 = %s\nwant    %s", got, want)
		}
		got, _ = protojson.Marshal(resp.GetRows()[1])
		if !jsonEqual(t, got, `{"f":[{"v":"2"},{"v":[]},{"v":null},{"v":null}]}`) {
			t.Errorf("row 1 = %s", got)
		}
		if len(resp.GetSchemaFields()) != 4 || resp.GetSchemaFields()[3].GetStruct() == nil || resp.GetSchemaFields()[1].GetFlags()[0] != dataformpb.Field_REPEATED {
			t.Errorf("schema = %v", resp.GetSchemaFields())
		}
		md := resp.GetExecutionMetadata().GetBigquery()
		if !strings.HasPrefix(md.GetJobId(), "dfd-") || md.GetTotalBytesProcessed() <= 0 {
			t.Errorf("metadata = %v", md)
		}
	})

	t.Run("verify reports the statement type and the dry run's answer", func(t *testing.T) {
		w.reset()
		v, err := a.Verify(ctx, &dataformpb.ExecuteRequest{
			Statement:       fmt.Sprintf("SELECT id FROM %s.orders", ds),
			BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		if v.StatementType != "SELECT" || len(v.Routines) != 0 || v.Response == nil {
			t.Errorf("verdict %+v", v)
		}
		if reqs := w.requests(); len(reqs) != 1 || !reqs[0].DryRun {
			t.Errorf("verify sent %+v, want one dry run", reqs)
		}
		if _, err := a.Verify(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1"}); adapters.CodeOf(err) != adapters.InvalidArgument {
			t.Errorf("verify of a request that is not a dry run: %v", err)
		}
	})

	t.Run("row limit pages until the limit", func(t *testing.T) {
		w.reset()
		resp, err := a.Execute(ctx, &dataformpb.ExecuteRequest{
			Statement: "SELECT x FROM UNNEST(GENERATE_ARRAY(1, 30)) AS x ORDER BY x", FetchResults: true, RowLimit: 10,
		})
		if err != nil || len(resp.GetRows()) != 10 {
			t.Fatalf("%d rows, %v", len(resp.GetRows()), err)
		}
		if n := w.count("GET", "/queries/"); n != 3 { // pages of 4, 4, 2
			t.Errorf("%d getQueryResults requests", n)
		}
		last := resp.GetRows()[9].GetFields()["f"].GetListValue().GetValues()[0].GetStructValue().GetFields()["v"].GetStringValue()
		if last != "10" {
			t.Errorf("row 10 = %q", last)
		}
	})

	t.Run("fetch_results unset still returns rows, as the CLI", func(t *testing.T) {
		resp, err := a.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1 AS one"})
		if err != nil || len(resp.GetRows()) != 1 || len(resp.GetSchemaFields()) != 1 || resp.GetExecutionMetadata().GetBigquery().GetJobId() == "" {
			t.Errorf("%v %v", resp, err)
		}
	})

	t.Run("named parameters", func(t *testing.T) {
		params, _ := structpb.NewStruct(map[string]any{
			"min": 2, "name": "bob", "flag": true, "ratio": 0.5, "tags": []any{"c", "zz"},
		})
		resp, err := a.Execute(ctx, &dataformpb.ExecuteRequest{
			Statement: fmt.Sprintf(`SELECT id, @flag AS flag, @ratio * 2 AS r FROM %s.orders
				WHERE id >= @min AND (customer.name = @name OR EXISTS (SELECT 1 FROM UNNEST(tags) tg WHERE tg IN UNNEST(@tags)))`, ds),
			Params: params, FetchResults: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := protojson.Marshal(&dataformpb.ExecuteResponse{Rows: resp.GetRows()})
		if !jsonEqual(t, got, `{"rows":[{"f":[{"v":"3"},{"v":"true"},{"v":"1"}]}]}`) {
			t.Errorf("rows = %s", got)
		}
	})

	t.Run("options reach the job", func(t *testing.T) {
		w.reset()
		_, err := a.Execute(ctx, &dataformpb.ExecuteRequest{
			Statement: "SELECT 1", FetchResults: true, ByteLimit: 1 << 20,
			BigQueryOptions: &dataformpb.BigQueryExecuteOptions{
				Labels: map[string]string{"team": "growth"}, JobPrefix: "preview/x", Location: "EU", Reservation: "none",
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		job := w.requests()[0].Job
		ref := job["jobReference"].(map[string]any)
		conf := job["configuration"].(map[string]any)
		q := conf["query"].(map[string]any)
		if !strings.HasPrefix(ref["jobId"].(string), "dfd-preview_x-") || ref["location"] != "EU" ||
			conf["labels"].(map[string]any)["team"] != "growth" || conf["reservation"] != "none" ||
			q["maximumBytesBilled"] != "1048576" || q["useLegacySql"] != false || q["priority"] != "INTERACTIVE" {
			t.Errorf("job = %v", job)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		resp, err := a.Execute(ctx, &dataformpb.ExecuteRequest{
			Statement: fmt.Sprintf("SELECT id FROM %s.orders", ds), FetchResults: true,
			BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true},
		})
		if err != nil || len(resp.GetRows()) != 0 || resp.GetExecutionMetadata().GetBigquery().GetJobId() != "" {
			t.Errorf("%v %v", resp, err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		w.reset()
		_, err := a.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELEC 1"})
		if err == nil || !strings.Contains(err.Error(), "Syntax error") {
			t.Errorf("bad SQL: %v", err)
		}
		// A statement that may write is submitted once, never retried.
		_, err = a.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "INSERT INTO no_such_ds.t (x) VALUES (1)"})
		if err == nil {
			t.Error("insert into a missing dataset succeeded")
		}
		if n := w.count("POST", "/jobs"); n != 2 {
			t.Errorf("%d job submissions for two failing statements", n)
		}
		_, err = a.Execute(ctx, &dataformpb.ExecuteRequest{Statement: " "})
		if adapters.CodeOf(err) != adapters.InvalidArgument {
			t.Errorf("empty statement: %v", err)
		}
		params, _ := structpb.NewStruct(map[string]any{"x": nil})
		_, err = a.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT @x", Params: params})
		if adapters.CodeOf(err) != adapters.InvalidArgument || !strings.Contains(err.Error(), "@x") {
			t.Errorf("null parameter: %v", err)
		}
	})
}

func TestEmulatorDeleteTable(t *testing.T) {
	a, w := emulatorAdapter(t, Options{})
	c := bqtest.Shared(t).Client(t)
	ds := dataset(t, c, map[string]bigquery.Schema{"scratch": {{Name: "x", Type: bigquery.StringFieldType}}})
	ctx := context.Background()
	target := &dataformpb.Target{Database: "test", Schema: ds, Name: "scratch"}
	if err := a.DeleteTable(ctx, &dataformpb.DeleteTableRequest{Target: target}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dataset(ds).Table("scratch").Metadata(ctx); err == nil {
		t.Error("table still there")
	}
	// Already gone: not an error, as in the Dataform CLI.
	if err := a.DeleteTable(ctx, &dataformpb.DeleteTableRequest{Target: target}); err != nil {
		t.Errorf("second delete: %v", err)
	}
	if n := w.count("DELETE", "/tables/scratch"); n != 2 {
		t.Errorf("%d DELETE requests", n)
	}
}

func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(g, w)
}
