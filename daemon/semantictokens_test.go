package daemon_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Semantic tokens (issue 15 item 4) through the fake editor against the
// real server: what an editor without the extension's grammar (Neovim,
// Helix, Zed) colours in a SQLX file and a project's .js file.

// semToken is a decoded token: its text, "type+modifier+…", and where.
type semToken struct {
	text, kind string
	line       int
}

func (tk semToken) String() string { return tk.text + ":" + tk.kind }

func TestSemanticTokens(t *testing.T) {
	root := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	path := filepath.Join(root, "definitions", "marts", "highlighted.sqlx")
	text := "config {\n  type: \"view\", // why\n  tags: [\"x\"],\n}\n" +
		"js {\n  const n = 3;\n}\n" +
		"-- c 😀\n" +
		"SELECT 'x' AS a, COUNT(*) AS n, `p.d.t` FROM ${ref(\"dim_customers\")}\n" +
		"WHERE d > 1.5 /* 😀 and\n more */ AND s = '${self()}'\n" +
		"---\nSELECT 2\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, serverConfig{})
	res, err := s.ed.Initialize(s.ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	opts, ok := res.Capabilities.SemanticTokensProvider.(*protocol.SemanticTokensOptions)
	if !ok {
		t.Fatalf("semanticTokensProvider %#v: want options with a legend", res.Capabilities.SemanticTokensProvider)
	}
	if opts.Full != protocol.Boolean(true) || opts.Range != protocol.Boolean(true) {
		t.Errorf("semanticTokensProvider full %v, range %v: want both", opts.Full, opts.Range)
	}
	legend := opts.Legend
	if !slices.Contains(legend.TokenTypes, "keyword") || !slices.Contains(legend.TokenModifiers, "defaultLibrary") {
		t.Fatalf("legend %+v", legend)
	}

	// tokens asks for the tokens of path (all, or of lines [from, to))
	// and decodes them against the editor's text.
	tokens := func(path string, lines ...int) ([]semToken, string) {
		t.Helper()
		method, params := protocol.MethodTextDocumentSemanticTokensFull, map[string]any{"textDocument": map[string]any{"uri": uri.File(path)}}
		if len(lines) == 2 {
			method = protocol.MethodTextDocumentSemanticTokensRange
			params["range"] = protocol.Range{Start: protocol.Position{Line: uint32(lines[0])}, End: protocol.Position{Line: uint32(lines[1])}}
		}
		var raw json.RawMessage
		if err := s.ed.Call(s.ctx, method, params, &raw); err != nil {
			t.Fatalf("%s %s: %v", method, filepath.Base(path), err)
		}
		var got struct {
			Data []uint32 `json:"data"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Data == nil || len(got.Data)%5 != 0 {
			t.Fatalf("%s %s: %s (%v)", method, filepath.Base(path), raw, err)
		}
		body := s.ed.Text(path)
		if body == "" {
			b, _ := os.ReadFile(path)
			body = string(b)
		}
		var out []semToken
		line, char := 0, 0
		for i := 0; i < len(got.Data); i += 5 {
			d := got.Data[i : i+5]
			if d[0] > 0 {
				line, char = line+int(d[0]), 0
			}
			char += int(d[1])
			r := protocol.Range{Start: protocol.Position{Line: uint32(line), Character: uint32(char)}, End: protocol.Position{Line: uint32(line), Character: uint32(char) + d[2]}}
			kind := legend.TokenTypes[d[3]]
			for bit, m := range legend.TokenModifiers {
				if d[4]&(1<<bit) != 0 {
					kind += "+" + m
				}
			}
			out = append(out, semToken{rangeTextOf(body, r), kind, line})
		}
		return out, string(raw)
	}
	has := func(t *testing.T, got []semToken, want ...string) {
		t.Helper()
		set := map[string]bool{}
		for _, tk := range got {
			set[tk.String()] = true
		}
		for _, w := range want {
			if !set[w] {
				t.Errorf("no token %s in %v", w, got)
			}
		}
	}

	if err := s.ed.Open(s.ctx, path); err != nil {
		t.Fatal(err)
	}
	t.Run("sqlx", func(t *testing.T) {
		got, _ := tokens(path)
		has(t, got, "config:keyword", "type:property", `"view":string`, "// why:comment", "tags:property",
			"js:keyword", "const:keyword", "n:variable+declaration+readonly", "3:number",
			"-- c 😀:comment", // UTF-16: the emoji is two units
			"SELECT:keyword", "'x':string", "COUNT:function+defaultLibrary", "*:operator", "`p.d.t`:variable",
			"${:macro", "ref:function+defaultLibrary", `"dim_customers":string`, "}:macro",
			"1.5:number", "/* 😀 and:comment", " more */:comment", "self:function+defaultLibrary",
			"---:keyword", "2:number")
		// The string around a placeholder is string on either side of it.
		quote := strings.Index(text, "'${self()}'")
		var around []string
		for _, tk := range got {
			if tk.line == strings.Count(text[:quote], "\n") && tk.text != "AND" && tk.text != "=" {
				around = append(around, tk.String())
			}
		}
		if want := []string{" more */:comment", "':string", "${:macro", "self:function+defaultLibrary", "}:macro", "':string"}; fmt.Sprint(around) != fmt.Sprint(want) {
			t.Errorf("the line of '${self()}': %v, want %v", around, want)
		}
	})
	t.Run("range", func(t *testing.T) {
		sel := strings.Count(text[:strings.Index(text, "SELECT")], "\n")
		got, _ := tokens(path, sel, sel+1)
		if len(got) == 0 {
			t.Fatal("no tokens in the range")
		}
		for _, tk := range got {
			if tk.line != sel {
				t.Errorf("token %s on line %d, outside the range (line %d)", tk, tk.line, sel)
			}
		}
		has(t, got, "SELECT:keyword", "ref:function+defaultLibrary")
	})
	t.Run("fixture", func(t *testing.T) {
		got, _ := tokens(filepath.Join(root, "definitions", "marts", "fct_orders.sqlx"))
		has(t, got, "pre_operations:keyword", "post_operations:keyword", "DECLARE:keyword", "when:function+defaultLibrary",
			"incremental:function+defaultLibrary", "ROUND:function+defaultLibrary", "VAT_RATE:property",
			"partitionBy:property", `"DATE(ordered_at)":string`, "ALTER:keyword", "OPTIONS:keyword")
	})
	t.Run("js", func(t *testing.T) {
		got, _ := tokens(filepath.Join(root, "includes", "sql.js"))
		has(t, got, "// Small SQL-generating helpers used from SQLX files.:comment", "function:keyword",
			"centsToAmount:function+declaration", "return:keyword", "${:operator", "map:method", "v:parameter",
			"dataform:variable+defaultLibrary", "module:variable+defaultLibrary", "exports:property")
	})
	t.Run("unclosed block", func(t *testing.T) {
		p := filepath.Join(root, "definitions", "open.sqlx")
		if err := s.ed.OpenText(s.ctx, p, "config { type: \"view\",\n  description: `open"); err != nil {
			t.Fatal(err)
		}
		got, _ := tokens(p)
		want := []string{"config:keyword", "type:property", `"view":string`, "description:property", "`open:string"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("tokens %v, want %v", got, want)
		}
	})
	t.Run("empty and other files", func(t *testing.T) {
		for rel, text := range map[string]string{
			"definitions/empty.sqlx":       "",
			"notes.txt":                    "SELECT 1 -- not Dataform's",
			"node_modules/x/index.js":      "const x = 1;", // the editor's own JavaScript
			"definitions/schema.yaml":      "name: x",
			"definitions/blank_lines.sqlx": "\n\n\n",
		} {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := s.ed.OpenText(s.ctx, p, text); err != nil {
				t.Fatal(err)
			}
			if got, raw := tokens(p); len(got) != 0 || !strings.Contains(raw, `"data":[]`) {
				t.Errorf("%s: %s, want no tokens ([], not null)", rel, raw)
			}
		}
	})
}
