package lsp

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/source/highlight"
)

// semanticLegend is the legend of the tokens: LSP's standard types and
// modifiers only, so that every client's theme colours them.
var semanticLegend = protocol.SemanticTokensLegend{
	TokenTypes:     highlight.Kinds(),
	TokenModifiers: highlight.Modifiers(),
}

// SemanticTokensFull implements protocol.Server
// (textDocument/semanticTokens/full): the SQL and JavaScript of a SQLX
// file, the JavaScript of a project's .js file, for editors without the
// VS Code extension's grammar. Other files get no tokens. Like every
// read-only request it leaves the ordered chain once it has the text
// (fileAt), so highlighting a big file holds up no edit.
func (s *Server) SemanticTokensFull(ctx context.Context, params *protocol.SemanticTokensParams) (*protocol.SemanticTokens, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	return f.semanticTokens(ctx, 0, len(f.text))
}

// SemanticTokensRange implements protocol.Server
// (textDocument/semanticTokens/range): the tokens that overlap the range,
// whole (a multi-line comment that starts above it included).
func (s *Server) SemanticTokensRange(ctx context.Context, params *protocol.SemanticTokensRangeParams) (*protocol.SemanticTokens, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	return f.semanticTokens(ctx, f.offset(params.Range.Start), f.offset(params.Range.End))
}

func (f *fileCtx) semanticTokens(ctx context.Context, from, to int) (*protocol.SemanticTokens, error) {
	toks := f.highlight()
	if err := ctx.Err(); err != nil {
		return nil, err // cancelled while lexing: the client asks again
	}
	return &protocol.SemanticTokens{Data: encodeTokens(f.m, f.text, toks, from, to)}, nil
}

// highlight lexes the file: SQLX files wherever they are, .js files of a
// project's definitions and includes (other JavaScript — node_modules, a
// script beside the project — is the editor's own).
func (f *fileCtx) highlight() []highlight.Token {
	switch {
	case f.sqlx:
		return highlight.SQLX(f.text, f.scan())
	case f.p != nil && strings.HasSuffix(f.path, ".js") &&
		(strings.HasPrefix(f.rel, "definitions/") || strings.HasPrefix(f.rel, "includes/")):
		return highlight.JS(f.text)
	}
	return nil
}

// encodeTokens encodes the tokens that overlap [from, to) as LSP's
// relative five-number tuples (line delta, start delta, length, type,
// modifiers), in UTF-16 columns. A token that spans lines (a block
// comment, a triple-quoted string) is sent as one token per line: not
// every client supports multiline tokens. toks are sorted and never
// overlap (highlight's guarantee); the walk over the text is one pass,
// from the line of the first token sent.
func encodeTokens(m *source.Mapper, text []byte, toks []highlight.Token, from, to int) []uint32 {
	first := sort.Search(len(toks), func(i int) bool { return toks[i].End > from })
	last := sort.Search(len(toks), func(i int) bool { return toks[i].Start >= to })
	if first >= last || from >= to {
		return []uint32{} // [], not null: some clients treat null as an error
	}
	data := make([]uint32, 0, 5*(last-first))
	line := m.LineOf(toks[first].Start)
	c := cursor{off: m.OffsetUTF16(line, 0), line: line}
	prevLine, prevCol := 0, 0 // the first tuple is relative to the start of the file
	for _, t := range toks[first:last] {
		for a := t.Start; a < t.End; {
			b, next := t.End, t.End
			if nl := bytes.IndexByte(text[a:t.End], '\n'); nl >= 0 {
				b, next = a+nl, a+nl+1
				if b > a && text[b-1] == '\r' {
					b--
				}
			}
			c.advance(text, a)
			l, col := c.line, c.col
			c.advance(text, b)
			if n := c.col - col; n > 0 {
				dc := col
				if l == prevLine {
					dc = col - prevCol
				}
				data = append(data, uint32(l-prevLine), uint32(dc), uint32(n), uint32(t.Kind), uint32(t.Mods))
				prevLine, prevCol = l, col
			}
			a = next
		}
	}
	return data
}

// cursor walks a text forward, keeping the line and UTF-16 column of its
// offset (as source.Mapper.PositionUTF16 counts them: an invalid byte is
// one unit).
type cursor struct {
	off, line, col int
}

func (c *cursor) advance(text []byte, to int) {
	for c.off < to {
		switch b := text[c.off]; {
		case b == '\n':
			c.line++
			c.col = 0
			c.off++
		case b < utf8.RuneSelf:
			c.col++
			c.off++
		default:
			r, n := utf8.DecodeRune(text[c.off:])
			c.col++
			if r >= 0x10000 {
				c.col++
			}
			c.off += n
		}
	}
}
