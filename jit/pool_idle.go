package jit

import "time"

// reapIdle stops workers that have been idle longer than IdleTimeout, down
// to MinWorkers, until the pool closes. An idle worker costs ≈35 MiB.
func (p *Pool) reapIdle() {
	defer p.wg.Done()
	t := time.NewTicker(min(max(p.opts.IdleTimeout/4, 10*time.Millisecond), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-t.C:
			for _, w := range p.takeStale(now) {
				p.log.Debug("stopping an idle jit worker", "worker", w.pid)
				w.stop(p.opts.Grace)
			}
		}
	}
}

// takeStale removes from the pool the workers idle for too long.
func (p *Pool) takeStale(now time.Time) []*hostWorker {
	p.mu.Lock()
	defer p.mu.Unlock()
	var stale []*hostWorker
	// idle is ordered least recently used first.
	for len(p.idle) > 0 && p.live > p.opts.MinWorkers && now.Sub(p.idle[0].lastUsed) > p.opts.IdleTimeout {
		stale = append(stale, p.idle[0])
		p.idle = p.idle[1:]
		p.live--
	}
	return stale
}
