package sqlcheck

import (
	"bytes"
	"path"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
)

// Placing a finding: the analyzer gives a line and column in the compiled
// statement; the user wrote a .sqlx or .js file. For a .sqlx file the
// statement is the text of one of its regions (the SQL outside the blocks,
// a pre_operations or post_operations block, one `---` part of an
// operation) with each ${…} replaced by its value, so the region's literal
// pieces are found in the statement in order, and a position inside a
// piece maps to the same character of the file, one between pieces to the
// ${…} that produced it. For a .js file (and when the pieces do not line
// up) the text around the position is looked up in the file. What cannot
// be placed goes to the action's definition.

// sourceFile is a file read once per check.
type sourceFile struct {
	text []byte
	m    *source.Mapper
	sqlx *source.SQLX
	defs map[string]int // definition's offsets, by action name
}

// file is the source file rel as the caller's Read gives it. A Checker
// keeps each scanned file from one check to the next while its text is
// the same: at 3,000 actions, placing the findings of every action again
// (scanning its file, searching a .js file for its definition) was a
// quarter of a check.
func (c *checker) file(rel string) *sourceFile {
	if f, ok := c.sources[rel]; ok {
		return f
	}
	var f *sourceFile
	if text, ok := c.opts.Read(rel); ok {
		if c.k != nil {
			if kept, ok := c.k.sources.Get(rel); ok && bytes.Equal(kept.text, text) {
				f = kept
			}
		}
		if f == nil {
			f = &sourceFile{text: text, m: source.NewMapper(text), defs: map[string]int{}}
			if strings.HasSuffix(rel, ".sqlx") {
				f.sqlx = source.ScanSQLX(text)
			}
			if c.k != nil {
				c.k.sources.Put(rel, f)
			}
		}
	}
	c.sources[rel] = f
	return f
}

// place is a finding of action a at (line, col) (1-based; 0: no position)
// of its statement sql.
func (c *checker) place(a *action, label, sql string, line, col int) Finding {
	f := Finding{File: path.Clean(a.file), Action: a.name, Statement: label, StatementLine: line, StatementColumn: col}
	src := c.file(a.file)
	if src == nil {
		return f
	}
	off, ok := -1, false
	if line > 0 {
		so := gsql.Offset(sql, line, col)
		if src.sqlx != nil {
			off, f.MappedToPlacement, ok = alignSQLX(src, label, sql, so)
		}
		if !ok {
			off, ok = lookup(src.text, sql, so)
		}
	}
	if !ok {
		off = definition(src, a)
		f.MappedToPlacement = true
	}
	end := off
	if f.MappedToPlacement && src.sqlx != nil && strings.HasPrefix(string(src.text[off:]), "${") {
		end = placeholderEnd(src, off)
	}
	for end < len(src.text) && isWord(src.text[end]) {
		end++
	}
	if end == off && end < len(src.text) && src.text[end] != '\n' {
		end++
	}
	f.Offset, f.EndOffset = off, end
	f.Line, f.Col = src.m.PositionUTF16(off)
	f.EndLine, f.EndCol = src.m.PositionUTF16(end)
	return f
}

func isWord(b byte) bool {
	return b == '_' || b == '`' || b == '.' || ('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') || b >= 0x80
}

// definition is where action a is defined: the config block of a .sqlx
// file, else the first mention of its name.
func definition(src *sourceFile, a *action) int {
	if src.sqlx != nil {
		if b, ok := src.sqlx.Config(); ok {
			return b.Span.Start
		}
		return 0
	}
	name := a.target.GetName()
	if off, ok := src.defs[name]; ok {
		return off
	}
	off := 0
	if sp, ok := source.FindDefinition(src.text, name); ok {
		off = sp.Start
	}
	src.defs[name] = off
	return off
}

// piece is a run of the file's literal text in a statement's region.
type piece struct{ start, end int }

// regionPieces are the literal pieces of the region of a .sqlx file the
// statement called label comes from, in order, split at ${…}.
func regionPieces(src *sourceFile, label string) []piece {
	x := src.sqlx
	if l, ok := strings.CutPrefix(label, "incremental "); ok && l != "query" {
		label = l // incremental pre/post operations come from the same blocks
	}
	var spans []piece // the region, before splitting at placeholders
	switch {
	case strings.HasPrefix(label, "pre_operations"), strings.HasPrefix(label, "post_operations"):
		kind := source.PreOperationsBlock
		if strings.HasPrefix(label, "post_operations") {
			kind = source.PostOperationsBlock
		}
		for _, b := range x.Blocks {
			if b.Kind == kind {
				spans = append(spans, piece{b.Body.Start, b.Body.End})
			}
		}
	default:
		// The SQL outside every block (and the incremental_where block,
		// which core adds to the incremental query).
		prev := 0
		for _, b := range x.Blocks {
			if b.Span.Start > prev {
				spans = append(spans, piece{prev, b.Span.Start})
			}
			if b.Kind == source.IncrementalWhereBlock && label == "incremental query" {
				spans = append(spans, piece{b.Body.Start, b.Body.End})
			}
			prev = max(prev, b.Span.End)
		}
		if prev < len(src.text) {
			spans = append(spans, piece{prev, len(src.text)})
		}
	}
	// Split at placeholders and separators.
	var cuts []piece
	for _, p := range x.Placeholders {
		cuts = append(cuts, piece{p.Start, p.End})
	}
	for _, s := range x.Separators {
		cuts = append(cuts, piece{s.Span.Start, s.Span.End})
	}
	var out []piece
	for _, sp := range spans {
		cur := sp.start
		for _, cut := range sortedPieces(cuts) {
			if cut.end <= cur || cut.start >= sp.end {
				continue
			}
			if cut.start > cur {
				out = append(out, piece{cur, cut.start})
			}
			cur = max(cur, cut.end)
		}
		if cur < sp.end {
			out = append(out, piece{cur, sp.end})
		}
	}
	return out
}

func sortedPieces(ps []piece) []piece {
	out := append([]piece(nil), ps...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].start < out[j-1].start; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// alignSQLX maps statement offset so into the .sqlx file by lining up the
// region's literal pieces with the statement. placed is true when so falls
// between pieces (text a ${…} produced): the offset is then the ${…}'s.
func alignSQLX(src *sourceFile, label, sql string, so int) (off int, placed, ok bool) {
	type match struct{ sqlStart, fileStart, n int }
	var ms []match
	cur := 0
	for _, p := range regionPieces(src, label) {
		text := string(src.text[p.start:p.end])
		lead := len(text) - len(strings.TrimLeft(text, " \t\r\n"))
		trimmed := strings.TrimSpace(text)
		if trimmed == "" {
			continue
		}
		i := strings.Index(sql[cur:], trimmed)
		if i < 0 {
			continue // not part of this statement (another `---` part, say)
		}
		ms = append(ms, match{cur + i, p.start + lead, len(trimmed)})
		cur += i + len(trimmed)
	}
	if len(ms) == 0 {
		return 0, false, false
	}
	for k, m := range ms {
		if so >= m.sqlStart && so < m.sqlStart+m.n {
			return m.fileStart + so - m.sqlStart, false, true
		}
		if so < m.sqlStart {
			// Between the previous piece and this one: the ${…} there.
			if k == 0 {
				return m.fileStart, true, true
			}
			prev := ms[k-1]
			return placeholderStart(src, prev.fileStart+prev.n, m.fileStart), true, true
		}
	}
	// After the last piece: the ${…} that follows it.
	last := ms[len(ms)-1]
	return placeholderStart(src, last.fileStart+last.n, len(src.text)), true, true
}

// placeholderEnd is the end of the ${…} starting at off (the whole call
// is the span of a finding the call's text caused).
func placeholderEnd(src *sourceFile, off int) int {
	for _, p := range src.sqlx.Placeholders {
		if p.Start == off {
			return p.End
		}
	}
	return off
}

// placeholderStart is the start of the first ${ in [from, to), else from.
func placeholderStart(src *sourceFile, from, to int) int {
	if i := strings.Index(string(src.text[from:to]), "${"); i >= 0 {
		return from + i
	}
	return from
}

// lookup finds the text around statement offset so in the file: a window
// of the statement's line that occurs in the file, the occurrence after
// where the statement's first line is if there are several.
func lookup(file []byte, sql string, so int) (int, bool) {
	text := string(file)
	ls := strings.LastIndexByte(sql[:so], '\n') + 1
	le := strings.IndexByte(sql[so:], '\n')
	if le < 0 {
		le = len(sql)
	} else {
		le += so
	}
	line := sql[ls:le]
	col := so - ls
	anchor := 0
	for _, l := range strings.Split(sql, "\n") {
		if l = strings.TrimSpace(l); len(l) >= 8 {
			if i := strings.Index(text, l); i >= 0 {
				anchor = i
			}
			break
		}
	}
	for _, w := range []int{48, 24, 12, 6, 3} {
		start := max(col-w/4, 0)
		end := min(start+w, len(line))
		if end-start < 3 {
			continue
		}
		sub := line[start:end]
		n := strings.Count(text, sub)
		if n == 0 {
			continue
		}
		i := strings.Index(text, sub)
		if n > 1 {
			if j := strings.Index(text[anchor:], sub); j >= 0 {
				i = anchor + j
			}
		}
		return i + col - start, true
	}
	return 0, false
}

// Place puts a position BigQuery (or anything reading the compiled SQL)
// gave in a statement of action target ("database.schema.name") in the
// file that defines it, as the analyzer's own findings are placed:
// line and col are 1-based in sql (0: no position), label names the
// statement as Finding.Statement does ("query", "incremental query",
// "pre_operations[0]", "queries[1]"). read reads the project's files as
// the compile saw them. ok is false when g has no such action or its
// file cannot be read.
func Place(g *dataformpb.CompiledGraph, read func(rel string) ([]byte, bool), target, label, sql string, line, col int) (Finding, bool) {
	var a *action
	for _, x := range order(g) {
		if strings.EqualFold(x.name, target) {
			a = x
			break
		}
	}
	if a == nil {
		return Finding{}, false
	}
	c := &checker{opts: Options{Read: read}, sources: map[string]*sourceFile{}}
	if c.file(a.file) == nil {
		return Finding{}, false
	}
	return c.place(a, label, sql, line, col), true
}
