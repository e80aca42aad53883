package lastuse

import "testing"

// An entry lives while runs store or ask for it; the zero Memo works.
func TestMemo(t *testing.T) {
	var m Memo[string, int]
	if _, ok := m.Get("a"); ok {
		t.Fatal("an empty memo has a")
	}
	m.Put("a", 1)
	m.Put("b", 2)
	m.EndRun() // both stored in run 0
	if v, ok := m.Get("b"); !ok || v != 2 {
		t.Fatalf("Get(b) = %d, %v after the run that stored it", v, ok)
	}
	m.EndRun() // run 1 asked only for b
	if _, ok := m.Get("a"); ok {
		t.Error("a is kept after a run that did not ask for it")
	}
	if v, ok := m.Get("b"); !ok || v != 2 || m.Len() != 1 {
		t.Errorf("Get(b) = %d, %v, Len %d; want 2, true, 1", v, ok, m.Len())
	}
}
