package lsp

import (
	"bytes"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// relSlash is path relative to dir with slashes, if path is inside dir.
func relSlash(dir, path string) (string, bool) { return workspace.RelSlash(dir, path) }

// canonicalPath resolves symbolic links in the directories of path.
func canonicalPath(path string) string { return workspace.CanonicalPath(path) }

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
func (s *Server) readFile(path string) ([]byte, error) { return s.ws.ReadFile(path) }

// mapperFor is a position mapper of the editor's view of path (nil when
// the file cannot be read).
func (s *Server) mapperFor(path string) *source.Mapper {
	if d := s.ws.Document(path); d != nil {
		return d.Lines()
	}
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil
	}
	return source.NewMapper(b)
}
