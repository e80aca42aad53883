package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/internal/regfile"
)

// Files gives the engine read access to one project's files. Names are
// slash-separated and relative to the project root ("definitions/a.sqlx").
// Implementations must refuse names that leave the root, including through
// symbolic links, with an error that wraps ErrOutsideProject.
type Files interface {
	ReadFile(name string) ([]byte, error)
	Stat(name string) (fs.FileInfo, error)
}

// ErrOutsideProject is wrapped by errors for paths that leave the project.
var ErrOutsideProject = errors.New("outside the project directory")

// DirFiles serves files from a directory on disk through os.Root, which
// refuses ".." and symbolic links that escape the directory.
type DirFiles struct {
	root *os.Root
	dir  string
}

// OpenDir opens dir for DirFiles. Close it when done.
func OpenDir(dir string) (*DirFiles, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening project directory: %w", err)
	}
	return &DirFiles{root: r, dir: dir}, nil
}

// Close releases the directory handle.
func (d *DirFiles) Close() error { return d.root.Close() }

func (d *DirFiles) ReadFile(name string) ([]byte, error) {
	// Only regular files: a named pipe would block the compile in open(2),
	// where no deadline reaches it (package regfile).
	b, err := regfile.ReadFileIn(d.root, name)
	return b, d.wrap(name, err)
}

func (d *DirFiles) Stat(name string) (fs.FileInfo, error) {
	fi, err := d.root.Stat(name)
	return fi, d.wrap(name, err)
}

func (d *DirFiles) wrap(name string, err error) error {
	if err == nil {
		return nil
	}
	// os.Root reports escapes as a plain error ("path escapes from parent").
	if strings.Contains(err.Error(), "escapes from parent") {
		return fmt.Errorf("%s: %w (a symbolic link or '..' leads out of %s)", name, ErrOutsideProject, d.dir)
	}
	return err
}

// Overlay serves unsaved editor buffers on top of another Files. It is safe
// for concurrent use; compiles read a consistent copy via Snapshot.
type Overlay struct {
	Base Files

	mu   sync.RWMutex // guards docs
	docs map[string][]byte
}

// Set replaces the content of name (slash-separated, root-relative).
func (o *Overlay) Set(name string, content []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.docs == nil {
		o.docs = map[string][]byte{}
	}
	o.docs[path.Clean(name)] = content
}

// Delete drops the buffer for name; the file on disk shows through again.
func (o *Overlay) Delete(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.docs, path.Clean(name))
}

// Names lists the buffered names.
func (o *Overlay) Names() []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	names := make([]string, 0, len(o.docs))
	for n := range o.docs {
		names = append(names, n)
	}
	return names
}

func (o *Overlay) get(name string) ([]byte, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	b, ok := o.docs[path.Clean(name)]
	return b, ok
}

func (o *Overlay) ReadFile(name string) ([]byte, error) {
	if b, ok := o.get(name); ok {
		return b, nil
	}
	return o.Base.ReadFile(name)
}

// Stat reports a buffered name as a file, and a directory holding one as a
// directory, on disk or not: the project as it would be with every buffer
// saved (a new file in a new folder included). The Node.js worker's file
// view does the same.
func (o *Overlay) Stat(name string) (fs.FileInfo, error) {
	if b, ok := o.get(name); ok {
		return overlayInfo{name: path.Base(name), size: int64(len(b))}, nil
	}
	if o.holds(name) {
		return overlayInfo{name: path.Base(name), dir: true}, nil
	}
	return o.Base.Stat(name)
}

// holds reports whether a buffered name lies below the directory dir.
func (o *Overlay) holds(dir string) bool {
	dir = path.Clean(dir)
	if dir == "." {
		return false // the root: the base says what it is
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	for n := range o.docs {
		if strings.HasPrefix(n, dir+"/") {
			return true
		}
	}
	return false
}

type overlayInfo struct {
	name string
	size int64
	dir  bool
}

func (i overlayInfo) Name() string { return i.name }
func (i overlayInfo) Size() int64  { return i.size }
func (i overlayInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i overlayInfo) ModTime() time.Time { return time.Time{} }
func (i overlayInfo) IsDir() bool        { return i.dir }
func (i overlayInfo) Sys() any           { return nil }

// OpenFiles opens the project directory root with unsaved editor buffers
// (root-relative slash paths to content) on top of it: what every compile
// and JiT request reads. Call close when the request is done.
func OpenFiles(root string, overlay map[string][]byte) (files Files, close func() error, err error) {
	dir, err := OpenDir(root)
	if err != nil {
		return nil, nil, err
	}
	if len(overlay) == 0 {
		return dir, dir.Close, nil
	}
	o := &Overlay{Base: dir}
	for name, content := range overlay {
		o.Set(name, content)
	}
	return o, dir.Close, nil
}
