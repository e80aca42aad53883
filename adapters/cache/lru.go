package cache

import (
	"container/list"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// lru keeps values (Execute results, dry-run verdicts) until they expire
// or the byte budget pushes out the least recently used ones. Sizes are
// the values' encoded sizes, a fair stand-in for their memory.
type lru[V any] struct {
	mu     sync.Mutex
	max    int64
	sizeOf func(V) int64
	bytes  int64
	order  *list.List // of *lruItem[V], most recently used first
	items  map[string]*list.Element
}

type lruItem[V any] struct {
	key     string
	val     V
	size    int64
	expires time.Time
}

func newLRU[V any](max int64, sizeOf func(V) int64) *lru[V] {
	return &lru[V]{max: max, sizeOf: sizeOf, order: list.New(), items: map[string]*list.Element{}}
}

func responseSize(r *dataformpb.ExecuteResponse) int64 { return int64(proto.Size(r)) }

func verdictSize(v *adapters.Verdict) int64 {
	n := int64(proto.Size(v.Response)) + int64(len(v.StatementType)) + 16
	for _, r := range v.Routines {
		n += int64(len(r))
	}
	for _, t := range v.Tables {
		n += int64(len(t))
	}
	return n
}

func (l *lru[V]) get(key string, now time.Time) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero V
	el, ok := l.items[key]
	if !ok {
		return zero, false
	}
	it := el.Value.(*lruItem[V])
	if !now.Before(it.expires) {
		l.remove(el)
		return zero, false
	}
	l.order.MoveToFront(el)
	return it.val, true
}

// put keeps val until expires. A value larger than a quarter of the
// budget is not kept: it would push out many small ones.
func (l *lru[V]) put(key string, val V, expires time.Time) {
	size := l.sizeOf(val) + int64(len(key)) + 64
	if size > l.max/4 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[key]; ok {
		l.remove(el)
	}
	l.items[key] = l.order.PushFront(&lruItem[V]{key: key, val: val, size: size, expires: expires})
	l.bytes += size
	for l.bytes > l.max {
		l.remove(l.order.Back())
	}
}

func (l *lru[V]) remove(el *list.Element) {
	it := l.order.Remove(el).(*lruItem[V])
	delete(l.items, it.key)
	l.bytes -= it.size
}

func (l *lru[V]) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order.Init()
	l.items = map[string]*list.Element{}
	l.bytes = 0
}

func (l *lru[V]) stats() (n int, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items), l.bytes
}
