package engine_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// fakeRPC answers GetTable for one known table and fails everything else.
func fakeRPC(calls *[]string) engine.RPC {
	return func(ctx context.Context, method string, req []byte) ([]byte, error) {
		*calls = append(*calls, method)
		switch method {
		case "GetTable":
			var r dataformpb.GetTableRequest
			if err := proto.Unmarshal(req, &r); err != nil {
				return nil, err
			}
			if r.GetTarget().GetName() != "known" {
				return nil, errors.New("NOT_FOUND: table " + r.GetTarget().GetName() + " not found")
			}
			return proto.Marshal(&dataformpb.TableMetadata{Target: r.GetTarget(), Fields: []*dataformpb.Field{{Name: "id"}, {Name: "amount"}}})
		case "ListTables":
			return proto.Marshal(&dataformpb.ListTablesResponse{})
		case "DeleteTable":
			return nil, nil
		}
		return nil, errors.New("UNIMPLEMENTED: " + method)
	}
}

func jitRequest(code string, kind dataformpb.JitCompilationTargetType) []byte {
	b, _ := proto.Marshal(&dataformpb.JitCompilationRequest{
		Target:                &dataformpb.Target{Database: "proj", Schema: "ds", Name: "t"},
		JitCode:               code,
		CompilationTargetType: kind,
	})
	return b
}

func runJit(t *testing.T, timeout time.Duration, code string, kind dataformpb.JitCompilationTargetType) (*dataformpb.JitCompilationResponse, []string, error) {
	t.Helper()
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{"workflow_settings.yaml": settings})
	files, err := engine.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var calls []string
	out, err := runtimeFor(t, root).JitCompile(ctx, files, jitRequest(code, kind), fakeRPC(&calls))
	if err != nil {
		return nil, calls, err
	}
	var resp dataformpb.JitCompilationResponse
	if err := proto.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp, calls, nil
}

const table = dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE

func TestJitCompile(t *testing.T) {
	cases := []struct {
		name, code, query string
		calls             int
	}{
		{"no adapter calls", "async (jctx) => `select 1 from ${jctx.self()}`", "select 1 from `proj.ds.t`", 0},
		{"getTable", "async (jctx) => { const t = await jctx.adapter.getTable({target: {database: 'proj', schema: 'ds', name: 'known'}}); return `select ${t.fields.map(f => f.name).join(', ')}`; }", "select id, amount", 1},
		{"caught NOT_FOUND", "async (jctx) => { try { await jctx.adapter.getTable({target: {name: 'missing'}}); return 'found'; } catch (e) { return 'select ' + JSON.stringify(e.message); } }", `select "NOT_FOUND: table missing not found"`, 1},
		{"CLI-compiled catch", "async (jctx) => { try { await jctx.adapter.getTable({target: {name: 'missing'}}); } catch (e) {\n e=VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL.handleException(e);return 'select 2'; } }", "select 2", 1},
		{"deleteTable answered with empty bytes", "async (jctx) => { await jctx.adapter.deleteTable({target: {name: 'x'}}); return 'select 3'; }", "select 3", 1},
		{"virtual timers", "async (jctx) => { await new Promise(r => setTimeout(r, 3600 * 1000)); return 'select 4'; }", "select 4", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, calls, err := runJit(t, 30*time.Second, c.code, table)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetTable().GetQuery(); got != c.query {
				t.Errorf("query %q, want %q", got, c.query)
			}
			if len(calls) != c.calls {
				t.Errorf("adapter calls %v, want %d", calls, c.calls)
			}
		})
	}
}

func TestJitFailures(t *testing.T) {
	cases := []struct {
		name, code string
		timeout    time.Duration
		want       string // substring of the error
		wantErr    error
	}{
		{name: "throws", code: "async (jctx) => { throw new Error('no partition column'); }", want: "Error: no partition column"},
		{name: "uncaught adapter error", code: "async (jctx) => (await jctx.adapter.getTable({target: {name: 'gone'}})).fields", want: "NOT_FOUND: table gone not found"},
		{name: "syntax error", code: "async (jctx) => { return 'x' +; }", want: "SyntaxError"},
		{name: "not a function", code: "42", want: "TypeError"},
		{name: "recursion", code: "async (jctx) => { const f = n => f(n + 1) + 1; return f(0); }", want: "Maximum call stack size exceeded"},
		{name: "never settles", code: "async (jctx) => { await new Promise(() => {}); return 'x'; }", want: "never happens"},
		{name: "sync loop", code: "async (jctx) => { while (true) {} }", timeout: 300 * time.Millisecond, wantErr: engine.ErrTimeout},
		{name: "loop of awaited calls", code: "async (jctx) => { for (;;) { await jctx.adapter.listTables({database: 'p', schema: 'd'}); } }", timeout: 300 * time.Millisecond, wantErr: engine.ErrTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			timeout := c.timeout
			if timeout == 0 {
				timeout = 30 * time.Second
			}
			start := time.Now()
			_, _, err := runJit(t, timeout, c.code, table)
			if err == nil {
				t.Fatal("JiT compilation succeeded, want an error")
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("err = %v, want %v", err, c.wantErr)
			}
			if c.want != "" && !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
			if d := time.Since(start); d > timeout+10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

// Answers given with SetImmediate settle calls without the RPC, in the
// same order and with the same result; calls it does not know (and a
// failing lookup of a known table, answered as an error by the RPC) still
// go to the RPC.
func TestJitImmediateAnswers(t *testing.T) {
	const code = "async (jctx) => { const a = await jctx.adapter.getTable({target: {name: 'known'}}); " +
		"let miss = 'none'; try { await jctx.adapter.getTable({target: {name: 'other'}}); } catch (e) { miss = e.message; } " +
		"const b = await jctx.adapter.getTable({target: {name: 'known'}}); " +
		"return `select ${a.fields.length} ${b.fields[1].name} -- ${miss}`; }"
	root := testenv.WriteProject(t, testenv.CoreVersion, map[string]string{"workflow_settings.yaml": settings})
	run := func(immediate bool) ([]byte, []string, int) {
		files, err := engine.OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		defer files.Close()
		rt := runtimeFor(t, root)
		var calls []string
		rpc := fakeRPC(&calls)
		answered := 0
		if immediate {
			rt.SetImmediate(func(method string, req []byte) ([]byte, bool) {
				var r dataformpb.GetTableRequest
				if method != "GetTable" || proto.Unmarshal(req, &r) != nil || r.GetTarget().GetName() != "known" {
					return nil, false
				}
				answered++
				resp, err := rpc(context.Background(), method, req)
				calls = calls[:len(calls)-1] // not a call of the RPC's
				return resp, err == nil
			})
		}
		out, err := rt.JitCompile(context.Background(), files, jitRequest(code, table), rpc)
		if err != nil {
			t.Fatal(err)
		}
		return out, calls, answered
	}
	want, wantCalls, _ := run(false)
	got, gotCalls, answered := run(true)
	if !bytes.Equal(got, want) {
		t.Errorf("response with immediate answers differs")
	}
	if len(wantCalls) != 3 || len(gotCalls) != 1 || answered != 2 {
		t.Errorf("RPC calls %v without, %v with immediate answers (%d answered)", wantCalls, gotCalls, answered)
	}
}
