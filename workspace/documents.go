package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/source"
)

// Document is an open editor buffer. Documents are immutable: an edit makes
// a new one, so that whoever holds one (a snapshot, a request) reads a
// consistent text.
type Document struct {
	URI     string // as the client named it
	Path    string // absolute, cleaned, symbolic links in its directory resolved
	Version int32
	Text    []byte

	mapOnce sync.Once
	mapper  *source.Mapper

	// What requests read of the text, computed once (the text never
	// changes): a 2 MB SQLX file takes milliseconds to scan, and every
	// hover, completion and symbol request of that version shares it.
	sqlxOnce sync.Once
	sqlx     *source.SQLX
	refsOnce sync.Once
	refs     []source.RefCall
	defsMu   sync.Mutex // guards defs
	defs     map[string]defSpan
}

type defSpan struct {
	span source.Span
	ok   bool
}

// NewDocument makes a document.
func NewDocument(uri, path string, version int32, text []byte) *Document {
	return &Document{URI: uri, Path: path, Version: version, Text: text}
}

// Lines maps positions of the document's text.
func (d *Document) Lines() *source.Mapper {
	d.mapOnce.Do(func() { d.mapper = source.NewMapper(d.Text) })
	return d.mapper
}

// SQLX is the SQLX structure of the text (source.ScanSQLX), computed on
// first use.
func (d *Document) SQLX() *source.SQLX {
	d.sqlxOnce.Do(func() { d.sqlx = source.ScanSQLX(d.Text) })
	return d.sqlx
}

// Refs are the ref()/resolve() calls of the text (source.FindRefs),
// computed on first use.
func (d *Document) Refs() []source.RefCall {
	d.refsOnce.Do(func() { d.refs = source.FindRefs(d.Text) })
	return d.refs
}

// DefinitionSpan is where the text defines the action called name
// (source.DefinitionSpan), remembered per name.
func (d *Document) DefinitionSpan(name string) (source.Span, bool) {
	d.defsMu.Lock()
	if ds, ok := d.defs[name]; ok {
		d.defsMu.Unlock()
		return ds.span, ds.ok
	}
	d.defsMu.Unlock()
	var x *source.SQLX
	if strings.HasSuffix(strings.ToLower(d.Path), ".sqlx") {
		x = d.SQLX()
	}
	sp, ok := source.DefinitionSpan(d.Path, d.Text, name, x)
	d.defsMu.Lock()
	if d.defs == nil {
		d.defs = map[string]defSpan{}
	}
	d.defs[name] = defSpan{sp, ok}
	d.defsMu.Unlock()
	return sp, ok
}

// documents are the open buffers, by path.
type documents struct {
	mu sync.Mutex // guards m
	m  map[string]*Document
}

func (ds *documents) get(path string) *Document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.m[path]
}

func (ds *documents) set(d *Document) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.m == nil {
		ds.m = map[string]*Document{}
	}
	ds.m[d.Path] = d
}

// replace installs next if it is newer than the open document of its path:
// editors number the versions of a document, and an older or repeated
// version is an edit applied out of order, which would corrupt the text.
func (ds *documents) replace(next *Document) error {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	cur := ds.m[next.Path]
	if cur == nil {
		return fmt.Errorf("%s is not open", next.URI)
	}
	if next.Version <= cur.Version {
		return fmt.Errorf("%s: version %d does not follow version %d", next.URI, next.Version, cur.Version)
	}
	ds.m[next.Path] = next
	return nil
}

func (ds *documents) remove(path string) *Document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d := ds.m[path]
	delete(ds.m, path)
	return d
}

// under returns the open documents below dir, by root-relative slash path.
func (ds *documents) under(dir string) map[string]*Document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	out := map[string]*Document{}
	for p, d := range ds.m {
		if rel, ok := RelSlash(dir, p); ok {
			out[rel] = d
		}
	}
	return out
}

// RelSlash is path relative to dir with slashes, if path is inside dir.
func RelSlash(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// CanonicalPath resolves symbolic links in the directories of path, as
// project roots are resolved, so that files and roots compare. A path
// whose directory does not exist is returned cleaned.
func CanonicalPath(path string) string { return CanonicalPaths([]string{path})[0] }

// CanonicalPaths is CanonicalPath of each path, resolving each directory
// once: a project's files share a few directories, and resolving each
// file's directory again was 8 ms of every compile's publication at 3,000
// actions.
func CanonicalPaths(paths []string) []string {
	dirs := map[string]string{} // directory → resolved ("" when it does not resolve)
	out := make([]string, len(paths))
	for i, path := range paths {
		if path == "" {
			continue
		}
		clean := filepath.Clean(path)
		dir, base := filepath.Split(clean)
		real, ok := dirs[dir]
		if !ok {
			if r, err := filepath.EvalSymlinks(dir); err == nil {
				real = r
			}
			dirs[dir] = real
		}
		if real == "" {
			out[i] = clean
		} else {
			out[i] = filepath.Join(real, base)
		}
	}
	return out
}

// readFile is the editor's view of a file: its open buffer, else the disk.
func (ds *documents) readFile(path string) ([]byte, error) {
	if d := ds.get(path); d != nil {
		return d.Text, nil
	}
	return regfile.ReadFile(path)
}

// diskViews are files read from disk as Documents (version 0), kept while
// their size and modification time stay the same, so that their scans
// and definition spans are computed once rather than per request.
type diskViews struct {
	mu sync.Mutex // guards m
	m  map[string]*diskView
}

type diskView struct {
	size    int64
	modTime time.Time
	doc     *Document
}

// maxDiskViews bounds diskViews: beyond it the cache starts again.
const maxDiskViews = 8192

func (v *diskViews) get(path string) (*Document, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	e := v.m[path]
	v.mu.Unlock()
	if e != nil && e.size == fi.Size() && e.modTime.Equal(fi.ModTime()) {
		return e.doc, nil
	}
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := NewDocument("", path, 0, b)
	v.mu.Lock()
	if v.m == nil || len(v.m) >= maxDiskViews {
		v.m = map[string]*diskView{}
	}
	v.m[path] = &diskView{size: fi.Size(), modTime: fi.ModTime(), doc: d}
	v.mu.Unlock()
	return d, nil
}
