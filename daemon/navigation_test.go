package daemon_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/fakeeditor"
	"github.com/dfdtools/dfd/lsp"
)

func tdpp(path string, pos protocol.Position) protocol.TextDocumentPositionParams {
	return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}, Position: pos}
}

// shopSession opens the shop workspace and waits for its first compile.
func shopSession(t *testing.T) (*session, string) {
	ws := txtarWorkspace(t, "shop.txtar")
	s := startServer(t, serverConfig{})
	s.init(t, ws)
	s.awaitPreviewChanged(t, 0, "/shop")
	return s, filepath.Join(ws, "shop")
}

func TestDefinition(t *testing.T) {
	s, root := shopSession(t)
	def := func(file, marker string, delta int) []protocol.Location {
		t.Helper()
		path := filepath.Join(root, file)
		pos, err := s.ed.Pos(path, marker, delta)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.ed.Server.Definition(s.ctx, &protocol.DefinitionParams{TextDocumentPositionParams: tdpp(path, pos)})
		if err != nil {
			t.Fatalf("definition at %s %q: %v", file, marker, err)
		}
		locs, _ := res.(protocol.LocationSlice)
		return locs
	}
	expect := func(locs []protocol.Location, file string, line uint32, what string) {
		t.Helper()
		if len(locs) != 1 || locs[0].URI != uri.File(filepath.Join(root, file)) || locs[0].Range.Start.Line != line {
			t.Errorf("%s: %+v, want %s:%d", what, locs, file, line+1)
		}
	}
	expect(def("definitions/orders.sqlx", `${ref("raw_orders")}`, 8), "definitions/sources/raw_orders.sqlx", 0, `${ref("raw_orders")}`)
	expect(def("definitions/order_stats.js", `ctx.ref("orders")`, 10), "definitions/orders.sqlx", 0, `ctx.ref("orders")`)
	expect(def("definitions/big_orders.sqlx", `name: "orders"`, 8), "definitions/orders.sqlx", 0, "ref({schema, name})")
	expect(def("definitions/orders.sqlx", "helpers.cents", 9), "includes/helpers.js", 1, "includes function")
	expect(def("definitions/orders.sqlx", "helpers.cents", 2), "includes/helpers.js", 0, "includes file")
	// An action defined in JavaScript: the name in publish("…").
	stats := def("definitions/big_orders.sqlx", `ref(`, 0)
	if len(stats) != 1 {
		t.Errorf("ref( → %+v", stats)
	}
	if locs := def("definitions/orders.sqlx", "SELECT", 2); len(locs) != 0 {
		t.Errorf("definition on plain SQL: %+v", locs)
	}

	// resolve() and require().
	extra := filepath.Join(root, "definitions", "extra.js")
	text := "const h = require(\"../includes/helpers\");\npublish(\"extra\").query(ctx => `SELECT * FROM ${ctx.resolve(\"order_stats\")}`);\n"
	if err := s.ed.OpenText(s.ctx, extra, text); err != nil {
		t.Fatal(err)
	}
	expect(def("definitions/extra.js", "../includes/helpers", 3), "includes/helpers.js", 0, "require")
	expect(def("definitions/extra.js", `resolve("order_stats")`, 10), "definitions/order_stats.js", 0, "resolve in JS")
	if l := def("definitions/extra.js", `resolve("order_stats")`, 10); len(l) == 1 && rangeText(t, filepath.Join(root, "definitions/order_stats.js"), l[0].Range) != "order_stats" {
		t.Errorf("JS definition range covers %q", rangeText(t, filepath.Join(root, "definitions/order_stats.js"), l[0].Range))
	}
}

func TestReferences(t *testing.T) {
	s, root := shopSession(t)
	refs := func(file, marker string, decl bool) []string {
		t.Helper()
		path := filepath.Join(root, file)
		pos, err := s.ed.Pos(path, marker, 0)
		if err != nil {
			t.Fatal(err)
		}
		locs, err := s.ed.Server.References(s.ctx, &protocol.ReferenceParams{TextDocumentPositionParams: tdpp(path, pos),
			Context: protocol.ReferenceContext{IncludeDeclaration: decl}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range locs {
			rel, _ := filepath.Rel(root, uriPath(l.URI))
			out = append(out, rel+":"+strings.TrimSpace(rangeText(t, uriPath(l.URI), l.Range)))
		}
		sort.Strings(out)
		return out
	}
	got := refs("definitions/orders.sqlx", "config", false)
	want := []string{"definitions/big_orders.sqlx:orders", "definitions/order_stats.js:orders"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("references to orders: %v, want %v", got, want)
	}
	got = refs("definitions/order_stats.js", `ctx.ref("orders")`, true)
	if len(got) != 3 || !contains(got, "definitions/orders.sqlx:config") {
		t.Errorf("references from a ref with declaration: %v", got)
	}
}

func TestHover(t *testing.T) {
	s, root := shopSession(t)
	hover := func(file, marker string, delta int) string {
		t.Helper()
		path := filepath.Join(root, file)
		pos, _ := s.ed.Pos(path, marker, delta)
		h, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: tdpp(path, pos)})
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			return ""
		}
		return h.Contents.(*protocol.MarkupContent).Value
	}
	h := hover("definitions/orders.sqlx", `ref("raw_orders")`, 6)
	for _, want := range []string{"raw_orders", "declaration", "acme-raw.landing.raw_orders", "Orders as exported", "order_id", "Order identifier.", "1 dependent"} {
		if !strings.Contains(h, want) {
			t.Errorf("hover on raw_orders lacks %q:\n%s", want, h)
		}
	}
	if h := hover("definitions/orders.sqlx", "helpers.cents", 9); !strings.Contains(h, "function cents(column)") || !strings.Contains(h, "Cents to currency") {
		t.Errorf("hover on an includes function:\n%s", h)
	}
	if h := hover("definitions/orders.sqlx", "SELECT", 1); h != "" {
		t.Errorf("hover on SQL: %q", h)
	}
}

// Hover shows columns from the metadata snapshot.
func TestHoverMetadata(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{editor: fakeeditorConfig(map[string]any{"dfd.metadata.snapshot": snapshotPath()})})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	path := filepath.Join(root, "definitions", "jit", "daily_clicks.js")
	pos, _ := s.ed.Pos(path, `jctx.ref("raw_clicks")`, 11)
	h, err := s.ed.Server.Hover(s.ctx, &protocol.HoverParams{TextDocumentPositionParams: tdpp(path, pos)})
	if err != nil || h == nil {
		t.Fatalf("hover: %v %v", h, err)
	}
	v := h.Contents.(*protocol.MarkupContent).Value
	for _, want := range []string{"Metadata", "clickstream.json", "click_id", "STRING", "page.utm.source", "REPEATED", "First-party cookie id."} {
		if !strings.Contains(v, want) {
			t.Errorf("metadata hover lacks %q:\n%s", want, v)
		}
	}
}

func TestCompletion(t *testing.T) {
	s, root := shopSession(t)
	path := filepath.Join(root, "definitions", "new_report.sqlx")
	text := "config {\n  type: \"table\",\n  \n}\nSELECT * FROM ${ref(\"or\")} JOIN ${helpers.}\n"
	if err := s.ed.OpenText(s.ctx, path, text); err != nil {
		t.Fatal(err)
	}
	complete := func(marker string, delta int) []protocol.CompletionItem {
		t.Helper()
		pos, err := s.ed.Pos(path, marker, delta)
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.ed.Server.Completion(s.ctx, &protocol.CompletionParams{TextDocumentPositionParams: tdpp(path, pos)})
		if err != nil {
			t.Fatal(err)
		}
		list, _ := res.(*protocol.CompletionList)
		if list == nil {
			return nil
		}
		return list.Items
	}
	labels := func(items []protocol.CompletionItem) []string {
		var out []string
		for _, i := range items {
			out = append(out, i.Label)
		}
		sort.Strings(out)
		return out
	}
	names := labels(complete(`ref("or`, 7))
	for _, want := range []string{"orders", "order_stats", "raw_orders"} {
		if !contains(names, want) {
			t.Errorf("ref completion lacks %s: %v", want, names)
		}
	}
	if contains(names, "new_report") {
		t.Errorf("ref completion offers the file's own action: %v", names)
	}
	keys := labels(complete("  \n}", 2))
	if !contains(keys, "description") || !contains(keys, "partitionBy") || contains(keys, "uniqueKey") || contains(keys, "hasOutput") {
		t.Errorf("config keys of a table: %v", keys)
	}
	types := labels(complete(`"table"`, 3))
	if !contains(types, "incremental") || !contains(types, "operations") {
		t.Errorf("type values: %v", types)
	}
	members := labels(complete("helpers.}", 8))
	if strings.Join(members, ",") != "CURRENCY,cents" {
		t.Errorf("includes members: %v", members)
	}
}

func TestSymbolsAndCodeLens(t *testing.T) {
	s, root := shopSession(t)
	orders := filepath.Join(root, "definitions", "orders.sqlx")
	res, err := s.ed.Server.DocumentSymbol(s.ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(orders)}})
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := res.(protocol.DocumentSymbolSlice)
	if len(syms) != 1 || syms[0].Name != "orders" || syms[0].Kind != protocol.SymbolKindStruct || len(syms[0].Children) != 1 || syms[0].Children[0].Name != "config" {
		t.Errorf("document symbols of orders.sqlx: %+v", syms)
	}
	stats := filepath.Join(root, "definitions", "order_stats.js")
	res, _ = s.ed.Server.DocumentSymbol(s.ctx, &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(stats)}})
	if syms, _ := res.(protocol.DocumentSymbolSlice); len(syms) != 1 || syms[0].Name != "order_stats" || syms[0].Kind != protocol.SymbolKindInterface {
		t.Errorf("document symbols of order_stats.js: %+v", res)
	}

	ws, err := s.ed.Server.Symbols(s.ctx, &protocol.WorkspaceSymbolParams{Query: "ord"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, si := range ws.(protocol.SymbolInformationSlice) {
		names = append(names, si.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "big_orders,order_stats,orders,raw_orders" {
		t.Errorf("workspace symbols for ord: %v", names)
	}

	lenses, err := s.ed.Server.CodeLens(s.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(orders)}})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, l := range lenses {
		titles = append(titles, l.Command.Title)
	}
	if strings.Join(titles, "|") != "Preview SQL|2 dependents" || lenses[0].Command.Command != lsp.CommandShowPreview {
		t.Errorf("code lenses: %v", titles)
	}
}

// JiT actions get a JiT code lens.
func TestJitCodeLens(t *testing.T) {
	root := jitWorkspace(t)
	s := startServer(t, serverConfig{})
	s.init(t, root)
	s.awaitPreviewChanged(t, 0, "")
	lenses, err := s.ed.Server.CodeLens(s.ctx, &protocol.CodeLensParams{TextDocument: protocol.TextDocumentIdentifier{
		URI: uri.File(filepath.Join(root, "definitions", "jit", "daily_clicks.js"))}})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, l := range lenses {
		titles = append(titles, l.Command.Title)
	}
	if !contains(titles, "⚡ JiT") || lenses[0].Range.Start.Line != 1 {
		t.Errorf("lenses of a JiT action: %v at %v", titles, lenses[0].Range)
	}
}

var _ = fakeeditor.Message
