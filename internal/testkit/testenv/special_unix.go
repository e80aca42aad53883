//go:build unix

package testenv

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SpecialFile is a file of a project that is not a regular file.
type SpecialFile struct {
	Rel  string // slash-separated, relative to the project
	Kind string // as dfd names it: "named pipe", "socket", "character device"
}

// PlaceSpecialFiles puts into the project at root, under names dfd would
// read, files that are not regular files: a named pipe, a unix socket and
// a symbolic link to /dev/zero in definitions/, and a named pipe and a
// link to /dev/zero in includes/. Reading any of them blocks or never
// ends. The socket is closed when the test ends.
func PlaceSpecialFiles(t testing.TB, root string) []SpecialFile {
	t.Helper()
	for _, d := range []string{"definitions", "includes"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	at := func(rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	files := []SpecialFile{
		{"definitions/pipe.sqlx", "named pipe"},
		{"definitions/sock.sqlx", "socket"},
		{"definitions/zero.sqlx", "character device"},
		{"includes/pipe.js", "named pipe"},
		{"includes/zero.js", "character device"},
	}
	for _, f := range files {
		switch f.Rel {
		case "definitions/pipe.sqlx", "includes/pipe.js":
			if err := syscall.Mkfifo(at(f.Rel), 0o644); err != nil {
				t.Fatal(err)
			}
		case "definitions/zero.sqlx", "includes/zero.js":
			if err := os.Symlink("/dev/zero", at(f.Rel)); err != nil {
				t.Fatal(err)
			}
		case "definitions/sock.sqlx":
			// Bound at a short path (a socket's path is limited to about
			// 100 bytes) and moved into place: still a socket on disk.
			dir, err := os.MkdirTemp("", "sock")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			l, err := net.Listen("unix", filepath.Join(dir, "s"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			if err := os.Rename(filepath.Join(dir, "s"), at(f.Rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return files
}
