package highlight

import (
	"slices"
	"strings"

	"github.com/dfdtools/dfd/source"
)

// part is a range of a SQLX file that is not SQL: a block's JavaScript or
// keyword, a placeholder, a separator. Its tokens are lexed on their own;
// in the SQL it is a hole.
type part struct {
	span  source.Span
	kind  partKind
	block source.Block // of partJSBlock and partSQLBlockHeader
}

type partKind uint8

const (
	partJSBlock        partKind = iota // config { … } or js { … }: keyword and JavaScript
	partSQLBlockHeader                 // pre_operations { and the like, input "a" {
	partSQLBlockClose                  // the '}' of a SQL block
	partPlaceholder                    // ${ … }
	partSeparator                      // ---
)

// SQLX returns the tokens of a SQLX file whose structure is x
// (source.ScanSQLX of src): SQL in the body and in pre_operations,
// post_operations, incremental_where and input blocks, JavaScript in
// config and js blocks and in ${} placeholders, whose delimiters are
// macros; block keywords and --- separators are keywords.
func SQLX(src []byte, x *source.SQLX) []Token {
	s := string(src)
	parts := sqlxParts(x)
	// The SQL is lexed with the parts blanked out, so that a string
	// around a placeholder stays one string and SQL never reads the
	// JavaScript. The parts' tokens are lexed first; the SQL lexer puts
	// them in place as it passes their holes.
	masked := []byte(s)
	holes := make([]hole, 0, len(parts))
	var js []Token
	for _, p := range parts {
		start, end := max(p.span.Start, 0), min(p.span.End, len(s))
		if start >= end || len(holes) > 0 && start < holes[len(holes)-1].End {
			continue // never for core's structure; a hole must not overlap the last
		}
		for i := start; i < end; i++ {
			masked[i] = ' '
		}
		from := len(js)
		js = p.lex(s, js)
		holes = append(holes, hole{Start: start, End: end, from: from, to: len(js)})
	}
	return lexSQL(string(masked), holes, js, make([]Token, 0, len(s)/6))
}

// sqlxParts are x's non-SQL parts in the order of the file.
func sqlxParts(x *source.SQLX) []part {
	parts := make([]part, 0, len(x.Blocks)*2+len(x.Placeholders)+len(x.Separators))
	for _, b := range x.Blocks {
		switch b.Kind {
		case source.ConfigBlock, source.JSBlock:
			parts = append(parts, part{span: b.Span, kind: partJSBlock, block: b})
		default:
			parts = append(parts, part{span: source.Span{Start: b.Span.Start, End: b.Body.Start}, kind: partSQLBlockHeader, block: b})
			if b.Closed {
				parts = append(parts, part{span: source.Span{Start: b.Span.End - 1, End: b.Span.End}, kind: partSQLBlockClose})
			}
		}
	}
	for _, p := range x.Placeholders {
		parts = append(parts, part{span: p, kind: partPlaceholder})
	}
	for _, sep := range x.Separators {
		parts = append(parts, part{span: sep.Span, kind: partSeparator})
	}
	slices.SortFunc(parts, func(a, b part) int { return a.span.Start - b.span.Start })
	return parts
}

// lex appends the part's tokens to out.
func (p part) lex(s string, out []Token) []Token {
	keyword := func(at int, word string) {
		out = append(out, Token{Start: at, End: at + len(word), Kind: Keyword})
	}
	switch p.kind {
	case partJSBlock:
		keyword(p.span.Start, p.block.Kind.String())
		initial := frameObject // config's body is an object literal's
		if p.block.Kind == source.JSBlock {
			initial = frameBlock
		}
		return lexJS(s, p.block.Body.Start, p.block.Body.End, out, sqlxBuiltins, initial)
	case partSQLBlockHeader:
		word := p.block.Kind.String()
		keyword(p.span.Start, word)
		if p.block.Kind == source.InputBlock {
			out = inputNames(s, p.span.Start+len(word), p.span.End, out)
		}
	case partPlaceholder:
		return placeholder(s, p.span, out)
	case partSeparator:
		if i := strings.Index(s[p.span.Start:p.span.End], "---"); i >= 0 {
			keyword(p.span.Start+i, "---")
		}
	}
	return out
}

// placeholder lexes ${ … }: the delimiters are macros, the inside an
// expression. One left open runs to the end of the file, where its last
// '}' is taken for the closing one (core would report it unclosed).
func placeholder(s string, p source.Span, out []Token) []Token {
	out = append(out, Token{Start: p.Start, End: p.Start + 2, Kind: Macro})
	inner := p.End
	closed := p.End-1 >= p.Start+2 && s[p.End-1] == '}'
	if closed {
		inner = p.End - 1
	}
	out = lexJS(s, p.Start+2, inner, out, sqlxBuiltins, frameParen)
	if closed {
		out = append(out, Token{Start: p.End - 1, End: p.End, Kind: Macro})
	}
	return out
}

// inputNames are the quoted names of an input block's header
// (input "a", "b" {) as strings.
func inputNames(s string, from, to int, out []Token) []Token {
	for i := from; i < to; i++ {
		if s[i] != '"' {
			continue
		}
		j := strings.IndexByte(s[i+1:to], '"')
		if j < 0 {
			break
		}
		out = append(out, Token{Start: i, End: i + 1 + j + 1, Kind: String})
		i += j + 1
	}
	return out
}

// JS returns the tokens of a project's .js file (definitions/, includes/).
func JS(src []byte) []Token {
	s := string(src)
	return lexJS(s, 0, len(s), make([]Token, 0, len(s)/6), jsBuiltins, frameBlock)
}
