package jit

import (
	"context"
	"fmt"
	"sync"
)

// Key identifies a pool: workers differ by project (their runtimes are
// prepared for its root), by core (the bundle they compiled) and by engine.
type Key struct {
	Root        string
	BundlePath  string
	CoreVersion string
	// Engine is "" or EngineGoja for `dfd worker`, or the name of one of
	// PoolOptions.Engines (EngineNode: a Node.js worker).
	Engine string
}

// Engines of Key.Engine.
const (
	EngineGoja = "goja"
	EngineNode = "node"
)

// EngineCommand returns the command that starts a worker of an engine for
// one project and core (the pool appends WorkerArgs), e.g. a Node.js worker
// whose file-system permissions name the project and the core.
type EngineCommand func(root, bundlePath string) ([]string, error)

// Pools keeps one Pool per Key, as the daemon needs for a multi-root
// workspace, and counts who uses each (Acquire). The zero value is not
// usable; set Defaults with NewPools.
type Pools struct {
	defaults PoolOptions

	mu     sync.Mutex // guards pools, closed and poolEntry.refs
	pools  map[Key]*poolEntry
	closed bool
}

type poolEntry struct {
	p    *Pool
	refs int // Acquire's references not released yet
}

// NewPools returns a registry whose pools use defaults for every option
// but the key's fields.
func NewPools(defaults PoolOptions) *Pools {
	return &Pools{defaults: defaults, pools: map[Key]*poolEntry{}}
}

// Acquire returns the pool for k, creating it (without starting workers:
// call Prewarm) on first use, and counts a reference to it. release gives
// the reference back (calling it again does nothing); the last release
// closes the pool, waiting for its workers to end, and forgets it, so that
// the next Acquire of k makes a new one. A project reopened with the same
// core acquires its new reference before it releases the old one, and its
// workers live on through the hand-over.
//
// A pool closed meanwhile by Drop, Remove or Close stays closed; its
// release functions then do nothing.
func (r *Pools) Acquire(k Key) (p *Pool, release func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.entryLocked(k)
	if err != nil {
		return nil, nil, err
	}
	e.refs++
	var once sync.Once
	return e.p, func() { once.Do(func() { r.release(k, e) }) }, nil
}

func (r *Pools) release(k Key, e *poolEntry) {
	r.mu.Lock()
	e.refs--
	last := e.refs == 0 && r.pools[k] == e
	if last {
		delete(r.pools, k)
	}
	r.mu.Unlock()
	if last {
		_ = e.p.Close()
	}
}

// Get returns the pool for k, creating it (without starting workers: call
// Prewarm) on first use. It counts no reference: a pool only Get made lives
// until Remove, Drop or Close, one that Acquire references until its last
// release too.
func (r *Pools) Get(k Key) (*Pool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, err := r.entryLocked(k)
	if err != nil {
		return nil, err
	}
	return e.p, nil
}

func (r *Pools) entryLocked(k Key) (*poolEntry, error) {
	if r.closed {
		return nil, ErrClosed
	}
	if e, ok := r.pools[k]; ok {
		return e, nil
	}
	opts := r.defaults
	opts.Root, opts.BundlePath, opts.CoreVersion = k.Root, k.BundlePath, k.CoreVersion
	if k.Engine != "" && k.Engine != EngineGoja {
		mk := opts.Engines[k.Engine]
		if mk == nil {
			return nil, fmt.Errorf("jit: no %s engine is available", k.Engine)
		}
		cmd, err := mk(k.Root, k.BundlePath)
		if err != nil {
			return nil, fmt.Errorf("jit: %s engine: %w", k.Engine, err)
		}
		opts.Command = cmd
		// Such pools serve compiles only (JiT stays on goja), and the
		// daemon runs one compile of a project at a time: a second
		// worker would only hold memory.
		opts.Workers, opts.MinWorkers = 1, 1
	}
	p, err := NewPool(opts)
	if err != nil {
		return nil, err
	}
	e := &poolEntry{p: p}
	r.pools[k] = e
	return e, nil
}

// HasEngine reports whether pools of engine can be made: goja always,
// others when PoolOptions.Engines has them.
func (r *Pools) HasEngine(engine string) bool {
	return engine == "" || engine == EngineGoja || r.defaults.Engines[engine] != nil
}

// Drop closes and forgets the pools of root whose key is not keep (for
// example after the project's core version changed), referenced or not;
// keep may be zero.
func (r *Pools) Drop(root string, keep Key) {
	r.mu.Lock()
	var drop []*Pool
	for k, e := range r.pools {
		if k.Root == root && k != keep {
			drop = append(drop, e.p)
			delete(r.pools, k)
		}
	}
	r.mu.Unlock()
	closeAllPools(drop)
}

// Remove closes and forgets the pool of exactly k, if there is one,
// referenced or not.
func (r *Pools) Remove(k Key) {
	r.mu.Lock()
	e, ok := r.pools[k]
	delete(r.pools, k)
	r.mu.Unlock()
	if ok {
		closeAllPools([]*Pool{e.p})
	}
}

// Close closes every pool; Get fails afterwards.
func (r *Pools) Close() error {
	r.mu.Lock()
	r.closed = true
	var all []*Pool
	for k, e := range r.pools {
		all = append(all, e.p)
		delete(r.pools, k)
	}
	r.mu.Unlock()
	closeAllPools(all)
	return nil
}

func closeAllPools(pools []*Pool) {
	var wg sync.WaitGroup
	for _, p := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Close()
		}()
	}
	wg.Wait()
}

// GetWarm is Get followed by Prewarm, for project open.
func (r *Pools) GetWarm(ctx context.Context, k Key) (*Pool, error) {
	p, err := r.Get(k)
	if err != nil {
		return nil, err
	}
	return p, p.Prewarm(ctx)
}
