package lsp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/source"
)

// document is an open editor buffer. Values are immutable: an edit makes a
// new document, so a handler holding one reads a consistent text.
type document struct {
	uri     uri.URI
	path    string // absolute, cleaned
	version int32
	text    []byte

	mapOnce sync.Once
	mapper  *source.Mapper
}

func (d *document) lines() *source.Mapper {
	d.mapOnce.Do(func() { d.mapper = source.NewMapper(d.text) })
	return d.mapper
}

// documents are the open buffers, by path.
type documents struct {
	mu sync.Mutex // guards m
	m  map[string]*document
}

func (ds *documents) init() { ds.m = map[string]*document{} }

func (ds *documents) get(path string) *document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	return ds.m[path]
}

func (ds *documents) set(d *document) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	ds.m[d.path] = d
}

func (ds *documents) remove(path string) *document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	d := ds.m[path]
	delete(ds.m, path)
	return d
}

// under returns the open documents below dir, by root-relative slash path.
func (ds *documents) under(dir string) map[string]*document {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	out := map[string]*document{}
	for p, d := range ds.m {
		if rel, ok := relSlash(dir, p); ok {
			out[rel] = d
		}
	}
	return out
}

// relSlash is path relative to dir with slashes, if path is inside dir.
func relSlash(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// applyChanges applies LSP content changes to text. Ranges are in UTF-16
// and are clamped to the document (clients racing with edits send
// positions past the end; see source.Mapper).
func applyChanges(text []byte, changes []protocol.TextDocumentContentChangeEvent) ([]byte, error) {
	for _, c := range changes {
		switch c := c.(type) {
		case *protocol.TextDocumentContentChangeWholeDocument:
			text = []byte(c.Text)
		case *protocol.TextDocumentContentChangePartial:
			m := source.NewMapper(text)
			start := m.OffsetUTF16(int(c.Range.Start.Line), int(c.Range.Start.Character))
			end := m.OffsetUTF16(int(c.Range.End.Line), int(c.Range.End.Character))
			if end < start {
				start, end = end, start
			}
			var b bytes.Buffer
			b.Grow(len(text) - (end - start) + len(c.Text))
			b.Write(text[:start])
			b.WriteString(c.Text)
			b.Write(text[end:])
			text = b.Bytes()
		default:
			return nil, fmt.Errorf("unknown content change %T", c)
		}
	}
	return text, nil
}

// readFile is the editor's view of a file: its open buffer, else the disk.
func (s *Server) readFile(path string) ([]byte, error) {
	if d := s.docs.get(path); d != nil {
		return d.text, nil
	}
	return os.ReadFile(path)
}

// mapperFor is a position mapper of the editor's view of path (nil when
// the file cannot be read).
func (s *Server) mapperFor(path string) *source.Mapper {
	if d := s.docs.get(path); d != nil {
		return d.lines()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return source.NewMapper(b)
}
