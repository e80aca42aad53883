package lsp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/bench/projectgen"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/source/highlight"
)

// decodeTokens turns LSP's relative tuples back into absolute
// "line:col+len type" strings.
func decodeTokens(t *testing.T, data []uint32) []string {
	t.Helper()
	if len(data)%5 != 0 {
		t.Fatalf("%d numbers: not tuples of five", len(data))
	}
	var out []string
	line, col := 0, 0
	for i := 0; i < len(data); i += 5 {
		if data[i] > 0 {
			line += int(data[i])
			col = 0
		}
		col += int(data[i+1])
		out = append(out, fmt.Sprintf("%d:%d+%d %s/%d", line, col, data[i+2], highlight.Kind(data[i+3]), data[i+4]))
	}
	return out
}

// Positions are UTF-16 like the rest of the server's; multi-line tokens
// go out one line each (\r\n line ends and all); a range request gets the
// tokens that overlap it.
func TestEncodeTokens(t *testing.T) {
	text := "SELECT 'é😀', x -- ü\r\n/* a\r\n   b */ 1\n${ref(\"t\")}"
	toks := highlight.SQLX([]byte(text), source.ScanSQLX([]byte(text)))
	m := source.NewMapper([]byte(text))
	all := []string{
		"0:0+6 keyword/0", "0:7+5 string/0", "0:16+4 comment/0",
		"1:0+4 comment/0", "2:0+7 comment/0", "2:8+1 number/0",
		"3:0+2 macro/0", "3:2+3 function/1", "3:6+3 string/0", "3:10+1 macro/0",
	}
	tests := []struct {
		name     string
		from, to int
		want     []string
	}{
		{"full", 0, len(text), all},
		{"a range from the second line", strings.Index(text, "/*") + 1, strings.Index(text, " 1"), all[3:5]},
		{"inside a multi-line comment", strings.Index(text, "b */"), strings.Index(text, "b */") + 1, all[3:5]},
		{"the last line", strings.Index(text, "${"), len(text), all[6:]},
		{"empty range", 3, 3, nil},
		{"between tokens", strings.Index(text, " 1"), strings.Index(text, "1"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := encodeTokens(m, []byte(text), toks, tt.from, tt.to)
			if data == nil {
				t.Fatal("nil data: would be sent as null")
			}
			if diff := cmp.Diff(tt.want, decodeTokens(t, data)); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
		})
	}
}

// bigSQLX is the benchmarks' SQLX file of about size bytes (config, js,
// placeholders in SQL and in strings, comments): bench/projectgen's.
func bigSQLX(size int) []byte { return []byte(projectgen.BigSQLX(size, 1, "src")) }

// What a semanticTokens/full request of a 2 MB SQLX file costs the
// server: lexing and encoding, then the JSON of the answer.
func BenchmarkSemanticTokens2MB(b *testing.B) {
	src := bigSQLX(2 << 20)
	x := source.ScanSQLX(src)
	m := source.NewMapper(src)
	b.Run("tokens", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		for b.Loop() {
			encodeTokens(m, src, highlight.SQLX(src, x), 0, len(src))
		}
	})
	b.Run("json", func(b *testing.B) {
		res := &protocol.SemanticTokens{Data: encodeTokens(m, src, highlight.SQLX(src, x), 0, len(src))}
		b.ReportAllocs()
		for b.Loop() {
			out, err := protocol.Marshal(res)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(out)))
		}
	})
}
