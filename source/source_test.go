package source

import (
	"math/rand/v2"
	"regexp"
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
		text       string // | is the cursor
		sqlx       bool
		kind       CompletionKind
		prefix     string
		quote      byte
		object     string
		schema     string
		present    string // comma-separated
		actionType string
	}{
		{text: `SELECT * FROM ${ref("or|`, sqlx: true, kind: CompleteActionName, prefix: "or", quote: '"'},
		{text: `ctx.ref(|`, kind: CompleteActionName},
		{text: `resolve('x|`, kind: CompleteActionName, prefix: "x", quote: '\''},
		{text: `ref({schema: "s", name: "o|`, kind: CompleteActionName, prefix: "o", quote: '"', schema: "s"},
		{text: `SELECT * FROM ${ref("reporting", "da|`, sqlx: true, kind: CompleteActionName, prefix: "da", quote: '"', schema: "reporting"},
		{text: `ref('s', '|')`, kind: CompleteActionName, quote: '\'', schema: "s"},
		{text: "config {\n  dependencies: [\"a\", \"b|", sqlx: true, kind: CompleteActionName, prefix: "b", quote: '"'},
		{text: "config {\n  ty|", sqlx: true, kind: CompleteConfigKey, prefix: "ty"},
		{text: "config {\n  type: \"table\",\n  bigquery: {\n    par|", sqlx: true, kind: CompleteConfigKey, prefix: "par", object: "bigquery", actionType: "table"},
		{text: "config {\n  type: \"inc|", sqlx: true, kind: CompleteTypeValue, prefix: "inc", quote: '"'},
		{text: "config {\n  description: \"a, b|", sqlx: true, kind: CompleteNothing},
		{text: "config { type: \"view\" }\nSELECT |", sqlx: true, kind: CompleteNothing},
		{text: "config {\n  ty|", kind: CompleteNothing},
		// Keys already there are reported, before and after the cursor,
		// but not the one being typed; nested objects have their own.
		{text: "config {\n  type: \"view\",\n  \"tags\": [\"a\", \"b\"],\n  d|\n  , schema: \"s\", bigquery: {labels: {x: 1}},\n}\nSELECT 1",
			sqlx: true, kind: CompleteConfigKey, prefix: "d", present: "type,tags,schema,bigquery", actionType: "view"},
		{text: "config {\n  type: \"table\",\n  bigquery: {\n    partitionBy: \"d\",\n    |\n  },\n  tags: []\n}", sqlx: true,
			kind: CompleteConfigKey, object: "bigquery", present: "partitionBy", actionType: "table"},
		{text: "config {\n  tags: [\"a\", |]\n}", sqlx: true, kind: CompleteNothing},
		// JavaScript: the configs of publish, operate, assert, declare and .config().
		{text: "publish(\"t\", {\n  type: \"incremental\",\n  |\n});", kind: CompleteConfigKey, present: "type", actionType: "incremental"},
		{text: "publish('t', { sch|", kind: CompleteConfigKey, prefix: "sch", actionType: "table"},
		{text: "publish(\"t\", {\n  type: \"vi|\"\n});", kind: CompleteTypeValue, prefix: "vi", quote: '"'},
		{text: "publish(\"t\", {\n  bigquery: {\n    cl|\n  }\n});", kind: CompleteConfigKey, prefix: "cl", object: "bigquery", actionType: "table"},
		{text: "publish(\"t\").config({ tags: [\"x\"], | })", kind: CompleteConfigKey, present: "tags", actionType: "table"},
		{text: "operate(\"o\", { hasO|", kind: CompleteConfigKey, prefix: "hasO", actionType: "operations"},
		{text: "declare({ database: \"p\", | })", kind: CompleteConfigKey, present: "database", actionType: "declaration"},
		{text: "const x = { ty|", kind: CompleteNothing},
		{text: "foo.publish(\"t\", { ty|", kind: CompleteNothing},
		{text: "publish(\"t\", { tags: [\"x\", |", kind: CompleteNothing},
		{text: "publish(\"t\", { description: \"a, |", kind: CompleteNothing},
		// The JiT context, named by the function's first parameter.
		{text: "publish(\"t\").jitCode(async (jctx) => {\n  const x = jctx.|", kind: CompleteJitContext, actionType: "table"},
		{text: "operate(\"o\").jitCode(async function (c) { return c.adapter.getT|", kind: CompleteJitContext, prefix: "getT", object: "adapter", actionType: "operations"},
		{text: "assert(\"a\").jitCode(ctx => ctx.s|)", kind: CompleteJitContext, prefix: "s", actionType: "assertion"},
		{text: "publish(\"t\").jitCode(async (jctx) => \"x\");\njctx.|", kind: CompleteNothing},
		{text: "publish(\"t\").jitCode(async (jctx) => { other.| })", kind: CompleteNothing},
	} {
		i := strings.Index(tc.text, "|")
		src := tc.text[:i] + tc.text[i+1:]
		var x *SQLX
		if tc.sqlx {
			x = ScanSQLX([]byte(src))
		}
		c := CompletionAt([]byte(src), i, x)
		if c.Kind != tc.kind || c.Prefix != tc.prefix || c.Quote != tc.quote || c.Object != tc.object || c.Schema != tc.schema ||
			strings.Join(c.Present, ",") != tc.present || (tc.kind != CompleteNothing && c.ActionType != tc.actionType) {
			t.Errorf("%q: %+v", tc.text, c)
		}
		if c.Kind != CompleteNothing && (c.Replace.End != i || c.Replace.Start != i-len(tc.prefix)) {
			t.Errorf("%q: replace %+v", tc.text, c.Replace)
		}
	}
}

func TestMemberPath(t *testing.T) {
	for text, want := range map[string]string{
		"SELECT r.page.u|":   "r,page/u",
		"SELECT r.page.|":    "r,page/",
		"SELECT r.|x":        "r/",
		"  jctx.adapter.|":   "jctx,adapter/",
		"SELECT page|":       "-",
		"SELECT 1.5|":        "-",
		"SELECT a..|":        "-",
		"${ref(\"t\")}.col|": "-",
	} {
		i := strings.Index(text, "|")
		src := text[:i] + text[i+1:]
		path, partial, ok := MemberPath([]byte(src), i)
		got := "-"
		if ok {
			got = strings.Join(path, ",") + "/" + partial
		}
		if got != want {
			t.Errorf("MemberPath(%q) = %s, want %s", text, got, want)
		}
	}
}

func TestRefAlias(t *testing.T) {
	src := []byte("FROM ${ref(\"a\")} AS x JOIN ${ref(\"b\")} y ON TRUE JOIN ${ref(\"c\")} WHERE 1")
	var got []string
	for _, r := range FindRefs(src) {
		got = append(got, RefAlias(src, r.Span.End))
	}
	if strings.Join(got, ",") != "x,y," {
		t.Errorf("aliases %q", got)
	}
}

var clauseReferenceRE = regexp.MustCompile(`(?i)\b(select|from|where|group|order|having|qualify|limit|union|join|on|window)\b`)

// inSelectListReference is how the LSP server answered before: the last
// clause word of the statement's text with placeholders blanked.
func inSelectListReference(text []byte, x *SQLX, off int) bool {
	start := 0
	if b, ok := x.Config(); ok && b.Span.End <= off {
		start = b.Span.End
	}
	for _, b := range x.Blocks {
		if b.Span.End <= off && b.Span.End > start {
			start = b.Span.End
		}
		if b.Body.Start <= off && off <= b.Body.End && b.Body.Start > start {
			start = b.Body.Start
		}
	}
	for _, sep := range x.Separators {
		if sep.Span.End <= off && sep.Span.End > start {
			start = sep.Span.End
		}
	}
	b := []byte(string(text[start:off]))
	for _, p := range x.Placeholders {
		for i := max(p.Start, start); i < min(p.End, off); i++ {
			b[i-start] = ' '
		}
	}
	ms := clauseReferenceRE.FindAllStringSubmatch(string(b), -1)
	return len(ms) > 0 && strings.EqualFold(ms[len(ms)-1][1], "select")
}

func TestInSelectListMatchesReference(t *testing.T) {
	pieces := append([]string{"SELECT", "select", "FROM", " ", ",", "a", "x_from", "from_x", "${ref(\"t\")}", "${ x }", "\n---\n",
		"WHERE", "On", "config { type: \"view\" }", "pre_operations { SELECT 1 }", "-- from\n", "é"}, sqlxPieces[:10]...)
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 3000; n++ {
		var b strings.Builder
		for k := 1 + r.IntN(14); k > 0; k-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		src := []byte(b.String())
		x := ScanSQLX(src)
		for off := 0; off <= len(src); off++ {
			if got, want := x.InSelectList(src, off), inSelectListReference(src, x, off); got != want {
				t.Fatalf("InSelectList(%q, %d) = %v, want %v", src, off, got, want)
			}
		}
	}
}

// Column completion belongs in the clauses that name columns, including
// a window's ORDER BY and a JOIN's ON, and not in FROM, a JOIN's table or
// LIMIT; ${…} placeholders and keywords inside them do not count.
func TestInColumnClause(t *testing.T) {
	const src = "SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY c) AS n\n" +
		"FROM ${ref(\"t\", {where: 1})} AS t JOIN u ON u.id = t.id\n" +
		"WHERE x GROUP BY y HAVING z QUALIFY q ORDER BY o LIMIT 5"
	x := ScanSQLX([]byte(src))
	for _, c := range []struct {
		at   string
		want bool
	}{
		{"a,", true}, {"b ORDER", true}, {"c)", true}, {"AS t", false}, {"ref(", false},
		{"u ON", false}, {"u.id", true}, {"x GROUP", true}, {"y HAVING", true}, {"z QUALIFY", true},
		{"q ORDER", true}, {"o LIMIT", true}, {"5", false},
	} {
		off := strings.Index(src, c.at)
		if off < 0 {
			t.Fatalf("%q not in the statement", c.at)
		}
		if got := x.InColumnClause([]byte(src), off); got != c.want {
			t.Errorf("at %q: InColumnClause %v (clause %q), want %v", c.at, got, x.ClauseAt([]byte(src), off), c.want)
		}
	}
}
