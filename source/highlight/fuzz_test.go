package highlight

import (
	"testing"

	"github.com/dfdtools/dfd/source"
)

// The lexers run on whatever is being typed: on any input they must end,
// not panic, and return sorted, non-overlapping tokens in bounds. The
// seeds run in the normal test suite; go test -fuzz=FuzzSQLX explores.

var fuzzSeeds = []string{
	"SELECT 'a ${self()} b' FROM ${ref(\"x\")} -- c\n",
	"config { type: \"table\", tags: [`a${b}`] }\njs { const r = /}/g; }\n",
	"pre_operations { DECLARE x ${'{'} }\n---\nSELECT 1",
	"${`${`${", "/*", "'''", "`", "${/", "x = a / b / c", "{a: /[/]/ }", "input \"a\" {", "config {", "0x", "1e", "@@", "r'", "\\",
	"config { a: `x${ {b: `y${c}`} }z` }", "js { return /(?:)/ }", "SELECT \"\"\" ${a} \"\"\"", "\xff\xfe${\xc3}",
}

func FuzzSQLX(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := SQLX([]byte(s), source.ScanSQLX([]byte(s)))
		checkWellFormed(t, s, toks)
	})
}

func FuzzJS(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkWellFormed(t, s, JS([]byte(s)))
	})
}
