package jit_test

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit"
)

// jitThreeReads reads metadata three times: the calls a daemon can answer
// from what the previous run of the same code asked.
const jitThreeReads = "async (jctx) => { const t = await jctx.adapter.getTable({target: {database: 'proj', schema: 'ds', name: 'known'}}); " +
	"const l = await jctx.adapter.listTables({database: 'proj', schema: 'ds'}); " +
	"const u = await jctx.adapter.getTable({target: {database: 'proj', schema: 'ds2', name: 'known'}}); " +
	"return `select ${t.fields.map(f => f.name).join(', ')} -- ${l.tables.length} ${u.fields.length}`; }"

// recordCalls runs job once and returns its response and its adapter calls
// with their answers, as a daemon would remember them.
func recordCalls(t testing.TB, p *jit.Pool, job jit.JitJob) ([]byte, []jit.PrefetchedCall) {
	t.Helper()
	a := &workertest.Adapter{}
	var mu sync.Mutex
	var calls []jit.PrefetchedCall
	res, err := p.Jit(context.Background(), job, func(ctx context.Context, method string, req []byte) ([]byte, error) {
		resp, err := a.RPC(ctx, method, req)
		if err == nil {
			mu.Lock()
			calls = append(calls, jit.PrefetchedCall{Method: method, Request: slices.Clone(req), Response: resp})
			mu.Unlock()
		}
		return resp, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Response, calls
}

// Prefetched answers are used by the worker without a round trip, reported
// in call order, and give the same result; calls that match none of them,
// or match only in method, still go to the host.
func TestJitPrefetched(t *testing.T) {
	root := workertest.Project(t, nil)
	p := gojaWorkers.NewPool(t, root, jit.PoolOptions{Workers: 1})
	job := workertest.JitJob(jitThreeReads)
	want, calls := recordCalls(t, p, job)
	if len(calls) != 3 {
		t.Fatalf("recorded %d calls, want 3", len(calls))
	}

	for _, c := range []struct {
		name       string
		prefetched []jit.PrefetchedCall
		wantUsed   []int
		wantHost   int64
	}{
		{"all three", calls, []int{0, 1, 2}, 0},
		{"the second missing", []jit.PrefetchedCall{calls[0], calls[2]}, []int{0, 1}, 1},
		{"same method, other request", []jit.PrefetchedCall{{Method: calls[0].Method, Request: calls[2].Request[:len(calls[2].Request)-1], Response: calls[0].Response}}, nil, 3},
		{"none", nil, nil, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &workertest.Adapter{}
			var used []int
			job := job
			job.Prefetched = c.prefetched
			job.OnPrefetched = func(i int) { used = append(used, i) }
			res, err := p.Jit(context.Background(), job, a.RPC)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Response, want) {
				t.Errorf("response differs from the run without prefetched answers")
			}
			if !slices.Equal(used, c.wantUsed) {
				t.Errorf("prefetched answers used: %v, want %v", used, c.wantUsed)
			}
			if got := a.Calls.Load(); got != c.wantHost {
				t.Errorf("%d calls reached the host, want %d", got, c.wantHost)
			}
		})
	}
}
