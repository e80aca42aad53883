package sqlcheck

import (
	"context"
	"runtime"
	"testing"
)

// TestCheckMemoryStaysBounded: GoogleSQL's linear memory (a Go
// allocation that never shrinks) must not fill up with garbage that only
// Go's finalizers free. After a cold check of the 1,000-action bench
// project and a collection, the live heap — nearly all of it that linear
// memory at its high-water mark — was 145 MiB before gsql collected as it
// goes, and is ≈75 MiB since; GoogleSQL's start alone is ≈70 MiB.
func TestCheckMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a cold check of 1,000 actions")
	}
	g, md := benchGraph(1000, 1)
	opts := benchOptions(t, md)
	res, err := Check(context.Background(), g, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ran < 1000 {
		t.Fatalf("%d statements analysed, want every one of the 1,000 actions'", res.Ran)
	}
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	const limit = 110 << 20
	if m.HeapAlloc > limit {
		t.Fatalf("live heap after a cold check of 1,000 actions: %d MiB, want at most %d MiB", m.HeapAlloc>>20, limit>>20)
	}
	t.Logf("live heap after a cold check of %d statements: %d MiB", res.Ran, m.HeapAlloc>>20)
}
