package sqlcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/adapters/offline"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// benchGraph is a compiled graph of n actions shaped like a warehouse
// project: staging views over 20 declared raw tables, then layers of
// tables each joining up to three upstream actions with a CTE, a window
// function and an aggregate; one in ten is an incremental table with a
// pre-operation, one in twenty an assertion. Every statement is valid.
func benchGraph(n int, seed int64) (*dataformpb.CompiledGraph, []byte) {
	r := rand.New(rand.NewSource(seed))
	const raws = 20
	g := &dataformpb.CompiledGraph{ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "bench", DefaultSchema: "marts"}}
	type tableJSON struct {
		Target map[string]string   `json:"target"`
		Type   string              `json:"type"`
		Fields []map[string]string `json:"fields"`
	}
	var snapshot struct {
		Tables []tableJSON `json:"tables"`
	}
	for i := 0; i < raws; i++ {
		t := &dataformpb.Target{Database: "bench-raw", Schema: "raw", Name: fmt.Sprintf("raw_%02d", i)}
		g.Declarations = append(g.Declarations, &dataformpb.Declaration{Target: t})
		fields := []map[string]string{{"name": "id", "primitive": "INTEGER"}, {"name": "customer_id", "primitive": "INTEGER"},
			{"name": "created_at", "primitive": "TIMESTAMP"}, {"name": "amount", "primitive": "NUMERIC"}, {"name": "status", "primitive": "STRING"}}
		for c := 0; c < 7; c++ {
			fields = append(fields, map[string]string{"name": fmt.Sprintf("attr_%d", c), "primitive": "STRING"})
		}
		snapshot.Tables = append(snapshot.Tables, tableJSON{Target: map[string]string{"database": t.Database, "schema": t.Schema, "name": t.Name}, Type: "TABLE", Fields: fields})
	}
	md, _ := json.Marshal(snapshot)
	var names []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("a_%04d", i)
		target := &dataformpb.Target{Database: "bench", Schema: "marts", Name: name}
		var query string
		var deps []*dataformpb.Target
		if i < raws || len(names) < 3 {
			raw := g.Declarations[i%raws].GetTarget()
			deps = append(deps, raw)
			query = fmt.Sprintf("SELECT id, customer_id, created_at, CAST(amount AS NUMERIC) AS amount, LOWER(status) AS status, attr_0 AS label\nFROM `bench-raw.raw.%s`\nWHERE status IS NOT NULL", raw.GetName())
		} else {
			k := 1 + r.Intn(3)
			var ups []string
			for j := 0; j < k; j++ {
				ups = append(ups, names[len(names)-1-r.Intn(min(len(names), 50))])
			}
			var b strings.Builder
			fmt.Fprintf(&b, "WITH base AS (\n  SELECT id, customer_id, created_at, amount, status, label\n  FROM `bench.marts.%s`\n),\n", ups[0])
			fmt.Fprintf(&b, "ranked AS (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY created_at DESC) AS rn FROM base\n)\n")
			fmt.Fprintf(&b, "SELECT r.id, r.customer_id, MAX(r.created_at) AS created_at, SUM(r.amount) AS amount, ANY_VALUE(r.status) AS status, ANY_VALUE(r.label) AS label\nFROM ranked AS r\n")
			for j, u := range ups[1:] {
				fmt.Fprintf(&b, "LEFT JOIN `bench.marts.%s` AS u%d ON u%d.customer_id = r.customer_id\n", u, j, j)
			}
			b.WriteString("WHERE r.rn <= 3\nGROUP BY r.id, r.customer_id")
			query = b.String()
			for _, u := range ups {
				deps = append(deps, &dataformpb.Target{Database: "bench", Schema: "marts", Name: u})
			}
		}
		file := "definitions/" + name + ".sqlx"
		switch {
		case i%20 == 19:
			g.Assertions = append(g.Assertions, &dataformpb.Assertion{Target: target, FileName: file, DependencyTargets: deps,
				Query: "SELECT id FROM (" + query + ") WHERE amount < 0"})
			continue
		case i%10 == 9:
			g.Tables = append(g.Tables, &dataformpb.Table{Target: target, FileName: file, EnumType: dataformpb.TableType_INCREMENTAL, DependencyTargets: deps,
				Query: query, IncrementalQuery: query, PreOps: []string{"CREATE TEMP FUNCTION clean_" + name + "(s STRING) RETURNS STRING AS (TRIM(s))"}})
		default:
			g.Tables = append(g.Tables, &dataformpb.Table{Target: target, FileName: file, EnumType: dataformpb.TableType_TABLE, DependencyTargets: deps, Query: query})
		}
		names = append(names, name)
	}
	return g, md
}

func benchOptions(b testing.TB, md []byte) Options {
	a, err := offline.Parse("bench.json", md, offline.Options{DefaultDatabase: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return Options{Metadata: a, MetadataID: "bench"}
}

// BenchmarkCheckCold is a check of a whole project by a new Checker (the
// first check after the daemon opens a project, and `dfd check`).
func BenchmarkCheckCold(b *testing.B) {
	for _, n := range []int{30, 400, 1000, 3000} {
		b.Run(fmt.Sprintf("actions=%d", n), func(b *testing.B) {
			g, md := benchGraph(n, 1)
			opts := benchOptions(b, md)
			var res *Result
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				var err error
				if res, err = Check(context.Background(), g, opts); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if errs := countSeverity(res, Error); errs > 0 {
				b.Fatalf("%d errors on valid SQL: %v", errs, res.Findings[0])
			}
			b.ReportMetric(float64(res.Ran), "analyses/op")
			b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "heapMiB")
			// Live after a collection: nearly all of it GoogleSQL's linear
			// memory, at its high-water mark (it never shrinks).
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "liveMiB")
		})
	}
}

// BenchmarkCheckAfterEdit is the check after an edit of one action's SQL
// in the middle of the graph (its output schema unchanged, then changed),
// by a Checker that checked the project before: what the daemon does
// after each compile.
func BenchmarkCheckAfterEdit(b *testing.B) {
	for _, n := range []int{30, 400, 1000, 3000} {
		for _, schemaChange := range []bool{false, true} {
			b.Run(fmt.Sprintf("actions=%d/schemaChange=%v", n, schemaChange), func(b *testing.B) {
				g, md := benchGraph(n, 1)
				opts := benchOptions(b, md)
				k := NewChecker()
				if _, err := k.Check(context.Background(), g, opts); err != nil {
					b.Fatal(err)
				}
				// A table of the middle of the graph built on upstream
				// actions (the first ones read raw tables).
				tables := g.GetTables()
				edited := tables[len(tables)/2]
				for _, t := range tables[len(tables)/2:] {
					if strings.Contains(t.Query, "SELECT r.id") {
						edited = t
						break
					}
				}
				original := edited.Query
				var res *Result
				i := 0
				for b.Loop() {
					i++
					// A new comment, or a new output column, each time: never a
					// text seen before.
					edited.Query = fmt.Sprintf("%s\n-- edit %d", original, i)
					if schemaChange {
						edited.Query = strings.Replace(original, "SELECT r.id", fmt.Sprintf("SELECT %d AS extra_%d, r.id", i, i), 1)
						if edited.Query == original {
							b.Fatal("the edit changed nothing")
						}
					}
					var err error
					if res, err = k.Check(context.Background(), g, opts); err != nil {
						b.Fatal(err)
					}
				}
				if errs := countSeverity(res, Error); errs > 0 {
					b.Fatalf("%d errors on valid SQL: %v", errs, res.Findings[0])
				}
				b.ReportMetric(float64(res.Ran), "analyses/op")
			})
		}
	}
}

func countSeverity(r *Result, s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}
