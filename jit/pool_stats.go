package jit

// PoolStats counts a pool's workers at one moment.
type PoolStats struct {
	// Idle workers are ready for a request; Busy ones serve one.
	Idle, Busy int
	// Live counts the workers running or starting (Idle + Busy + those
	// still starting).
	Live int
}

// Stats reports how many workers the pool has, read under its lock.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Idle: len(p.idle), Busy: len(p.busy), Live: p.live}
}
