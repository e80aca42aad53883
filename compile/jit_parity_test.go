package compile_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testenv"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The JiT parity test runs every JiT action of the jit_actions fixture, and
// test-local JiT code on the same actions, in dfd's engine (goja) with a
// scripted DbAdapter whose calls and answers are recorded, and then in Node
// with core's own jitCompiler answering the same calls from the recording
// (testdata/jit_oracle.js). Responses must be byte-identical; errors
// identical, except that errors made by the JavaScript engine itself
// (SyntaxError, TypeError, …) only need the same class, because V8 and goja
// word them differently; the DbAdapter calls must be the same.
//
// Requests are checked too: for every request shaped as the CLI shapes
// them, the oracle builds the CLI's request from the same graph bytes with
// the CLI's own protobuf code, and it must equal JitRequest +
// EncodeJitRequest byte for byte. Some cases also run in the official CLI's
// JiT worker itself (vm2 and all); -short leaves those out.

// jitCores are the cores whose jitCompiler the fixture runs on (3.0.52 has
// no Assertion.jitCode; see testdata/README.md).
var jitCores = []string{"3.0.62", "3.0.59"}

// vm2Catch is what the CLI's vm2 sandbox inserts into every `catch (e) {`
// of user code; it ends up in the CLI's jitCode (testdata/README.md).
var vm2Catch = regexp.MustCompile(`[A-Za-z_$][\w$]*=VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL\.handleException\([A-Za-z_$][\w$]*\);`)

// engineError matches errors whose wording belongs to the JavaScript engine.
// Node adds a code to some: "TypeError [ERR_INVALID_ARG_TYPE]: …".
var engineError = regexp.MustCompile(`^(SyntaxError|TypeError|ReferenceError|RangeError)( \[[A-Z_]+\])?:`)

// previewStart is the execution start time of preview execution data.
var previewStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// --- A scripted warehouse ---------------------------------------------------

// jitWarehouse answers DbAdapter calls the way dfd's BigQuery adapter does:
// metadata with nested fields, rows in BigQuery's raw f/v form as
// google.protobuf.Struct plus schema fields, NOT_FOUND errors for unknown
// tables and datasets, and a permission error for one table.
type jitWarehouse struct {
	tables map[string]*dataformpb.TableMetadata // by database.schema.name
}

func metaField(name string, p dataformpb.Field_Primitive, repeated bool) *dataformpb.Field {
	f := &dataformpb.Field{Name: name, Type: &dataformpb.Field_Primitive_{Primitive: p}}
	if repeated {
		f.Flags = []dataformpb.Field_Flag{dataformpb.Field_REPEATED}
	}
	return f
}

func metaRecord(name string, fields ...*dataformpb.Field) *dataformpb.Field {
	return &dataformpb.Field{Name: name, Type: &dataformpb.Field_Struct{Struct: &dataformpb.Fields{Fields: fields}}}
}

func newJitWarehouse(now time.Time) *jitWarehouse {
	const (
		str = dataformpb.Field_STRING
		i64 = dataformpb.Field_INTEGER
		ts  = dataformpb.Field_TIMESTAMP
		day = dataformpb.Field_DATE
	)
	ago := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	w := &jitWarehouse{tables: map[string]*dataformpb.TableMetadata{}}
	add := func(db, schema, name string, typ dataformpb.TableMetadata_Type, updated int64, fields ...*dataformpb.Field) *dataformpb.TableMetadata {
		m := &dataformpb.TableMetadata{
			Target:            jitTarget(db, schema, name),
			Type:              typ,
			Fields:            fields,
			LastUpdatedMillis: updated,
		}
		w.tables[db+"."+schema+"."+name] = m
		return m
	}
	raw := add("acme-collector", "landing", "raw_clicks", dataformpb.TableMetadata_TABLE, ago(time.Hour),
		metaField("click_id", str, false), metaField("visitor_id", str, false), metaField("clicked_at", ts, false),
		metaField("country", str, false), metaField("campaign_id", str, false),
		metaRecord("device", metaField("type", str, false), metaField("os", str, false),
			metaRecord("screen", metaField("width", i64, false), metaField("height", i64, false))),
		metaField("tags", str, true))
	raw.Description = "Raw click events, streamed by the collector."
	raw.Labels = map[string]string{"source": "collector", "pii": "none"}
	raw.Bigquery = &dataformpb.TableMetadata_BigQuery{HasStreamingBuffer: true}
	add("acme-clickstream", "clicks", "campaigns", dataformpb.TableMetadata_TABLE, ago(48*time.Hour),
		metaField("campaign_id", str, false), metaField("name", str, false), metaField("started_on", day, false))
	add("acme-clickstream", "clicks", "daily_clicks", dataformpb.TableMetadata_TABLE, ago(20*time.Hour),
		metaField("click_date", day, false), metaField("country", str, false), metaField("campaign_name", str, false), metaField("clicks", i64, false))
	add("acme-clickstream", "clicks", "click_sessions", dataformpb.TableMetadata_TABLE, ago(19*time.Hour),
		metaField("session_id", i64, false), metaField("session_date", day, false), metaField("visitor_id", str, false), metaField("clicks", i64, false))
	add("acme-clickstream", "clicks", "top_countries", dataformpb.TableMetadata_VIEW, ago(30*24*time.Hour),
		metaField("country", str, false), metaField("clicks", i64, false))
	add("acme-clickstream", "clicks", "scratch_old_1", dataformpb.TableMetadata_TABLE, ago(30*24*time.Hour), metaField("x", i64, false))
	add("acme-clickstream", "clicks", "scratch_locked", dataformpb.TableMetadata_TABLE, ago(60*24*time.Hour), metaField("x", i64, false))
	add("acme-clickstream", "clicks", "scratch_fresh", dataformpb.TableMetadata_TABLE, ago(time.Hour), metaField("x", i64, false))
	return w
}

func bqRow(cells ...any) *structpb.Struct {
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

func (w *jitWarehouse) call(_ context.Context, method string, req []byte) ([]byte, error) {
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

func (w *jitWarehouse) execute(r *dataformpb.ExecuteRequest) ([]byte, error) {
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
		resp.SchemaFields = []*dataformpb.Field{metaField("avg_clicks", dataformpb.Field_FLOAT, false)}
		resp.Rows = []*structpb.Struct{bqRow("1234.5")}
	case strings.Contains(s, "COUNT(*)"):
		resp.SchemaFields = []*dataformpb.Field{metaField("n", dataformpb.Field_INTEGER, false)}
		resp.Rows = []*structpb.Struct{bqRow("42")}
	case strings.Contains(s, "SELECT *") && strings.Contains(s, "raw_clicks"):
		// A nested RECORD, a REPEATED column and a NULL, as BigQuery's REST
		// API returns them.
		resp.SchemaFields = []*dataformpb.Field{
			metaField("click_id", dataformpb.Field_STRING, false),
			metaRecord("device", metaField("type", dataformpb.Field_STRING, false), metaField("os", dataformpb.Field_STRING, false)),
			metaField("tags", dataformpb.Field_STRING, true),
			metaField("campaign_id", dataformpb.Field_STRING, false),
		}
		resp.Rows = []*structpb.Struct{
			bqRow("c-1", map[string]any{"f": []any{map[string]any{"v": "mobile"}, map[string]any{"v": "ios"}}},
				[]any{map[string]any{"v": "promo"}, map[string]any{"v": "spring"}}, "c-001"),
			bqRow("c-2", map[string]any{"f": []any{map[string]any{"v": "desktop"}, map[string]any{"v": nil}}}, []any{}, nil),
			bqRow("c-3", nil, []any{}, nil),
		}
	}
	if !r.GetFetchResults() {
		resp.Rows = nil
	} else if l := r.GetRowLimit(); l > 0 && int64(len(resp.Rows)) > l {
		resp.Rows = resp.Rows[:l]
	}
	return proto.Marshal(resp)
}

// recordedCall is one recorded DbAdapter call, in the oracle's JSON form.
type recordedCall struct {
	Method   string  `json:"method"`
	Request  string  `json:"request"`
	Response *string `json:"response,omitempty"`
	Error    *string `json:"error,omitempty"`
}

// jitRecorder answers calls with next and records each call and its answer.
type jitRecorder struct {
	next  engine.RPC
	mu    sync.Mutex
	calls []recordedCall
}

func (r *jitRecorder) rpc(ctx context.Context, method string, req []byte) ([]byte, error) {
	resp, err := r.next(ctx, method, req)
	c := recordedCall{Method: method, Request: base64.StdEncoding.EncodeToString(req)}
	if err != nil {
		msg := err.Error()
		c.Error = &msg
	} else {
		s := base64.StdEncoding.EncodeToString(resp)
		c.Response = &s
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return resp, err
}

// --- Running both sides -----------------------------------------------------

// jitOutcome is what one side made of a request.
type jitOutcome struct {
	response []byte
	err      string // "" on success
	calls    []string
}

type oracleBuild struct {
	Graph   string  `json:"graph"`
	Target  string  `json:"target"`
	JitCode *string `json:"jitCode,omitempty"`
}

type oracleInput struct {
	Request string         `json:"request,omitempty"`
	Build   *oracleBuild   `json:"build,omitempty"`
	Answers []recordedCall `json:"answers"`
	// CLIWorker is the project directory when the request is to run in the
	// official CLI's JiT worker.
	CLIWorker string `json:"cliWorker,omitempty"`
}

type oracleOutput struct {
	Request  string  `json:"request"`
	Response *string `json:"response"`
	Error    *string `json:"error"` // null: the CLI's worker sent no message
	Calls    []struct {
		Method  string `json:"method"`
		Request string `json:"request"`
	} `json:"calls"`
	Unexpected []string `json:"unexpected"`
}

// jitEnv is one compiled fixture with what both sides need.
type jitEnv struct {
	core       string
	root       string
	bundle     *engine.Bundle
	bundlePath string
	files      engine.Files
	res        *compile.Result
	node       string
	oracle     string
	cliModules string
	warehouse  *jitWarehouse
}

func (e *jitEnv) runDFD(t *testing.T, req []byte) (jitOutcome, []recordedCall) {
	t.Helper()
	rt, err := e.bundle.NewRuntime(engine.Options{Root: e.root, Log: func(level, msg string) { t.Logf("console.%s: %s", level, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	rec := &jitRecorder{next: e.warehouse.call}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := rt.JitCompile(ctx, e.files, req, rec.rpc)
	o := jitOutcome{response: resp}
	if err != nil {
		var se *engine.ScriptError
		if !errors.As(err, &se) {
			t.Fatalf("dfd's engine failed outside JavaScript: %v", err)
		}
		o.err = se.Message
	}
	for _, c := range rec.calls {
		o.calls = append(o.calls, c.Method+" "+c.Request)
	}
	return o, rec.calls
}

func (e *jitEnv) runOracle(t *testing.T, in oracleInput) (jitOutcome, oracleOutput) {
	t.Helper()
	if in.Answers == nil {
		in.Answers = []recordedCall{}
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, e.oracle, e.bundlePath, e.cliModules)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var out oracleOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("oracle output %q: %v\n%s", stdout.String(), err, stderr.String())
	}
	if len(out.Unexpected) > 0 {
		t.Errorf("the oracle saw DbAdapter calls that dfd did not make: %v", out.Unexpected)
	}
	var o jitOutcome
	switch {
	case out.Response != nil:
		if o.response, err = base64.StdEncoding.DecodeString(*out.Response); err != nil {
			t.Fatal(err)
		}
	case out.Error != nil:
		o.err = *out.Error
	default:
		o.err = noWorkerMessage
	}
	for _, c := range out.Calls {
		o.calls = append(o.calls, c.Method+" "+c.Request)
	}
	return o, out
}

// noWorkerMessage stands for the error of the CLI's worker when JiT code throws
// something that is not an Error: it sends `e.stack || e.message`, which is
// undefined then (jit_worker.ts:113), and the runner reports an empty
// message.
const noWorkerMessage = "<no message>"

// sameError compares error messages, ignoring the wording of engine-made
// errors but not their class.
func sameError(a, b string) bool {
	if a == b {
		return true
	}
	ma, mb := engineError.FindStringSubmatch(a), engineError.FindStringSubmatch(b)
	return ma != nil && mb != nil && ma[1] == mb[1]
}

// stackFrame starts the first frame line of a V8 stack.
var stackFrame = regexp.MustCompile(`\n\s+at `)

// workerError is the message part of the CLI worker's error, which is the
// error's stack: "Name: message" (possibly several lines) and then frames.
func workerError(s string) string {
	if loc := stackFrame.FindStringIndex(s); loc != nil {
		return s[:loc[0]]
	}
	return s
}

func sortedStrings(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// diffOutcomes lists how what dfd made of a request differs from what the
// other side made of it.
func diffOutcomes(side string, got, want jitOutcome, wantErr func(string) string) []string {
	var diffs []string
	switch {
	case got.err == "" && want.err == "":
		if !bytes.Equal(got.response, want.response) {
			diffs = append(diffs, fmt.Sprintf("responses differ:\ndfd: %s\n%s: %s", decodeResponse(got.response), side, decodeResponse(want.response)))
		}
	case got.err != "" && want.err != "":
		w := wantErr(want.err)
		if w == noWorkerMessage && strings.HasPrefix(got.err, "Uncaught ") {
			break
		}
		if !sameError(got.err, w) {
			diffs = append(diffs, fmt.Sprintf("errors differ:\ndfd: %s\n%s: %s", got.err, side, w))
		}
	default:
		diffs = append(diffs, fmt.Sprintf("outcomes differ:\ndfd: %s %q\n%s: %s %q", decodeResponse(got.response), got.err, side, decodeResponse(want.response), wantErr(want.err)))
	}
	if g, w := sortedStrings(got.calls), sortedStrings(want.calls); strings.Join(g, "\n") != strings.Join(w, "\n") {
		diffs = append(diffs, fmt.Sprintf("DbAdapter calls differ:\ndfd: %v\n%s: %v", g, side, w))
	}
	return diffs
}

// jitCase is one request run on both sides.
type jitCase struct {
	name string
	// action is a JiT action of the fixture; its request is built with
	// JitRequest, then changed by the fields below.
	action        string
	jitCode       string // replaces the action's jitCode
	retype        bool   // replace the target type with targetType (the request is then not the CLI's)
	targetType    dataformpb.JitCompilationTargetType
	executionData bool // with PreviewExecutionData (not something the CLI sends)
	// want is a substring of the error both sides must give, or "" for
	// success.
	want string
	// worker also runs the request in the official CLI's JiT worker (slow:
	// a worker boots the CLI bundle and vm2 for each request). workerWant,
	// when set, is a substring of the error the worker gives where dfd
	// deliberately differs from the CLI.
	worker     bool
	workerWant string
	// divergence, for the cores in divergentCores, explains a known
	// difference between dfd and the CLI: the case then must differ (and
	// the test says so), and fails once it no longer does.
	divergence     string
	divergentCores []string
}

// jitStats sums up what the cases exercised.
type jitStats struct {
	mu                     sync.Mutex
	methods                map[string]int
	caughtErrs, uncaughtEr int
	succeeded, failed      int
	requestsCompared       int
	workerRuns             int
}

func (e *jitEnv) run(t *testing.T, c jitCase, st *jitStats) jitOutcome {
	t.Helper()
	a, err := compile.FindAction(e.res.Graph, c.action)
	if err != nil {
		t.Fatal(err)
	}
	opts := compile.JitOptions{}
	if c.executionData {
		opts.ExecutionData = compile.PreviewExecutionData(a, previewStart)
	}
	req, err := compile.JitRequest(e.res.Graph, a, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.jitCode != "" {
		req.JitCode = c.jitCode
	}
	cliShaped := !c.retype && !c.executionData
	if c.retype {
		req.CompilationTargetType = c.targetType
	}
	reqBytes, err := compile.EncodeJitRequest(req, e.res.GraphWire)
	if err != nil {
		t.Fatal(err)
	}

	got, calls := e.runDFD(t, reqBytes)

	in := oracleInput{Answers: calls}
	if cliShaped {
		// Let the oracle build the request the CLI's way from the same graph
		// bytes; it must be dfd's, byte for byte.
		b := &oracleBuild{Graph: base64.StdEncoding.EncodeToString(e.res.GraphWire), Target: a.Name()}
		if c.jitCode != "" {
			b.JitCode = &c.jitCode
		}
		in.Build = b
	} else {
		in.Request = base64.StdEncoding.EncodeToString(reqBytes)
	}
	node, out := e.runOracle(t, in)
	if cliShaped {
		cliReq, err := base64.StdEncoding.DecodeString(out.Request)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cliReq, reqBytes) {
			var cr dataformpb.JitCompilationRequest
			_ = proto.Unmarshal(cliReq, &cr)
			t.Errorf("request differs from the CLI's:\ndfd: %x\ncli: %x\ncli decoded: %v\ndfd decoded: %v", reqBytes, cliReq, &cr, req)
		}
	}

	diffs := diffOutcomes("node", got, node, func(s string) string { return s })
	if c.worker && !testing.Short() {
		worker, _ := e.runOracle(t, oracleInput{Request: base64.StdEncoding.EncodeToString(reqBytes), Answers: calls, CLIWorker: e.root})
		if c.workerWant == "" {
			diffs = append(diffs, diffOutcomes("CLI worker", got, worker, workerError)...)
		} else if !strings.Contains(worker.err, c.workerWant) {
			t.Errorf("the CLI's worker gave %s %q, want an error containing %q", decodeResponse(worker.response), worker.err, c.workerWant)
		} else {
			t.Logf("the CLI's own worker fails here, dfd deliberately does not: %s", workerError(worker.err))
		}
	}
	divergent := c.divergence != "" && slices.Contains(c.divergentCores, e.core)
	switch {
	case divergent && len(diffs) == 0:
		t.Errorf("known divergence no longer seen (%s): remove it from the test", c.divergence)
	case divergent:
		t.Logf("KNOWN DIVERGENCE from the CLI: %s\n%s", c.divergence, strings.Join(diffs, "\n"))
	default:
		for _, d := range diffs {
			t.Error(d)
		}
	}
	if c.want == "" && got.err != "" {
		t.Errorf("failed: %s", got.err)
	}
	if c.want != "" && !strings.Contains(got.err, c.want) {
		t.Errorf("error %q, want it to contain %q", got.err, c.want)
	}
	if got.err == "" {
		t.Logf("response: %s", decodeResponse(got.response))
	} else {
		t.Logf("error (dfd): %s\nerror (node): %s", got.err, node.err)
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	if cliShaped {
		st.requestsCompared++
	}
	if c.worker && !testing.Short() {
		st.workerRuns++
	}
	if got.err == "" {
		st.succeeded++
	} else {
		st.failed++
	}
	for _, call := range calls {
		st.methods[call.Method]++
		if call.Error != nil {
			if got.err != "" && strings.Contains(got.err, *call.Error) {
				st.uncaughtEr++
			} else {
				st.caughtErrs++
			}
		}
	}
	return got
}

func decodeResponse(b []byte) string {
	if b == nil {
		return "<none>"
	}
	var r dataformpb.JitCompilationResponse
	if err := proto.Unmarshal(b, &r); err != nil {
		return fmt.Sprintf("<undecodable %x: %v>", b, err)
	}
	return prototext.Format(&r)
}

// cliJitCodes compiles root with the official CLI and returns the jitCode
// of each action by database.schema.name.
func cliJitCodes(t *testing.T, node, root string) map[string]string {
	t.Helper()
	cmd := exec.Command(node, testenv.CLIBundle(t), "compile", root, "--json")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dataform compile: %v\n%s", err, stderr.String())
	}
	type action struct {
		Target struct {
			Database, Schema, Name string
		}
		JitCode string
	}
	var g struct {
		Tables, Operations, Assertions []action
	}
	if err := json.Unmarshal(stdout.Bytes(), &g); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, list := range [][]action{g.Tables, g.Operations, g.Assertions} {
		for _, a := range list {
			if a.JitCode != "" {
				out[a.Target.Database+"."+a.Target.Schema+"."+a.Target.Name] = a.JitCode
			}
		}
	}
	return out
}

// Test-local JiT code, run on the fixture's actions (their targets and
// dependencies), for what the fixture's own code does not reach: every jctx
// member in one response, nested metadata, raw f/v rows, uncaught adapter
// errors of each method, core errors, engine errors, non-Error throws,
// synchronous throws and code that never settles.
const (
	probeEverything = `async (jctx) => {
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
	probeIncremental = `async (jctx) => {
  const meta = await jctx.adapter.getTable({ target: { database: jctx.database(), schema: jctx.schema(), name: jctx.name() } });
  const cols = meta.fields.map(f => f.name).join(", ");
  return {
    query: jctx.when(jctx.incremental(),
      "SELECT " + cols + " FROM " + jctx.ref("raw_clicks") + " WHERE ts > (SELECT MAX(ts) FROM " + jctx.self() + ")",
      "SELECT " + cols + " FROM " + jctx.resolve("daily_clicks")),
    preOps: jctx.incremental() ? ["-- incremental " + JSON.stringify(jctx.executionData)] : []
  };
}`
	probeCaughtExecute = `async (jctx) => {
  let note = "ok";
  try {
    await jctx.adapter.execute({ statement: "SELECT FAIL_ME", fetchResults: true });
  } catch (e) {
    note = e.message;
  }
  return "SELECT 1 AS failed FROM " + jctx.ref("daily_clicks") + " WHERE " + JSON.stringify(note) + " IS NULL";
}`
	probeOperationArray  = `async (jctx) => [jctx.self(), "SELECT " + JSON.stringify(jctx.data.markets.countries)]`
	probeUncaughtGet     = `async (jctx) => { const t = await jctx.adapter.getTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "no_such_table" } }); return ["SELECT " + t.fields.length]; }`
	probeUncaughtList    = `async (jctx) => { const l = await jctx.adapter.listTables({ database: jctx.database(), schema: "no_such_dataset" }); return ["SELECT " + l.tables.length]; }`
	probeUncaughtExecute = `async (jctx) => (await jctx.adapter.execute({ statement: "SELECT FAIL_ME" })).rows.length + ""`
	probeUncaughtDelete  = `async (jctx) => { await jctx.adapter.deleteTable({ target: { database: jctx.database(), schema: jctx.schema(), name: "scratch_locked" } }); return "SELECT 1"; }`
	probeUndeclaredRef   = `async (jctx) => "SELECT * FROM " + jctx.ref("top_countries")`
	probeTypeError       = `async (jctx) => "SELECT " + jctx.executionData.runTargets.length`
	probeThrowString     = `async () => { throw "no partition column"; }`
	probeThrowError      = `async (jctx) => { await jctx.adapter.listTables({ database: jctx.database(), schema: jctx.schema() }); throw new RangeError("lookback " + jctx.data.lookback_days + " out of range"); }`
	probeSyntaxError     = `async (jctx) => { return 'x' +; }`
	probeNeverSettles    = `async (jctx) => { await new Promise(() => {}); return "SELECT 1"; }`
	probeNonStringQuery  = `async (jctx) => ({ query: "SELECT 1", preOps: [{ sql: "SELECT 0" }] })`
)

func TestJitParity(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("JiT parity test skipped: node not found in PATH (it runs core's jitCompiler in Node as the oracle)")
	}
	oracle, err := filepath.Abs(filepath.Join("testdata", "jit_oracle.js"))
	if err != nil {
		t.Fatal(err)
	}
	// .../node_modules/@dataform/cli/bundle.js → .../node_modules
	cliModules := filepath.Dir(filepath.Dir(filepath.Dir(testenv.CLIBundle(t))))

	const (
		table       = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE
		operation   = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_OPERATION
		unspecified = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_UNSPECIFIED
	)
	// The fixture's JiT actions and what running each gives, with the CLI's
	// request (no execution data) and with preview execution data.
	fixture := []struct {
		action   string
		typ      dataformpb.JitCompilationTargetType
		vm2      bool   // its function has `catch (e)`, which vm2 rewrites
		cliError string // with the CLI's request
	}{
		{action: "daily_clicks", typ: table, vm2: true},
		{action: "campaign_clicks", typ: table},
		{action: "click_sessions", typ: dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_INCREMENTAL_TABLE},
		// `jctx.executionData.executionId` outside any try: the CLI sends no
		// execution data, so this action fails under `dataform run`.
		{action: "drop_stale_scratch_tables", typ: operation, vm2: true, cliError: "TypeError:"},
		{action: "refresh_campaign_cache", typ: operation}, // JiT code given as a string: vm2 leaves it alone
		{action: "daily_clicks_volume", typ: dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_ASSERTION, vm2: true},
	}
	probes := []jitCase{
		{name: "probe/everything/table", action: "daily_clicks", jitCode: probeEverything, worker: true},
		{name: "probe/everything/table+execution-data", action: "daily_clicks", jitCode: probeEverything, executionData: true},
		{name: "probe/incremental", action: "click_sessions", jitCode: probeIncremental, executionData: true},
		{name: "probe/assertion/caught-execute-error", action: "daily_clicks_volume", jitCode: probeCaughtExecute},
		{name: "probe/operation/array", action: "drop_stale_scratch_tables", jitCode: probeOperationArray},
		{name: "probe/uncaught/getTable", action: "drop_stale_scratch_tables", jitCode: probeUncaughtGet, want: "Error: NOT_FOUND: Not found: Table acme-clickstream:clicks.no_such_table", worker: true},
		{name: "probe/uncaught/listTables", action: "drop_stale_scratch_tables", jitCode: probeUncaughtList, want: "Error: NOT_FOUND: Not found: Dataset acme-clickstream:no_such_dataset"},
		{name: "probe/uncaught/execute", action: "daily_clicks", jitCode: probeUncaughtExecute, want: `Error: INVALID_ARGUMENT: Syntax error: Unexpected identifier "FAIL_ME"`},
		{name: "probe/uncaught/deleteTable", action: "drop_stale_scratch_tables", jitCode: probeUncaughtDelete, want: "Error: PERMISSION_DENIED: Access Denied"},
		{name: "probe/undeclared-ref", action: "campaign_clicks", jitCode: probeUndeclaredRef, want: "Error: Undeclared dependency referenced: top_countries."},
		{name: "probe/engine-type-error", action: "daily_clicks", jitCode: probeTypeError, want: "TypeError:"},
		{name: "probe/throw-string", action: "daily_clicks_volume", jitCode: probeThrowString, want: "Uncaught no partition column", worker: true},
		{name: "probe/throw-after-call", action: "click_sessions", jitCode: probeThrowError, want: "RangeError: lookback 3 out of range"},
		{name: "probe/sync/syntax-error", action: "daily_clicks", jitCode: probeSyntaxError, want: "SyntaxError:", worker: true},
		{name: "probe/sync/unspecified-target-type", action: "daily_clicks", retype: true, targetType: unspecified, want: "Error: Unrecognized compilation target type: 0"},
		{name: "probe/sync/unknown-target-type", action: "daily_clicks", retype: true, targetType: 99, want: "Error: Unrecognized compilation target type: 99"},
		// Core 3.0.62's protobufjs writes strings with the global Buffer,
		// which the CLI's vm2 sandbox has and dfd's engine does not: the
		// CLI's Buffer.byteLength rejects a non-string result field, while
		// protobufjs's own UTF-8 writer (dfd) quietly encodes "". Core
		// 3.0.59 looks Buffer up with require("buffer"), which the sandbox
		// refuses, so there everyone writes "".
		{name: "probe/non-string-query", action: "daily_clicks", jitCode: probeNonStringQuery, worker: true,
			divergence: "a non-string field of a JiT result is a TypeError in the CLI but encoded as \"\" by dfd (no global Buffer in dfd's engine)", divergentCores: []string{"3.0.62"}},
		{name: "probe/never-settles", action: "daily_clicks", jitCode: probeNeverSettles, want: "waiting for something that never happens"},
	}

	for _, v := range jitCores {
		t.Run("core "+v, func(t *testing.T) {
			root := testenv.ProjectCopy(t, testenv.Fixture("jit_actions"), v)
			p, err := project.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			bundlePath := filepath.Join(root, "node_modules", "@dataform", "core", "bundle.js")
			core := &project.Core{Version: v, Dir: filepath.Dir(bundlePath), BundlePath: bundlePath}
			res, err := compile.Run(context.Background(), p, core, compile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if errs := res.Errors(); len(errs) > 0 {
				t.Fatalf("the fixture has compilation errors: %v", errs)
			}
			bundle, err := engine.LoadBundle(bundlePath, v)
			if err != nil {
				t.Fatal(err)
			}
			files, err := engine.OpenDir(root)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { files.Close() })
			env := &jitEnv{core: v, root: root, bundle: bundle, bundlePath: bundlePath, files: files, res: res,
				node: node, oracle: oracle, cliModules: cliModules, warehouse: newJitWarehouse(time.Now())}

			// Every JiT action of the graph is in the table above.
			var jitActions []string
			for _, tb := range res.Graph.GetTables() {
				if tb.GetJitCode() != "" {
					jitActions = append(jitActions, tb.GetTarget().GetName())
				}
			}
			for _, o := range res.Graph.GetOperations() {
				if o.GetJitCode() != "" {
					jitActions = append(jitActions, o.GetTarget().GetName())
				}
			}
			for _, a := range res.Graph.GetAssertions() {
				if a.GetJitCode() != "" {
					jitActions = append(jitActions, a.GetTarget().GetName())
				}
			}
			var listed []string
			for _, f := range fixture {
				listed = append(listed, f.action)
				a, err := compile.FindAction(res.Graph, f.action)
				if err != nil {
					t.Fatal(err)
				}
				if a.TargetType() != f.typ {
					t.Errorf("%s: target type %s, want %s", f.action, a.TargetType(), f.typ)
				}
			}
			if strings.Join(sortedStrings(jitActions), ",") != strings.Join(sortedStrings(listed), ",") {
				t.Fatalf("JiT actions of the graph %v, test table %v", jitActions, listed)
			}

			cliCode := cliJitCodes(t, node, root)
			st := &jitStats{methods: map[string]int{}}
			// Each case starts its own Node processes: run them side by side.
			t.Run("cases", func(t *testing.T) {
				for _, f := range fixture {
					t.Run("fixture/"+f.action, func(t *testing.T) {
						t.Parallel()
						env.run(t, jitCase{action: f.action, want: f.cliError, worker: true}, st)
					})
					t.Run("fixture/"+f.action+"/execution-data", func(t *testing.T) {
						t.Parallel()
						env.run(t, jitCase{action: f.action, executionData: true}, st)
					})
					// The CLI's jitCode of the same action, vm2 catch rewrites
					// included, runs in dfd's engine (and in Node, and in the
					// CLI's worker) to the response of dfd's own jitCode.
					t.Run("fixture/"+f.action+"/cli-jitcode", func(t *testing.T) {
						t.Parallel()
						a, err := compile.FindAction(res.Graph, f.action)
						if err != nil {
							t.Fatal(err)
						}
						code, ok := cliCode[a.Target.GetDatabase()+"."+a.Target.GetSchema()+"."+a.Target.GetName()]
						if !ok {
							t.Fatalf("the CLI's graph has no jitCode for %s", a.Name())
						}
						if got := len(vm2Catch.FindAllString(code, -1)) > 0; got != f.vm2 {
							t.Fatalf("vm2 catch rewrite in the CLI's jitCode: %v, want %v\n%s", got, f.vm2, code)
						}
						if clean := vm2Catch.ReplaceAllString(code, ""); clean != a.JitCode {
							t.Errorf("the CLI's jitCode without vm2's rewrites differs from dfd's:\ncli: %s\ndfd: %s", clean, a.JitCode)
						}
						c := jitCase{action: f.action, jitCode: code, executionData: true, worker: true}
						if f.vm2 {
							// vm2 refuses, in the JiT worker's `new Function`, source
							// that names its internal state, so `dataform run` cannot
							// run the jitCode that `dataform compile` produced for a
							// function with `catch (e)`. dfd runs it (the engine's
							// pass-through), and so does Node with the oracle's.
							c.workerWant = "SyntaxError: Use of internal vm2 state variable"
						}
						got := env.run(t, c, st)
						req, err := compile.JitRequest(res.Graph, a, compile.JitOptions{ExecutionData: compile.PreviewExecutionData(a, previewStart)})
						if err != nil {
							t.Fatal(err)
						}
						reqBytes, err := compile.EncodeJitRequest(req, res.GraphWire)
						if err != nil {
							t.Fatal(err)
						}
						clean, _ := env.runDFD(t, reqBytes)
						if !bytes.Equal(got.response, clean.response) || got.err != clean.err {
							t.Errorf("the CLI's jitCode gives %s %q, dfd's %s %q",
								decodeResponse(got.response), got.err, decodeResponse(clean.response), clean.err)
						}
					})
				}
				for _, c := range probes {
					t.Run(c.name, func(t *testing.T) {
						t.Parallel()
						env.run(t, c, st)
					})
				}
			})

			// The cases must have reached what they are meant to reach (when
			// -run did not pick some of them).
			if total := 3*len(fixture) + len(probes); st.succeeded+st.failed < total {
				t.Logf("%d of %d cases ran: coverage not checked", st.succeeded+st.failed, total)
				return
			}
			for _, m := range []string{"GetTable", "ListTables", "Execute", "DeleteTable"} {
				if st.methods[m] == 0 {
					t.Errorf("no case called %s", m)
				}
			}
			if st.caughtErrs == 0 || st.uncaughtEr == 0 {
				t.Errorf("adapter errors: %d caught, %d uncaught; want both", st.caughtErrs, st.uncaughtEr)
			}
			t.Logf("core %s: %d cases (%d succeeded, %d failed alike), %d also in the CLI's worker, %d requests identical to the CLI's, adapter calls %v, adapter errors %d caught / %d uncaught",
				v, st.succeeded+st.failed, st.succeeded, st.failed, st.workerRuns, st.requestsCompared, st.methods, st.caughtErrs, st.uncaughtEr)
		})
	}
}
