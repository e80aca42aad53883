// Package layers holds the test of who may import whom in dfd (see
// docs/architecture.md): each package may import only the packages of
// dfd its rule lists, so that the LSP server never sees BigQuery or the
// engine, the workspace never speaks LSP, and the bottom packages stay
// free of everything above them.
package layers

import (
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/dfdtools/dfd/"

// rules: a package (or, with a trailing "/...", a tree) → the dfd packages
// (or trees) it may import. A package without a rule may import nothing of
// dfd's. Tests are not checked: they may import helpers from anywhere.
var rules = map[string][]string{
	"source":           nil,
	"source/highlight": {"source"}, // semantic tokens' lexers: no BigQuery analyzer, no LSP
	"settings":         nil,
	"gsql":             nil,
	"project":          {"internal/regfile"},
	"engine":           {"source", "internal/regfile"}, // the CLI's require extensions (source.RequireExtensions)

	"protos":            nil, // go generate only
	"protos/dataformpb": nil,
	"settings/gen":      nil,
	"gsql/gen/...":      nil,     // go generate only: the function-name list
	"lsp/gen":           {"lsp"}, // go generate only: TypeScript types from lsp's result types
	"graphjson":         {"protos/dataformpb"},

	"adapters":             {"protos/dataformpb"},
	"adapters/credentials": nil,
	"adapters/offline":     {"adapters", "protos/dataformpb"},
	"adapters/cache":       {"adapters", "protos/dataformpb"},
	"adapters/bigquery":    {"adapters", "protos/dataformpb"},
	"adapters/policy":      {"adapters", "gsql", "protos/dataformpb"},
	"adapters/connect":     {"adapters/...", "gsql", "protos/dataformpb"},
	"adapters/drycost":     {"adapters", "protos/dataformpb"}, // dry-run figures: any Verifier (policy-wrapped BigQuery)
	"adapters/rows":        {"adapters", "adapters/policy", "gsql", "protos/dataformpb"},

	"compile":        {"engine", "project", "protos/dataformpb", "internal/heapwatch"},
	"jit/wirepb":     nil,
	"jit/wire":       {"jit/wirepb"},
	"jit":            {"engine", "jit/wire", "jit/wirepb", "internal/heapwatch"},
	"jit/nodeworker": {"engine", "jit/...", "internal/heapwatch"},

	"sqlcheck":  {"gsql", "source", "adapters", "protos/dataformpb"},
	"sqlxfmt":   {"gsql", "source"}, // dfd format: GoogleSQL's formatter on SQLX's SQL parts
	"workspace": {"source", "project", "settings", "internal/regfile"},
	"lsp":       {"workspace", "source", "source/highlight", "settings", "internal/regfile"},

	"changes": {"gsql", "sqlcheck", "protos/dataformpb"}, // dfd diff: two revisions' graphs and analyses compared

	"daemon":  {"lsp", "workspace", "source", "settings", "compile", "engine", "jit/...", "adapters/...", "gsql", "sqlcheck", "sqlxfmt", "changes", "project", "protos/dataformpb", "internal/regfile"},
	"cmd/...": {"..."},

	// heapwatch ships (the compiler and workers watch their heap with it);
	// everything under testkit is for tests only, and no shipped package
	// may import it (none lists it).
	"docs":                 nil, // Markdown, its link test, and Slug for the doc tests
	"internal/heapwatch":   nil,
	"internal/regfile":     nil, // reads only regular files (no FIFO, socket or device)
	"internal/layers":      nil,
	"internal/testkit/...": {"..."},
	"bench/...":            {"..."},
	"tools/...":            {"..."},
}

func matches(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if tree, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == tree || strings.HasPrefix(pkg, tree+"/")
	}
	return pkg == pattern
}

func ruleFor(pkg string) ([]string, bool) {
	if r, ok := rules[pkg]; ok {
		return r, true
	}
	for pattern, r := range rules {
		if strings.HasSuffix(pattern, "/...") && matches(pattern, pkg) {
			return r, true
		}
	}
	return nil, false
}

func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok {
			continue
		}
		allowed, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %s has no rule in internal/layers: say what it may import", pkg)
			continue
		}
		checked++
		var bad []string
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			okDep := false
			for _, a := range allowed {
				okDep = okDep || matches(a, dep)
			}
			if !okDep {
				bad = append(bad, dep)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s imports %s; its rule allows %v", pkg, strings.Join(bad, ", "), allowed)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d packages checked", checked)
	}
}
