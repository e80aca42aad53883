// Package heapwatch is the heap ceiling of a process that runs project
// code in goja: dfd's goja workers and `dfd compile`'s in-process compile.
// goja's objects live on the Go heap, so the Go heap measures what the
// script allocates; a watcher samples it while the code runs and, when it
// crosses the ceiling, calls back to interrupt the code, which then fails
// with a clear error instead of eating the machine.
//
// The heap measured is the whole process's: it is meant for a process
// that runs one piece of project code at a time.
package heapwatch

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// DefaultEvery is the default sampling period.
const DefaultEvery = 20 * time.Millisecond

// SetLimits configures the process's collector for a heap ceiling of hard
// bytes (0: none): GOGC gcPercent (0 leaves it as it is), and a soft
// memory limit of soft when it is positive and below hard, else hard. The
// ceiling rule of Watch relies on a soft limit at or below the ceiling:
// the collector then works harder as the heap nears it, and garbage alone
// never crosses it.
func SetLimits(gcPercent int, soft, hard int64) {
	if gcPercent != 0 {
		debug.SetGCPercent(gcPercent)
	}
	switch {
	case soft > 0 && (hard <= 0 || soft < hard):
		debug.SetMemoryLimit(soft)
	case hard > 0:
		debug.SetMemoryLimit(hard)
	}
}

// Watch samples the Go heap while project code runs.
type Watch struct {
	done chan struct{}
	wg   sync.WaitGroup
	peak uint64 // written by the sampler until Stop has waited for it
}

// gcWindow is the period over which the collector's share of CPU is judged.
const gcWindow = 500 * time.Millisecond

// Start samples every period (DefaultEvery when not positive). When
// limit > 0 and the heap crosses it (see heapState.over), over is called
// once: it interrupts the code. The caller owns the sampler and must call
// Stop.
func Start(limit int64, every time.Duration, over func()) *Watch {
	if every <= 0 {
		every = DefaultEvery
	}
	w := &Watch{done: make(chan struct{})}
	var h heapState
	h.read()
	w.peak = h.objects
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		window := h // the start of the current GC-share window
		windowStart := time.Now()
		for {
			select {
			case now := <-t.C:
				h.read()
				w.peak = max(w.peak, h.objects)
				gcShare := -1.0
				if now.Sub(windowStart) >= gcWindow {
					gcShare = h.gcShareSince(window)
					window, windowStart = h, now
				}
				if limit > 0 && h.over(uint64(limit), gcShare) {
					over()
					return
				}
			case <-w.done:
				return
			}
		}
	}()
	return w
}

// Stop ends the sampler and returns the peak heap seen.
func (w *Watch) Stop() uint64 {
	close(w.done)
	w.wg.Wait()
	var h heapState
	h.read()
	return max(w.peak, h.objects)
}

// heapState is one reading of runtime/metrics.
type heapState struct {
	objects uint64  // bytes in heap objects, live or not yet collected
	live    uint64  // live heap as of the last collection
	gcCPU   float64 // cumulative CPU seconds of the collector
	userCPU float64 // cumulative CPU seconds of Go code
	samples []metrics.Sample
}

func (h *heapState) read() {
	if h.samples == nil {
		h.samples = []metrics.Sample{
			{Name: "/memory/classes/heap/objects:bytes"},
			{Name: "/gc/heap/live:bytes"},
			{Name: "/cpu/classes/gc/total:cpu-seconds"},
			{Name: "/cpu/classes/user:cpu-seconds"},
		}
	}
	metrics.Read(h.samples)
	h.objects = h.samples[0].Value.Uint64()
	h.live = h.samples[1].Value.Uint64()
	h.gcCPU = h.samples[2].Value.Float64()
	h.userCPU = h.samples[3].Value.Float64()
}

// gcShareSince is the collector's share of the CPU used since prev.
func (h *heapState) gcShareSince(prev heapState) float64 {
	gc, user := h.gcCPU-prev.gcCPU, h.userCPU-prev.userCPU
	if gc+user <= 0 {
		return 0
	}
	return gc / (gc + user)
}

// over reports whether the heap crossed limit. The process's soft memory
// limit is at or below the ceiling (SetLimits), so the collector works
// harder as the heap nears it and garbage alone never crosses it. Live data
// that outgrows it shows in one of three ways:
//   - heap objects above the limit: the collector could not keep up;
//   - the live heap after a collection above 90% of the limit;
//   - the collector taking half the CPU or more (gcShare, over the last
//     gcWindow; negative when not measured) with the live heap above half
//     the limit: it is collecting back to back and the script only crawls
//     on. Measured on a script that allocates without bound under a
//     200 MiB ceiling, this rule trips after ≈2 s where the other two take
//     ≈9 s; it is the JVM's "GC overhead limit" idea.
func (h *heapState) over(limit uint64, gcShare float64) bool {
	return h.objects > limit ||
		h.live > limit/10*9 ||
		(gcShare >= 0.5 && h.live > limit/2)
}
