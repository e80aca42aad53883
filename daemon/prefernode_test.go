package daemon_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/daemon"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

var yamlActions = "actions:\n" + strings.Repeat("- declaration:\n    name: raw_feed\n    description: |\n      a line of description text that goes on\n", 2500)

// writeGenerated writes a generated project, plus extra files, and returns
// its root and source files.
func writeGenerated(t *testing.T, opts projectgen.Options, extra map[string]string) (string, []string) {
	t.Helper()
	p, err := projectgen.Plan(opts)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range extra {
		p.Files[name] = content
	}
	dir := t.TempDir()
	if err := p.Write(dir); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for name := range p.Files {
		if strings.HasPrefix(name, "definitions/") || strings.HasPrefix(name, "includes/") || name == "workflow_settings.yaml" {
			paths = append(paths, name)
		}
	}
	sort.Strings(paths)
	return dir, paths
}

// Both auto rules choose by work. `dfd compile` (cold, PreferNode): a big
// .sqlx stays on goja (SQLX runs in Go, faster than on Node.js), YAML and
// many files go to Node.js. The daemon (warm workers, PreferNodeWarm):
// Node.js unless one .sqlx is big enough that SQLX in Go wins back more
// than goja's slower JavaScript costs (≈2 ms a file, more in big projects;
// the cases measured in engine/gojacost.go).
func TestPreferNode(t *testing.T) {
	bundle := testenv.CoreDir(t, testenv.CoreVersion) + "/bundle.js"
	for _, tc := range []struct {
		name       string
		opts       projectgen.Options
		extra      map[string]string
		cold, warm bool
	}{
		{"5 actions", projectgen.Options{Actions: 5, Seed: 1}, nil, false, true},
		{"30 actions", projectgen.Options{Actions: 30, Seed: 1}, nil, false, true},
		{"30 actions and a 64 KB sqlx", projectgen.Options{Actions: 30, Seed: 1, BigSQLXBytes: 64 << 10}, nil, false, true},
		{"30 actions and a 2 MB sqlx", projectgen.Options{Actions: 30, Seed: 1, BigSQLXBytes: 2 << 20}, nil, false, false},
		{"30 actions and a 10 MB sqlx", projectgen.Options{Actions: 30, Seed: 1, BigSQLXBytes: 10 << 20}, nil, false, false},
		{"400 actions and a 2 MB sqlx", projectgen.Options{Actions: 400, Seed: 1, BigSQLXBytes: 2 << 20}, nil, true, true},
		{"250 KB of YAML", projectgen.Options{Actions: 30, Seed: 1}, map[string]string{"definitions/actions.yaml": yamlActions}, true, true},
		{"400 actions", projectgen.Options{Actions: 400, Seed: 1}, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, paths := writeGenerated(t, tc.opts, tc.extra)
			if got := daemon.PreferNode(root, paths, bundle, 0); got != tc.cold {
				t.Errorf("PreferNode = %v for %d files, want %v", got, len(paths), tc.cold)
			}
			if got := daemon.PreferNodeWarm(root, paths, bundle); got != tc.warm {
				t.Errorf("PreferNodeWarm = %v for %d files, want %v", got, len(paths), tc.warm)
			}
		})
	}
	// A core whose SQLX code dfd does not know: a big .sqlx is slow in goja.
	root, paths := writeGenerated(t, projectgen.Options{Actions: 30, Seed: 1, BigSQLXBytes: 256 << 10}, nil)
	if !daemon.PreferNode(root, paths, filepath.Join(t.TempDir(), "unknown-bundle.js"), 0) {
		t.Error("a 256 KB .sqlx with an unknown core stays on goja")
	}
}
