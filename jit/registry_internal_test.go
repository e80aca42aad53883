package jit

import (
	"sync"
	"testing"
)

// The counting of Pools.Acquire, without workers (none is started: the
// pools are never prewarmed nor asked anything).
func TestPoolsAcquire(t *testing.T) {
	r := NewPools(PoolOptions{Command: []string{"/nonexistent/worker"}, IdleTimeout: -1})
	defer r.Close()
	k := Key{Root: "/p", BundlePath: "/p/bundle.js", CoreVersion: "3.0.0"}
	isClosed := func(p *Pool) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.closed
	}

	a, releaseA, err := r.Acquire(k)
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := r.Acquire(k)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("two pools for one key")
	}
	if got, _ := r.Get(k); got != a {
		t.Error("Get returned another pool than Acquire")
	}
	releaseA()
	releaseA() // a second call gives back nothing
	if isClosed(a) {
		t.Fatal("the pool was closed while a reference was held")
	}
	releaseB()
	if !isClosed(a) {
		t.Fatal("the pool is open after its last release")
	}
	c, releaseC, err := r.Acquire(k)
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Fatal("Acquire after the last release returned the closed pool")
	}

	t.Run("hand-over", func(t *testing.T) {
		// While one reference is held, acquires and releases of others,
		// from many goroutines, never close the pool.
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 200; j++ {
					p, release, err := r.Acquire(k)
					if err != nil || p != c {
						t.Errorf("Acquire: %v, %v", p == c, err)
						return
					}
					release()
				}
			}()
		}
		wg.Wait()
		if isClosed(c) {
			t.Fatal("the pool was closed while a reference was held")
		}
	})

	t.Run("removed while referenced", func(t *testing.T) {
		r.Remove(k)
		if !isClosed(c) {
			t.Fatal("Remove left the pool open")
		}
		d, releaseD, err := r.Acquire(k)
		if err != nil {
			t.Fatal(err)
		}
		releaseC() // the removed pool's reference: no effect on the new pool
		if isClosed(d) {
			t.Fatal("releasing a removed pool's reference closed its successor")
		}
		releaseD()
		if !isClosed(d) {
			t.Fatal("the pool is open after its last release")
		}
	})

	t.Run("after Close", func(t *testing.T) {
		p, release, err := r.Acquire(k)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if !isClosed(p) {
			t.Fatal("Close left a referenced pool open")
		}
		release()
		if _, _, err := r.Acquire(k); err != ErrClosed {
			t.Fatalf("Acquire after Close: %v, want ErrClosed", err)
		}
	})
}
