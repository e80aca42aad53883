package lsp_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/lsp"
	"go.lsp.dev/jsonrpc2"
)

// TestExperimentalListsEveryMethod: initialize's experimental capabilities
// ({"dfd": {"preview": true, …}}) must name every dfd/ method, since
// clients other than VS Code learn of dfd's requests there (dfd/lineage was
// once missing). The methods are every "dfd/…" constant of the package's
// source, so a new request cannot be left out; each listed request must be
// answered (not MethodNotFound) by a running server, and each notification
// must be one the server sends.
func TestExperimentalListsEveryMethod(t *testing.T) {
	declared := dfdMethodConstants(t)
	if len(declared) < 6 {
		t.Fatalf("found only %d dfd/ method constants in the package: %v", len(declared), declared)
	}
	notifications := map[string]bool{lsp.MethodPreviewChanged: true}

	s := startRaw(t, &fakeBackend{}, lspOptions())
	res := s.c.call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}, "workspaceFolders": []any{}})
	if res["error"] != nil {
		t.Fatalf("initialize: %v", res["error"])
	}
	s.c.notify("initialized", map[string]any{})
	caps, _ := res["result"].(map[string]any)["capabilities"].(map[string]any)
	exp, _ := caps["experimental"].(map[string]any)["dfd"].(map[string]any)
	if exp["protocol"] != "lsp/PROTOCOL.md" {
		t.Errorf("experimental.dfd.protocol = %v", exp["protocol"])
	}
	listed := map[string]bool{}
	for key, v := range exp {
		if key == "protocol" {
			continue
		}
		if v != true {
			t.Errorf("experimental.dfd.%s = %v, want true", key, v)
		}
		listed["dfd/"+key] = true
	}
	for _, m := range declared {
		if !listed[m] {
			t.Errorf("%s is declared in package lsp but missing from the experimental capabilities %v", m, exp)
		}
	}

	// The probe tells an unknown method from a known one.
	if code := errCode(s.c.call("dfd/noSuchMethod", map[string]any{})); code != int(jsonrpc2.MethodNotFound) {
		t.Fatalf("dfd/noSuchMethod: error code %d, want MethodNotFound", code)
	}
	methods := make([]string, 0, len(listed))
	for m := range listed {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	for _, m := range methods {
		code := errCode(s.c.call(m, map[string]any{}))
		switch {
		case notifications[m] && code != int(jsonrpc2.MethodNotFound):
			t.Errorf("%s is a notification (server → client), but the server answered it as a request (code %d)", m, code)
		case !notifications[m] && code == int(jsonrpc2.MethodNotFound):
			t.Errorf("%s is listed in the experimental capabilities but the server does not answer it", m)
		}
	}
}

// dfdMethodConstants returns the values of the package's string constants
// that start with "dfd/" (lsp.MethodPreview, …), read from its source.
func dfdMethodConstants(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatalf("parsing %s: %v", name, err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					if s := constant.StringVal(constant.MakeFromLiteral(lit.Value, lit.Kind, 0)); strings.HasPrefix(s, "dfd/") {
						out = append(out, s)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
