package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// CanonicalPaths gives CanonicalPath of each path: through a linked
// directory, in a real one, in a missing one, and for "".
func TestCanonicalPaths(t *testing.T) {
	real := t.TempDir()
	if err := os.MkdirAll(filepath.Join(real, "defs"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		filepath.Join(link, "defs", "a.sqlx"), filepath.Join(link, "defs", "b.sqlx"),
		filepath.Join(real, "c.js"), filepath.Join(link, "missing", "d.sqlx"), "",
		filepath.Join(link, "defs", "..", "defs", "e.sqlx"),
	}
	got := CanonicalPaths(paths)
	for i, p := range paths {
		if want := CanonicalPath(p); got[i] != want {
			t.Errorf("CanonicalPaths(%q) = %q, CanonicalPath %q", p, got[i], want)
		}
	}
}
