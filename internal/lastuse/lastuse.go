// Package lastuse keeps what a repeated computation (a check, a compile
// of the same project) worked out, for its next run, while runs keep
// asking for it: what a run neither stored nor asked for is dropped when
// the run ends.
package lastuse

// Memo is a map whose entries live while runs use them. Its zero value is
// empty and ready. It is not safe for concurrent use.
type Memo[K comparable, V any] struct {
	run     int
	entries map[K]*entry[V]
}

type entry[V any] struct {
	v   V
	run int // the last run that stored or asked for it
}

// Get returns the value kept for k, and counts it as used by this run.
func (m *Memo[K, V]) Get(k K) (V, bool) {
	if e := m.entries[k]; e != nil {
		e.run = m.run
		return e.v, true
	}
	var zero V
	return zero, false
}

// Put keeps v for k, used by this run.
func (m *Memo[K, V]) Put(k K, v V) {
	if m.entries == nil {
		m.entries = map[K]*entry[V]{}
	}
	m.entries[k] = &entry[V]{v: v, run: m.run}
}

// EndRun drops the entries this run neither stored nor asked for, and
// starts the next run. A run that stops early (cancelled) and does not
// end leaves its uses to count with the next one.
func (m *Memo[K, V]) EndRun() {
	for k, e := range m.entries {
		if e.run != m.run {
			delete(m.entries, k)
		}
	}
	m.run++
}

// Len is how many entries are kept.
func (m *Memo[K, V]) Len() int { return len(m.entries) }
