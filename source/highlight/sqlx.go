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
	span source.Span
	lex  func(s string, out []Token) []Token
}

// SQLX returns the tokens of a SQLX file whose structure is x
// (source.ScanSQLX of src): SQL in the body and in pre_operations,
// post_operations, incremental_where and input blocks, JavaScript in
// config and js blocks and in ${} placeholders, whose delimiters are
// macros; block keywords and --- separators are keywords.
func SQLX(src []byte, x *source.SQLX) []Token {
	s := string(src)
	parts := sqlxParts(s, x)
	// The SQL is lexed with the parts blanked out, so that a string
	// around a placeholder stays one string and SQL never reads the
	// JavaScript.
	masked := []byte(s)
	holes := make([]Span, 0, len(parts))
	var js []Token
	for _, p := range parts {
		start, end := max(p.span.Start, 0), min(p.span.End, len(s))
		if start >= end || len(holes) > 0 && start < holes[len(holes)-1].End {
			continue // never for core's structure; a hole must not overlap the last
		}
		for i := start; i < end; i++ {
			masked[i] = ' '
		}
		holes = append(holes, Span{start, end})
		js = p.lex(s, js)
	}
	sql := lexSQL(string(masked), holes, make([]Token, 0, len(s)/4))
	return merge(sql, js)
}

// sqlxParts are x's non-SQL parts in the order of the file.
func sqlxParts(s string, x *source.SQLX) []part {
	var parts []part
	keyword := func(at int, word string) func(string, []Token) []Token {
		return func(_ string, out []Token) []Token {
			return append(out, Token{Start: at, End: at + len(word), Kind: Keyword})
		}
	}
	for _, b := range x.Blocks {
		word := b.Kind.String()
		switch b.Kind {
		case source.ConfigBlock, source.JSBlock:
			initial := frameObject // config's body is an object literal's
			if b.Kind == source.JSBlock {
				initial = frameBlock
			}
			body := b.Body
			parts = append(parts, part{span: b.Span, lex: func(s string, out []Token) []Token {
				out = keyword(b.Span.Start, word)(s, out)
				return lexJS(s, body.Start, body.End, out, sqlxBuiltins, initial)
			}})
		default:
			header := source.Span{Start: b.Span.Start, End: b.Body.Start}
			parts = append(parts, part{span: header, lex: func(s string, out []Token) []Token {
				out = keyword(b.Span.Start, word)(s, out)
				if b.Kind == source.InputBlock {
					out = inputNames(s, header.Start+len(word), header.End, out)
				}
				return out
			}})
			if b.Closed {
				parts = append(parts, part{span: source.Span{Start: b.Span.End - 1, End: b.Span.End}, lex: func(_ string, out []Token) []Token { return out }})
			}
		}
	}
	for _, p := range x.Placeholders {
		parts = append(parts, part{span: p, lex: func(s string, out []Token) []Token { return placeholder(s, p, out) }})
	}
	for _, sep := range x.Separators {
		at := sep.Span.Start + strings.Index(s[sep.Span.Start:sep.Span.End], "---")
		parts = append(parts, part{span: sep.Span, lex: keyword(at, "---")})
	}
	slices.SortFunc(parts, func(a, b part) int { return a.span.Start - b.span.Start })
	return parts
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

// merge merges two sorted token lists whose tokens never overlap.
func merge(a, b []Token) []Token {
	if len(b) == 0 {
		return a
	}
	out := make([]Token, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Start <= b[0].Start {
			out = append(out, a[0])
			a = a[1:]
		} else {
			out = append(out, b[0])
			b = b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// JS returns the tokens of a project's .js file (definitions/, includes/).
func JS(src []byte) []Token {
	s := string(src)
	return lexJS(s, 0, len(s), make([]Token, 0, len(s)/6), jsBuiltins, frameBlock)
}
