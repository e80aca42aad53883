package lsp_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/workspace"
)

// completionLabels opens path with text (| is the cursor) and returns the
// labels completion offers there, sorted.
func completionLabels(t *testing.T, s *rawSession, root, rel, text string) []string {
	t.Helper()
	i := strings.Index(text, "|")
	src := text[:i] + text[i+1:]
	u := "file://" + root + "/" + rel
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": src}})
	line := strings.Count(src[:i], "\n")
	char := i - (strings.LastIndexByte(src[:i], '\n') + 1)
	res := s.c.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": u}, "position": map[string]any{"line": line, "character": char}})
	s.c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": u}})
	if res["error"] != nil {
		t.Fatalf("completion in %s: %v", rel, res["error"])
	}
	var out []string
	for _, it := range res["result"].(map[string]any)["items"].([]any) {
		out = append(out, it.(map[string]any)["label"].(string))
	}
	sort.Strings(out)
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// What completion offers where issue 12 found nothing or the wrong thing.
func TestCompletionCases(t *testing.T) {
	b := &fakeBackend{tables: map[string]*workspace.TableInfo{
		"events": {Source: "fake", Columns: []workspace.Column{
			{Name: "user_id", Type: "STRING"}, {Name: "page", Type: "STRUCT"},
			{Name: "page.url", Type: "STRING"}, {Name: "page.title", Type: "STRING"},
			{Name: "page.referrer", Type: "STRUCT"}, {Name: "page.referrer.host", Type: "STRING"},
			{Name: "items", Type: "ARRAY<STRUCT>"}, {Name: "items.sku", Type: "STRING"}, {Name: "items.qty", Type: "INT64"},
			{Name: "items.lines", Type: "ARRAY<STRUCT>"}, {Name: "items.lines.n", Type: "INT64"},
		}},
	}}
	s := startRaw(t, b, lspOptions())
	root := fakeProject(t, map[string]string{
		"definitions/events.sqlx": "SELECT 1",
		"definitions/orders.sqlx": "SELECT 1",
	})
	s.initialize(t, root)
	if res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": "file://" + root + "/definitions/events.sqlx"}}); res["error"] != nil {
		t.Fatal(res)
	}
	for _, tc := range []struct {
		name, rel, text string
		want, not       []string
		exactly         string // comma-separated, when set
	}{
		{name: "config keys already present are not offered again", rel: "definitions/c.sqlx",
			text: "config {\n  type: \"table\",\n  description: \"d\",\n  |\n  tags: [\"x\"]\n}\nSELECT 1",
			want: []string{"schema", "partitionBy"}, not: []string{"type", "description", "tags", "materialized"}},
		{name: "nested objects have their own keys", rel: "definitions/c.sqlx",
			text: "config {\n  type: \"table\",\n  bigquery: { partitionBy: \"d\", | }\n}\nSELECT 1",
			want: []string{"clusterBy", "labels"}, not: []string{"partitionBy", "type"}},
		{name: "the second argument of ref(schema, name)", rel: "definitions/c.sqlx",
			text: "SELECT * FROM ${ref(\"s\", \"|\")}", exactly: "events,orders"},
		{name: "a schema with no actions", rel: "definitions/c.sqlx",
			text: "SELECT * FROM ${ref(\"elsewhere\", \"|\")}", exactly: ""},
		{name: "publish's config object in JavaScript", rel: "definitions/p.js",
			text: "publish(\"p\", {\n  type: \"view\",\n  |\n});",
			want: []string{"materialized", "schema", "description"}, not: []string{"type", "protected", "uniqueKey"}},
		{name: "operate's config, without type", rel: "definitions/p.js",
			text: "operate(\"o\", { hasOutput: true, | })", want: []string{"tags", "dependencies"}, not: []string{"type", "hasOutput", "partitionBy"}},
		{name: "jctx members in JiT code", rel: "definitions/j.js",
			text: "publish(\"j\").jitCode(async (jctx) => {\n  return `SELECT * FROM ${jctx.|}`;\n});",
			want: []string{"adapter", "self", "ref", "resolve", "when", "incremental", "data", "executionData"}},
		{name: "jctx.adapter methods", rel: "definitions/j.js",
			text:    "operate(\"o\").jitCode(async (ctx) => {\n  const t = await ctx.adapter.|\n});",
			exactly: "deleteTable,execute,getTable,listTables"},
		{name: "a STRUCT column's fields after alias.column.", rel: "definitions/c.sqlx",
			text: "SELECT r.page.| FROM ${ref(\"events\")} r", exactly: "referrer,title,url"},
		{name: "the variables pre_operations DECLARE, in a column clause", rel: "definitions/v.sqlx",
			text:    "pre_operations {\n  DECLARE since DEFAULT CURRENT_DATE();\n  DECLARE lo, user_id INT64;\n}\nSELECT user_id FROM ${ref(\"events\")} WHERE |",
			want:    []string{"since", "lo", "user_id", "page"},
			exactly: "items,lo,page,since,user_id"},
		{name: "variables without a ref'd table", rel: "definitions/v.sqlx",
			text: "pre_operations {\n  DECLARE since DATE;\n}\nSELECT |", exactly: "since"},
		{name: "deeper fields", rel: "definitions/c.sqlx",
			text: "SELECT r.page.referrer.| FROM ${ref(\"events\")} r", exactly: "host"},
		{name: "a STRUCT column's fields without an alias", rel: "definitions/c.sqlx",
			text: "SELECT page.| FROM ${ref(\"events\")}", exactly: "referrer,title,url"},
		{name: "top-level columns after alias.", rel: "definitions/c.sqlx",
			text: "SELECT r.| FROM ${ref(\"events\")} r", exactly: "items,page,user_id"},
		{name: "the elements' fields after an UNNEST's alias", rel: "definitions/c.sqlx",
			text: "SELECT i.| FROM ${ref(\"events\")} r, UNNEST(r.items) AS i", exactly: "lines,qty,sku"},
		{name: "an UNNEST of an UNNEST, without AS, and WITH OFFSET", rel: "definitions/c.sqlx",
			text: "SELECT l.| FROM ${ref(\"events\")} r CROSS JOIN UNNEST(r.items) i WITH OFFSET CROSS JOIN UNNEST(i.lines) l", exactly: "n"},
		{name: "an UNNEST of a column without the table's alias", rel: "definitions/c.sqlx",
			text: "SELECT it.| FROM ${ref(\"events\")}, UNNEST(items) it", exactly: "lines,qty,sku"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := completionLabels(t, s, root, tc.rel, tc.text)
			if tc.exactly != "" || tc.want == nil {
				if strings.Join(got, ",") != tc.exactly {
					t.Errorf("got %q, want exactly %q", got, tc.exactly)
				}
			}
			for _, w := range tc.want {
				if !has(got, w) {
					t.Errorf("%q not offered: %q", w, got)
				}
			}
			for _, n := range tc.not {
				if has(got, n) {
					t.Errorf("%q offered: %q", n, got)
				}
			}
		})
	}
}

// dfd/preview shows an AoT action's SQL from its first line that is not
// blank: core keeps the line breaks between a SQLX config block and the
// SQL in the compiled query.
func TestPreviewTrimsLeadingBlankLines(t *testing.T) {
	s := startRaw(t, &fakeBackend{}, lspOptions())
	root := fakeProject(t, map[string]string{"definitions/a.sqlx": "SELECT 1"})
	s.initialize(t, root)
	u := "file://" + root + "/definitions/a.sqlx"
	text := "\n  \n\n  SELECT 1\n\nFROM x\n"
	s.c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": "sqlx", "version": 1, "text": text}})
	res := s.c.call("dfd/preview", map[string]any{"textDocument": map[string]any{"uri": u}})
	q := res["result"].(map[string]any)["actions"].([]any)[0].(map[string]any)["sql"].(map[string]any)["query"]
	if q != "  SELECT 1\n\nFROM x\n" {
		t.Errorf("preview query %s", fmt.Sprintf("%q", q))
	}
}
