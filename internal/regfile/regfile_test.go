//go:build unix

package regfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specials makes, in dir, a regular file, a named pipe, a unix socket and
// symbolic links to each of the others and to /dev/zero.
func specials(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "plain.sqlx"), []byte("select 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.sqlx"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, "sock.sqlx"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for link, target := range map[string]string{
		"zero.sqlx":      "/dev/zero",
		"pipelink.sqlx":  "pipe.sqlx",
		"plainlink.sqlx": "plain.sqlx",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	specials(t, dir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tests := []struct {
		name string
		kind string // "" : read fine
		err  bool   // an error other than NotRegularError
	}{
		{"plain.sqlx", "", false},
		{"plainlink.sqlx", "", false},
		{"pipe.sqlx", "named pipe", false},
		{"pipelink.sqlx", "named pipe", false},
		{"sock.sqlx", "socket", false},
		{"zero.sqlx", "character device", false}, // ReadFileIn: leads out of the root
		{"missing.sqlx", "", true},
		{".", "", true}, // a directory: os.ReadFile's error
	}
	readers := map[string]func(string) ([]byte, error){
		"ReadFile":   func(n string) ([]byte, error) { return ReadFile(filepath.Join(dir, n)) },
		"ReadFileIn": func(n string) ([]byte, error) { return ReadFileIn(root, n) },
	}
	for rname, read := range readers {
		for _, tt := range tests {
			t.Run(rname+"/"+tt.name, func(t *testing.T) {
				done := make(chan struct{})
				var b []byte
				var err error
				go func() {
					defer close(done)
					b, err = read(tt.name)
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("reading %s did not return in 10 s", tt.name)
				}
				if rname == "ReadFileIn" && tt.name == "zero.sqlx" {
					// os.Root refuses the link to /dev/zero before its type matters.
					tt.kind, tt.err = "", true
				}
				var nr *NotRegularError
				switch {
				case tt.kind != "":
					if !errors.As(err, &nr) || nr.Kind != tt.kind || !errors.Is(err, ErrNotRegular) {
						t.Fatalf("err = %v, want a NotRegularError of kind %q", err, tt.kind)
					}
					want := "not a regular file (" + tt.kind + "); dfd reads only regular files"
					if !strings.Contains(err.Error(), tt.name) || !strings.Contains(err.Error(), want) {
						t.Fatalf("message %q: want the name and %q", err, want)
					}
				case tt.err:
					if err == nil || errors.As(err, &nr) {
						t.Fatalf("err = %v, want an ordinary error", err)
					}
				default:
					if err != nil || string(b) != "select 1" {
						t.Fatalf("got %q, %v", b, err)
					}
				}
			})
		}
	}
}

// TestReadOpenRefusesSwap: the descriptor's own type decides, so a path
// that was a regular file when stat'ed and is a named pipe when opened is
// refused without blocking (the race Stat alone leaves open).
func TestReadOpenRefusesSwap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.sqlx")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := readOpen("pipe.sqlx", f); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("err = %v, want ErrNotRegular", err)
	}
}
