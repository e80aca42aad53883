package gsql

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkClassify measures parsing without the memo, at growing sizes:
// the time per byte (ns/op over bytes, shown as MB/s) stays flat — linear
// — where the hand-written lexer it replaced was quadratic in nesting.
func BenchmarkClassify(b *testing.B) {
	if _, err := theEngine(); err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name string
		gen  func(n int) string
	}{
		{"nested-with", nestedWith},
		{"nested-subqueries", nestedSubqueries},
		{"flat", flatSelect},
	} {
		for _, n := range []int{10, 100, 1000} {
			stmt := shape.gen(n)
			if len(stmt) > MaxStatementBytes {
				continue
			}
			b.Run(fmt.Sprintf("%s/%dB", shape.name, len(stmt)), func(b *testing.B) {
				b.SetBytes(int64(len(stmt)))
				for b.Loop() {
					if v, err := classify(stmt); err != nil || v.Kind != Query {
						b.Fatalf("%v %v", v, err)
					}
				}
			})
		}
	}
	b.Run("memo-hit", func(b *testing.B) {
		stmt := nestedWith(100)
		Classify(context.Background(), stmt)
		for b.Loop() {
			Classify(context.Background(), stmt)
		}
	})
}

func flatSelect(n int) string {
	s := "SELECT "
	for i := range n {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("SAFE_CAST(c%d AS INT64) + %d AS x%d", i, i, i)
	}
	return s + " FROM `p.d.t`"
}
