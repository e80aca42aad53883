package highlight

import (
	"strings"
	"testing"

	"github.com/dfdtools/dfd/bench/projectgen"

	"github.com/dfdtools/dfd/source"
)

// bigSQLX is the benchmarks' SQLX file of about size bytes (config, js,
// placeholders in SQL and in strings, comments): bench/projectgen's.
func bigSQLX(size int) []byte { return []byte(projectgen.BigSQLX(size, 1, "src")) }

func bigJS(size int) []byte {
	var b strings.Builder
	chunk := "publish(\"t_" + "x\", { type: \"view\", tags: [\"a\"] }).query(ctx => `SELECT * FROM ${ctx.ref(\"src\")} WHERE n > ${1 / 2}`);\n" +
		"// a comment\nconst re = /a[/]b/g, half = total / 2;\n"
	for b.Len() < size {
		b.WriteString(chunk)
	}
	return []byte(b.String())
}

func BenchmarkSQLX2MB(b *testing.B) {
	src := bigSQLX(2 << 20)
	x := source.ScanSQLX(src)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		SQLX(src, x)
	}
}

func BenchmarkJS2MB(b *testing.B) {
	src := bigJS(2 << 20)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		JS(src)
	}
}

func TestBigFilesAreWellFormed(t *testing.T) {
	src := bigSQLX(200 << 10)
	checkWellFormed(t, string(src), SQLX(src, source.ScanSQLX(src)))
	js := bigJS(200 << 10)
	checkWellFormed(t, string(js), JS(js))
}
