package highlight

import (
	"strings"
	"testing"

	"github.com/dfdtools/dfd/source"
)

// bigSQLX is a SQLX file of about size bytes: a config block, then SQL
// with placeholders, strings, comments and functions, repeated.
func bigSQLX(size int) []byte {
	var b strings.Builder
	b.WriteString("config {\n  type: \"incremental\",\n  uniqueKey: [\"id\"],\n  bigquery: { partitionBy: \"DATE(ts)\" },\n}\n\njs {\n  const days = 3;\n}\n\nSELECT\n")
	chunk := "  -- a column and its derivations\n" +
		"  COALESCE(SAFE_CAST(a.value AS INT64), 0) AS value_int, /* why */ 'label é' AS label,\n" +
		"  DATE_TRUNC(DATE(a.ts), MONTH) AS month, a.x + 1.5e3 * b.y AS score, `p.d.t`.col,\n" +
		"  (SELECT MAX(ts) FROM ${ref(\"events\")} WHERE ts > TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL ${days} DAY)) AS latest,\n"
	for b.Len() < size {
		b.WriteString(chunk)
	}
	b.WriteString("  1\nFROM ${ref(\"a\")} a JOIN ${ref(\"b\")} b USING (id)\n${when(incremental(), `WHERE ts > (SELECT MAX(ts) FROM ${self()})`)}\n")
	return []byte(b.String())
}

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
