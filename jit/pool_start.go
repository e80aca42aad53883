package jit

import (
	"context"
	"sync"
)

// pendingStart is a worker being started in the background. Starting takes
// a few hundred milliseconds (core's bundle is compiled in the new
// process); a request that stops waiting does not waste it: the worker
// joins the pool when ready.
type pendingStart struct {
	mu        sync.Mutex // guards abandoned and the send on done
	abandoned bool
	done      chan startResult // cap 1
}

type startResult struct {
	w   *hostWorker
	err error
}

// startAsync starts a worker for a slot already counted in p.live. With
// requester false nobody waits: the worker goes to the pool. The caller
// holds p.mu with the pool open, which makes p.wg.Add safe against Close.
func (p *Pool) startAsync(requester bool) *pendingStart {
	s := &pendingStart{done: make(chan startResult, 1), abandoned: !requester}
	p.started++
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		w, err := startWorker(p.ctx, p.cfg)
		s.mu.Lock()
		if !s.abandoned {
			s.done <- startResult{w, err}
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		p.adopt(w, err)
	}()
	return s
}

// adopt takes a worker nobody waits for into the pool, or frees the slot
// of one that failed to start.
func (p *Pool) adopt(w *hostWorker, err error) {
	if err != nil {
		if p.ctx.Err() == nil { // not merely cut short by Close
			p.log.Error("starting a jit worker", "err", err)
		}
		p.mu.Lock()
		p.dropLocked(false) // no replacement: a start that fails would fail again
		p.mu.Unlock()
		return
	}
	p.release(w, true)
}

// finishStart waits for s. When ctx ends first the start is abandoned to
// the pool and ctx's error returned; when the start fails its slot is freed.
func (p *Pool) finishStart(ctx context.Context, s *pendingStart) (*hostWorker, error) {
	select {
	case r := <-s.done:
		if r.err != nil {
			p.mu.Lock()
			p.dropLocked(false)
			p.mu.Unlock()
			return nil, r.err
		}
		return r.w, nil
	case <-ctx.Done():
		s.mu.Lock()
		select {
		case r := <-s.done:
			s.mu.Unlock()
			p.adopt(r.w, r.err)
		default:
			s.abandoned = true
			s.mu.Unlock()
		}
		return nil, ctx.Err()
	}
}

// startFor starts a worker for a request, in a slot already counted.
func (p *Pool) startFor(ctx context.Context) (*hostWorker, error) {
	p.mu.Lock()
	s := p.startAsync(true)
	p.mu.Unlock()
	w, err := p.finishStart(ctx, s)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.busy[w] = true
	p.mu.Unlock()
	return w, nil
}
