//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// specialTimeout bounds each command on a project holding named pipes: it
// must finish, and before the fix it blocked forever in open(2).
const specialTimeout = 2 * time.Minute

// A named pipe, a socket and a link to /dev/zero in definitions/ and
// includes/: compile (both engines), check and format --check finish, say
// which files they skipped and why, and the --json graph is the one of the
// project without them, byte for byte.
func TestSpecialFilesSkipped(t *testing.T) {
	clean := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	dir := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	special := testenv.PlaceSpecialFiles(t, dir)
	named := func(t *testing.T, out []byte, files []testenv.SpecialFile) {
		t.Helper()
		for _, f := range files {
			want := f.Rel + ": not a regular file (" + f.Kind + "); dfd reads only regular files"
			if !strings.Contains(string(out), want) {
				t.Errorf("stderr lacks %q:\n%s", want, out)
			}
		}
	}
	for _, engine := range []string{"goja", "node"} {
		t.Run("compile/"+engine, func(t *testing.T) {
			if engine == "node" {
				needNode(t)
			}
			want := runDFDProcess(t, specialTimeout, nil, "compile", clean, "--json", "--engine", engine)
			got := runDFDProcess(t, specialTimeout, nil, "compile", dir, "--json", "--engine", engine)
			if got.code != 0 || want.code != 0 {
				t.Fatalf("exit %d (clean copy: %d):\n%s", got.code, want.code, got.stderr)
			}
			named(t, got.stderr, special)
			if g, w := strings.ReplaceAll(string(got.stdout), dir, "<dir>"), strings.ReplaceAll(string(want.stdout), clean, "<dir>"); g != w {
				t.Errorf("the graph differs from the project's without the special files:\n%s", lineDiff(w, g))
			}
		})
	}
	t.Run("check", func(t *testing.T) {
		res := runDFDProcess(t, specialTimeout, nil, "check", dir, "--offline", "--allow-unchecked")
		if res.code > 1 {
			t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		named(t, res.stderr, special)
	})
	t.Run("format", func(t *testing.T) {
		res := runDFDProcess(t, specialTimeout, nil, "format", "--check", "--quiet", dir)
		if res.code > 1 {
			t.Fatalf("exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
		}
		var sqlx []testenv.SpecialFile
		for _, f := range special {
			if strings.HasSuffix(f.Rel, ".sqlx") {
				sqlx = append(sqlx, testenv.SpecialFile{Rel: filepath.Join(dir, filepath.FromSlash(f.Rel)), Kind: f.Kind})
			}
		}
		named(t, res.stderr, sqlx)
		// Named on the command line: an error, at once.
		pipe := filepath.Join(dir, "definitions", "pipe.sqlx")
		res = runDFDProcess(t, specialTimeout, nil, "format", pipe)
		if res.code != 2 || !strings.Contains(string(res.stderr), pipe+": not a regular file (named pipe)") {
			t.Errorf("format %s: exit %d\n%s", pipe, res.code, res.stderr)
		}
	})
}

// A require() of a named pipe is an error of the compile on either engine
// (goja's loader, the Node.js worker's own file reading), not a hang.
func TestRequireNamedPipe(t *testing.T) {
	dir := testenv.ProjectCopy(t, testenv.Fixture("sqlx_warehouse"), testenv.CoreVersion)
	testenv.PlaceSpecialFiles(t, dir)
	js := "const x = require(\"../includes/pipe.js\");\npublish(\"from_pipe\").query(\"SELECT 1\");\n"
	if err := os.WriteFile(filepath.Join(dir, "definitions", "uses_pipe.js"), []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, engine := range []string{"goja", "node"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "node" {
				needNode(t)
			}
			res := runDFDProcess(t, specialTimeout, nil, "compile", dir, "--json", "--engine", engine)
			out := string(res.stdout) + string(res.stderr)
			if !strings.Contains(out, "includes/pipe.js: not a regular file (named pipe); dfd reads only regular files") {
				t.Errorf("exit %d, no error about the pipe:\n%s", res.code, out)
			}
		})
	}
}
