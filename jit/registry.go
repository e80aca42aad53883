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
// workspace. The zero value is not usable; set Defaults with NewPools.
type Pools struct {
	defaults PoolOptions

	mu     sync.Mutex // guards pools and closed
	pools  map[Key]*Pool
	closed bool
}

// NewPools returns a registry whose pools use defaults for every option
// but the key's fields.
func NewPools(defaults PoolOptions) *Pools {
	return &Pools{defaults: defaults, pools: map[Key]*Pool{}}
}

// Get returns the pool for k, creating it (without starting workers: call
// Prewarm) on first use.
func (r *Pools) Get(k Key) (*Pool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if p, ok := r.pools[k]; ok {
		return p, nil
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
	r.pools[k] = p
	return p, nil
}

// HasEngine reports whether pools of engine can be made: goja always,
// others when PoolOptions.Engines has them.
func (r *Pools) HasEngine(engine string) bool {
	return engine == "" || engine == EngineGoja || r.defaults.Engines[engine] != nil
}

// Drop closes and forgets the pools of root whose key is not keep (for
// example after the project's core version changed); keep may be zero.
func (r *Pools) Drop(root string, keep Key) {
	r.mu.Lock()
	var drop []*Pool
	for k, p := range r.pools {
		if k.Root == root && k != keep {
			drop = append(drop, p)
			delete(r.pools, k)
		}
	}
	r.mu.Unlock()
	closeAllPools(drop)
}

// Remove closes and forgets the pool of exactly k, if there is one.
func (r *Pools) Remove(k Key) {
	r.mu.Lock()
	p, ok := r.pools[k]
	delete(r.pools, k)
	r.mu.Unlock()
	if ok {
		closeAllPools([]*Pool{p})
	}
}

// Close closes every pool; Get fails afterwards.
func (r *Pools) Close() error {
	r.mu.Lock()
	r.closed = true
	var all []*Pool
	for k, p := range r.pools {
		all = append(all, p)
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
