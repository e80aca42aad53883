package offline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

const sample = "../../testdata/metadata/clickstream.json"

func load(t testing.TB, opts Options) *Adapter {
	t.Helper()
	a, err := Load(sample, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func tg(db, schema, name string) *dataformpb.Target {
	return &dataformpb.Target{Database: db, Schema: schema, Name: name}
}

func TestGetTable(t *testing.T) {
	a := load(t, Options{DefaultDatabase: "acme-clickstream"})
	tests := []struct {
		name     string
		target   *dataformpb.Target
		wantCode adapters.Code
		wantMsg  string
		check    func(*testing.T, *dataformpb.TableMetadata)
	}{
		{
			name:   "nested and repeated fields",
			target: tg("acme-collector", "landing", "raw_clicks"),
			check: func(t *testing.T, m *dataformpb.TableMetadata) {
				if m.GetType() != dataformpb.TableMetadata_TABLE || m.GetLabels()["source"] != "collector" ||
					m.GetLastUpdatedMillis() != 1718236800000 || !m.GetBigquery().GetHasStreamingBuffer() ||
					!strings.HasPrefix(m.GetDescription(), "Raw click events") {
					t.Errorf("metadata = %v", m)
				}
				var page, items, tags *dataformpb.Field
				for _, f := range m.GetFields() {
					switch f.GetName() {
					case "page":
						page = f
					case "items":
						items = f
					case "tags":
						tags = f
					}
				}
				if utm := page.GetStruct().GetFields()[2]; utm.GetName() != "utm" || len(utm.GetStruct().GetFields()) != 3 {
					t.Errorf("page.utm = %v", utm)
				}
				if !slices.Equal(items.GetFlags(), []dataformpb.Field_Flag{dataformpb.Field_REPEATED}) || len(items.GetStruct().GetFields()) != 3 {
					t.Errorf("items = %v", items)
				}
				if tags.GetPrimitive() != dataformpb.Field_STRING || len(tags.GetFlags()) != 1 {
					t.Errorf("tags = %v", tags)
				}
			},
		},
		{
			name:   "view",
			target: tg("acme-clickstream", "clicks", "campaign_clicks"),
			check: func(t *testing.T, m *dataformpb.TableMetadata) {
				if m.GetType() != dataformpb.TableMetadata_VIEW {
					t.Errorf("type = %v", m.GetType())
				}
			},
		},
		{
			name:   "empty database means the default",
			target: tg("", "clicks", "daily_clicks"),
			check: func(t *testing.T, m *dataformpb.TableMetadata) {
				if m.GetTarget().GetDatabase() != "acme-clickstream" {
					t.Errorf("target = %v", m.GetTarget())
				}
			},
		},
		{
			name:     "missing table",
			target:   tg("acme-clickstream", "clicks", "nope"),
			wantCode: adapters.NotFound,
			wantMsg:  "NOT_FOUND: table acme-clickstream.clicks.nope not found in offline snapshot " + sample,
		},
		{name: "wrong database", target: tg("acme-other", "clicks", "daily_clicks"), wantCode: adapters.NotFound},
		{name: "wrong schema", target: tg("acme-clickstream", "landing", "daily_clicks"), wantCode: adapters.NotFound},
		{name: "case matters", target: tg("acme-clickstream", "clicks", "Daily_Clicks"), wantCode: adapters.NotFound},
		{name: "no target", target: nil, wantCode: adapters.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: tt.target})
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if err != nil {
				if m != nil {
					t.Errorf("metadata %v returned with an error", m)
				}
				if tt.wantMsg != "" && err.Error() != tt.wantMsg {
					t.Errorf("error = %q, want %q", err, tt.wantMsg)
				}
				return
			}
			tt.check(t, m)
		})
	}
}

func TestGetTableReturnsACopy(t *testing.T) {
	a := load(t, Options{})
	req := &dataformpb.GetTableRequest{Target: tg("acme-clickstream", "clicks", "campaigns")}
	m, _ := a.GetTable(context.Background(), req)
	m.Description = "changed"
	m.Fields[0].Name = "changed"
	again, _ := a.GetTable(context.Background(), req)
	if again.GetDescription() == "changed" || again.GetFields()[0].GetName() == "changed" {
		t.Error("a caller's change leaked into the snapshot")
	}
}

func TestListTables(t *testing.T) {
	withDefault := load(t, Options{DefaultDatabase: "acme-clickstream"})
	noDefault := load(t, Options{})
	clicks := []string{
		"acme-clickstream.clicks.campaign_clicks", "acme-clickstream.clicks.campaigns",
		"acme-clickstream.clicks.click_sessions", "acme-clickstream.clicks.daily_clicks",
		"acme-clickstream.clicks.housekeeping_log", "acme-clickstream.clicks.scratch_backfill_20240601",
		"acme-clickstream.clicks.scratch_dedupe", "acme-clickstream.clicks.top_countries",
	}
	tests := []struct {
		name     string
		a        *Adapter
		req      *dataformpb.ListTablesRequest
		want     []string
		wantCode adapters.Code
	}{
		{"project and dataset", noDefault, &dataformpb.ListTablesRequest{Database: "acme-clickstream", Schema: "clicks"}, clicks, ""},
		{"other project", withDefault, &dataformpb.ListTablesRequest{Database: "acme-collector", Schema: "landing"},
			[]string{"acme-collector.landing.raw_clicks"}, ""},
		{"dataset of another project is not listed", withDefault, &dataformpb.ListTablesRequest{Database: "acme-collector", Schema: "clicks"}, nil, ""},
		{"all datasets of a project", noDefault, &dataformpb.ListTablesRequest{Database: "acme-clickstream"},
			append(slices.Clone(clicks), "acme-clickstream.clicks_assertions.daily_clicks_volume"), ""},
		{"default project", withDefault, &dataformpb.ListTablesRequest{Schema: "clicks"}, clicks, ""},
		{"no database and no default", noDefault, &dataformpb.ListTablesRequest{Schema: "clicks"}, nil, adapters.InvalidArgument},
		{"unknown project", noDefault, &dataformpb.ListTablesRequest{Database: "nope", Schema: "clicks"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.a.ListTables(context.Background(), tt.req)
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			var got []string
			for _, m := range resp.GetTables() {
				got = append(got, adapters.TargetString(m.GetTarget()))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tables = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestExecute(t *testing.T) {
	a := load(t, Options{})
	const avg = "SELECT AVG(clicks) AS avg_clicks FROM `acme-clickstream.clicks.daily_clicks`"
	const top = "SELECT country, SUM(clicks) AS clicks FROM `acme-clickstream.clicks.daily_clicks` GROUP BY country ORDER BY clicks DESC"
	tests := []struct {
		name       string
		req        *dataformpb.ExecuteRequest
		wantRows   int
		wantFields int
		wantCode   adapters.Code
		wantMsg    string
	}{
		{"exact", &dataformpb.ExecuteRequest{Statement: avg, FetchResults: true}, 1, 1, "", ""},
		{"whitespace differs", &dataformpb.ExecuteRequest{
			Statement: "\n  SELECT AVG(clicks)   AS avg_clicks\n\tFROM `acme-clickstream.clicks.daily_clicks`\n", FetchResults: true}, 1, 1, "", ""},
		{"fetchResults unset still returns rows, as the CLI", &dataformpb.ExecuteRequest{Statement: top}, 3, 2, "", ""},
		{"all rows", &dataformpb.ExecuteRequest{Statement: top, FetchResults: true}, 3, 2, "", ""},
		{"row limit", &dataformpb.ExecuteRequest{Statement: top, FetchResults: true, RowLimit: 2}, 2, 2, "", ""},
		{"row limit above count", &dataformpb.ExecuteRequest{Statement: top, FetchResults: true, RowLimit: 10}, 3, 2, "", ""},
		{"dry run has no rows", &dataformpb.ExecuteRequest{Statement: top, FetchResults: true,
			BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true}}, 0, 2, "", ""},
		{"dry run of unknown statement", &dataformpb.ExecuteRequest{Statement: "DELETE FROM t WHERE true",
			BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true}}, 0, 0, "", ""},
		{"case differs", &dataformpb.ExecuteRequest{Statement: strings.ToLower(avg)}, 0, 0, adapters.FailedPrecondition, ""},
		{"unknown statement", &dataformpb.ExecuteRequest{Statement: "SELECT\n  1"}, 0, 0, adapters.FailedPrecondition,
			"FAILED_PRECONDITION: statement not in snapshot " + sample + ": SELECT 1"},
		{"long unknown statement", &dataformpb.ExecuteRequest{Statement: "SELECT " + strings.Repeat("column_name, ", 20) + "x FROM t"},
			0, 0, adapters.FailedPrecondition,
			"FAILED_PRECONDITION: statement not in snapshot " + sample + ": SELECT column_name, column_name, column_name, column_name, column_name, column_n…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := a.Execute(context.Background(), tt.req)
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if err != nil {
				if tt.wantMsg != "" && err.Error() != tt.wantMsg {
					t.Errorf("error = %q\nwant    %q", err, tt.wantMsg)
				}
				return
			}
			if len(resp.GetRows()) != tt.wantRows || len(resp.GetSchemaFields()) != tt.wantFields {
				t.Errorf("rows = %d, fields = %d; want %d, %d", len(resp.GetRows()), len(resp.GetSchemaFields()), tt.wantRows, tt.wantFields)
			}
		})
	}
}

func TestExecuteRawRows(t *testing.T) {
	a := load(t, Options{})
	resp, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{
		Statement:    "SELECT visitor_id, page, tags, items FROM `acme-collector.landing.raw_clicks` ORDER BY clicked_at DESC LIMIT 3",
		FetchResults: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetExecutionMetadata().GetBigquery().GetTotalBytesProcessed(); got != 7340032 {
		t.Errorf("totalBytesProcessed = %d", got)
	}
	// The first row, as JiT code would walk it: row.fields.f.listValue.values[i].structValue.fields.v
	f := resp.GetRows()[0].GetFields()["f"].GetListValue().GetValues()
	if got := f[0].GetStructValue().GetFields()["v"].GetStringValue(); got != "v-83f1" {
		t.Errorf("visitor_id = %q", got)
	}
	page := f[1].GetStructValue().GetFields()["v"].GetStructValue().GetFields()["f"].GetListValue().GetValues()
	utm := page[2].GetStructValue().GetFields()["v"].GetStructValue().GetFields()["f"].GetListValue().GetValues()
	if got := utm[2].GetStructValue().GetFields()["v"].GetStringValue(); got != "summer" {
		t.Errorf("page.utm.campaign = %q", got)
	}
	tags := f[2].GetStructValue().GetFields()["v"].GetListValue().GetValues()
	if len(tags) != 2 || tags[1].GetStructValue().GetFields()["v"].GetStringValue() != "mobile" {
		t.Errorf("tags = %v", tags)
	}
	second := resp.GetRows()[1].GetFields()["f"].GetListValue().GetValues()
	referrer := second[1].GetStructValue().GetFields()["v"].GetStructValue().GetFields()["f"].GetListValue().GetValues()[1]
	if referrer.GetStructValue().GetFields()["v"].GetNullValue() != 0 || referrer.GetStructValue().GetFields()["v"].GetKind() == nil {
		t.Errorf("NULL referrer = %v", referrer)
	}
}

func TestDeleteTable(t *testing.T) {
	a := load(t, Options{})
	target := tg("acme-clickstream", "clicks", "scratch_dedupe")
	err := a.DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: target})
	if adapters.CodeOf(err) != adapters.PermissionDenied {
		t.Errorf("err = %v", err)
	}
	if _, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: target}); err != nil {
		t.Errorf("table gone after DeleteTable: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		json string
		opts Options
		want []string // substrings of the error
	}{
		{"not json", `{"tables": [`, Options{}, []string{"bad.json", "unexpected"}},
		{"unknown top-level key", `{"table": []}`, Options{}, []string{"bad.json", `unknown field "table"`, "line 1"}},
		{"unknown field with position", "{\"tables\": [\n  {\"target\": {\"schema\": \"s\", \"name\": \"t\"},\n   \"colums\": []}]}",
			Options{DefaultDatabase: "p"}, []string{"(line 3:4)", `unknown field "colums"`}},
		{"bad enum", `{"tables": [{"target": {"database": "p", "schema": "s", "name": "t"}, "type": "MATVIEW"}]}`, Options{},
			[]string{"bad.json", "MATVIEW"}},
		{"missing name", `{"tables": [{"target": {"database": "p", "schema": "s"}}]}`, Options{},
			[]string{"bad.json", "tables[0]", "schema and a name"}},
		{"no database, no default", `{"tables": [{"target": {"schema": "s", "name": "t"}}]}`, Options{},
			[]string{"tables[0] (s.t)", "no default database"}},
		{"duplicate table", `{"tables": [{"target": {"database": "p", "schema": "s", "name": "t"}}, {"target": {"schema": "s", "name": "t"}}]}`,
			Options{DefaultDatabase: "p"}, []string{"tables[1]", "p.s.t appears twice"}},
		{"duplicate statement", `{"queries": [{"statement": "SELECT 1"}, {"statement": " SELECT\n1 "}]}`, Options{},
			[]string{"queries[1]", "appears twice: SELECT 1"}},
		{"empty statement", `{"queries": [{"statement": "  "}]}`, Options{}, []string{"queries[0]", "empty statement"}},
		{"rows not structs", `{"queries": [{"statement": "SELECT 1", "response": {"rows": [1]}}]}`, Options{}, []string{"bad.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.json")
			if err := os.WriteFile(path, []byte(tt.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.json")
	_, err := Load(path, Options{})
	if err == nil || err.Error() != "offline snapshot "+path+" does not exist" {
		t.Errorf("err = %v", err)
	}
}

func TestParseAcceptsProtoNames(t *testing.T) {
	a, err := Parse("inline", []byte(`{"tables": [{"target": {"database": "p", "schema": "s", "name": "t"},
		"last_updated_millis": 5, "type": 2}], "queries": [{"statement": "SELECT 1", "response": {"schema_fields": [{"name": "x"}]}}]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: tg("p", "s", "t")})
	if err != nil || m.GetLastUpdatedMillis() != 5 || m.GetType() != dataformpb.TableMetadata_VIEW {
		t.Errorf("m = %v, err = %v", m, err)
	}
}

// The sample file round-trips: what Load reads is what protojson writes for
// the same messages (guards against fields silently lost in conversion).
func TestSampleRoundTrip(t *testing.T) {
	a := load(t, Options{})
	data, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"lastUpdatedMillis": "1718236800000"`) {
		t.Fatal("sample changed; update this test")
	}
	raw := a.tables[key{"acme-collector", "landing", "raw_clicks"}]
	b, err := protojson.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	back := new(dataformpb.TableMetadata)
	if err := protojson.Unmarshal(b, back); err != nil || !proto.Equal(raw, back) {
		t.Errorf("round trip differs: %v", err)
	}
	if len(a.tables) != 10 || len(a.queries) != 4 {
		t.Errorf("tables = %d, queries = %d", len(a.tables), len(a.queries))
	}
}

func TestNormalizeStatement(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"  SELECT\n\t1  ", "SELECT 1"},
		{"SELECT 'a   b'", "SELECT 'a b'"},
		{"select 1;", "select 1;"},
		{"\r\n", ""},
	}
	for _, tt := range tests {
		if got := NormalizeStatement(tt.in); got != tt.want {
			t.Errorf("NormalizeStatement(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func BenchmarkOfflineGetTable(b *testing.B) {
	a := load(b, Options{})
	req := &dataformpb.GetTableRequest{Target: tg("acme-collector", "landing", "raw_clicks")}
	ctx := context.Background()
	for b.Loop() {
		if _, err := a.GetTable(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// The example in the package documentation is a valid snapshot.
func TestDocExample(t *testing.T) {
	doc := `{"tables": [{
  "target": {"database": "acme", "schema": "clicks", "name": "daily_clicks"},
  "type": "TABLE",
  "description": "Clicks per day",
  "labels": {"team": "growth"},
  "lastUpdatedMillis": "1718000000000",
  "fields": [
    {"name": "click_date", "primitive": "DATE"},
    {"name": "tags", "primitive": "STRING", "flags": ["REPEATED"]},
    {"name": "geo", "struct": {"fields": [{"name": "country", "primitive": "STRING"}]}}
  ]
}],
"queries": [{
  "statement": "SELECT COUNT(*) AS n FROM ` + "`acme.clicks.daily_clicks`" + `",
  "response": {
    "schemaFields": [{"name": "n", "primitive": "INTEGER"}],
    "rows": [{"f": [{"v": "42"}]}]
  }
}]}`
	a, err := Parse("doc", []byte(doc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{
		Statement: "SELECT COUNT(*) AS n FROM `acme.clicks.daily_clicks`", FetchResults: true})
	if err != nil || len(resp.GetRows()) != 1 {
		t.Errorf("resp = %v, err = %v", resp, err)
	}
}

// "datasets" names the datasets a snapshot lists in full; a dataset
// without a database takes the default one, and one without a schema is a
// load error.
func TestListsDatasets(t *testing.T) {
	a, err := Parse("s.json", []byte(`{"tables": [], "datasets": [{"database": "p", "schema": "raw"}, {"schema": "landing"}]}`), Options{DefaultDatabase: "dflt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		database, schema string
		want             bool
	}{
		{"p", "raw", true},
		{"dflt", "landing", true},
		{"", "landing", true},
		{"p", "landing", false},
		{"p", "RAW", false},
	} {
		if got := a.Lists(tc.database, tc.schema); got != tc.want {
			t.Errorf("Lists(%q, %q) = %v, want %v", tc.database, tc.schema, got, tc.want)
		}
	}
	if _, err := Parse("s.json", []byte(`{"datasets": [{"database": "p"}]}`), Options{}); err == nil || !strings.Contains(err.Error(), "datasets[0]: a dataset needs a schema") {
		t.Errorf("a dataset without a schema: %v", err)
	}
}
