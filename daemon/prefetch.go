package daemon

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/jit"
)

// JiT code usually asks the same metadata every time it runs (the columns
// of its source table, the tables of a dataset). A preview runs in a worker
// process, so each call is a round trip to the daemon and back even when
// the metadata cache answers at once. The daemon therefore remembers the
// metadata reads of an action's last preview and, on the next one, asks
// them itself before the run (from the cache: microseconds) and sends the
// answers with the request; the worker answers matching calls on the spot
// and tells the daemon, which records them with the others. Only reads
// (GetTable, ListTables) are sent this way: Execute and DeleteTable always
// go through the preview policy at the time the code makes them.

// prefetchBudget bounds the reads before a run: a read that does not
// answer in time is simply not sent along (the code then asks for it).
const prefetchBudget = 2 * time.Second

// maxRemembered bounds the memory: past it, what is remembered is dropped.
const maxRemembered = 4096

type jitMemory struct {
	mu sync.Mutex // guards m
	m  map[string][]rememberedCall
}

type rememberedCall struct {
	method  string
	request []byte
}

func (m *jitMemory) get(key string) []rememberedCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key]
}

func (m *jitMemory) set(key string, calls []rememberedCall) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxRemembered {
		m.m = map[string][]rememberedCall{}
	}
	m.m[key] = calls
}

func prefetchable(method string) bool {
	return method == adapters.MethodGetTable || method == adapters.MethodListTables
}

// prefetch asks calls through a (the preview's policy-wrapped adapter) and
// returns the successful answers with their records.
func prefetch(ctx context.Context, a adapters.DbAdapter, calls []rememberedCall) ([]jit.PrefetchedCall, []adapters.Call) {
	if len(calls) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, prefetchBudget)
	defer cancel()
	var pre []jit.PrefetchedCall
	var recs []adapters.Call
	seen := map[string]bool{}
	for _, c := range calls {
		k := c.method + "\x00" + string(c.request)
		if seen[k] || !prefetchable(c.method) {
			continue
		}
		seen[k] = true
		scratch := adapters.NewRecorder(a)
		resp, err := adapters.Dispatch(ctx, scratch, c.method, c.request)
		rs := scratch.Calls()
		if err != nil || len(rs) != 1 {
			continue
		}
		rec := rs[0]
		rec.Notes = append(slices.Clone(rec.Notes), "read before the run and answered in the worker")
		pre = append(pre, jit.PrefetchedCall{Method: c.method, Request: c.request, Response: resp})
		recs = append(recs, rec)
	}
	return pre, recs
}

// callLog collects the successful reads of a run, to be remembered.
type callLog struct {
	mu    sync.Mutex
	calls []rememberedCall
}

func (l *callLog) add(method string, request []byte) {
	if !prefetchable(method) {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, rememberedCall{method, slices.Clone(request)})
	l.mu.Unlock()
}

func (l *callLog) list() []rememberedCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}
