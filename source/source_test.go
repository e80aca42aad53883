package source

import (
	"strings"
	"testing"
)

func TestMapperUTF16(t *testing.T) {
	text := "ab\nx📦é y\r\nlast"
	m := NewMapper([]byte(text))
	// "📦" is two UTF-16 units and four bytes; "é" one unit, two bytes.
	for _, tc := range []struct {
		line, char, want int
	}{
		{0, 0, 0}, {0, 2, 2}, {0, 99, 2}, // clamped to the line
		{1, 1, 4}, {1, 3, 8}, {1, 2, 4}, // inside the surrogate pair: the rune's start
		{1, 4, 10}, {1, 6, 12}, {1, 99, 12}, // the \r is not part of the line
		{2, 4, 18}, {9, 0, len(text)},
	} {
		if got := m.OffsetUTF16(tc.line, tc.char); got != tc.want {
			t.Errorf("OffsetUTF16(%d, %d) = %d, want %d", tc.line, tc.char, got, tc.want)
		}
	}
	for off := 0; off <= len(text); off++ {
		l, c := m.PositionUTF16(off)
		if back := m.OffsetUTF16(l, c); back != off && isRuneStart(text, off) && text[min(off, len(text)-1)] != '\n' && off != 13 {
			t.Errorf("offset %d → (%d,%d) → %d", off, l, c, back)
		}
	}
	if m.LineText(1) != "x📦é y" || m.LineOf(5) != 1 || m.OffsetBytes(1, 100) != 12 {
		t.Errorf("LineText %q LineOf %d OffsetBytes %d", m.LineText(1), m.LineOf(5), m.OffsetBytes(1, 100))
	}
}

func isRuneStart(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

func TestFindRefs(t *testing.T) {
	src := "SELECT * FROM ${ref(\"a\")} JOIN ${ref('s', 'b')} JOIN ${ref({schema: \"s2\", \"name\": \"c\", database: 'd'})}\n" +
		"${ctx.ref(\"e\")} ${resolve(`f`)} ${jctx.ref(\"g\")} ${ref(name)} ${notref(\"x\")} ${ref(`t${x}`)}"
	refs := FindRefs([]byte(src))
	var got []string
	for _, r := range refs {
		got = append(got, r.Func+":"+r.Database.Value+"/"+r.Schema.Value+"/"+r.Name.Value+"@"+src[r.Name.Span.Start:r.Name.Span.End])
	}
	want := "ref://a@a ref:/s/b@b ref:d/s2/c@c ref://e@e resolve://f@f ref://g@g"
	if strings.Join(got, " ") != want {
		t.Errorf("FindRefs:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if r, ok := RefAt(refs, strings.Index(src, "ctx.ref")); !ok || r.Name.Value != "e" {
		t.Errorf("RefAt on the callee: %+v %v", r, ok)
	}
}

func TestWordAtAndDefinitions(t *testing.T) {
	src := []byte("x = billing.planPriceCase(\"plan\")")
	path, idx, sp := WordAt(src, strings.Index(string(src), "Price"))
	if strings.Join(path, ".") != "billing.planPriceCase" || idx != 1 || string(src[sp.Start:sp.End]) != "planPriceCase" {
		t.Errorf("WordAt: %v %d %q", path, idx, src[sp.Start:sp.End])
	}
	js := []byte("const A = 1;\nfunction fn(x) {}\nmodule.exports = { fn, A, other: 3 };\nexports.late = 2;\n")
	for name, line := range map[string]string{"A": "const A", "fn": "function fn", "other": "other", "late": "late"} {
		sp, ok := FindDefinition(js, name)
		if !ok || !strings.Contains(string(js[max(0, sp.Start-9):sp.End]), line) {
			t.Errorf("FindDefinition(%s) = %v %v", name, sp, ok)
		}
	}
	if s, ok := StringAt([]byte(`dependencies: ["a", 'bb']`), 21); !ok || s.Value != "bb" {
		t.Errorf("StringAt: %+v %v", s, ok)
	}
	if w := FindWord([]byte("orders order_items orders-x (orders)"), "orders"); len(w) != 2 {
		t.Errorf("FindWord: %v", w)
	}
}

func TestScanSQLX(t *testing.T) {
	src := "config { type: \"table\", x: '}' }\njs { const a = `}${1}`; }\npre_operations { SET x = '${a}' }\nSELECT ${ref(\"t\")} -- }\n---\nSELECT 2\n"
	x := ScanSQLX([]byte(src))
	var kinds []string
	for _, b := range x.Blocks {
		kinds = append(kinds, b.Kind.String())
		if !b.Closed {
			t.Errorf("%s not closed", b.Kind)
		}
	}
	if strings.Join(kinds, ",") != "config,js,pre_operations" || len(x.Placeholders) != 2 || len(x.Separators) != 1 {
		t.Errorf("blocks %v, placeholders %d, separators %d", kinds, len(x.Placeholders), len(x.Separators))
	}
	if c, _ := x.Config(); src[c.Span.End-1] != '}' || !strings.HasPrefix(src[c.Span.Start:], "config {") {
		t.Errorf("config span %+v", c.Span)
	}
	if !x.InJavaScript(strings.Index(src, "ref(")) || x.InJavaScript(strings.Index(src, "SELECT 2")) {
		t.Errorf("InJavaScript")
	}
	if u := ScanSQLX([]byte("config {\n type: \"view\"\nSELECT 1")); u.Blocks[0].Closed {
		t.Errorf("unterminated config reported closed")
	}
}

func TestCompletionAt(t *testing.T) {
	for _, tc := range []struct {
		text   string // | is the cursor
		sqlx   bool
		kind   CompletionKind
		prefix string
		quote  byte
		object string
	}{
		{`SELECT * FROM ${ref("or|`, true, CompleteActionName, "or", '"', ""},
		{`ctx.ref(|`, false, CompleteActionName, "", 0, ""},
		{`resolve('x|`, false, CompleteActionName, "x", '\'', ""},
		{`ref({schema: "s", name: "o|`, false, CompleteActionName, "o", '"', ""},
		{"config {\n  dependencies: [\"a\", \"b|", true, CompleteActionName, "b", '"', ""},
		{"config {\n  ty|", true, CompleteConfigKey, "ty", 0, ""},
		{"config {\n  type: \"table\",\n  bigquery: {\n    par|", true, CompleteConfigKey, "par", 0, "bigquery"},
		{"config {\n  type: \"inc|", true, CompleteTypeValue, "inc", '"', ""},
		{"config {\n  description: \"a, b|", true, CompleteNothing, "", 0, ""},
		{"config { type: \"view\" }\nSELECT |", true, CompleteNothing, "", 0, ""},
		{"config {\n  ty|", false, CompleteNothing, "", 0, ""},
	} {
		i := strings.Index(tc.text, "|")
		src := tc.text[:i] + tc.text[i+1:]
		c := CompletionAt([]byte(src), i, tc.sqlx)
		if c.Kind != tc.kind || c.Prefix != tc.prefix || c.Quote != tc.quote || c.Object != tc.object {
			t.Errorf("%q: %+v", tc.text, c)
		}
	}
}
