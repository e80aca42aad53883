package compile_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/jitprobe"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
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

// --- A scripted warehouse ---------------------------------------------------

// --- Running both sides -----------------------------------------------------

// jitOutcome is what one side made of a request.
type jitOutcome struct {
	response []byte
	err      string // "" on success
	calls    []string
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
	rec := &jitRecorder{Next: e.warehouse.Call}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := rt.JitCompile(ctx, e.files, req, rec.RPC)
	o := jitOutcome{response: resp}
	if err != nil {
		var se *engine.ScriptError
		if !errors.As(err, &se) {
			t.Fatalf("dfd's engine failed outside JavaScript: %v", err)
		}
		o.err = se.Message
	}
	for _, c := range rec.Calls {
		o.calls = append(o.calls, c.Method+" "+c.Request)
	}
	return o, rec.Calls
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

// The scripted warehouse, recorder, oracle JSON and probe programs are shared
// with package jit/nodeworker (internal/testkit/jitprobe); short local names keep the cases readable.
type (
	jitWarehouse = jitprobe.Warehouse
	recordedCall = jitprobe.RecordedCall
	jitRecorder  = jitprobe.Recorder
	oracleBuild  = jitprobe.OracleBuild
	oracleInput  = jitprobe.OracleInput
	oracleOutput = jitprobe.OracleOutput
)

var (
	engineError     = jitprobe.EngineError
	previewStart    = jitprobe.PreviewStart
	newJitWarehouse = jitprobe.NewWarehouse
	sameError       = jitprobe.SameError
	sortedStrings   = jitprobe.SortedStrings
	decodeResponse  = jitprobe.DecodeResponse
)

const (
	noWorkerMessage      = jitprobe.NoWorkerMessage
	probeEverything      = jitprobe.ProbeEverything
	probeIncremental     = jitprobe.ProbeIncremental
	probeCaughtExecute   = jitprobe.ProbeCaughtExecute
	probeOperationArray  = jitprobe.ProbeOperationArray
	probeUncaughtGet     = jitprobe.ProbeUncaughtGet
	probeUncaughtList    = jitprobe.ProbeUncaughtList
	probeUncaughtExecute = jitprobe.ProbeUncaughtExecute
	probeUncaughtDelete  = jitprobe.ProbeUncaughtDelete
	probeUndeclaredRef   = jitprobe.ProbeUndeclaredRef
	probeTypeError       = jitprobe.ProbeTypeError
	probeThrowString     = jitprobe.ProbeThrowString
	probeThrowError      = jitprobe.ProbeThrowError
	probeSyntaxError     = jitprobe.ProbeSyntaxError
	probeNeverSettles    = jitprobe.ProbeNeverSettles
	probeNonStringQuery  = jitprobe.ProbeNonStringQuery
)

func TestJitParity(t *testing.T) {
	node := testenv.Node(t) // it runs core's jitCompiler in Node as the oracle
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
