package workertest

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// JiT code the tests run, with what Adapter answers it.
const (
	JitNoCalls    = "async (jctx) => `select 1 from ${jctx.self()}`"
	JitThreeCalls = "async (jctx) => { const k = {target: {database: 'proj', schema: 'ds', name: 'known'}}; const t = await jctx.adapter.getTable(k); const l = await jctx.adapter.listTables({database: 'proj', schema: 'ds'}); await jctx.adapter.deleteTable(k); return `select ${t.fields.map(f => f.name).join(', ')} -- ${l.tables.length}`; }"
	JitParallel   = "async (jctx) => { const k = {target: {database: 'proj', schema: 'ds', name: 'known'}}; const ts = await Promise.all([1, 2, 3].map(() => jctx.adapter.getTable(k))); return `select ${ts.length}`; }"
	JitCaught     = "async (jctx) => { try { await jctx.adapter.getTable({target: {name: 'missing'}}); return 'found'; } catch (e) { return 'select ' + JSON.stringify(e.message); } }"
	JitUncaught   = "async (jctx) => (await jctx.adapter.getTable({target: {name: 'gone'}})).fields"
	JitConsole    = "async (jctx) => { console.log('hello from', 'jit'); console.warn({a: 1}); return 'select 5'; }"
	// The lookahead makes goja use regexp2, which backtracks (and which
	// goja's interrupt does not stop).
	JitCatastrophicRegexp = "async (jctx) => { /^(?=a)(a|aa)+$/.test('a'.repeat(60) + 'b'); return 'x'; }"
	// JiT code as the official CLI compiles it: vm2 rewrote its catch.
	JitCLICompiled = "async (jctx) => { try { await jctx.adapter.getTable({target: {name: 'missing'}}); } catch (e) {\n e=VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL.handleException(e);return 'select 2'; } }"
)

// ThreeCallsQuery is JitThreeCalls' query with Adapter's answers.
const ThreeCallsQuery = "select id, amount -- 2"

// JitJob is a JiT request of code for the table proj.ds.t.
func JitJob(code string) jit.JitJob {
	b, _ := proto.Marshal(&dataformpb.JitCompilationRequest{
		Target:                &dataformpb.Target{Database: "proj", Schema: "ds", Name: "t"},
		JitCode:               code,
		CompilationTargetType: dataformpb.JitCompilationTargetType_JIT_COMPILATION_TARGET_TYPE_TABLE,
	})
	return jit.JitJob{Request: b}
}

// Adapter answers GetTable for "known" (columns id and amount) and
// ListTables (two tables); GetTable of anything else fails with NOT_FOUND,
// as a BigQuery adapter does. The zero value answers at once.
type Adapter struct {
	Calls atomic.Int64  // calls made
	Delay time.Duration // before each answer (the call's context ends it)
}

// RPC is the adapter as an engine.RPC.
func (a *Adapter) RPC(ctx context.Context, method string, req []byte) ([]byte, error) {
	a.Calls.Add(1)
	if a.Delay > 0 {
		select {
		case <-time.After(a.Delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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
		return proto.Marshal(&dataformpb.ListTablesResponse{Tables: []*dataformpb.TableMetadata{
			{Target: &dataformpb.Target{Name: "a"}}, {Target: &dataformpb.Target{Name: "b"}},
		}})
	case "DeleteTable":
		return nil, nil
	}
	return nil, errors.New("UNIMPLEMENTED: " + method)
}

// Query is the table query of a JiT result.
func Query(t testing.TB, res *jit.Result) string {
	t.Helper()
	var r dataformpb.JitCompilationResponse
	if err := proto.Unmarshal(res.Response, &r); err != nil {
		t.Fatal(err)
	}
	return r.GetTable().GetQuery()
}

// ExpectOK runs JitThreeCalls, which must succeed: the pool has recovered
// from whatever the test did to it.
func ExpectOK(t testing.TB, p *jit.Pool) {
	t.Helper()
	res, err := p.Jit(context.Background(), JitJob(JitThreeCalls), (&Adapter{}).RPC)
	if err != nil {
		t.Fatalf("the request after the fault failed: %v", err)
	}
	if q := Query(t, res); q != ThreeCallsQuery {
		t.Fatalf("query after the fault %q", q)
	}
}

// KilledMidRequest kills the worker of a one-worker pool p (SIGKILL) from
// inside an adapter call of its request: the request fails with a
// *jit.CrashError (the worker had accepted it, so it does not run again
// elsewhere) and the pool serves the next request on a new worker.
func KilledMidRequest(t *testing.T, p *jit.Pool) {
	t.Helper()
	if err := p.Prewarm(context.Background()); err != nil {
		t.Fatal(err)
	}
	rpc := func(ctx context.Context, method string, req []byte) ([]byte, error) {
		for _, w := range p.Workers() {
			if w.Busy {
				_ = syscall.Kill(w.PID, syscall.SIGKILL)
			}
		}
		return (&Adapter{}).RPC(ctx, method, req)
	}
	_, err := p.Jit(context.Background(), JitJob(JitThreeCalls), rpc)
	var ce *jit.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %#v, want a *jit.CrashError", err)
	}
	if ce.Signal != "killed" || !strings.Contains(err.Error(), "exited during the request") {
		t.Errorf("err = %v, want the worker killed during the request", err)
	}
	ExpectOK(t, p)
}

// IdleWorkersKilled kills every idle worker of p from outside (SIGKILL)
// and sends a request at once, before the pool can have noticed, several
// times over: the pool hands the request to a dead worker (which never
// accepts it, so the request runs on another) or to a replacement, and
// either way the request succeeds.
func IdleWorkersKilled(t *testing.T, p *jit.Pool) {
	t.Helper()
	for i := 0; i < 5; i++ {
		if err := p.Prewarm(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, w := range p.Workers() {
			_ = syscall.Kill(w.PID, syscall.SIGKILL)
		}
		ExpectOK(t, p)
	}
}
