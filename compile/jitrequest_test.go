package compile_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func jitTarget(db, schema, name string) *dataformpb.Target {
	return &dataformpb.Target{Database: db, Schema: schema, Name: name}
}

// testGraph is a small graph with every kind of action, a project prefix
// (effective names differ from canonical ones) and names shared across
// schemas.
func testGraph(t *testing.T) *dataformpb.CompiledGraph {
	t.Helper()
	data, err := structpb.NewStruct(map[string]any{"lookback": 3, "markets": map[string]any{"countries": []any{"US", "CA"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &dataformpb.CompiledGraph{
		Tables: []*dataformpb.Table{
			{Target: jitTarget("p", "s", "dev_daily"), CanonicalTarget: jitTarget("p", "s", "daily"), EnumType: dataformpb.TableType_TABLE, Type: "table",
				DependencyTargets: []*dataformpb.Target{jitTarget("src", "landing", "raw"), jitTarget("p", "s", "dev_campaigns")},
				JitCode:           "async (jctx) => 'select 1'", FileName: "definitions/daily.js"},
			{Target: jitTarget("p", "s", "dev_view"), CanonicalTarget: jitTarget("p", "s", "view"), EnumType: dataformpb.TableType_VIEW, JitCode: "async () => 'v'"},
			{Target: jitTarget("p", "s", "dev_sessions"), CanonicalTarget: jitTarget("p", "s", "sessions"), Type: "incremental", JitCode: "async () => 'i'"},
			{Target: jitTarget("p", "s", "dev_campaigns"), CanonicalTarget: jitTarget("p", "s", "campaigns"), EnumType: dataformpb.TableType_TABLE, Query: "select 2"},
			{Target: jitTarget("p", "s", "dev_off"), CanonicalTarget: jitTarget("p", "s", "off"), EnumType: dataformpb.TableType_TABLE, JitCode: "async () => 'o'", Disabled: true},
			{Target: jitTarget("p", "s", "dev_odd"), CanonicalTarget: jitTarget("p", "s", "odd"), EnumType: dataformpb.TableType_VIEW, Type: "table", JitCode: "async () => 'x'"},
			{Target: jitTarget("p", "a", "dup"), CanonicalTarget: jitTarget("p", "a", "dup"), EnumType: dataformpb.TableType_TABLE},
			{Target: jitTarget("q", "b", "dup"), CanonicalTarget: jitTarget("q", "b", "dup"), EnumType: dataformpb.TableType_TABLE},
			{Target: jitTarget("example.com:proj", "ds", "domain_scoped"), CanonicalTarget: jitTarget("example.com:proj", "ds", "domain_scoped"), EnumType: dataformpb.TableType_TABLE, JitCode: "async () => 'd'"},
		},
		Operations: []*dataformpb.Operation{
			{Target: jitTarget("p", "s", "dev_cleanup"), CanonicalTarget: jitTarget("p", "s", "cleanup"), DependencyTargets: []*dataformpb.Target{jitTarget("p", "s", "dev_sessions")}, JitCode: "async () => ['a', 'b']"},
		},
		Assertions: []*dataformpb.Assertion{
			{Target: jitTarget("p", "checks", "dev_volume"), CanonicalTarget: jitTarget("p", "checks", "volume"), DependencyTargets: []*dataformpb.Target{jitTarget("p", "s", "dev_daily")}, JitCode: "async () => 'select 0'"},
			{Target: jitTarget("p", "checks", "dev_daily_assertions_uniqueKey_0"), CanonicalTarget: jitTarget("p", "checks", "daily_assertions_uniqueKey_0"), Query: "select 1"},
		},
		Declarations: []*dataformpb.Declaration{{Target: jitTarget("src", "landing", "raw"), CanonicalTarget: jitTarget("src", "landing", "raw")}},
		Tests:        []*dataformpb.Test{{Name: "daily_test"}},
		JitData:      data,
	}
}

func TestFindAction(t *testing.T) {
	g := testGraph(t)
	cases := []struct {
		name     string
		query    string
		want     string // Name() of the action found
		kind     compile.ActionKind
		wantErr  []string // substrings of the error
		checkErr error
	}{
		{name: "plain effective name", query: "dev_daily", want: "p.s.dev_daily", kind: compile.KindTable},
		{name: "plain canonical name", query: "daily", want: "p.s.dev_daily", kind: compile.KindTable},
		{name: "schema.name", query: "s.dev_view", want: "p.s.dev_view", kind: compile.KindView},
		{name: "canonical schema.name", query: "s.sessions", want: "p.s.dev_sessions", kind: compile.KindIncremental},
		{name: "database.schema.name", query: "p.s.dev_cleanup", want: "p.s.dev_cleanup", kind: compile.KindOperation},
		{name: "assertion", query: "checks.volume", want: "p.checks.dev_volume", kind: compile.KindAssertion},
		{name: "surrounding space", query: "  dev_daily\n", want: "p.s.dev_daily", kind: compile.KindTable},
		{name: "type string when enumType is unset", query: "dev_sessions", want: "p.s.dev_sessions", kind: compile.KindIncremental},
		{name: "database with dots", query: "example.com:proj.ds.domain_scoped", want: "example.com:proj.ds.domain_scoped", kind: compile.KindTable},
		{name: "qualified name disambiguates", query: "a.dup", want: "p.a.dup", kind: compile.KindTable},
		{name: "ambiguous", query: "dup", wantErr: []string{`ambiguous action name "dup"`, "p.a.dup (table)", "q.b.dup (table)"}},
		{name: "not found with suggestions", query: "daly", wantErr: []string{`named "daly"`, "did you mean", "p.s.dev_daily"}},
		{name: "not found without suggestions", query: "zzzzzzzzzzzz", wantErr: []string{`named "zzzzzzzzzzzz"`, "it has 12 such actions"}},
		{name: "wrong database", query: "x.s.dev_daily", wantErr: []string{"no table"}},
		{name: "declaration", query: "raw", wantErr: []string{"src.landing.raw is a declaration"}},
		{name: "unit test", query: "daily_test", wantErr: []string{"is a unit test"}},
		{name: "empty", query: " ", wantErr: []string{"no action name"}},
		{name: "empty part", query: "s..x", wantErr: []string{"is not an action name"}},
		{name: "type and enumType disagree", query: "dev_odd", wantErr: []string{`type "table" and enumType VIEW are not equivalent`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := compile.FindAction(g, c.query)
			if len(c.wantErr) > 0 {
				if err == nil {
					t.Fatalf("found %s, want an error", a.Name())
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != c.want || a.Kind != c.kind {
				t.Errorf("found %s (%s), want %s (%s)", a.Name(), a.Kind, c.want, c.kind)
			}
			if a.JitData != g.JitData {
				t.Error("Action.JitData is not the graph's jitData")
			}
		})
	}
}

func TestJitRequest(t *testing.T) {
	g := testGraph(t)
	const (
		table       = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE
		incremental = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_INCREMENTAL_TABLE
		operation   = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_OPERATION
		assertion   = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_ASSERTION
	)
	start := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	cases := []struct {
		name    string
		action  string
		opts    compile.JitOptions
		preview bool // opts.ExecutionData = PreviewExecutionData(action, start)
		want    *dataformpb.JitCompilationRequest
		wantErr error
	}{
		{name: "table", action: "daily", want: &dataformpb.JitCompilationRequest{
			Target:                jitTarget("p", "s", "dev_daily"),
			Dependencies:          []*dataformpb.Target{jitTarget("src", "landing", "raw"), jitTarget("p", "s", "dev_campaigns")},
			JitCode:               "async (jctx) => 'select 1'",
			JitData:               g.JitData,
			CompilationTargetType: table,
		}},
		{name: "view is a table", action: "view", want: &dataformpb.JitCompilationRequest{
			Target: jitTarget("p", "s", "dev_view"), JitCode: "async () => 'v'", JitData: g.JitData, CompilationTargetType: table,
		}},
		{name: "incremental", action: "sessions", want: &dataformpb.JitCompilationRequest{
			Target: jitTarget("p", "s", "dev_sessions"), JitCode: "async () => 'i'", JitData: g.JitData, CompilationTargetType: incremental,
		}},
		{name: "operation", action: "cleanup", want: &dataformpb.JitCompilationRequest{
			Target: jitTarget("p", "s", "dev_cleanup"), Dependencies: []*dataformpb.Target{jitTarget("p", "s", "dev_sessions")},
			JitCode: "async () => ['a', 'b']", JitData: g.JitData, CompilationTargetType: operation,
		}},
		{name: "assertion", action: "volume", want: &dataformpb.JitCompilationRequest{
			Target: jitTarget("p", "checks", "dev_volume"), Dependencies: []*dataformpb.Target{jitTarget("p", "s", "dev_daily")},
			JitCode: "async () => 'select 0'", JitData: g.JitData, CompilationTargetType: assertion,
		}},
		{name: "preview execution data", action: "cleanup", preview: true, want: &dataformpb.JitCompilationRequest{
			Target: jitTarget("p", "s", "dev_cleanup"), Dependencies: []*dataformpb.Target{jitTarget("p", "s", "dev_sessions")},
			JitCode: "async () => ['a', 'b']", JitData: g.JitData, CompilationTargetType: operation,
			ExecutionData: &dataformpb.RunningExecutionData{
				RunTargets:         []*dataformpb.Target{jitTarget("p", "s", "dev_cleanup")},
				ExecutionId:        compile.PreviewExecutionID,
				ExecutionStartTime: timestamppb.New(start),
			},
		}},
		{name: "AoT table", action: "campaigns", wantErr: compile.ErrNoJitCode},
		{name: "built-in assertion", action: "daily_assertions_uniqueKey_0", wantErr: compile.ErrNoJitCode},
		{name: "disabled", action: "off", wantErr: compile.ErrDisabled},
		{name: "disabled allowed", action: "off", opts: compile.JitOptions{AllowDisabled: true}, want: &dataformpb.JitCompilationRequest{
			Target: jitTarget("p", "s", "dev_off"), JitCode: "async () => 'o'", JitData: g.JitData, CompilationTargetType: table,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := compile.FindAction(g, c.action)
			if err != nil {
				t.Fatal(err)
			}
			opts := c.opts
			if c.preview {
				opts.ExecutionData = compile.PreviewExecutionData(a, start)
			}
			req, err := compile.JitRequest(g, a, opts)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), a.Name()) {
					t.Errorf("error %q does not name the action", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(req, c.want) {
				t.Errorf("request\n%v\nwant\n%v", req, c.want)
			}
			// The request is a copy: changing it leaves the graph alone.
			req.Target.Name = "changed"
			req.JitData.Fields["lookback"] = structpb.NewNumberValue(99)
			for _, d := range req.Dependencies {
				d.Name = "changed"
			}
			if a.Target.Name == "changed" || g.JitData.Fields["lookback"].GetNumberValue() == 99 {
				t.Error("JitRequest shares messages with the graph")
			}
			for _, d := range a.DependencyTargets {
				if d.Name == "changed" {
					t.Error("JitRequest shares dependency targets with the graph")
				}
			}
		})
	}
}

func TestJitRequestWithoutGraphJitData(t *testing.T) {
	// A core that writes no jitData: the CLI sends none (jctx.data is
	// undefined) rather than an empty Struct.
	g := testGraph(t)
	g.JitData = nil
	a, err := compile.FindAction(g, "daily")
	if err != nil {
		t.Fatal(err)
	}
	req, err := compile.JitRequest(g, a, compile.JitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if req.JitData != nil {
		t.Errorf("jitData = %v, want none", req.JitData)
	}
	b, err := compile.EncodeJitRequest(req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hasWireField(t, b, 4) {
		t.Error("encoded request has a jit_data field")
	}
}

// structWireInOrder encodes a Struct of string values with its keys in the given
// order, as core (protobufjs, in insertion order) writes it.
func structWireInOrder(kv ...string) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		var val []byte
		val = protowire.AppendTag(val, 3, protowire.BytesType) // Value.string_value
		val = protowire.AppendString(val, kv[i+1])
		var entry []byte
		entry = protowire.AppendTag(entry, 1, protowire.BytesType)
		entry = protowire.AppendString(entry, kv[i])
		entry = protowire.AppendTag(entry, 2, protowire.BytesType)
		entry = protowire.AppendBytes(entry, val)
		b = protowire.AppendTag(b, 1, protowire.BytesType) // Struct.fields
		b = protowire.AppendBytes(b, entry)
	}
	return b
}

func hasWireField(t *testing.T, b []byte, num protowire.Number) bool {
	t.Helper()
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			t.Fatal(protowire.ParseError(l))
		}
		b = b[l:]
		if n == num {
			return true
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			t.Fatal(protowire.ParseError(l))
		}
		b = b[l:]
	}
	return false
}

func TestEncodeJitRequest(t *testing.T) {
	// Keys in an order that is neither sorted nor likely to be Go's map
	// order, as core would write them after jitData("zeta"), ("alpha"), …
	coreOrder := structWireInOrder("zeta", "1", "alpha", "2", "mid", "3", "beta", "4")
	var graphWire []byte
	graphWire = protowire.AppendTag(graphWire, 1, protowire.BytesType) // some other field first
	graphWire = protowire.AppendBytes(graphWire, nil)
	graphWire = protowire.AppendTag(graphWire, 15, protowire.BytesType)
	graphWire = protowire.AppendBytes(graphWire, coreOrder)
	var data structpb.Struct
	if err := proto.Unmarshal(coreOrder, &data); err != nil {
		t.Fatal(err)
	}
	other, _ := structpb.NewStruct(map[string]any{"zeta": "other"})
	start := time.Unix(1767225600, 0)

	base := func() *dataformpb.JitCompilationRequest {
		return &dataformpb.JitCompilationRequest{
			Target:                jitTarget("p", "s", "t"),
			Dependencies:          []*dataformpb.Target{jitTarget("p", "s", "a"), jitTarget("p", "s", "b")},
			JitCode:               "async (jctx) => JSON.stringify(jctx.data)",
			JitData:               &data,
			CompilationTargetType: dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE,
		}
	}
	cases := []struct {
		name      string
		req       func() *dataformpb.JitCompilationRequest
		graphWire []byte
		wantCore  bool // jit_data is core's bytes as they are
	}{
		{name: "jitData in core's order", req: base, graphWire: graphWire, wantCore: true},
		{name: "no graph wire", req: base},
		{name: "jitData differs from the graph's", graphWire: graphWire, req: func() *dataformpb.JitCompilationRequest {
			r := base()
			r.JitData = other
			return r
		}},
		{name: "execution data after jit_data", graphWire: graphWire, wantCore: true, req: func() *dataformpb.JitCompilationRequest {
			r := base()
			r.ExecutionData = &dataformpb.RunningExecutionData{ExecutionId: "x", ExecutionStartTime: timestamppb.New(start)}
			return r
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req()
			b, err := compile.EncodeJitRequest(req, c.graphWire)
			if err != nil {
				t.Fatal(err)
			}
			var back dataformpb.JitCompilationRequest
			if err := proto.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(&back, req) {
				t.Errorf("decoded\n%v\nwant\n%v", &back, req)
			}
			// Fields in field-number order, as protobufjs writes them.
			last := protowire.Number(0)
			var jitData []byte
			for rest := b; len(rest) > 0; {
				n, typ, l := protowire.ConsumeTag(rest)
				rest = rest[l:]
				if n < last {
					t.Errorf("field %d after field %d", n, last)
				}
				last = n
				l = protowire.ConsumeFieldValue(n, typ, rest)
				if n == 4 {
					jitData, _ = protowire.ConsumeBytes(rest)
				}
				rest = rest[l:]
			}
			if got := bytes.Equal(jitData, coreOrder); got != c.wantCore {
				t.Errorf("jit_data is core's bytes: %v, want %v", got, c.wantCore)
			}
			if !c.wantCore {
				det, _ := proto.MarshalOptions{Deterministic: true}.Marshal(req.JitData)
				if !bytes.Equal(jitData, det) {
					t.Error("jit_data is not the deterministic encoding")
				}
			}
		})
	}
	if _, err := compile.EncodeJitRequest(nil, nil); err == nil {
		t.Error("EncodeJitRequest(nil) succeeded")
	}
}
