package workspace

import (
	"fmt"
	"testing"
)

// BenchmarkSnapshotIndex indexes a snapshot of 10,000 actions of two
// dependencies each, as every compile's publication does (the shape of
// bench/projectgen's generated projects: about 1.5 actions a file).
func BenchmarkSnapshotIndex(b *testing.B) {
	const n = 10000
	actions := make([]*Action, n)
	for i := range actions {
		t := Target{Database: "acme-analytics-bench", Schema: fmt.Sprintf("schema_%d", i%40), Name: fmt.Sprintf("action_%d", i)}
		a := &Action{Target: t, CanonicalTarget: t, File: fmt.Sprintf("definitions/area_%d/file_%d.sqlx", i%40, i*2/3)}
		for _, d := range []int{i / 2, i / 3} {
			a.Dependencies = append(a.Dependencies, Target{Database: t.Database, Schema: fmt.Sprintf("schema_%d", d%40), Name: fmt.Sprintf("action_%d", d)})
		}
		actions[i] = a
	}
	s := &Snapshot{Result: &CompileResult{Actions: actions}}
	for b.Loop() {
		s.buildIndex()
	}
}
