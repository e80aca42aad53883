package project

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// buildTree creates entries under root. Each entry is "dir/" (a
// directory), "a -> b" (a symlink to b, relative to a's directory) or a file
// path; parent directories are created as needed.
func buildTree(t *testing.T, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		var err error
		switch {
		case strings.Contains(e, " -> "):
			name, target, _ := strings.Cut(e, " -> ")
			p := filepath.Join(root, name)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(target, p)
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(filepath.Join(root, e), 0o755)
		default:
			p := filepath.Join(root, e)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, []byte("x\n"), 0o644)
			}
		}
		if err != nil {
			t.Fatalf("build tree entry %q: %v", e, err)
		}
	}
}

func TestFilePaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlink-heavy fixtures")
	}
	tests := []struct {
		name string
		tree []string
		want []string
	}{
		{
			name: "top-level files are never listed",
			tree: []string{"workflow_settings.yaml", "package.json", "index.js", "definitions/a.sqlx"},
			want: []string{"definitions/a.sqlx"},
		},
		{
			name: "last segment needs a dot after its first byte",
			tree: []string{"definitions/noext", "definitions/a.", "definitions/x.tar.gz", "includes/Makefile"},
			want: []string{"definitions/a.", "definitions/x.tar.gz"},
		},
		{
			name: "dot names never match and are never entered",
			tree: []string{".git/config.x", ".hidden/a.js", "definitions/.b.js", "definitions/.d/c.js", "definitions/ok.js"},
			want: []string{"definitions/ok.js"},
		},
		{
			name: "only top-level node_modules is excluded",
			tree: []string{"node_modules/x/i.js", "sub/node_modules/y/j.js", "node_modules2/z.js", "node_modules.d/q.js"},
			want: []string{"node_modules.d/q.js", "node_modules2/z.js", "sub/node_modules/y/j.js"},
		},
		{
			name: "directories whose names match are listed, empty ones too",
			tree: []string{"definitions/sub.d/", "definitions/empty/", "emptytop/", "dir.with.dot/plain"},
			want: []string{"definitions/sub.d"},
		},
		{
			name: "symlinked directory at the top is crawled fully",
			tree: []string{"real/a.js", "real/deep/b.js", "link -> real"},
			want: []string{"link/a.js", "link/deep/b.js", "real/a.js", "real/deep/b.js"},
		},
		{
			name: "deeper symlinked directory: only its direct children",
			tree: []string{"ext/r.js", "ext/deep/s.js", "ext/x.d/", "definitions/link -> ../ext", "definitions/link.d -> ../ext"},
			want: []string{
				"definitions/link.d", "definitions/link.d/r.js", "definitions/link.d/x.d",
				"definitions/link/r.js", "definitions/link/x.d",
				"ext/deep/s.js", "ext/r.js", "ext/x.d",
			},
		},
		{
			name: "symlinked and broken symlinked files match by name",
			tree: []string{"top.sqlx", "definitions/l.sqlx -> ../top.sqlx", "definitions/broken.js -> nowhere", "definitions/brokenlink -> nowhere"},
			want: []string{"definitions/broken.js", "definitions/l.sqlx"},
		},
		{
			name: "link cycles stay finite",
			tree: []string{"top.js", "a/b.js", "a/loop -> ..", "self -> ."},
			want: []string{
				"a/b.js", "a/loop/top.js",
				"self/a/b.js", "self/a/loop/top.js", "self/self/top.js", "self/top.js",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			buildTree(t, root, tt.tree...)
			got, err := (&Project{Root: root}).FilePaths()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("FilePaths():\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestFilePathsMissingRoot(t *testing.T) {
	_, err := (&Project{Root: filepath.Join(t.TempDir(), "gone")}).FilePaths()
	if err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("FilePaths() on a missing root: err = %v, want one naming the path", err)
	}
}

// parityTree exercises every case found while establishing the glob
// semantics; TestFilePathsMatchesNodeGlob compares us with the real glob
// on it.
var parityTree = []string{
	"workflow_settings.yaml", "package.json", "noext", ".dotfile", ".dot.js",
	"definitions/a.sqlx", "definitions/noext", "definitions/.hid.sqlx",
	"definitions/sub/b.js", "definitions/sub.d/", "definitions/trailing.",
	"definitions/x*y.js", "definitions/[br].js", "definitions/{a,b}.js", "definitions/sp ace.js",
	"definitions/ünï/ç.sqlx", "definitions/UPPER.SQLX",
	".hidden/h.js", "a/.dotdir/k.js", "a/l.js", "b/c/d/m.tar.gz",
	"node_modules/x/i.js", "node_modules/.bin/", "sub/node_modules/y/j.js",
	"node_modules2/z.js", "node_modules.d/q.js", "Node_Modules/n.js",
	"emptydir/", "dir.with.dot/plain",
	"ext/real/r.js", "ext/real/deep/s.js", "ext/real/.e.js",
	"definitions/linkdir -> ../ext/real", "definitions/linkfile.sqlx -> ../workflow_settings.yaml",
	"definitions/broken.js -> nonexistent", "b/c/loop -> ../../definitions",
	"toplink -> ext/real", "self -> .", "topfile.js -> definitions/a.sqlx",
	"d/dl.x -> ../ext/real", "d/fl.js -> ../ext/real/r.js",
	"includes/x.js", "includes/deep/deeper/deepest/y.js",
}

const globScript = `
const glob = require(process.argv[2]);
const filePaths = Array.from(new Set(glob.sync("!(node_modules)/**/*.*", { cwd: process.argv[3] })));
process.stdout.write(JSON.stringify(filePaths));
`

// TestFilePathsMatchesNodeGlob runs the exact expression the CLI uses with
// the glob the CLI ships (glob 13.0.6 in @dataform/cli 3.0.69) and compares.
func TestFilePathsMatchesNodeGlob(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlink-heavy fixtures")
	}
	node := testenv.Node(t)
	globDir := os.Getenv("DFD_GLOB_DIR")
	if globDir == "" {
		// The glob the CLI's install brought: .../node_modules/@dataform/cli → .../node_modules/glob
		globDir = filepath.Join(testenv.NPMPackage(t, "@dataform/cli@"+testenv.CLIVersion), "..", "..", "glob")
	}
	if _, err := os.Stat(filepath.Join(globDir, "package.json")); err != nil {
		t.Fatalf("the CLI's glob is not at %s (DFD_GLOB_DIR may name a glob 13 package directory): %v", globDir, err)
	}

	root := t.TempDir()
	buildTree(t, root, parityTree...)
	script := filepath.Join(t.TempDir(), "glob.js")
	if err := os.WriteFile(script, []byte(globScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script, globDir, root).Output()
	if err != nil {
		t.Fatalf("node glob: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("node glob output %q: %v", out, err)
	}
	slices.Sort(want)

	got, err := (&Project{Root: root}).FilePaths()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		for _, p := range want {
			if !slices.Contains(got, p) {
				t.Errorf("missing (glob has it): %q", p)
			}
		}
		for _, p := range got {
			if !slices.Contains(want, p) {
				t.Errorf("extra (glob lacks it): %q", p)
			}
		}
	}
	t.Logf("%d paths agree with glob", len(got))
}
