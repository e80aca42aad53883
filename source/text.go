package source

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// Mapper converts between byte offsets of one file's content and
// positions: zero-based lines with columns counted either in UTF-8 bytes
// or in UTF-16 code units (LSP's default encoding). SQLX files routinely
// hold non-ASCII text (comments, descriptions, string literals), so the
// two differ in practice.
//
// Positions past the end of a line or of the file are clamped rather than
// rejected: editors send them after concurrent edits, and a request that
// cannot be answered exactly should still be answered near the cursor.
type Mapper struct {
	content    []byte
	lineStarts []int // byte offset of the start of each line
}

// NewMapper indexes content. The content must not change afterwards.
func NewMapper(content []byte) *Mapper {
	starts := make([]int, 1, bytes.Count(content, newline)+1)
	for i := 0; ; {
		j := bytes.IndexByte(content[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	return &Mapper{content: content, lineStarts: starts}
}

var newline = []byte{'\n'}

// lineBounds returns the byte range of line (without its terminator).
func (m *Mapper) lineBounds(line int) (start, end int) {
	if line < 0 {
		line = 0
	}
	if line >= len(m.lineStarts) {
		return len(m.content), len(m.content)
	}
	start = m.lineStarts[line]
	end = len(m.content)
	if line+1 < len(m.lineStarts) {
		end = m.lineStarts[line+1] - 1 // the '\n'
	}
	if end > start && m.content[end-1] == '\r' {
		end--
	}
	return start, end
}

// LineText is the text of line without its terminator ("" past the end).
func (m *Mapper) LineText(line int) string {
	s, e := m.lineBounds(line)
	return string(m.content[s:e])
}

// OffsetUTF16 is the byte offset of (line, character in UTF-16 units),
// clamped to the file and to the line. A character inside a surrogate
// pair maps to the start of that rune.
func (m *Mapper) OffsetUTF16(line, char int) int {
	if line >= len(m.lineStarts) {
		return len(m.content)
	}
	start, end := m.lineBounds(line)
	off := start
	units := 0
	for off < end && units < char {
		r, n := utf8.DecodeRune(m.content[off:end])
		w := 1
		if r >= 0x10000 && r != utf8.RuneError {
			w = 2
		}
		if units+w > char {
			break
		}
		units += w
		off += n
	}
	return off
}

// OffsetBytes is the byte offset of (line, byte column), clamped.
func (m *Mapper) OffsetBytes(line, col int) int {
	if line >= len(m.lineStarts) {
		return len(m.content)
	}
	start, end := m.lineBounds(line)
	off := start + max(col, 0)
	if off > end {
		off = end
	}
	// Never split a rune.
	for off > start && off < end && !utf8.RuneStart(m.content[off]) {
		off--
	}
	return off
}

// LineOf is the zero-based line containing offset.
func (m *Mapper) LineOf(offset int) int {
	offset = min(max(offset, 0), len(m.content))
	return sort.Search(len(m.lineStarts), func(i int) bool { return m.lineStarts[i] > offset }) - 1
}

// PositionUTF16 is (line, UTF-16 column) of offset.
func (m *Mapper) PositionUTF16(offset int) (line, char int) {
	offset = min(max(offset, 0), len(m.content))
	line = m.LineOf(offset)
	start := m.lineStarts[line]
	for _, r := range string(m.content[start:offset]) {
		if r >= 0x10000 {
			char += 2
		} else {
			char++
		}
	}
	return line, char
}
