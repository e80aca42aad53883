package engine

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Copies of one core (every project's node_modules) share one compiled
// program, each Bundle naming its own file, and the heap does not grow with
// the number of copies loaded. Keyed by path, every copy kept ≈7 MiB for
// the life of the process, which took the cmd/dfd tests over goja's 1 GiB
// ceiling.
func TestBundlesSharedByContent(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testenv.CoreDir(t, testenv.CoreVersion), "bundle.js"))
	if err != nil {
		t.Fatal(err)
	}
	load := func() *Bundle {
		t.Helper()
		p := filepath.Join(t.TempDir(), "bundle.js")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := LoadBundle(p, testenv.CoreVersion)
		if err != nil {
			t.Fatal(err)
		}
		if b.Path != p {
			t.Errorf("Path %q, want the file loaded, %q", b.Path, p)
		}
		return b
	}
	first := load()
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	const copies = 20
	for i := 0; i < copies; i++ {
		if b := load(); b.program != first.program || b.digest != first.digest {
			t.Fatalf("copy %d has a program of its own", i)
		}
	}
	// One program is ≈7 MiB; twenty kept would be ≈140.
	if grown := int64(heap()) - int64(before); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB for %d copies of one core", grown>>20, copies)
	}

	// Another version of the same bytes is another program (the version
	// selects patches), and at most maxBundles programs are kept.
	for i := 0; i < maxBundles+2; i++ {
		p := filepath.Join(t.TempDir(), "bundle.js")
		if err := os.WriteFile(p, append(append([]byte(nil), src...), []byte("\n//"+string(rune('a'+i)))...), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadBundle(p, testenv.CoreVersion); err != nil {
			t.Fatal(err)
		}
	}
	bundles.mu.Lock()
	n := bundles.lru.Len()
	bundles.mu.Unlock()
	if n > maxBundles {
		t.Errorf("%d programs kept, want at most %d", n, maxBundles)
	}
	// An evicted core compiles again.
	if b := load(); b.digest != first.digest {
		t.Errorf("reloaded digest %q, want %q", b.digest, first.digest)
	}
}
