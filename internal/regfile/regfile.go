// Package regfile reads files only when they are regular files.
//
// A project directory may hold a named pipe, a socket or a device (or a
// symbolic link to one) under a name that looks like a source file:
// definitions/pipe.sqlx. Opening a named pipe for reading blocks until a
// writer appears, which may be never; reading /dev/zero never ends. A
// blocked open or read is a system call no context can interrupt, so a
// compile that touched such a file hung forever and a daemon's project
// never compiled again. dfd therefore reads only regular files, everywhere
// it reads project files, and says so for the others.
//
// The check is made twice: Stat before opening, so that a device is never
// even opened (opening some has side effects), and fstat on the open
// descriptor, which is the file actually read, so that a file swapped for a
// named pipe between the two is refused too. The open itself uses
// O_NONBLOCK, under which opening a named pipe returns at once instead of
// waiting for a writer; on a regular file O_NONBLOCK changes nothing.
package regfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// NotRegularError is the error for a file that is not a regular file.
type NotRegularError struct {
	Name string // as given to ReadFile
	Kind string // "named pipe", "socket", "device", …
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: %s", e.Name, Reason(e.Kind))
}

// Reason is the message for a file of kind: what dfd says about it,
// without the file's name.
func Reason(kind string) string {
	return "not a regular file (" + kind + "); dfd reads only regular files"
}

// ErrNotRegular matches every *NotRegularError with errors.Is.
var ErrNotRegular = errors.New("not a regular file")

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names the type of a file that dfd does not read: "named pipe",
// "socket", "device", "character device", "irregular file". It is "" for
// regular files, directories and symbolic links (whose target decides).
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeIrregular != 0:
		return "irregular file"
	}
	return ""
}

// Check returns a *NotRegularError naming name when fi is neither a
// regular file nor a directory, nil otherwise.
func Check(name string, fi fs.FileInfo) error {
	if k := Kind(fi.Mode()); k != "" {
		return &NotRegularError{Name: name, Kind: k}
	}
	return nil
}

// ReadFile is os.ReadFile for regular files only: anything else gives a
// *NotRegularError (a directory gives os.ReadFile's error), and it never
// blocks on a named pipe or reads a device.
func ReadFile(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := Check(name, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(name, f)
}

// ReadFileIn is ReadFile for name inside root (os.Root's confinement:
// no '..' or symbolic link leads out of it).
func ReadFileIn(root *os.Root, name string) ([]byte, error) {
	fi, err := root.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := Check(name, fi); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(name, f)
}

// readOpen reads f whole after checking, on the descriptor itself, that it
// is a regular file (the path may have been replaced since it was stat'ed).
func readOpen(name string, f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := Check(name, fi); err != nil {
		return nil, err
	}
	if fi.IsDir() {
		// As os.ReadFile: reading a directory fails with EISDIR.
		_, err := f.Read(make([]byte, 1))
		return nil, err
	}
	size := fi.Size()
	if size < 512 {
		size = 512
	}
	buf := make([]byte, 0, size+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				return buf, nil
			}
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}
