package cache

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
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

// bigTable is a table of 30 described columns, the size of a typical
// warehouse table's metadata.
func bigTable(k tkey) *dataformpb.TableMetadata {
	m := &dataformpb.TableMetadata{Target: k.target(), Type: dataformpb.TableMetadata_TABLE, Description: "a table of things"}
	for i := range 30 {
		m.Fields = append(m.Fields, &dataformpb.Field{Name: fmt.Sprintf("column_%02d", i), Description: "what the column holds",
			Type: &dataformpb.Field_Primitive_{Primitive: dataformpb.Field_STRING}})
	}
	return m
}

// The store opens its file for each operation (so that several processes
// share it): what that costs on a cache of 5,000 tables (16 MiB), against
// bbolt kept open (the "held-" cases, which lock every other process out).
func BenchmarkStore5000(b *testing.B) {
	path := filepath.Join(b.TempDir(), "m.db")
	s := openStore(path, time.Second, func(msg string) { b.Fatal(msg) })
	now := time.Now()
	for d := range 10 {
		lk := lkey{"p", fmt.Sprintf("ds%d", d)}
		entries, l := map[tkey]*tableEntry{}, &listEntry{fetched: now}
		for i := range 500 {
			k := tkey{"p", lk.schema, fmt.Sprintf("t%04d", i)}
			entries[k] = &tableEntry{meta: bigTable(k), fetched: now}
			l.tables = append(l.tables, k)
		}
		if err := s.put(entries, lk, l); err != nil {
			b.Fatal(err)
		}
	}
	k := tkey{"p", "ds3", "t0123"}
	one := map[tkey]*tableEntry{k: {meta: bigTable(k), fetched: now}}
	b.Run("get", func(b *testing.B) {
		benchLoop(b, func() error { _, err := s.getTable(k); return err })
	})
	b.Run("list-500", func(b *testing.B) {
		benchLoop(b, func() error { _, _, err := s.getListTables(lkey{"p", "ds3"}); return err })
	})
	b.Run("put", func(b *testing.B) {
		benchLoop(b, func() error { return s.put(one, lkey{}, nil) })
	})
	b.Run("check", func(b *testing.B) { // once per process, at Open
		benchLoop(b, func() error { _, _, err := s.check(); return err })
	})
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	b.Run("held-get", func(b *testing.B) {
		benchLoop(b, func() error {
			return db.View(func(tx *bolt.Tx) error { _, err := readTables(tx, []tkey{k}); return err })
		})
	})
	b.Run("held-put", func(b *testing.B) {
		benchLoop(b, func() error {
			return db.Update(func(tx *bolt.Tx) error {
				rec, err := encodeRecord(now, false, one[k].meta)
				if err != nil {
					return err
				}
				return tx.Bucket(bucketTables).Put(tableKey(k.db, k.schema, k.name), rec)
			})
		})
	})
}
