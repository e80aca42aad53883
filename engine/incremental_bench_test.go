package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/incrtest"
)

// BenchmarkIncremental compares, on generated projects, a full compile with
// an incremental recompile after an edit of one .sqlx file. It reports the
// process CPU time per operation too (cpu-ms/op): on a shared machine wall
// time says little.
func BenchmarkIncremental(b *testing.B) {
	for _, n := range []int{400, 3000} {
		root, paths, edit := incrtest.Generated(b, n, 1)
		text, err := os.ReadFile(filepath.Join(root, edit))
		if err != nil {
			b.Fatal(err)
		}
		orig := string(text)
		req := incrRequest(b, root, paths)
		d := newIncrDriver(b, root)
		files, err := engine.OpenDir(root)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.Run(fmt.Sprintf("full/%d", n), func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if _, err := d.runtime().Compile(ctx, files, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
		b.Run(fmt.Sprintf("incremental/%d", n), func(b *testing.B) {
			_, kept, why, err := d.runtime().CompileKeep(ctx, files, req)
			if err != nil || kept == nil {
				b.Fatal(err, why)
			}
			defer os.WriteFile(filepath.Join(root, edit), []byte(orig), 0o644)
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				i++
				if err := os.WriteFile(filepath.Join(root, edit), []byte(orig+fmt.Sprintf("\n-- %d", i)), 0o644); err != nil {
					b.Fatal(err)
				}
				if _, file, err := kept.Recompile(ctx, files, req); err != nil || file != edit {
					b.Fatal(err, file)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
		files.Close()
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
