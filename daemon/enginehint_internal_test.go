package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A slow compile on goja sends the project's next auto compile to
// Node.js; a fast one clears that; odd files where the hint is kept are
// no hint, never an error.
func TestEngineHint(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", t.TempDir())
	root := t.TempDir()
	if PreferNode(root, nil, "", 0) {
		t.Fatal("an empty project prefers Node.js before any compile")
	}
	RecordGojaCompile(root, 3*time.Second)
	if !gojaWasSlow(root) || !PreferNode(root, nil, "", 0) {
		t.Error("a 3 s compile on goja is not remembered")
	}
	if gojaWasSlow(t.TempDir()) {
		t.Error("another project got the hint")
	}
	RecordGojaCompile(root, 200*time.Millisecond)
	if gojaWasSlow(root) {
		t.Error("a fast compile did not clear the hint")
	}
	file := hintFile(root)
	for name, create := range map[string]func() error{
		"garbage":   func() error { return os.WriteFile(file, []byte("{not json"), 0o644) },
		"too big":   func() error { return os.WriteFile(file, make([]byte, 4096), 0o644) },
		"directory": func() error { return os.Mkdir(file, 0o755) },
		"symlink":   func() error { return os.Symlink("/dev/zero", file) },
	} {
		_ = os.RemoveAll(file)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := create(); err != nil {
			t.Fatal(err)
		}
		if gojaWasSlow(root) {
			t.Errorf("%s: read as a hint", name)
		}
	}
}
