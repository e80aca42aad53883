// Package jitprobe is test support shared by the JiT parity tests of
// package compile (goja against core's jitCompiler in Node) and package
// jit/nodeworker (the Node.js worker against goja): a scripted warehouse that
// answers DbAdapter calls as dfd's BigQuery adapter does, a recorder of calls
// and answers in the JiT oracle's JSON form (compile/testdata/jit_oracle.js),
// and probe programs that reach what the fixtures' own JiT code does not.
package jitprobe

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func Target(db, schema, name string) *dataformpb.Target {
	return &dataformpb.Target{Database: db, Schema: schema, Name: name}
}

// EngineError matches errors whose wording belongs to the JavaScript engine.
// Node adds a code to some: "TypeError [ERR_INVALID_ARG_TYPE]: …".
var EngineError = regexp.MustCompile(`^(SyntaxError|TypeError|ReferenceError|RangeError)( \[[A-Z_]+\])?:`)

// PreviewStart is the execution start time of preview execution data.
var PreviewStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// --- A scripted warehouse ---------------------------------------------------

// Warehouse answers DbAdapter calls the way dfd's BigQuery adapter does:
// metadata with nested fields, rows in BigQuery's raw f/v form as
// google.protobuf.Struct plus schema fields, NOT_FOUND errors for unknown
// tables and datasets, and a permission error for one table.
type Warehouse struct {
	tables map[string]*dataformpb.TableMetadata // by database.schema.name
}

func MetaField(name string, p dataformpb.Field_Primitive, repeated bool) *dataformpb.Field {
	f := &dataformpb.Field{Name: name, Type: &dataformpb.Field_Primitive_{Primitive: p}}
	if repeated {
		f.Flags = []dataformpb.Field_Flag{dataformpb.Field_REPEATED}
	}
	return f
}

func MetaRecord(name string, fields ...*dataformpb.Field) *dataformpb.Field {
	return &dataformpb.Field{Name: name, Type: &dataformpb.Field_Struct{Struct: &dataformpb.Fields{Fields: fields}}}
}

func NewWarehouse(now time.Time) *Warehouse {
	const (
		str = dataformpb.Field_STRING
		i64 = dataformpb.Field_INTEGER
		ts  = dataformpb.Field_TIMESTAMP
		day = dataformpb.Field_DATE
	)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	w := &Warehouse{tables: map[string]*dataformpb.TableMetadata{}}
	add := func(db, schema, name string, typ dataformpb.TableMetadata_Type, updated int64, fields ...*dataformpb.Field) *dataformpb.TableMetadata {
		m := &dataformpb.TableMetadata{
			Target:            Target(db, schema, name),
			Type:              typ,
			Fields:            fields,
			LastUpdatedMillis: updated,
		}
		w.tables[db+"."+schema+"."+name] = m
		return m
	}
	raw := add("acme-collector", "landing", "raw_clicks", dataformpb.TableMetadata_TABLE, ago(time.Hour),
		MetaField("click_id", str, false), MetaField("visitor_id", str, false), MetaField("clicked_at", ts, false),
		MetaField("country", str, false), MetaField("campaign_id", str, false),
		MetaRecord("device", MetaField("type", str, false), MetaField("os", str, false),
			MetaRecord("screen", MetaField("width", i64, false), MetaField("height", i64, false))),
		MetaField("tags", str, true))
	raw.Description = "Raw click events, streamed by the collector."
	raw.Labels = map[string]string{"source": "collector", "pii": "none"}
	raw.Bigquery = &dataformpb.TableMetadata_BigQuery{HasStreamingBuffer: true}
	add("acme-clickstream", "clicks", "campaigns", dataformpb.TableMetadata_TABLE, ago(48*time.Hour),
		MetaField("campaign_id", str, false), MetaField("name", str, false), MetaField("started_on", day, false))
	add("acme-clickstream", "clicks", "daily_clicks", dataformpb.TableMetadata_TABLE, ago(20*time.Hour),
		MetaField("click_date", day, false), MetaField("country", str, false), MetaField("campaign_name", str, false), MetaField("clicks", i64, false))
	add("acme-clickstream", "clicks", "click_sessions", dataformpb.TableMetadata_TABLE, ago(19*time.Hour),
		MetaField("session_id", i64, false), MetaField("session_date", day, false), MetaField("visitor_id", str, false), MetaField("clicks", i64, false))
	add("acme-clickstream", "clicks", "top_countries", dataformpb.TableMetadata_VIEW, ago(30*24*time.Hour),
		MetaField("country", str, false), MetaField("clicks", i64, false))
	add("acme-clickstream", "clicks", "scratch_old_1", dataformpb.TableMetadata_TABLE, ago(30*24*time.Hour), MetaField("x", i64, false))
	add("acme-clickstream", "clicks", "scratch_locked", dataformpb.TableMetadata_TABLE, ago(60*24*time.Hour), MetaField("x", i64, false))
	add("acme-clickstream", "clicks", "scratch_fresh", dataformpb.TableMetadata_TABLE, ago(time.Hour), MetaField("x", i64, false))
	return w
}

func BQRow(cells ...any) *structpb.Struct {
	f := make([]any, len(cells))
	for i, c := range cells {
		f[i] = map[string]any{"v": c}
	}
	s, err := structpb.NewStruct(map[string]any{"f": f})
	if err != nil {
		panic(err)
	}
	return s
}

func (w *Warehouse) Call(_ context.Context, method string, req []byte) ([]byte, error) {
	switch method {
	case "GetTable":
		var r dataformpb.GetTableRequest
		if err := proto.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("INVALID_ARGUMENT: %w", err)
		}
		t := r.GetTarget()
		m, ok := w.tables[t.GetDatabase()+"."+t.GetSchema()+"."+t.GetName()]
		if !ok {
			return nil, fmt.Errorf("NOT_FOUND: Not found: Table %s:%s.%s", t.GetDatabase(), t.GetSchema(), t.GetName())
		}
		return proto.Marshal(m)
	case "ListTables":
		var r dataformpb.ListTablesRequest
		if err := proto.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("INVALID_ARGUMENT: %w", err)
		}
		if r.GetDatabase() == "" {
			return nil, errors.New("INVALID_ARGUMENT: ListTablesRequest.database must be supplied")
		}
		var resp dataformpb.ListTablesResponse
		for _, m := range w.tables {
			if m.GetTarget().GetDatabase() == r.GetDatabase() && m.GetTarget().GetSchema() == r.GetSchema() {
				resp.Tables = append(resp.Tables, m)
			}
		}
		if len(resp.Tables) == 0 {
			return nil, fmt.Errorf("NOT_FOUND: Not found: Dataset %s:%s", r.GetDatabase(), r.GetSchema())
		}
		sort.Slice(resp.Tables, func(i, j int) bool {
			return resp.Tables[i].GetTarget().GetName() < resp.Tables[j].GetTarget().GetName()
		})
		return proto.Marshal(&resp)
	case "DeleteTable":
		var r dataformpb.DeleteTableRequest
		if err := proto.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("INVALID_ARGUMENT: %w", err)
		}
		t := r.GetTarget()
		key := t.GetDatabase() + "." + t.GetSchema() + "." + t.GetName()
		if _, ok := w.tables[key]; !ok {
			return nil, fmt.Errorf("NOT_FOUND: Not found: Table %s:%s.%s", t.GetDatabase(), t.GetSchema(), t.GetName())
		}
		if t.GetName() == "scratch_locked" {
			return nil, fmt.Errorf("PERMISSION_DENIED: Access Denied: Table %s:%s.%s: Permission bigquery.tables.delete denied", t.GetDatabase(), t.GetSchema(), t.GetName())
		}
		// google.protobuf.Empty; the engine sends nil as empty bytes.
		return nil, nil
	case "Execute":
		var r dataformpb.ExecuteRequest
		if err := proto.Unmarshal(req, &r); err != nil {
			return nil, fmt.Errorf("INVALID_ARGUMENT: %w", err)
		}
		return w.execute(&r)
	}
	return nil, fmt.Errorf("UNIMPLEMENTED: unknown DbAdapter method %s", method)
}

func (w *Warehouse) execute(r *dataformpb.ExecuteRequest) ([]byte, error) {
	s := r.GetStatement()
	if strings.Contains(s, "FAIL_ME") {
		return nil, errors.New(`INVALID_ARGUMENT: Syntax error: Unexpected identifier "FAIL_ME" at [1:8]`)
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	resp := &dataformpb.ExecuteResponse{ExecutionMetadata: &dataformpb.ExecutionMetadata{Bigquery: &dataformpb.ExecutionMetadata_BigqueryMetadata{
		JobId: fmt.Sprintf("dataform_%016x", h.Sum64()), TotalBytesProcessed: 10485760, TotalBytesBilled: 10485760,
	}}}
	switch {
	case strings.Contains(s, "AVG(clicks)"):
		resp.SchemaFields = []*dataformpb.Field{MetaField("avg_clicks", dataformpb.Field_FLOAT, false)}
		resp.Rows = []*structpb.Struct{BQRow("1234.5")}
	case strings.Contains(s, "COUNT(*)"):
		resp.SchemaFields = []*dataformpb.Field{MetaField("n", dataformpb.Field_INTEGER, false)}
		resp.Rows = []*structpb.Struct{BQRow("42")}
	case strings.Contains(s, "SELECT *") && strings.Contains(s, "raw_clicks"):
		// A nested RECORD, a REPEATED column and a NULL, as BigQuery's REST
		// API returns them.
		resp.SchemaFields = []*dataformpb.Field{
			MetaField("click_id", dataformpb.Field_STRING, false),
			MetaRecord("device", MetaField("type", dataformpb.Field_STRING, false), MetaField("os", dataformpb.Field_STRING, false)),
			MetaField("tags", dataformpb.Field_STRING, true),
			MetaField("campaign_id", dataformpb.Field_STRING, false),
		}
		resp.Rows = []*structpb.Struct{
			BQRow("c-1", map[string]any{"f": []any{map[string]any{"v": "mobile"}, map[string]any{"v": "ios"}}},
				[]any{map[string]any{"v": "promo"}, map[string]any{"v": "spring"}}, "c-001"),
			BQRow("c-2", map[string]any{"f": []any{map[string]any{"v": "desktop"}, map[string]any{"v": nil}}}, []any{}, nil),
			BQRow("c-3", nil, []any{}, nil),
		}
	}
	if !r.GetFetchResults() {
		resp.Rows = nil
	} else if l := r.GetRowLimit(); l > 0 && int64(len(resp.Rows)) > l {
		resp.Rows = resp.Rows[:l]
	}
	return proto.Marshal(resp)
}

// RecordedCall is one recorded DbAdapter call, in the oracle's JSON form.
type RecordedCall struct {
	Method   string  `json:"method"`
	Request  string  `json:"request"`
	Response *string `json:"response,omitempty"`
	Error    *string `json:"error,omitempty"`
}

// Recorder answers calls with next and records each call and its answer.
type Recorder struct {
	Next  engine.RPC
	mu    sync.Mutex
	Calls []RecordedCall
}

func (r *Recorder) RPC(ctx context.Context, method string, req []byte) ([]byte, error) {
	resp, err := r.Next(ctx, method, req)
	c := RecordedCall{Method: method, Request: base64.StdEncoding.EncodeToString(req)}
	if err != nil {
		msg := err.Error()
		c.Error = &msg
	} else {
		s := base64.StdEncoding.EncodeToString(resp)
		c.Response = &s
	}
	r.mu.Lock()
	r.Calls = append(r.Calls, c)
	r.mu.Unlock()
	return resp, err
}

type OracleBuild struct {
	Graph   string  `json:"graph"`
	Target  string  `json:"target"`
	JitCode *string `json:"jitCode,omitempty"`
}

type OracleInput struct {
	Request string         `json:"request,omitempty"`
	Build   *OracleBuild   `json:"build,omitempty"`
	Answers []RecordedCall `json:"answers"`
	// CLIWorker is the project directory when the request is to run in the
	// official CLI's JiT worker.
	CLIWorker string `json:"cliWorker,omitempty"`
}

type OracleOutput struct {
	Request  string  `json:"request"`
	Response *string `json:"response"`
	Error    *string `json:"error"` // null: the CLI's worker sent no message
	Calls    []struct {
		Method  string `json:"method"`
		Request string `json:"request"`
	} `json:"calls"`
	Unexpected []string `json:"unexpected"`
}

// NoWorkerMessage stands for the error of the CLI's worker when JiT code throws
// something that is not an Error: it sends `e.stack || e.message`, which is
// undefined then (jit_worker.ts:113), and the runner reports an empty
// message.
const NoWorkerMessage = "<no message>"

// SameError compares error messages, ignoring the wording of engine-made
// errors but not their class.
func SameError(a, b string) bool {
	if a == b {
		return true
	}
	ma, mb := EngineError.FindStringSubmatch(a), EngineError.FindStringSubmatch(b)
	return ma != nil && mb != nil && ma[1] == mb[1]
}

func SortedStrings(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

func DecodeResponse(b []byte) string {
	if b == nil {
		return "<none>"
	}
	var r dataformpb.JitCompilationResponse
	if err := proto.Unmarshal(b, &r); err != nil {
		return fmt.Sprintf("<undecodable %x: %v>", b, err)
	}
	return prototext.Format(&r)
}

// Test-local JiT code, run on the fixture's actions (their targets and
// dependencies), for what the fixture's own code does not reach: every jctx
// member in one response, nested metadata, raw f/v rows, uncaught adapter
// errors of each method, core errors, engine errors, non-Error throws,
// synchronous throws and code that never settles.
const (
	ProbeEverything = `async (jctx) => {
  const describeField = (f) => f.name + ":" + (f.struct ? "{" + f.struct.fields.map(describeField).join(",") + "}" : f.primitive) + ((f.flags || []).length ? "[]" : "");
  const meta = await jctx.adapter.getTable({ target: { database: "acme-collector", schema: "landing", name: "raw_clicks" } });
  const listing = await jctx.adapter.listTables({ database: jctx.database(), schema: jctx.schema() });
  const sample = await jctx.adapter.execute({ statement: "SELECT * FROM " + jctx.ref("raw_clicks") + " LIMIT 2", fetchResults: true, rowLimit: 2 });
  const cells = sample.rows.map(r => r.fields.f.listValue.values.map(c => JSON.stringify(c.structValue.fields.v)).join("|"));
  const count = await jctx.adapter.execute({ statement: "SELECT COUNT(*) AS n FROM " + jctx.self(), fetchResults: true, rowLimit: 1 });
  const n = count.rows[0].fields.f.listValue.values[0].structValue.fields.v.stringValue;
  await jctx.adapter.deleteTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "scratch_old_1" } });
  let deleteError = null;
  try {
    await jctx.adapter.deleteTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "scratch_locked" } });
  } catch (e) {
    deleteError = e.message;
  }
  const facts = {
    self: jctx.self(), name: jctx.name(), schema: jctx.schema(), database: jctx.database(),
    ref: jctx.ref("raw_clicks"), refSchemaName: jctx.ref("landing", "raw_clicks"), refObject: jctx.ref({ schema: "clicks", name: "campaigns" }),
    resolve: jctx.resolve("campaigns"), when: [jctx.when(jctx.incremental(), "inc", "full"), jctx.when(true, "yes"), jctx.when(false, "no")],
    data: jctx.data, dataKeys: Object.keys(jctx.data), executionData: jctx.executionData,
    fields: meta.fields.map(describeField), description: meta.description, labels: meta.labels, type: meta.type,
    lastUpdatedMillis: String(meta.lastUpdatedMillis), streaming: meta.bigquery.hasStreamingBuffer,
    tables: listing.tables.map(t => t.target.name + "@" + typeof t.lastUpdatedMillis),
    cells, schemaFields: sample.schemaFields.map(describeField), n,
    job: count.executionMetadata.bigquery.jobId, bytes: String(count.executionMetadata.bigquery.totalBytesProcessed),
    deleteError
  };
  return { query: "SELECT " + JSON.stringify(facts), preOps: ["-- pre " + jctx.self()], postOps: ["-- post " + jctx.name()] };
}`
	ProbeIncremental = `async (jctx) => {
  const meta = await jctx.adapter.getTable({ target: { database: jctx.database(), schema: jctx.schema(), name: jctx.name() } });
  const cols = meta.fields.map(f => f.name).join(", ");
  return {
    query: jctx.when(jctx.incremental(),
      "SELECT " + cols + " FROM " + jctx.ref("raw_clicks") + " WHERE ts > (SELECT MAX(ts) FROM " + jctx.self() + ")",
      "SELECT " + cols + " FROM " + jctx.resolve("daily_clicks")),
    preOps: jctx.incremental() ? ["-- incremental " + JSON.stringify(jctx.executionData)] : []
  };
}`
	ProbeCaughtExecute = `async (jctx) => {
  let note = "ok";
  try {
    await jctx.adapter.execute({ statement: "SELECT FAIL_ME", fetchResults: true });
  } catch (e) {
    note = e.message;
  }
  return "SELECT 1 AS failed FROM " + jctx.ref("daily_clicks") + " WHERE " + JSON.stringify(note) + " IS NULL";
}`
	ProbeOperationArray  = `async (jctx) => [jctx.self(), "SELECT " + JSON.stringify(jctx.data.markets.countries)]`
	ProbeUncaughtGet     = `async (jctx) => { const t = await jctx.adapter.getTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "no_such_table" } }); return ["SELECT " + t.fields.length]; }`
	ProbeUncaughtList    = `async (jctx) => { const l = await jctx.adapter.listTables({ database: jctx.database(), schema: "no_such_dataset" }); return ["SELECT " + l.tables.length]; }`
	ProbeUncaughtExecute = `async (jctx) => (await jctx.adapter.execute({ statement: "SELECT FAIL_ME" })).rows.length + ""`
	ProbeUncaughtDelete  = `async (jctx) => { await jctx.adapter.deleteTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "scratch_locked" } }); return "SELECT 1"; }`
	ProbeUndeclaredRef   = `async (jctx) => "SELECT * FROM " + jctx.ref("top_countries")`
	ProbeTypeError       = `async (jctx) => "SELECT " + jctx.executionData.runTargets.length`
	ProbeThrowString     = `async () => { throw "no partition column"; }`
	ProbeThrowError      = `async (jctx) => { await jctx.adapter.listTables({ database: jctx.database(), schema: jctx.schema() }); throw new RangeError("lookback " + jctx.data.lookback_days + " out of range"); }`
	ProbeSyntaxError     = `async (jctx) => { return 'x' +; }`
	ProbeNeverSettles    = `async (jctx) => { await new Promise(() => {}); return "SELECT 1"; }`
	ProbeNonStringQuery  = `async (jctx) => ({ query: "SELECT 1", preOps: [{ sql: "SELECT 0" }] })`
)

// --- The function-shapes fixture --------------------------------------------

// ShapesFixture is the fixture whose JiT code is function text that is easy
// to get wrong (arrow functions with parenthesised bodies and the like; see
// testdata/README.md): core stores fn.toString() as the jitCode, so these
// actions run only if the engine's function text is V8's.
const ShapesFixture = "jit_function_shapes"

// ShapeActions are the JiT actions of ShapesFixture.
var ShapeActions = []string{
	"clicks_by_country",      // table: async (jctx) => ({ query, preOps, postOps })
	"campaign_names",         // view: jctx => (Promise.resolve(`…`))
	"visits",                 // incremental: async function (jctx) { … `${`…`}` … }
	"visits_by_campaign",     // incremental: async (jctx) => c ? ({ … }) : ({ … })
	"country_rollup",         // table: an arrow from an object, calling an arrow
	"recent_clicks",          // table: an arrow from an array, (((await …).rows.length) ? … : …)
	"archive_old_clicks",     // operation: async (jctx) => ([ … ])
	"refresh_campaigns",      // operation: JiT code given as a string
	"campaign_names_present", // assertion: comments before the closing parenthesis
}
