package source

import (
	"fmt"
	"testing"
)

func TestDeclaredVariables(t *testing.T) {
	text := "config { type: \"incremental\" }\n" +
		"pre_operations {\n" +
		"  DECLARE checkpoint DEFAULT (\n    ${when(incremental(), `SELECT MAX(ts) FROM ${self()}`, `SELECT TIMESTAMP(\"2000-01-01\")`)}\n  );\n" +
		"  declare lo, hi INT64 DEFAULT 0;\n" +
		"  DECLARE s STRUCT<a INT64, b STRING>;\n" +
		"}\n" +
		"post_operations {\n  DECLARE not_this INT64;\n}\n" +
		"SELECT 1 -- DECLARE nor_this INT64\n"
	var got []string
	for _, v := range DeclaredVariables(ScanSQLX([]byte(text)), []byte(text)) {
		if text[v.Span.Start:v.Span.End] != v.Name {
			t.Errorf("%s: span %v holds %q", v.Name, v.Span, text[v.Span.Start:v.Span.End])
		}
		got = append(got, v.Name+":"+v.Type)
	}
	if want := "[checkpoint: lo:INT64 hi:INT64 s:STRUCT<a INT64, b STRING>]"; fmt.Sprint(got) != want {
		t.Errorf("variables %v, want %s", got, want)
	}
}
