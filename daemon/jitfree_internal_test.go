package daemon

import (
	"reflect"
	"testing"

	"github.com/dfdtools/dfd/source"
)

// The memo answers as source.JitFreeNames does, and keeps from one
// compile (sweep) to the next only the codes that compile asked about.
func TestJitFreeMemo(t *testing.T) {
	a := "async (jctx) => `SELECT ${LIMIT}`"
	b := "async (jctx) => { const n = 1; return `SELECT ${n}`; }"
	var m jitFreeMemo
	for _, code := range []string{a, b, a} {
		uses, ok := m.names(code)
		wantUses, wantOK := source.JitFreeNames(code)
		if ok != wantOK || !reflect.DeepEqual(uses, wantUses) {
			t.Errorf("names(%q) = %v, %v; JitFreeNames: %v, %v", code, uses, ok, wantUses, wantOK)
		}
	}
	if uses, _ := m.names(a); len(uses) != 1 || uses[0].Name != "LIMIT" {
		t.Errorf("names(a) = %v, want LIMIT", uses)
	}
	m.sweep() // the first compile asked for both
	m.names(b)
	m.sweep() // the second only for b
	if m.m.Len() != 1 {
		t.Errorf("%d codes kept after a compile that asked only for b, want 1", m.m.Len())
	}
	if _, ok := m.m.Get(b); !ok {
		t.Error("b is dropped after a compile that asked for it")
	}
}
