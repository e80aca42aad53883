package source

import (
	"fmt"
	"strings"
	"testing"
)

func TestSQLXFolds(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string // "start-end" (0-based lines), block ranges marked with their kind
	}{
		{"blocks keep their closing brace visible",
			"config {\n  type: \"table\",\n  tags: [\"a\"]\n}\n\npre_operations {\n  SET x = 1;\n  SET y = 2;\n}\nSELECT 1\n",
			[]string{"0-2 config", "5-7 pre_operations"}},
		{"a one-line block does not fold",
			"config { type: \"view\" }\nSELECT 1\n",
			nil},
		{"indented SQL folds; config's JavaScript does not by indentation",
			"config {\n  type: \"view\",\n  bigquery: {\n    labels: {a: \"b\"}\n  }\n}\nWITH a AS (\n  SELECT\n    x\n  FROM t\n)\n\nSELECT *\nFROM a\n",
			[]string{"0-4 config", "6-9", "7-8"}},
		{"trailing blank lines are not folded; blank lines inside are",
			"SELECT\n  a,\n\n  b\n\n\nFROM t\n",
			[]string{"0-3"}},
		{"an unclosed block folds to the end",
			"js {\n  const a = 1;\n  const b = 2;\n",
			[]string{"0-2 js"}},
		{"CRLF and tabs",
			"SELECT\r\n\ta,\r\n\tb\r\nFROM t\r\n",
			[]string{"0-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := ScanSQLX([]byte(tc.text))
			var got []string
			for _, r := range SQLXFolds([]byte(tc.text), x) {
				s := fmt.Sprintf("%d-%d", r.StartLine, r.EndLine)
				if r.Block >= 0 {
					s += " " + x.Blocks[r.Block].Kind.String()
				}
				got = append(got, s)
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("folds %q, want %q", got, tc.want)
			}
		})
	}
}
