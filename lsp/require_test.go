package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/source"
)

// Go-to-definition on require() finds the file the engine loads: the
// extensions of source.RequireExtensions in their order, node_modules
// before the project root, a directory's package.json main and index.
func TestRequireDefinitionFollowsTheEngine(t *testing.T) {
	files := map[string]string{
		"definitions/q.sql":                       "SELECT 1",
		"definitions/q.sqlx":                      "SELECT 2",
		"definitions/cfg.yml":                     "a: 1",
		"definitions/cfg.json":                    "{}",
		"definitions/settings.yaml":               "a: 1",
		"definitions/sub/index.sqlx":              "SELECT 3",
		"includes/consts.yaml":                    "a: 1",
		"lib.js":                                  "module.exports = 1;",
		"node_modules/lib/index.js":               "module.exports = 2;",
		"node_modules/pkg/package.json":           `{"main": "src/main"}`,
		"node_modules/pkg/src/main.yml":           "a: 1",
		"definitions/node_modules/local/index.js": "module.exports = 3;",
	}
	uses := []struct{ spec, want string }{
		{"./q", "definitions/q.sql"},
		{"./cfg", "definitions/cfg.yml"},
		{"./settings", "definitions/settings.yaml"},
		{"./sub", "definitions/sub/index.sqlx"},
		{"includes/consts", "includes/consts.yaml"},
		{"lib", "node_modules/lib/index.js"},
		{"pkg", "node_modules/pkg/src/main.yml"},
		{"local", "definitions/node_modules/local/index.js"},
		{"../../outside", ""},
	}
	var js strings.Builder
	for _, u := range uses {
		js.WriteString(`const x = require("` + u.spec + `");` + "\n")
	}
	files["definitions/a.js"] = js.String()
	root := fakeProject(t, files)
	s := startRaw(t, &fakeBackend{}, lspOptions())
	s.initialize(t, root)
	uri := "file://" + filepath.Join(root, "definitions", "a.js")
	for i, u := range uses {
		m := s.c.call("textDocument/definition", map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"position":     map[string]any{"line": i, "character": len(`const x = require("`) + 1},
		})
		if m["error"] != nil {
			t.Fatalf("%s: %v", u.spec, m["error"])
		}
		got := ""
		if locs, ok := m["result"].([]any); ok && len(locs) == 1 {
			got = strings.TrimPrefix(locs[0].(map[string]any)["uri"].(string), "file://"+root+"/")
		}
		if got != u.want {
			t.Errorf("require(%q) goes to %q, want %q (the engine's order: %v)", u.spec, got, u.want, source.RequireExtensions)
		}
	}
}
