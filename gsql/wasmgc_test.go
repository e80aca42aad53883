package gsql

import (
	"runtime"
	"strings"
	"testing"
)

// TestWasmGarbageCollects: handing GoogleSQL its budget of SQL runs one
// collection, and less runs none of its own (see wasmgc.go for why dfd
// collects).
func TestWasmGarbageCollects(t *testing.T) {
	wasmWork.Store(0)
	stmt := "SELECT " + strings.Repeat("x, ", 500) + "1"
	per := int64(len(stmt)) + wasmCallBytes
	calls := int((wasmGCBudget - 1) / per) // the most that stay below the budget
	numGC := func() uint32 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.NumGC
	}
	for range calls {
		wasmGarbage(stmt)
	}
	// Below the budget the work adds up and nothing is collected (a
	// collection would have reset it; Go's own may still run meanwhile).
	if w, want := wasmWork.Load(), int64(calls)*per; w != want {
		t.Fatalf("after %d calls below the budget the work counts %d, want %d", calls, w, want)
	}
	before := numGC()
	wasmGarbage(stmt)
	if got := numGC() - before; got < 1 {
		t.Fatalf("the call that spent the budget ran no collection")
	}
	if w := wasmWork.Load(); w != 0 {
		t.Fatalf("after a collection the work counts %d, want 0", w)
	}
}
