package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// What `dfd compile --engine=auto` learns from its compiles' times: the
// faster engine once both were timed; the other engine tried once when
// only one was and it may be faster; odd files where the hints are kept
// are no hint, never an error.
func TestEngineHint(t *testing.T) {
	t.Setenv("DFD_CACHE_DIR", t.TempDir())
	s := time.Second
	for _, c := range []struct {
		name  string
		times map[string]time.Duration // recorded in this order: goja, then node
		want  string
	}{
		{"nothing timed: the estimate (an empty project: goja)", nil, EngineGoja},
		{"a slow goja compile: try Node.js", map[string]time.Duration{EngineGoja: 3 * s}, EngineNode},
		{"a quick goja compile: stay", map[string]time.Duration{EngineGoja: 200 * time.Millisecond}, EngineGoja},
		{"a quick Node.js compile: try goja", map[string]time.Duration{EngineNode: 400 * time.Millisecond}, EngineGoja},
		{"a slow Node.js compile: stay", map[string]time.Duration{EngineNode: 2 * s}, EngineNode},
		{"both: Node.js faster", map[string]time.Duration{EngineGoja: 650 * time.Millisecond, EngineNode: 430 * time.Millisecond}, EngineNode},
		{"both: goja faster", map[string]time.Duration{EngineGoja: 250 * time.Millisecond, EngineNode: 400 * time.Millisecond}, EngineGoja},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for _, e := range []string{EngineGoja, EngineNode} {
				if d, ok := c.times[e]; ok {
					RecordCompile(root, e, d)
				}
			}
			if got := AutoEngine(root, nil, ""); got != c.want {
				t.Errorf("AutoEngine = %s, want %s (hint %+v)", got, c.want, readHint(root))
			}
		})
	}
	// A later time replaces the engine's earlier one.
	root := t.TempDir()
	RecordCompile(root, EngineGoja, 3*s)
	RecordCompile(root, EngineNode, 500*time.Millisecond)
	RecordCompile(root, EngineGoja, 100*time.Millisecond)
	if h := readHint(root); h.GojaMs != 100 || h.NodeMs != 500 || AutoEngine(root, nil, "") != EngineGoja {
		t.Errorf("hint %+v after goja became faster", h)
	}
	// After RetimeAfter compiles in a row on the faster engine, the other
	// is timed again once; its new time decides from then on.
	root = t.TempDir()
	RecordCompile(root, EngineGoja, 3*s)
	for range RetimeAfter {
		if got := AutoEngine(root, nil, ""); got != EngineNode && readHint(root).NodeMs > 0 {
			t.Fatalf("AutoEngine = %s before the retime (hint %+v)", got, readHint(root))
		}
		RecordCompile(root, EngineNode, 500*time.Millisecond)
	}
	if got := AutoEngine(root, nil, ""); got != EngineGoja {
		t.Errorf("after %d compiles in a row on Node.js, AutoEngine = %s, want goja timed again (hint %+v)", RetimeAfter, got, readHint(root))
	}
	RecordCompile(root, EngineGoja, 80*time.Millisecond) // the project shrank
	if got := AutoEngine(root, nil, ""); got != EngineGoja {
		t.Errorf("goja now faster: AutoEngine = %s (hint %+v)", got, readHint(root))
	}
	if h := readHint(t.TempDir()); h != (engineHint{}) {
		t.Errorf("another project got a hint: %+v", h)
	}
	file := hintFile(root)
	for name, create := range map[string]func() error{
		"garbage":   func() error { return os.WriteFile(file, []byte("{not json"), 0o644) },
		"negative":  func() error { return os.WriteFile(file, []byte(`{"gojaMs":-5,"nodeMs":9}`), 0o644) },
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
		if h := readHint(root); h != (engineHint{}) {
			t.Errorf("%s: read as a hint %+v", name, h)
		}
	}
	// The format of older dfd (gojaMs only) still reads.
	_ = os.RemoveAll(file)
	if err := os.WriteFile(file, []byte(`{"gojaMs":3200}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if AutoEngine(root, nil, "") != EngineNode {
		t.Error("an older hint of a slow goja compile is not read")
	}
}
