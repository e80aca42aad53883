//go:build unix

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// A transpile-cache entry that is not a regular file of a plausible size
// is never read: a FIFO would hang the compile past its deadline (a read
// cannot be interrupted), a link to /dev/zero or a huge file would exhaust
// memory. Each is ignored (and replaced where it can be), and the compile
// comes out the same.
func TestTranspileCacheRefusesSpecialEntries(t *testing.T) {
	t.Cleanup(func() { engine.SetTranspileCacheDir(""); engine.ResetTranspileCache() })
	dir := t.TempDir()
	engine.SetTranspileCacheDir(dir)
	engine.ResetTranspileCache()

	tag := strings.ReplaceAll(t.Name(), "/", "_") + time.Now().Format("150405.000000000")
	files := map[string]string{
		"definitions/a.sqlx":     "config { type: \"view\" }\n-- " + tag + "\nSELECT 1 AS one\n",
		"definitions/b.sqlx":     "config { type: \"table\" }\nSELECT * FROM ${ref(\"a\")}\n",
		"workflow_settings.yaml": settings,
	}
	root := testenv.WriteProject(t, testenv.CoreVersion, files)
	var paths []string
	for name := range files {
		paths = append(paths, name)
	}
	want, err := compileAt(t, root, paths, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "*", "*.js"))
	if len(entries) < 2 {
		t.Fatalf("disk layer holds %d entries, want ≥ 2", len(entries))
	}

	for _, tc := range []struct {
		name     string
		plant    func(path string) error
		replaced bool // a fresh entry is written in its place
	}{
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, true},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, true},
		{"oversized file", func(p string) error {
			// Sparse: a valid header, then 100 MiB that take no disk.
			if err := os.WriteFile(p, []byte("dfd-transpile-1 "+strings.Repeat("0", 64)+"\n"), 0o644); err != nil {
				return err
			}
			return os.Truncate(p, 100<<20)
		}, true},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, e := range entries {
				if err := os.RemoveAll(e); err != nil {
					t.Fatal(err)
				}
				if err := tc.plant(e); err != nil {
					t.Fatal(err)
				}
			}
			engine.ResetTranspileCache()
			type result struct {
				g   *dataformpb.CompiledGraph
				err error
			}
			done := make(chan result, 1)
			go func() {
				g, err := compileAt(t, root, paths, 30*time.Second)
				done <- result{g, err}
			}()
			var got result
			select {
			case got = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the compile did not finish")
			}
			if got.err != nil {
				t.Fatal(got.err)
			}
			if s := engine.TranspileCacheStats(); s.DiskHits != 0 {
				t.Errorf("planted entries were used: %+v", s)
			}
			if !sameGraph(want, got.g) {
				t.Errorf("graph with planted entries differs: %v", errorsByFile(got.g))
			}
			for _, e := range entries {
				fi, err := os.Lstat(e)
				switch {
				case err != nil:
					t.Errorf("%s: %v", e, err)
				case tc.replaced && !fi.Mode().IsRegular():
					t.Errorf("%s is still a %v, want a fresh entry", e, fi.Mode().Type())
				case !tc.replaced && !fi.IsDir():
					t.Errorf("%s: the directory was removed", e)
				}
			}
		})
	}
	if fi, err := os.Stat("/dev/zero"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/zero after the test: %v %v", fi, err)
	}
}
