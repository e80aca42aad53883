package workertest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/jit"
)

// ReportLatency reports the median and the 95th percentile of d in ms, as
// metrics named prefix+"p50-ms" and prefix+"p95-ms".
func ReportLatency(b *testing.B, d []time.Duration, prefix string) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	b.ReportMetric(ms(d[len(d)/2]), prefix+"p50-ms")
	b.ReportMetric(ms(d[(len(d)*95)/100]), prefix+"p95-ms")
}

// WarmCase is a JiT request of BenchJitWarm.
type WarmCase struct {
	Name string
	Job  jit.JitJob
	// Calls is how many adapter calls of each request reach the host.
	Calls int64
}

// BenchJitWarm measures JiT requests through the real pipe to a warm
// worker of p (one whose next runtime is prepared: the benchmark waits
// 40 ms between requests, off the clock, which is more than a preparation
// takes). Adapter answers in-process, at once: what is measured is the
// worker protocol and the engine, not BigQuery. Besides the latency it
// reports the engine's own time and the fraction of requests that waited
// for a runtime (cold-frac).
func BenchJitWarm(b *testing.B, p *jit.Pool, cases []WarmCase) {
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			a := &Adapter{}
			lat := make([]time.Duration, 0, b.N)
			var run []time.Duration
			waited := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				time.Sleep(40 * time.Millisecond) // the worker prepares its next runtime
				b.StartTimer()
				start := time.Now()
				res, err := p.Jit(context.Background(), c.Job, a.RPC)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				run = append(run, res.Stats.Run)
				if res.Stats.Wait > 100*time.Microsecond {
					waited++
				}
			}
			b.StopTimer()
			if a.Calls.Load() != c.Calls*int64(b.N) {
				b.Fatalf("%d adapter calls for %d requests", a.Calls.Load(), b.N)
			}
			ReportLatency(b, lat, "")
			ReportLatency(b, run, "engine-")
			b.ReportMetric(float64(waited)/float64(b.N), "cold-frac")
		})
	}
}

// BenchColdStart measures a new worker of e up to its Hello (process
// start, core loaded, first runtime prepared: ready-) and then up to the
// answer of its first JiT request (first-jit-), on a fresh one-worker pool
// for root each time.
func (e Engine) BenchColdStart(b *testing.B, root string) {
	var ready, first []time.Duration
	for i := 0; i < b.N; i++ {
		p, err := jit.NewPool(jit.PoolOptions{
			Root: root, BundlePath: BundlePath(root), CoreVersion: testenv.CoreVersion,
			Workers: 1, Command: e.Command(b, root, BundlePath(root)), Env: e.Env,
		})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := p.Prewarm(context.Background()); err != nil {
			b.Fatal(err)
		}
		ready = append(ready, time.Since(start))
		if _, err := p.Jit(context.Background(), JitJob(JitThreeCalls), (&Adapter{}).RPC); err != nil {
			b.Fatal(err)
		}
		first = append(first, time.Since(start))
		b.StopTimer()
		p.Close()
		b.StartTimer()
	}
	ReportLatency(b, ready, "ready-")
	ReportLatency(b, first, "first-jit-")
}
