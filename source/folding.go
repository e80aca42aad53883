package source

import "sort"

// FoldRange is a range of lines an editor may fold: StartLine stays
// visible, the lines after it up to EndLine (0-based, inclusive) are
// hidden.
type FoldRange struct {
	StartLine, EndLine int
	// Block is the SQLX block the range folds; -1 for an indented run
	// of SQL.
	Block int
}

// SQLXFolds are the folding ranges of a SQLX file: each top-level block
// (config, js, pre_operations, post_operations, incremental_where,
// input) from its keyword to the last line of its body, so that the
// closing brace stays visible; and the indented runs of its SQL (a
// subquery, a CTE, a column list), because an editor that is given
// ranges by the server stops computing them from the indentation itself —
// without these, a SQLX file would fold only at its blocks. The
// JavaScript of config and js blocks gets no indentation ranges (it is
// folded as a block). At most one range starts on a line: a block's.
func SQLXFolds(src []byte, x *SQLX) []FoldRange {
	m := NewMapper(src)
	lines := m.LineOf(len(src)) + 1
	var out []FoldRange
	byStart := map[int]bool{}
	// js lines: inside config and js blocks (no indentation ranges).
	js := make([]bool, lines)
	for i, b := range x.Blocks {
		start := m.LineOf(b.Span.Start)
		end := m.LineOf(lastNonSpace(src, b.Body))
		if !b.Closed {
			end = m.LineOf(lastNonSpace(src, Span{b.Body.Start, len(src)}))
		}
		if b.Kind == ConfigBlock || b.Kind == JSBlock {
			for l := start; l <= m.LineOf(b.Span.End) && l < lines; l++ {
				js[l] = true
			}
		}
		if end > start && !byStart[start] {
			byStart[start] = true
			out = append(out, FoldRange{StartLine: start, EndLine: end, Block: i})
		}
	}
	for _, r := range indentFolds(m, lines, js) {
		if !byStart[r.StartLine] {
			byStart[r.StartLine] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].StartLine != out[j].StartLine {
			return out[i].StartLine < out[j].StartLine
		}
		return out[i].EndLine > out[j].EndLine
	})
	return out
}

// lastNonSpace is the offset of the last byte of sp that is not white
// space (sp.Start when there is none).
func lastNonSpace(src []byte, sp Span) int {
	for i := min(sp.End, len(src)) - 1; i >= sp.Start; i-- {
		switch src[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return i
		}
	}
	return sp.Start
}

// indentFolds are the ranges indentation gives, as editors compute them
// without a server: a line folds the lines after it that are indented
// more (blank lines inside included, trailing blank lines not). Lines
// marked skip are not looked at and end every range open before them.
func indentFolds(m *Mapper, lines int, skip []bool) []FoldRange {
	type open struct{ line, indent int }
	var stack []open
	var out []FoldRange
	last := -1 // the last non-blank line seen
	closeTo := func(indent int) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			o := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if last > o.line {
				out = append(out, FoldRange{StartLine: o.line, EndLine: last, Block: -1})
			}
		}
	}
	for l := 0; l < lines; l++ {
		if skip[l] {
			closeTo(-1)
			last = -1
			continue
		}
		indent, blank := indentOf(m.LineText(l))
		if blank {
			continue
		}
		closeTo(indent)
		stack = append(stack, open{l, indent})
		last = l
	}
	closeTo(-1)
	return out
}

// indentOf is the width of a line's leading white space (a tab counts
// 4) and whether the line is blank.
func indentOf(line string) (width int, blank bool) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			width++
		case '\t':
			width += 4
		case '\r', '\n':
			return width, true
		default:
			return width, false
		}
	}
	return width, true
}
