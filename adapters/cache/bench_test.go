package cache

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// benchLoop runs op b.N times and reports the median and 99th percentile
// latency (b.ReportMetric), which the mean of ns/op hides.
func benchLoop(b *testing.B, op func() error) {
	durs := make([]time.Duration, 0, 1<<16)
	for b.Loop() {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		if len(durs) < cap(durs) {
			durs = append(durs, time.Since(start))
		}
	}
	slices.Sort(durs)
	if len(durs) > 0 {
		b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
	}
}

// Warm cache, in process: the path every preview's GetTable/ListTables
// takes once metadata is cached (goal: p50 ≤ 50µs).
func BenchmarkCached(b *testing.B) {
	ctx := context.Background()
	c := Open(newBackend(50), Options{Path: filepath.Join(b.TempDir(), "m.db"), TTL: time.Hour})
	defer c.Close()
	list := &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"}
	if _, err := c.ListTables(ctx, list); err != nil {
		b.Fatal(err)
	}
	getReq := &dataformpb.GetTableRequest{Target: target("t07")}
	getWire, _ := proto.Marshal(getReq)
	listWire, _ := proto.Marshal(list)

	b.Run("GetTable", func(b *testing.B) {
		benchLoop(b, func() error { _, err := c.GetTable(ctx, getReq); return err })
	})
	b.Run("GetTable/Dispatch+Recorder", func(b *testing.B) {
		rec := adapters.NewRecorder(c)
		benchLoop(b, func() error { _, err := adapters.Dispatch(ctx, rec, adapters.MethodGetTable, getWire); return err })
	})
	b.Run("ListTables-50", func(b *testing.B) {
		benchLoop(b, func() error { _, err := c.ListTables(ctx, list); return err })
	})
	b.Run("ListTables-50/Dispatch", func(b *testing.B) {
		benchLoop(b, func() error { _, err := adapters.Dispatch(ctx, c, adapters.MethodListTables, listWire); return err })
	})
	// Warm on disk, cold in memory: the first call after a daemon restart.
	b.Run("GetTable/first-after-restart", func(b *testing.B) {
		path := c.Path()
		c.Close()
		benchLoop(b, func() error {
			c2 := Open(nil, Options{Path: path, TTL: time.Hour})
			defer c2.Close()
			_, err := c2.GetTable(ctx, getReq)
			return err
		})
	})
}
