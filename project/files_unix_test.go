//go:build unix

package project

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Named pipes, sockets and links to devices in definitions/ and includes/
// are left out of the file list and reported, each with its kind; the
// regular files, directories named like files and broken links are listed
// as before (glob lists them).
func TestListFilesSkipsSpecialFiles(t *testing.T) {
	root := t.TempDir()
	buildTree(t, root, "definitions/a.sqlx", "includes/c.js", "definitions/dir.d/", "definitions/broken.sqlx -> nowhere.sqlx",
		"definitions/link.sqlx -> a.sqlx")
	special := testenv.PlaceSpecialFiles(t, root)
	// A link to a special file is skipped as its target is.
	if err := os.Symlink("pipe.sqlx", filepath.Join(root, "definitions", "pipelink.sqlx")); err != nil {
		t.Fatal(err)
	}
	paths, skipped, err := (&Project{Root: root}).ListFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"definitions/a.sqlx", "definitions/broken.sqlx", "definitions/dir.d", "definitions/link.sqlx", "includes/c.js"}
	if !slices.Equal(paths, want) {
		t.Errorf("paths = %v\nwant    %v", paths, want)
	}
	wantSkipped := map[string]string{"definitions/pipelink.sqlx": "named pipe"}
	for _, f := range special {
		wantSkipped[f.Rel] = f.Kind
	}
	if len(skipped) != len(wantSkipped) {
		t.Errorf("skipped = %v, want %v", skipped, wantSkipped)
	}
	for i, s := range skipped {
		if wantSkipped[s.Path] != s.Kind {
			t.Errorf("skipped %s as %q, want %q", s.Path, s.Kind, wantSkipped[s.Path])
		}
		if i > 0 && skipped[i-1].Path >= s.Path {
			t.Errorf("skipped not sorted: %v", skipped)
		}
	}
	if got := skipped[0].String(); got != "definitions/pipe.sqlx: not a regular file (named pipe); dfd reads only regular files" {
		t.Errorf("message %q", got)
	}
	if fp, err := (&Project{Root: root}).FilePaths(); err != nil || !slices.Equal(fp, paths) {
		t.Errorf("FilePaths = %v, %v; want ListFiles' paths", fp, err)
	}
}
