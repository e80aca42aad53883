package sqlxfmt

import (
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    string // "" : unchanged
		problem string // substring of a problem, "" : none
	}{
		{name: "query after config",
			in:   "config {\n  type: \"table\",   tags: [\"a\"]\n}\n\nselect a,b from ${ref(\"src\")} where x=1\n",
			want: "config {\n  type: \"table\",   tags: [\"a\"]\n}\n\nSELECT\n  a,\n  b\nFROM\n  ${ref(\"src\")}\nWHERE\n  x = 1\n"},
		{name: "trailing semicolon kept", in: "select 1;\n", want: "SELECT\n  1;\n"},
		{name: "no semicolon added", in: "select 1\n", want: "SELECT\n  1\n"},
		{name: "pre and post operations indented",
			in:   "pre_operations {\ndeclare x int64 default 1;set x=2\n}\nselect x\npost_operations { select 1 }\n",
			want: "pre_operations {\n  DECLARE x int64 DEFAULT 1;\n  SET x = 2\n}\nSELECT\n  x\npost_operations {\n  SELECT\n    1\n}\n"},
		{name: "js block and config untouched",
			in:   "config { type: \"view\" }\njs {\n  const  x =   1; // select a,b\n}\nselect ${x} as y\n",
			want: "config { type: \"view\" }\njs {\n  const  x =   1; // select a,b\n}\nSELECT\n  ${x} AS y\n"},
		{name: "leading and trailing comments kept",
			in:   "-- the table\nselect a from t\n-- end\n",
			want: "-- the table\nSELECT\n  a\nFROM\n  t\n-- end\n"},
		{name: "comments inside kept", in: "select a, -- why\n b from t\n", want: "SELECT\n  a, -- why\n  b\nFROM\n  t\n"},
		{name: "comments in an operations block indented with it",
			in:   "pre_operations {\n-- the day\ndeclare d int64 default 1; -- today\n}\nselect d\n",
			want: "pre_operations {\n  -- the day\n  DECLARE d int64 DEFAULT 1; -- today\n}\nSELECT\n  d\n"},
		{name: "placeholder in a comment", in: "select a -- from ${ref(\"x\")}\nfrom t\n", want: "SELECT\n  a -- from ${ref(\"x\")}\nFROM\n  t\n"},
		{name: "placeholder in a string", in: "select '${name}' as n, \"x${y}z\" from t\n",
			want: "SELECT\n  '${name}' AS n,\n  \"x${y}z\"\nFROM\n  t\n"},
		{name: "placeholder in a quoted identifier", in: "select * from `${dataform.projectConfig.defaultDatabase}.ds.t`\n",
			want: "SELECT\n  *\nFROM\n  `${dataform.projectConfig.defaultDatabase}.ds.t`\n"},
		{name: "multi-line placeholder byte for byte", in: "select * from ${ref({\n    name: \"x\"\n})} where a=1\n",
			want: "SELECT\n  *\nFROM\n  ${ref({\n    name: \"x\"\n})}\nWHERE\n  a = 1\n"},
		{name: "clause placeholder left alone", in: "select * from t ${when(incremental(), \"where x > 1\")}\n", problem: "would change"},
		{name: "a table reference takes AS before its alias", in: "select l.a from ${ref(\"x\")} l join ${ctx.ref({schema: f(\"a)\"), name: \"y\"})} m on l.k=m.k\n",
			want: "SELECT\n  l.a\nFROM\n  ${ref(\"x\")} AS l\n  JOIN\n  ${ctx.ref({schema: f(\"a)\"), name: \"y\"})} AS m\n  ON l.k = m.k\n"},
		{name: "a table reference on its own line", in: "select a from\n${ref(\"x\")} where a=1\n", want: "SELECT\n  a\nFROM\n  ${ref(\"x\")}\nWHERE\n  a = 1\n"},
		{name: "not only a table reference", in: "select * from ${ref(\"x\") + \" where 1\"} l\n", problem: "would change"},
		{name: "ref shadowed in a js block", in: "js { const ref = (x) => x; }\nselect * from ${ref(\"x\")} l\n", problem: "would change"},
		{name: "placeholder glued to a word", in: "select * from ${prefix}_events\n", want: "SELECT\n  *\nFROM\n  ${prefix}_events\n"},
		{name: "separators kept", in: "create temp table a as select 1\n---\nselect * from a\n",
			want: "CREATE TEMP TABLE a AS\nSELECT\n  1\n---\nSELECT\n  *\nFROM\n  a\n"},
		{name: "broken SQL left alone", in: "select from where\n", problem: "cannot parse"},
		{name: "unclosed block", in: "config {\n type: \"table\"\nselect 1\n", problem: "never closed"},
		{name: "not UTF-8", in: "select 'a\xff'\n", problem: "not valid UTF-8"},
		{name: "CRLF", in: "select 1\r\n", problem: "carriage returns"},
		{name: "incremental_where untouched", in: "incremental_where { x>1 }\nselect 1\n", want: "incremental_where { x>1 }\nSELECT\n  1\n"},
		{name: "already formatted", in: "SELECT\n  1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Format([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want == "" {
				want = c.in
			}
			if string(res.Text) != want {
				t.Errorf("Format =\n%s\nwant\n%s", res.Text, want)
			}
			if res.Changed != (string(res.Text) != c.in) {
				t.Errorf("Changed = %v", res.Changed)
			}
			var probs []string
			for _, p := range res.Problems {
				probs = append(probs, p.String())
			}
			all := strings.Join(probs, "; ")
			if c.problem == "" && all != "" || c.problem != "" && !strings.Contains(all, c.problem) {
				t.Errorf("problems %q, want %q", all, c.problem)
			}
			again, err := Format(res.Text)
			if err != nil || string(again.Text) != string(res.Text) {
				t.Errorf("not idempotent:\n%s\n→\n%s", res.Text, again.Text)
			}
		})
	}
}

func TestFormatRange(t *testing.T) {
	in := "pre_operations {\nselect 1\n}\nselect 2\n"
	res, err := FormatRange([]byte(in), len(in)-3, len(in)-2) // inside "select 2"
	if err != nil {
		t.Fatal(err)
	}
	if want := "pre_operations {\nselect 1\n}\nSELECT\n  2\n"; string(res.Text) != want {
		t.Errorf("FormatRange =\n%s\nwant\n%s", res.Text, want)
	}
}
