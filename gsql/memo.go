package gsql

import (
	"container/list"
	"sync"
)

// memo remembers the last verdicts, least recently used out first. A
// preview asks about the same few statements again and again (the policy,
// the cache, every keystroke's check), so a small memo removes nearly all
// repeated parses.
type memo struct {
	mu    sync.Mutex // guards everything below
	max   int
	order *list.List // of *memoItem, most recent first
	items map[[32]byte]*list.Element
}

type memoItem struct {
	key [32]byte
	v   Verdict
}

func newMemo(max int) *memo {
	return &memo{max: max, order: list.New(), items: map[[32]byte]*list.Element{}}
}

func (m *memo) get(key [32]byte) (Verdict, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[key]
	if !ok {
		return Verdict{}, false
	}
	m.order.MoveToFront(el)
	return el.Value.(*memoItem).v, true
}

func (m *memo) put(key [32]byte, v Verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[key]; ok {
		el.Value.(*memoItem).v = v
		m.order.MoveToFront(el)
		return
	}
	m.items[key] = m.order.PushFront(&memoItem{key, v})
	for m.order.Len() > m.max {
		last := m.order.Back()
		delete(m.items, last.Value.(*memoItem).key)
		m.order.Remove(last)
	}
}
