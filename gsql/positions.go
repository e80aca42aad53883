package gsql

import (
	"strings"
	"unicode/utf8"
)

// GoogleSQL reports positions as 1-based lines and columns of the text it
// was given; these convert them to and from byte offsets.

// Offset is the byte offset of (line, col) in sql. GoogleSQL's lines
// and columns are 1-based, its columns counted in characters (code
// points) with a tab advancing to the next multiple of 8, as measured
// with 'Größe → 🙂' and a tab before an error (sqlcheck's tests).
func Offset(sql string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		// GoogleSQL's lines end at \n, \r\n or a lone \r.
		i := strings.IndexAny(sql[off:], "\r\n")
		if i < 0 {
			return len(sql)
		}
		off += i + 1
		if sql[off-1] == '\r' && off < len(sql) && sql[off] == '\n' {
			off++
		}
	}
	for vis := 1; off < len(sql) && sql[off] != '\n' && sql[off] != '\r'; {
		next := nextColumn(vis, sql[off])
		if next > col {
			break
		}
		vis = next
		_, size := utf8.DecodeRuneInString(sql[off:])
		off += size
	}
	return off
}

// nextColumn is GoogleSQL's column after a character starting with byte b
// at column vis.
func nextColumn(vis int, b byte) int {
	if b == '\t' {
		return ((vis-1)/8+1)*8 + 1
	}
	return vis + 1
}

// ColumnOf is GoogleSQL's 1-based column of byte offset off of its line
// text, the inverse of Offset.
func ColumnOf(line string, off int) int {
	vis := 1
	for i := range line {
		if i >= off {
			break
		}
		vis = nextColumn(vis, line[i])
	}
	return vis
}

// Position is GoogleSQL's 1-based line and column of byte offset off of
// sql, the inverse of Offset.
func Position(sql string, off int) (line, col int) {
	off = min(max(off, 0), len(sql))
	line, ls := 1, 0
	for i := 0; i < off; i++ {
		if c := sql[i]; c == '\n' || c == '\r' && (i+1 >= len(sql) || sql[i+1] != '\n') {
			line, ls = line+1, i+1
		}
	}
	return line, ColumnOf(sql[ls:], off-ls)
}
