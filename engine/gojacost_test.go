package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// GojaExcess weighs each kind of file by what it costs in goja beyond
// Node.js: nothing for SQLX when core's SQLX runs in Go, a lot when not.
func TestGojaExcess(t *testing.T) {
	root := t.TempDir()
	files := map[string]int{
		"definitions/big.sqlx":   2 << 20,
		"definitions/small.sqlx": 1 << 10,
		"definitions/a.yaml":     100 << 10,
		"includes/data.js":       1 << 20,
		"definitions/q.sql":      1 << 20,
	}
	var paths []string
	for name, size := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, name)
	}
	paths = append(paths, "definitions/missing.yaml")
	known := testenv.CoreDir(t, "3.0.62") + "/bundle.js"
	ns := func(d time.Duration) float64 { return float64(d.Nanoseconds()) }
	want := 2500*float64(100<<10) + 200*float64(1<<20) // YAML and JS; no SQLX, no .sql
	if got := GojaExcess(root, paths, known); ns(got) < want*0.99 || ns(got) > want*1.01 {
		t.Errorf("with SQLX in Go: %v, want %v", got, time.Duration(want))
	}
	unknown := filepath.Join(t.TempDir(), "bundle.js") // unreadable: SQLX in core
	want += 44000 * float64(2<<20+1<<10)
	if got := GojaExcess(root, paths, unknown); ns(got) < want*0.99 || ns(got) > want*1.01 {
		t.Errorf("with SQLX in core: %v, want %v", got, time.Duration(want))
	}
}
