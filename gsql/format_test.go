package gsql

import (
	"errors"
	"strings"
	"testing"
)

func TestFormatSQL(t *testing.T) {
	ph := FormatOptions{Opaque: func(w string) bool { return strings.Contains(w, "__PH") }}
	cases := []struct {
		name string
		in   string
		opts FormatOptions
		want string // "" with wantErr
		err  string // substring of the error
	}{
		{name: "select", in: "select a,b from `p.d.t` where x=1",
			want: "SELECT\n  a,\n  b\nFROM\n  `p.d.t`\nWHERE\n  x = 1"},
		{name: "trailing semicolon kept", in: "select 1;", want: "SELECT\n  1;"},
		{name: "statements", in: "declare x int64 default 1;set x=2;",
			want: "DECLARE x int64 DEFAULT 1;\nSET x = 2;"},
		{name: "alias gets AS", in: "select a b from t u", want: "SELECT\n  a AS b\nFROM\n  t AS u"},
		{name: "literals byte for byte", in: "select r'\\d+', b\"x\", '''a\n  b''', 1.50e+3, 0x1F from t",
			want: "SELECT\n  r'\\d+',\n  b\"x\",\n  '''a\n  b''',\n  1.50e+3,\n  0x1F\nFROM\n  t"},
		{name: "empty", in: "  \n", want: "  \n"},
		// Comments: GoogleSQL drops them; FormatSQL puts them back.
		{name: "line comment stays after its token", in: "select 1 -- one\nfrom t", want: "SELECT\n  1 -- one\nFROM\n  t"},
		{name: "block comment", in: "select /* x */ 1", want: "SELECT /* x */\n  1"},
		{name: "hash comment", in: "select 1 # x\n", want: "SELECT\n  1 # x"},
		{name: "trailing comment after a comma", in: "select a, -- why\n b from t", want: "SELECT\n  a, -- why\n  b\nFROM\n  t"},
		{name: "trailing comment moves past the comma after it", in: "select a -- why\n, b from t", want: "SELECT\n  a, -- why\n  b\nFROM\n  t"},
		{name: "comments on lines of their own keep the indentation",
			in:   "-- head\nselect a,\n  -- the b\n  b\nfrom t -- src\nwhere x=1 -- c1\n and y=2",
			want: "-- head\nSELECT\n  a,\n  -- the b\n  b\nFROM\n  t -- src\nWHERE\n  x = 1 -- c1\n  AND y = 2"},
		{name: "a blank line before a comment is kept", in: "select a from t where x = 1\n\n  -- later\n  and y = 2",
			want: "SELECT\n  a\nFROM\n  t\nWHERE\n  x = 1\n\n  -- later\n  AND y = 2"},
		{name: "comments between statements", in: "select 1;\n-- next one\nselect 2; -- two\n",
			want: "SELECT\n  1;\n\n-- next one\nSELECT\n  2; -- two"},
		{name: "comment after an alias the formatter spells out", in: "select a b -- alias\nfrom t", want: "SELECT\n  a AS b -- alias\nFROM\n  t"},
		{name: "two comments on one line", in: "select a /* x */ -- y\n, b from t", want: "SELECT\n  a, /* x */ -- y\n  b\nFROM\n  t"},
		{name: "a comment after the comma stops the move", in: "select a -- c\n, -- d\n b from t", want: "SELECT\n  a -- c\n  , -- d\n  b\nFROM\n  t"},
		{name: "multi-line block comment byte for byte", in: "select\n  /* multi\n     line */\n  a from t", want: "SELECT\n  /* multi\n     line */\n  a\nFROM\n  t"},
		{name: "comment at the end", in: "select a from t\n-- end", want: "SELECT\n  a\nFROM\n  t\n-- end"},
		{name: "line comment breaks the line it ends", in: "select f(a, -- x\n b) from t", want: "SELECT\n  f(a, -- x\n  b)\nFROM\n  t"},
		{name: "comments only", in: "-- nothing\n/* here */", want: "-- nothing\n/* here */"},
		{name: "comment beside a placeholder", in: "select * from __PH0__ -- the source\nwhere x=1", opts: ph,
			want: "SELECT\n  *\nFROM\n  __PH0__ -- the source\nWHERE\n  x = 1"},
		{name: "syntax error", in: "select from where", err: "cannot parse"},
		{name: "unterminated string", in: "select 'a", err: "cannot read"},
		{name: "placeholder table", in: "select * from __PH0__ where x=1", opts: ph,
			want: "SELECT\n  *\nFROM\n  __PH0__\nWHERE\n  x = 1"},
		{name: "no AS before a placeholder", in: "select * from t __PH0__", opts: ph, err: "would change"},
		{name: "AS before a plain alias without placeholders", in: "select * from t x", opts: ph,
			want: "SELECT\n  *\nFROM\n  t AS x"},
		{name: "placeholder glued to a comma keeps glued", in: "select __PH0__,b from t", opts: ph,
			want: "SELECT\n  __PH0__,\n  b\nFROM\n  t"},
		{name: "placeholder spacing would change", in: "select a-__PH0__ from t", opts: ph, err: "spacing"},
		{name: "quoted placeholder is never unquoted", in: "select * from `__PH0__`", opts: ph, err: "would change"},
		{name: "quoted placeholder needing quotes", in: "select * from `__PH 0__.d.t`", opts: FormatOptions{Opaque: func(w string) bool { return strings.Contains(w, "__PH") }},
			want: "SELECT\n  *\nFROM\n  `__PH 0__.d.t`"},
		{name: "plain quoted identifier unquoted", in: "select `ok` from t", want: "SELECT\n  ok\nFROM\n  t"},
		{name: "quoted keyword stays quoted", in: "select `select` from t", want: "SELECT\n  `select`\nFROM\n  t"},
		{name: "identifier case kept", in: "select MyCol from MyTable", want: "SELECT\n  MyCol\nFROM\n  MyTable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := FormatSQL(c.in, c.opts)
			if c.err != "" {
				var fe *FormatError
				if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("FormatSQL(%q) = %q, %v; want a *FormatError about %q", c.in, got, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FormatSQL(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Fatalf("FormatSQL(%q) =\n%s\nwant\n%s", c.in, got, c.want)
			}
			again, err := FormatSQL(got, c.opts)
			if err != nil || again != got {
				t.Fatalf("not idempotent: %q → %q, %v", got, again, err)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a<=b", []string{"a", "<=", "b"}},
		{"t.1col", []string{"t", ".", "1col"}},
		{"x .5", []string{"x", ".5"}},
		{"1e-3+2", []string{"1e-3", "+", "2"}},
		{"r'\\'' 'a\\'b'", []string{"r'\\''", "'a\\'b'"}},
		{"\"\"\"a\"b\"\"\" -- c\nd", []string{"\"\"\"a\"b\"\"\"", "-- c", "d"}},
		{"`a``", nil}, // unterminated quoted identifier: error
	}
	for _, c := range cases {
		toks, err := Tokens(c.in)
		if c.want == nil {
			if err == nil {
				t.Errorf("Tokens(%q): no error", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("Tokens(%q): %v", c.in, err)
			continue
		}
		var got []string
		for _, tk := range toks {
			got = append(got, c.in[tk.Start:tk.End])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
