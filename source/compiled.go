package source

import (
	"sort"
	"strings"
)

// CompiledSQLX reproduces the layout of the JavaScript that @dataform/core
// generates from a SQLX file (core/compilers.ts compile() → the
// `dataform.sqlxAction({…})` template, as bundled in core 3.x), keeping
// for every character the byte offset of the SQLX text it came from.
//
// Why: errors thrown while a SQLX file runs (syntax errors, a bad ref in a
// ${} placeholder) carry line:column positions in that generated
// JavaScript, which do not match the SQLX file. With the layout, such a
// position maps back to the SQLX text the user wrote. The SQL text is not
// escaped here as core escapes it (backslashes, backticks), so columns may
// drift by a character or two on such lines; lines are exact.
type CompiledSQLX struct {
	pieces []piece
}

type piece struct {
	text string
	src  int // offset in the SQLX file of text[0]; -1 for template text
}

// The helper constants core puts at the top of each contextable.
var (
	sqlxCtxConsts = func() string {
		var lines []string
		for _, n := range []string{"self", "ref", "resolve", "name", "when", "incremental", "schema", "database"} {
			lines = append(lines, "const "+n+" = ctx."+n+" ? ctx."+n+".bind(ctx) : undefined;")
		}
		return strings.Join(lines, "\n")
	}()
	sqlxExpectConst = "const EXPECT = ctx.EXPECT ? ctx.EXPECT : undefined;"
)

// CompileLayout builds the generated-JavaScript layout of a SQLX file.
func CompileLayout(src []byte) *CompiledSQLX {
	s := string(src)
	x := ScanSQLX(src)
	c := &CompiledSQLX{}
	lit := func(t string) { c.pieces = append(c.pieces, piece{text: t, src: -1}) }
	from := func(start, end int) {
		start, end = max(start, 0), min(end, len(s))
		if start < end {
			c.pieces = append(c.pieces, piece{text: s[start:end], src: start})
		}
	}

	// statements returns the SQL statements of region (block: the index of
	// the block it is, -1 for the top level), each as the source spans it
	// is made of. At the top level, blocks are cut out of the text.
	type stmt []Span
	statements := func(region Span, block int) []stmt {
		type cut struct {
			span Span
			sep  bool
		}
		var cuts []cut
		if block < 0 {
			for _, b := range x.Blocks {
				cuts = append(cuts, cut{span: b.Span})
			}
		}
		for _, sp := range x.Separators {
			if sp.Block == block && sp.Span.Start >= region.Start && sp.Span.End <= region.End {
				cuts = append(cuts, cut{span: sp.Span, sep: true})
			}
		}
		sort.Slice(cuts, func(i, j int) bool { return cuts[i].span.Start < cuts[j].span.Start })
		var out []stmt
		cur := stmt{}
		i := region.Start
		for _, ct := range cuts {
			if ct.span.Start > i {
				cur = append(cur, Span{i, ct.span.Start})
			}
			if ct.sep {
				out = append(out, cur)
				cur = stmt{}
			}
			i = max(i, ct.span.End)
		}
		if region.End > i {
			cur = append(cur, Span{i, region.End})
		}
		return append(out, cur)
	}
	emitStatements := func(stmts []stmt) {
		for k, st := range stmts {
			if k > 0 {
				lit(",")
			}
			lit("`")
			for _, sp := range st {
				from(sp.Start, sp.End)
			}
			lit("`")
		}
	}

	var jsBodies []Span
	var incremental *Block
	var pre, post []Block
	var inputs []Block
	var config *Block
	for i := range x.Blocks {
		b := &x.Blocks[i]
		switch b.Kind {
		case ConfigBlock:
			config = b
		case JSBlock:
			// core: n.slice(4, -1) of "js {…}"
			jsBodies = append(jsBodies, Span{b.Span.Start + 4, b.Span.End - 1})
		case IncrementalWhereBlock:
			incremental = b
		case PreOperationsBlock:
			pre = append(pre, *b)
		case PostOperationsBlock:
			post = append(post, *b)
		case InputBlock:
			inputs = append(inputs, *b)
		}
	}
	top := statements(Span{0, len(s)}, -1)
	emitJS := func() {
		for _, sp := range jsBodies {
			from(sp.Start, sp.End)
		}
	}
	blockStatements := func(b Block) []stmt {
		idx := -1
		for i := range x.Blocks {
			if x.Blocks[i].Span == b.Span {
				idx = i
			}
		}
		return statements(b.Body, idx)
	}

	lit("dataform.sqlxAction({\n  sqlxConfig: {\n    name: \"NAME\",\n    type: \"operations\",\n    ...")
	if config != nil {
		from(config.Span.Start+7, config.Span.End) // core: n.slice(7)
	} else {
		lit("{}")
	}
	lit("\n  },\n  sqlStatementCount: N,\n  sqlContextable: (ctx) => {\n    " + sqlxCtxConsts + "\n    " + sqlxExpectConst + "\n    ")
	emitJS()
	lit("\n    return [")
	emitStatements(top)
	lit("];\n  },\n  incrementalWhereContextable: ")
	if incremental != nil {
		lit("(ctx) => {\n    " + sqlxCtxConsts + "\n    " + sqlxExpectConst + "\n    ")
		emitJS()
		lit("\n    return `")
		from(incremental.Body.Start, incremental.Body.End)
		lit("`\n  }")
	} else {
		lit("undefined")
	}
	for _, group := range []struct {
		name   string
		blocks []Block
	}{{"preOperationsContextable", pre}, {"postOperationsContextable", post}} {
		lit(",\n  " + group.name + ": ")
		if len(group.blocks) == 0 {
			lit("undefined")
			continue
		}
		// core keeps the last block of each kind.
		b := group.blocks[len(group.blocks)-1]
		lit("(ctx) => {\n    " + sqlxCtxConsts + "\n    " + sqlxExpectConst + "\n    ")
		emitJS()
		lit("\n    return [")
		emitStatements(blockStatements(b))
		lit("];\n  }")
	}
	lit(",\n  inputContextables: [\n    ")
	for k, b := range inputs {
		if k > 0 {
			lit(",")
		}
		lit("{\n            refName: [\"INPUT\"],\n            contextable: (ctx) => {\n              ")
		emitJS()
		lit("\n              return `")
		from(b.Body.Start, b.Body.End)
		lit("`;\n            }\n          }")
	}
	lit("\n  ]\n});\n")
	return c
}

// Text is the generated JavaScript (template parts with placeholder names).
func (c *CompiledSQLX) Text() string {
	var b strings.Builder
	for _, p := range c.pieces {
		b.WriteString(p.text)
	}
	return b.String()
}

// SourceOffset maps a 1-based line and column of the generated JavaScript
// to a byte offset in the SQLX file. ok is false when the position is in
// text core added (the template itself) or beyond the generated code.
func (c *CompiledSQLX) SourceOffset(line, col int) (offset int, ok bool) {
	l, cc := 1, 1
	for _, p := range c.pieces {
		for k := 0; k < len(p.text); k++ {
			if l == line && cc >= col || l > line {
				if p.src < 0 {
					return 0, false
				}
				return p.src + k, true
			}
			if p.text[k] == '\n' {
				if l == line {
					// Column past the end of the line: its end.
					if p.src < 0 {
						return 0, false
					}
					return p.src + k, true
				}
				l++
				cc = 1
			} else {
				cc++
			}
		}
	}
	return 0, false
}

// SourceLine maps a 1-based line of the generated JavaScript to the byte
// offset of the first SQLX character on it (any column), for positions
// whose column falls on template text. ok is false for lines made only of
// template text.
func (c *CompiledSQLX) SourceLine(line int) (offset int, ok bool) {
	l := 1
	for _, p := range c.pieces {
		for k := 0; k < len(p.text); k++ {
			if l == line && p.src >= 0 && p.text[k] != '\n' {
				return p.src + k, true
			}
			if l > line {
				return 0, false
			}
			if p.text[k] == '\n' {
				l++
			}
		}
	}
	return 0, false
}
