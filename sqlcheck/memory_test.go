package sqlcheck

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
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

// The project and the number of checks of
// TestCheckMemoryAfterEditsStaysBounded: without a collection per check,
// the live heap doubled within them (71 → 143 MiB).
const editsActions, editsChecks = 30, 100

// A daemon checks the project after every edit, for hours: the memory of
// one check must not stay behind for the next ones to pile on (each check
// builds a catalog in GoogleSQL's memory, freed only once Go collects).
func TestCheckMemoryAfterEditsStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a hundred checks")
	}
	g, md := benchGraph(editsActions, 1)
	opts := benchOptions(t, md)
	k := NewChecker()
	tables := g.GetTables()
	edited := tables[len(tables)/2]
	original := edited.Query
	var first uint64
	for i := 0; i <= editsChecks; i++ {
		// A new output column each time, as a user's edit may add.
		edited.Query = strings.Replace(original, "SELECT ", fmt.Sprintf("SELECT %d AS extra_%d, ", i, i), 1)
		if _, err := k.Check(context.Background(), g, opts); err != nil {
			t.Fatal(err)
		}
		if i == 10 {
			first = liveHeap()
		}
	}
	last := liveHeap()
	t.Logf("live heap after 10 checks %d MiB, after %d: %d MiB", first>>20, editsChecks, last>>20)
	if last > first+16<<20 {
		t.Errorf("live heap grew from %d MiB after 10 checks to %d MiB after %d", first>>20, last>>20, editsChecks)
	}
}

// Every check that declared a temporary function left its whole catalog in
// GoogleSQL's memory (a cycle of go-googlesql's references that Go never
// finalizes, gsql/keepalive.go): ≈1.5 MiB per cold check of 30 actions,
// for good. Each check here is a new Checker's, the daemon's first after it
// opens a project; the functions must still be there and intact after the
// collections, so a call of one with the wrong type is reported every time,
// word for word, and a right one never.
func TestColdChecksLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("forty checks")
	}
	g, md := benchGraph(editsActions, 1)
	opts := benchOptions(t, md)
	var fn string
	for _, tb := range g.GetTables() {
		if len(tb.PreOps) > 0 {
			fn = strings.Fields(tb.PreOps[0])[3] // CREATE TEMP FUNCTION clean_x(s STRING) …
			fn = fn[:strings.Index(fn, "(")]
			tb.PreOps = append(tb.PreOps, "SELECT "+fn+"('a') AS fine", "SELECT "+fn+"(1) AS wrong")
			break
		}
	}
	if fn == "" {
		t.Fatal("the bench project declares no temporary function")
	}
	var first uint64
	var want []string
	const checks = 40
	for i := 0; i <= checks; i++ {
		res, err := NewChecker().Check(context.Background(), g, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range res.Findings {
			got = append(got, fmt.Sprintf("%s %s %d:%d %s", f.Action, f.Statement, f.Line, f.Col, f.Message))
		}
		if i == 0 {
			want = got
			if len(got) != 1 || !strings.Contains(got[0], "pre_operations[2]") || !strings.Contains(strings.ToLower(got[0]), fn) {
				t.Fatalf("findings %q, want one, on the call of %s with an INT64", got, fn)
			}
		} else if !slices.Equal(got, want) {
			t.Fatalf("check %d found %q, the first %q", i, got, want)
		}
		if i == 10 {
			first = liveHeap()
		}
	}
	last := liveHeap()
	t.Logf("live heap after 10 cold checks %d MiB, after %d: %d MiB", first>>20, checks, last>>20)
	if last > first+8<<20 {
		t.Errorf("live heap grew from %d MiB after 10 cold checks to %d MiB after %d", first>>20, last>>20, checks)
	}
}

// liveHeap is the Go heap in use after a collection: with GoogleSQL's
// linear memory, which is a Go allocation, nearly all of what a check
// leaves behind.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
