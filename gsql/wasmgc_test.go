package gsql

import (
	"runtime"
	"strings"
	"testing"
)

// TestWasmGarbageCollects: handing GoogleSQL its budget of SQL runs one
// collection, and less runs none (see wasmgc.go for why dfd collects).
func TestWasmGarbageCollects(t *testing.T) {
	wasmWork.Store(0)
	stmt := "SELECT " + strings.Repeat("x, ", 500) + "1"
	per := int64(len(stmt)) + wasmCallBytes
	calls := int(wasmGCBudget / per) // one short of the budget
	numGC := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumGC
	}
	before := numGC()
	for range calls {
		wasmGarbage(stmt)
	}
	// Nothing else in this test binary collects while it runs, unless the
	// heap grows, which these calls do not make it do.
	if got := numGC() - before; got != 0 {
		t.Fatalf("%d calls below the budget ran %d collections, want none", calls, got)
	}
	wasmGarbage(stmt)
	if got := numGC() - before; got < 1 {
		t.Fatalf("the call that spent the budget ran no collection")
	}
	if w := wasmWork.Load(); w != 0 {
		t.Fatalf("after a collection the work counts %d, want 0", w)
	}
}
