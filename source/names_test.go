package source

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// uses renders the name uses of a scan as "kind db.schema.name@text"
// (the text the name span covers), sorted.
func usesOf(text string, fn *FileNames) []string {
	var out []string
	for _, u := range fn.Uses {
		ed := ""
		if !u.Editable {
			ed = " (not editable)"
		}
		out = append(out, fmt.Sprintf("%s %s.%s.%s@%s%s owner=%d", u.Kind, u.Database.Value, u.Schema.Value, u.Name.Value, text[u.Name.Span.Start:u.Name.Span.End], ed, u.Owner))
	}
	sort.Strings(out)
	return out
}

func computedOf(text string, fn *FileNames) []string {
	var out []string
	for _, c := range fn.Computed {
		out = append(out, c.What+" "+text[c.Span.Start:c.Span.End])
	}
	sort.Strings(out)
	return out
}

func TestScanNamesJavaScript(t *testing.T) {
	src := `// ref("in_a_comment") is not a reference
const note = "ref('in_a_string')";
publish("orders", {
  type: "table",
  dependencies: ["a", "s.b", "db.s.c", { name: "d", schema: "s2" }, someVar],
}).query(ctx => ` + "`" + `SELECT * FROM ${ctx.ref("e")} JOIN ${ctx.ref("s", "f")} -- ref("in_sql")
  JOIN ${ctx.resolve({schema: "s3", name: "g"})} JOIN ${ref(["s4", "h"])} JOIN ${ctx.ref("d1", "s5", "i")}` + "`" + `)
  .dependencies("j");
assert("check").query(ctx => ctx.ref(name)).dependencies([x]);
declare({ database: "db", schema: "raw", name: "src" });
Promise.resolve("not_dataform");
function ref(x) { return x; }
test("t1").dataset("orders").input("a", "SELECT 1");
publish(events.name("k"), {}).query(ctx => ctx.ref("l"));
`
	fn := ScanNames("definitions/x.js", []byte(src))
	got := usesOf(src, fn)
	for _, w := range []string{
		"dependency ..a@a owner=0", "dependency .s.b@b owner=0", "dependency db.s.c@c owner=0", "dependency .s2.d@d owner=0",
		"dependency ..j@j owner=0", "ref() ..e@e owner=0", "ref() .s.f@f owner=0", "resolve() .s3.g@g owner=0",
		"ref() .s4.h@h owner=0", "ref() d1.s5.i@i owner=0", "test dataset ..orders@orders owner=3", "test input ..a@a owner=3",
		"ref() ..l@l owner=4",
	} {
		if !contains(got, w) {
			t.Errorf("missing use %q in\n  %s", w, strings.Join(got, "\n  "))
		}
	}
	for _, g := range got {
		for _, bad := range []string{"in_a_comment", "in_a_string", "in_sql", "not_dataform", "..x@"} {
			if strings.Contains(g, bad) {
				t.Errorf("not a reference, but found: %s", g)
			}
		}
	}
	comp := computedOf(src, fn)
	for _, w := range []string{"dependency someVar", "ref() ctx.ref(name)", "dependency x"} {
		if !contains(comp, w) {
			t.Errorf("missing computed %q in %q", w, comp)
		}
	}
	defs := map[string]ActionDef{}
	for _, d := range fn.Defs {
		defs[d.Func+":"+d.Name.Value] = d
	}
	if d, ok := defs["publish:orders"]; !ok || !d.Editable || d.Type != "table" || src[d.Name.Span.Start:d.Name.Span.End] != "orders" {
		t.Errorf("publish(orders) definition: %+v", d)
	}
	if d, ok := defs["declare:src"]; !ok || d.Schema.Value != "raw" || d.Database.Value != "db" {
		t.Errorf("declare definition: %+v", d)
	}
	if d, ok := defs["publish:"]; !ok || !d.NameComputed {
		t.Errorf("a computed publish name: %+v", defs)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestScanNamesSQLX(t *testing.T) {
	src := `config {
  type: "test",
  dataset: "orders",
  dependencies: ["a"],
  tags: ["ref(\"nope\")"],
}
js { const x = ref("b"); }
input "c", "d" {
  SELECT 1 -- ${ref("e")} is a placeholder even in a comment? no: comments end placeholders' scope
}
SELECT ref("not_js") FROM ${ref("f")} WHERE x = '${resolve("g")}'
`
	fn := ScanNames("definitions/t.sqlx", []byte(src))
	got := usesOf(src, fn)
	for _, w := range []string{"test dataset ..orders@orders owner=0", "dependency ..a@a owner=0", "ref() ..b@b owner=0",
		"test input ..c@c owner=0", "test input ..d@d owner=0", "ref() ..f@f owner=0", "resolve() ..g@g owner=0"} {
		if !contains(got, w) {
			t.Errorf("missing %q in\n  %s", w, strings.Join(got, "\n  "))
		}
	}
	for _, g := range got {
		if strings.Contains(g, "not_js") || strings.Contains(g, "nope") {
			t.Errorf("not a reference: %s", g)
		}
	}
	d := fn.Defs[0]
	if !d.FromFile || d.Name.Value != "t" || d.Type != "test" {
		t.Errorf("definition: %+v", d)
	}
	named := ScanNames("definitions/u.sqlx", []byte("config { type: \"view\", name: \"v\" }\nSELECT 1"))
	if d := named.Defs[0]; d.FromFile || d.Name.Value != "v" || !d.Editable {
		t.Errorf("named SQLX definition: %+v", d)
	}
}

func TestScanNamesJitCodeString(t *testing.T) {
	src := "operate(\"op\", { dependencyTargets: [{ name: \"c\" }] }).jitCode(\"async (jctx) => ({ queries: [`SELECT * FROM ${jctx.ref(\\\"c\\\")}`] })\");\n"
	fn := ScanNames("definitions/o.js", []byte(src))
	got := usesOf(src, fn)
	if !contains(got, "ref() ..c@c owner=0") || !contains(got, "dependency ..c@c owner=0") {
		t.Errorf("uses in JiT code given as a string: %q", got)
	}
}

func TestDuplicateKeys(t *testing.T) {
	src := `config {
  type: "table",
  tags: ["a"],
  description: "x",
  tags: ["b"],
  bigquery: { partitionBy: "d", clusterBy: ["c"], partitionBy: "e" }
}
SELECT 1`
	fn := ScanNames("definitions/d.sqlx", []byte(src))
	if len(fn.Duplicates) != 2 {
		t.Fatalf("duplicates: %+v", fn.Duplicates)
	}
	var after []string
	for _, d := range fn.Duplicates {
		after = append(after, src[:d.Remove.Start]+src[d.Remove.End:])
	}
	if !strings.Contains(after[0], "config {\n  type: \"table\",\n  description: \"x\",\n  tags: [\"b\"],") {
		t.Errorf("removing the first tags:\n%s", after[0])
	}
	if !strings.Contains(after[1], `bigquery: { clusterBy: ["c"], partitionBy: "e" }`) {
		t.Errorf("removing the first partitionBy:\n%s", after[1])
	}
	js := ScanNames("definitions/d.js", []byte(`publish("p", { type: "view", type: "table" });`))
	if len(js.Duplicates) != 1 || js.Duplicates[0].Key != "type" {
		t.Errorf("JavaScript duplicates: %+v", js.Duplicates)
	}
}

func TestDependencyEdit(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`publish("p", { type: "table", dependencies: ["a"] }).jitCode(f);`, `publish("p", { type: "table", dependencies: ["a", "x"] }).jitCode(f);`},
		{`publish("p", { dependencyTargets: [{ name: "a" }] }).jitCode(f);`, `publish("p", { dependencyTargets: [{ name: "a" }, { name: "x" }] }).jitCode(f);`},
		{`publish("p", { type: "table" }).jitCode(f);`, `publish("p", { type: "table", dependencies: ["x"] }).jitCode(f);`},
		{"publish(\"p\", {\n  type: \"table\",\n}).jitCode(f);", "publish(\"p\", {\n  type: \"table\",\n  dependencies: [\"x\"]\n}).jitCode(f);"},
		{"publish(\"p\", {\n  type: \"table\"\n}).jitCode(f);", "publish(\"p\", {\n  type: \"table\",\n  dependencies: [\"x\"]\n}).jitCode(f);"},
		{`publish("p").jitCode(f);`, `publish("p").dependencies(["x"]).jitCode(f);`},
		{`publish("p", { dependencies: [] }).jitCode(f);`, `publish("p", { dependencies: ["x"] }).jitCode(f);`},
	} {
		fn := ScanNames("definitions/p.js", []byte(tc.src))
		at, text, ok := DependencyEdit(fn.Defs[0].Deps, "", "x")
		got := tc.src[:at] + text + tc.src[at:]
		if !ok || got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}

func TestScanActionsYAML(t *testing.T) {
	src := `actions:
  - declaration:
      dataset: raw
      name: "src"
  - table:
      filename: marts/t.sql
      dependencyTargets:
        - name: src
          dataset: raw
        - name: 'other'
  - view:
      filename: v.sql
      name: named_view
`
	es := ScanActionsYAML([]byte(src))
	if len(es) != 3 {
		t.Fatalf("entries: %+v", es)
	}
	span := func(sa StringArg) string { return src[sa.Span.Start:sa.Span.End] }
	if e := es[0]; !e.HasName || e.ActionName() != "src" || span(e.Name) != "src" || !e.NameEditable || e.Dataset.Value != "raw" {
		t.Errorf("declaration: %+v", e)
	}
	if e := es[1]; e.HasName || e.ActionName() != "t" || span(e.FileName) != "marts/t.sql" || len(e.Deps) != 2 ||
		span(e.Deps[0].Name) != "src" || e.Deps[0].Schema.Value != "raw" || span(e.Deps[1].Name) != "other" {
		t.Errorf("table: %+v", e)
	}
	if e := es[2]; e.ActionName() != "named_view" {
		t.Errorf("view: %+v", e)
	}
}

func TestRenameIncludeMember(t *testing.T) {
	src := `const RATE = 0.2;
function price(x) { return x * RATE; }
function other(RATE) { return RATE; }
module.exports = { RATE, price };
`
	r := RenameIncludeMember([]byte(src), "RATE", "VAT")
	if !r.Declared || !r.Exported || len(r.Shadowed) != 1 {
		t.Errorf("RATE shadowed by a parameter: %+v", r)
	}
	r = RenameIncludeMember([]byte(src), "price", "cost")
	if !r.Declared || !r.Exported || len(r.Shadowed) != 0 || len(r.Taken) != 0 || len(r.Edits) != 2 {
		t.Fatalf("price: %+v", r)
	}
	if r := RenameIncludeMember([]byte(src), "price", "other"); len(r.Taken) == 0 {
		t.Errorf("renaming to a name in use is not flagged: %+v", r)
	}
	src2 := "exports.f = () => 1;\nconst o = { f: 2, g };\nmodule.exports.g = 3;\n"
	r = RenameIncludeMember([]byte(src2), "f", "h")
	if r.Declared || !r.Exported || len(r.Edits) != 1 {
		t.Errorf("exports.f: %+v", r)
	}
	decls := IncludeDecls([]byte(src))
	for _, n := range []string{"RATE", "price", "other"} {
		if _, ok := decls[n]; !ok {
			t.Errorf("IncludeDecls misses %s: %v", n, decls)
		}
	}
	uses := ScanIncludeUses("definitions/a.sqlx", []byte("config { schema: consts.RAW }\nSELECT ${consts.PRICE} -- consts.IN_SQL\n${consts[\"X\"]}"),
		func(n string) bool { return n == "consts" })
	var members []string
	for _, u := range uses.Uses {
		members = append(members, u.Member)
	}
	if strings.Join(members, ",") != "RAW,PRICE" || len(uses.Dynamic) != 1 {
		t.Errorf("includes uses: %v, dynamic %+v", members, uses.Dynamic)
	}
}
