package lsp

import (
	"testing"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

func applyEdits(text string, edits []workspace.Edit) string {
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		text = text[:e.Span.Start] + e.NewText + text[e.Span.End:]
	}
	return text
}

// Columns are added after those already written, each config's own
// layout kept: comments stay on their lines, a trailing comma stays a
// trailing comma, a one-line object stays on one line.
func TestAddColumnFields(t *testing.T) {
	lines := []string{`name: "buyer"`, `amount: ""`}
	for _, tc := range []struct{ name, in, want string }{
		{
			"trailing comma and a comment",
			"config {\n  type: \"view\",\n  columns: {\n    id: \"kept\", // mine\n  },\n}\nSELECT 1",
			"config {\n  type: \"view\",\n  columns: {\n    id: \"kept\", // mine\n    name: \"buyer\",\n    amount: \"\",\n  },\n}\nSELECT 1",
		},
		{
			"no trailing comma",
			"config {\n  columns: {\n    id: \"kept\" /* x, y */\n  }\n}\n",
			"config {\n  columns: {\n    id: \"kept\", /* x, y */\n    name: \"buyer\",\n    amount: \"\"\n  }\n}\n",
		},
		{
			"one line",
			"config { columns: { id: \"kept\" } }\n",
			"config { columns: { id: \"kept\", name: \"buyer\", amount: \"\" } }\n",
		},
		{
			"empty object",
			"config {\n  columns: {},\n}\n",
			"config {\n  columns: {\n    name: \"buyer\",\n    amount: \"\"\n  },\n}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok := source.SQLXConfig([]byte(tc.in))
			if !ok {
				t.Fatal("no config")
			}
			cols, _ := cfg.Field("columns")
			fi := indentOf([]byte(tc.in), cfg.Fields, "  ")
			got := applyEdits(tc.in, addFields([]byte(tc.in), cols.Value, lines, indentOf([]byte(tc.in), cols.Value.Fields, fi+"  "), fi))
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	// Without columns, a columns object is added to the config.
	in := "config {\n  type: \"table\"\n}\nSELECT 1\n"
	cfg, _ := source.SQLXConfig([]byte(in))
	block := "columns: {\n" + prefixAll(lines, "    ", ",\n") + "\n  }"
	want := "config {\n  type: \"table\",\n  columns: {\n    name: \"buyer\",\n    amount: \"\"\n  }\n}\nSELECT 1\n"
	if got := applyEdits(in, addFields([]byte(in), cfg, []string{block}, "  ", "")); got != want {
		t.Errorf("no columns yet:\n%s\nwant:\n%s", got, want)
	}
	if jsKey("a b") != `"a b"` || jsKey("_x1") != "_x1" {
		t.Error("jsKey")
	}
}
