package highlight

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dfdtools/dfd/source"
)

// render shows tokens as "text:kind" (with "+defaultLibrary" and the
// like), one per token, so that a test reads as the file does.
func render(s string, toks []Token) []string {
	var out []string
	for _, t := range toks {
		r := fmt.Sprintf("%s:%s", s[t.Start:t.End], t.Kind)
		for i, m := range Modifiers() {
			if t.Mods&(1<<i) != 0 {
				r += "+" + m
			}
		}
		out = append(out, r)
	}
	return out
}

// checkWellFormed fails unless toks are sorted, non-empty, in bounds and
// never overlap: what the LSP encoding relies on.
func checkWellFormed(t *testing.T, s string, toks []Token) {
	t.Helper()
	end := 0
	for i, tk := range toks {
		if tk.Start < end || tk.End <= tk.Start || tk.End > len(s) || tk.Kind >= numKinds {
			t.Fatalf("token %d %+v is out of order, empty or out of bounds (previous end %d, len %d)", i, tk, end, len(s))
		}
		end = tk.End
	}
}

func sqlx(s string) []Token { return SQLX([]byte(s), source.ScanSQLX([]byte(s))) }

func TestSQLX(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"select", "SELECT a, 'x', 1.5e3 FROM t -- c\r\nWHERE b >= 2",
			[]string{"SELECT:keyword", "'x':string", "1.5e3:number", "FROM:keyword", "-- c:comment", "WHERE:keyword", ">=:operator", "2:number"}},
		{"functions", "SELECT COUNT(*), IF(a, b, c), my_udf(x), LEFT JOIN, t.date, SAFE.SUBSTR(a, b), net.host(u), ds.fn(), CAST(x AS INT64)",
			[]string{"SELECT:keyword", "COUNT:function+defaultLibrary", "*:operator", "IF:function+defaultLibrary", "my_udf:function",
				"LEFT:keyword", "JOIN:keyword", "SUBSTR:function+defaultLibrary", "host:function+defaultLibrary", "fn:function", "CAST:function+defaultLibrary", "AS:keyword", "INT64:type"}},
		{"keywords before a parenthesis", "x IN (1) AND EXISTS (SELECT 1) OVER (w)",
			[]string{"IN:keyword", "1:number", "AND:keyword", "EXISTS:keyword", "SELECT:keyword", "1:number", "OVER:keyword"}},
		{"quoted, params, comments", "SELECT `p.d.t`, @p, @@x, r'\\d', b\"x\", '''a\nb''' # hash\n/* block\n*/",
			[]string{"SELECT:keyword", "`p.d.t`:variable", "@p:parameter", "@@x:variable", `r'\d':string`, `b"x":string`,
				"'''a\nb''':string", "# hash:comment", "/* block\n*/:comment"}},
		{"placeholder", `SELECT * FROM ${ref("a")} WHERE x = ${when(incremental(), "1", "2")}`,
			[]string{"SELECT:keyword", "*:operator", "FROM:keyword", "${:macro", "ref:function+defaultLibrary", `"a":string`, "}:macro",
				"WHERE:keyword", "=:operator", "${:macro", "when:function+defaultLibrary", "incremental:function+defaultLibrary",
				`"1":string`, `"2":string`, "}:macro"}},
		{"placeholder in a string", `SELECT 'a ${self()} b'`,
			[]string{"SELECT:keyword", "'a :string", "${:macro", "self:function+defaultLibrary", "}:macro", " b':string"}},
		{"config", "config {\n  type: \"table\", // c\n  tags: [`x`], bigquery: { partitionBy: \"d\" }, n: 1,\n}\nSELECT 1",
			[]string{"config:keyword", "type:property", `"table":string`, "// c:comment", "tags:property", "`x`:string",
				"bigquery:property", "partitionBy:property", `"d":string`, "n:property", "1:number", "SELECT:keyword", "1:number"}},
		{"js block", "js {\n  const x = require(\"y\");\n  function f(a) { return a / 2 + /re/g.test(`t${a}`); }\n}\nSELECT ${x}",
			[]string{"js:keyword", "const:keyword", "x:variable+declaration+readonly", "=:operator", "require:function+defaultLibrary", `"y":string`,
				"function:keyword", "f:function+declaration", "return:keyword", "/:operator", "2:number", "+:operator",
				"/re/g:regexp", "test:method", "`t:string", "${:operator", "}:operator", "`:string",
				"SELECT:keyword", "${:macro", "}:macro"}},
		{"sql blocks and separators", "pre_operations {\n  DECLARE x INT64;\n  ---\n  SET x = 1\n}\ninput \"a\", \"b\" {\n  SELECT 1\n}\nSELECT 2\n---\nSELECT 3",
			[]string{"pre_operations:keyword", "DECLARE:keyword", "INT64:type", "---:keyword", "SET:keyword", "=:operator", "1:number",
				"input:keyword", `"a":string`, `"b":string`, "SELECT:keyword", "1:number", "SELECT:keyword", "2:number", "---:keyword", "SELECT:keyword", "3:number"}},
		{"incremental_where", "incremental_where { d > (SELECT MAX(d) FROM ${self()}) }",
			[]string{"incremental_where:keyword", ">:operator", "SELECT:keyword", "MAX:function+defaultLibrary", "FROM:keyword",
				"${:macro", "self:function+defaultLibrary", "}:macro"}},
		{"unclosed config", "config { type: \"view\",\n  description: `open",
			[]string{"config:keyword", "type:property", `"view":string`, "description:property", "`open:string"}},
		{"unclosed placeholder", "SELECT ${ref(\"a\"",
			[]string{"SELECT:keyword", "${:macro", "ref:function+defaultLibrary", `"a":string`}},
		{"unclosed string", "SELECT 'abc\nFROM t",
			[]string{"SELECT:keyword", "'abc:string", "FROM:keyword"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks := sqlx(tt.src)
			checkWellFormed(t, tt.src, toks)
			if diff := cmp.Diff(tt.want, render(tt.src, toks)); diff != "" {
				t.Errorf("tokens of %q (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestJS(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"publish", "publish(\"t\", { type: \"view\" }).query(ctx => `SELECT * FROM ${ctx.ref(\"a\")}`);",
			[]string{"publish:function+defaultLibrary", `"t":string`, "type:property", `"view":string`, "query:method",
				"ctx:parameter", "=>:operator", "`SELECT * FROM :string", "${:operator", "ref:method", `"a":string`, "}:operator", "`:string"}},
		{"regex or division", "let a = b / c / d; x = /=a/.source; y = (1) / 2; z = [/x/]",
			[]string{"let:keyword", "a:variable+declaration", "=:operator", "/:operator", "/:operator",
				"=:operator", "/=a/:regexp", "source:property", "=:operator", "1:number", "/:operator", "2:number",
				"=:operator", "/x/:regexp"}},
		{"nested templates", "`a${`b${c}d`}e`",
			[]string{"`a:string", "${:operator", "`b:string", "${:operator", "}:operator", "d`:string", "}:operator", "e`:string"}},
		{"numbers", "0x1F 1_000 .5 2e-3 10n 0b11",
			[]string{"0x1F:number", "1_000:number", ".5:number", "2e-3:number", "10n:number", "0b11:number"}},
		{"labels and ternaries are no keys", "a ? b : c; { loop: 1 }",
			[]string{"?:operator", "1:number"}},
		{"class", "class A extends B { m() { return this.x } }\nmodule.exports = { A };",
			[]string{"class:keyword", "A:type+declaration", "extends:keyword", "B:type", "m:function", "return:keyword", "this:keyword", "x:property",
				"module:variable+defaultLibrary", "exports:property", "=:operator"}},
		{"comments and strings", "// line\r\n/* block */ 'it\\'s' \"a\\\nb\"",
			[]string{"// line:comment", "/* block */:comment", `'it\'s':string`, "\"a\\\nb\":string"}},
		{"unclosed", "/* open", []string{"/* open:comment"}},
		{"stray", "#!@ ) ] } `", []string{"!:operator", "`:string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks := JS([]byte(tt.src))
			checkWellFormed(t, tt.src, toks)
			if diff := cmp.Diff(tt.want, render(tt.src, toks)); diff != "" {
				t.Errorf("tokens of %q (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestLegend(t *testing.T) {
	if got := len(Kinds()); got != int(numKinds) {
		t.Fatalf("%d kind names for %d kinds", got, numKinds)
	}
	for k := Kind(0); k < numKinds; k++ {
		if k.String() == "" || strings.Contains(k.String(), "?") {
			t.Errorf("kind %d has no name", k)
		}
	}
	if Modifiers()[0] != "defaultLibrary" || DefaultLibrary != 1 {
		t.Errorf("modifier bits and names disagree: %v", Modifiers())
	}
}
