package cache

import (
	"container/list"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// lru keeps Execute results until they expire or the byte budget pushes
// out the least recently used ones. Sizes are the responses' encoded sizes,
// a fair stand-in for their memory.
type lru struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	order *list.List // of *lruItem, most recently used first
	items map[string]*list.Element
}

type lruItem struct {
	key     string
	resp    *dataformpb.ExecuteResponse
	size    int64
	expires time.Time
}

func newLRU(max int64) *lru {
	return &lru{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (l *lru) get(key string, now time.Time) (*dataformpb.ExecuteResponse, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.items[key]
	if !ok {
		return nil, false
	}
	it := el.Value.(*lruItem)
	if !now.Before(it.expires) {
		l.remove(el)
		return nil, false
	}
	l.order.MoveToFront(el)
	return it.resp, true
}

// put keeps resp until expires. A response larger than a quarter of the
// budget is not kept: it would push out many small ones.
func (l *lru) put(key string, resp *dataformpb.ExecuteResponse, expires time.Time) {
	size := int64(proto.Size(resp)) + int64(len(key)) + 64
	if size > l.max/4 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.items[key]; ok {
		l.remove(el)
	}
	l.items[key] = l.order.PushFront(&lruItem{key: key, resp: resp, size: size, expires: expires})
	l.bytes += size
	for l.bytes > l.max {
		l.remove(l.order.Back())
	}
}

func (l *lru) remove(el *list.Element) {
	it := l.order.Remove(el).(*lruItem)
	delete(l.items, it.key)
	l.bytes -= it.size
}

func (l *lru) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.order.Init()
	l.items = map[string]*list.Element{}
	l.bytes = 0
}

func (l *lru) stats() (n int, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.items), l.bytes
}
