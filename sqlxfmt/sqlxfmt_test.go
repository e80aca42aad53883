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
		{name: "CRLF", in: "select 1\r\n", want: "SELECT\r\n  1\r\n"},
		{name: "byte order mark", in: "\xef\xbb\xbfselect 1\n", want: "\xef\xbb\xbfSELECT\n  1\n"},
		{name: "mixed line ends", in: "select 1\r\nfrom t\n", problem: "2: the file mixes line ends"},
		{name: "lone carriage return", in: "select 1\rfrom t\r\n", problem: "1: the file mixes line ends"},
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

// TestLineEndsAndBOM: a file with CRLF line ends, a UTF-8 byte order mark
// or both formats as its LF twin without one does, with its own line ends
// and mark back, byte for byte; problems are at the same lines and at
// offsets of the file as given. (Mixed line ends: TestFormat.)
func TestLineEndsAndBOM(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	twins := []struct{ name, in string }{
		{"config and query", "config {\n  type: \"table\",   tags: [\"a\"]\n}\n\nselect a,b from ${ref(\"src\")} where x=1\n"},
		{"operations blocks", "pre_operations {\ndeclare x int64 default 1;set x=2\n}\nselect x\npost_operations { select 1 }\n"},
		{"multi-line string", "select '''a\nb''' as s, x from t\n"},
		{"multi-line placeholder", "select * from ${ref({\n    name: \"x\"\n})} where a=1\n"},
		{"no final line end", "-- c\nselect 1"},
		{"broken SQL", "config { type: \"view\" }\nselect from where\n"},
		{"already formatted", "SELECT\n  1\n"},
	}
	variants := []struct {
		name string
		enc  func(string) string
	}{
		{"CRLF", crlf},
		{"BOM", func(s string) string { return bom + s }},
		{"BOM and CRLF", func(s string) string { return bom + crlf(s) }},
	}
	for _, tw := range twins {
		lf, err := Format([]byte(tw.in))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range variants {
			t.Run(tw.name+"/"+v.name, func(t *testing.T) {
				in := v.enc(tw.in)
				res, err := Format([]byte(in))
				if err != nil {
					t.Fatal(err)
				}
				if want := v.enc(string(lf.Text)); string(res.Text) != want {
					t.Errorf("Format = %q\nwant     %q", res.Text, want)
				}
				if res.Changed != lf.Changed || res.Changed != (string(res.Text) != in) {
					t.Errorf("Changed = %v, LF twin %v", res.Changed, lf.Changed)
				}
				if len(res.Problems) != len(lf.Problems) {
					t.Fatalf("problems %v, LF twin %v", res.Problems, lf.Problems)
				}
				for i, p := range res.Problems {
					q := lf.Problems[i]
					if p.Line != q.Line || p.Message != q.Message {
						t.Errorf("problem %v, LF twin %v", p, q)
					}
					// The same character, in the file as given.
					if p.Offset < len(in) && q.Offset < len(tw.in) && in[p.Offset] != tw.in[q.Offset] {
						t.Errorf("problem offset %d (%q) is not the LF twin's %d (%q)", p.Offset, in[p.Offset], q.Offset, tw.in[q.Offset])
					}
					if strings.Contains(p.Message, "Illegal input character") {
						t.Errorf("the byte order mark reached GoogleSQL: %v", p)
					}
				}
				again, err := Format(res.Text)
				if err != nil || string(again.Text) != string(res.Text) {
					t.Errorf("not idempotent: %q → %q", res.Text, again.Text)
				}
			})
		}
	}
}

// TestFormatRangeCRLF: the range is in offsets of the file as given (the
// editor's), carriage returns and byte order mark included.
func TestFormatRangeCRLF(t *testing.T) {
	in := "\xef\xbb\xbfpre_operations {\r\nselect 1\r\n}\r\nselect 2\r\n"
	at := strings.Index(in, "select 2") + 3
	res, err := FormatRange([]byte(in), at, at+1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "\xef\xbb\xbfpre_operations {\r\nselect 1\r\n}\r\nSELECT\r\n  2\r\n"; string(res.Text) != want {
		t.Errorf("FormatRange = %q\nwant %q", res.Text, want)
	}
	at = strings.Index(in, "select 1") + 3
	if res, err = FormatRange([]byte(in), at, at+1); err != nil {
		t.Fatal(err)
	}
	if want := "\xef\xbb\xbfpre_operations {\r\n  SELECT\r\n    1\r\n}\r\nselect 2\r\n"; string(res.Text) != want {
		t.Errorf("FormatRange = %q\nwant %q", res.Text, want)
	}
}
