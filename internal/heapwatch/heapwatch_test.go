package heapwatch

import (
	"math"
	"runtime/debug"
	"testing"
	"time"
)

func TestOver(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		name          string
		objects, live uint64
		gcShare       float64
		want          bool
	}{
		{"well below", 300, 200, 0.1, false},
		{"garbage near the limit, live small", 990, 100, 0.9, false},
		{"objects over the limit", 1001, 100, 0.1, true},
		{"live over 90%", 950, 901, 0.1, true},
		{"collector busy with live over half", 700, 600, 0.6, true},
		{"collector busy, live under half", 700, 400, 0.9, false},
		{"live over half, collector not measured", 700, 600, -1, false},
	} {
		h := heapState{objects: tc.objects, live: tc.live}
		if got := h.over(limit, tc.gcShare); got != tc.want {
			t.Errorf("%s: over = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Live data that grows without bound trips the watcher near the ceiling,
// long before it could take the machine.
func TestWatchTrips(t *testing.T) {
	const limit = 128 << 20
	SetLimits(0, 0, limit)
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	tripped := make(chan struct{})
	w := Start(limit, 5*time.Millisecond, func() { close(tripped) })
	var keep [][]byte
	deadline := time.After(time.Minute)
loop:
	for len(keep) < 4*limit>>16 { // up to 4× the limit, in 64 KiB blocks
		select {
		case <-tripped:
			break loop
		case <-deadline:
			t.Fatal("no trip within a minute")
		default:
		}
		keep = append(keep, make([]byte, 64<<10))
		if len(keep)%16 == 0 {
			// At most 1 MiB a millisecond, as real work allocates: a bare
			// loop outran the 5 ms samples on a loaded machine (277 MiB
			// before the trip, once in CI), which says nothing about the
			// watcher.
			time.Sleep(time.Millisecond)
		}
	}
	peak := w.Stop()
	select {
	case <-tripped:
	default:
		t.Fatalf("held %d MiB under a %d MiB ceiling without a trip", len(keep)>>4, limit>>20)
	}
	if peak > 2*limit {
		t.Errorf("peak heap %d MiB under a %d MiB ceiling", peak>>20, limit>>20)
	}
}
