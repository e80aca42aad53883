package engine

import (
	"fmt"
	"testing"

	"github.com/dop251/goja"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// BenchmarkTranspileBigSQLX is core 3.0.62's compiler() on one generated
// .sqlx (bench/projectgen.BigSQLX) of 2 MB and of 10 MB, in goja, with
// SQLX in Go ("go") and as core ships it ("core": about 40 µs a byte, so
// select it alone, e.g. -bench 'BigSQLX/core/2MB' -benchtime 1x).
func BenchmarkTranspileBigSQLX(b *testing.B) {
	path := testenv.CoreDir(b, "3.0.62") + "/bundle.js"
	for _, natives := range []bool{true, false} {
		bundle, err := compileBundleNatives(path, "3.0.62", natives)
		if err != nil {
			b.Fatal(err)
		}
		name := map[bool]string{true: "go", false: "core"}[natives]
		b.Run(name, func(b *testing.B) {
			for _, mb := range []int{2, 10} {
				code := projectgen.BigSQLX(mb<<20, 1, "dim_calendar")
				b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
					b.SetBytes(int64(len(code)))
					for b.Loop() {
						b.StopTimer()
						r, err := bundle.NewRuntime(Options{Root: b.TempDir()})
						if err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						if _, err := r.compiler(goja.Undefined(), r.vm.ToValue(code), r.vm.ToValue(projectgen.BigSQLXPath)); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(code)), "ns/byte")
				})
			}
		})
	}
}
