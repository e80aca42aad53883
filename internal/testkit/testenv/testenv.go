// Package testenv gives tests the real things they compare against: the
// official @dataform/cli and @dataform/core from npm (installed once into a
// cache by tools/npm/ensure.sh), the repository's fixtures, and scratch
// copies of projects with a core in node_modules.
package testenv

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// CLIVersion is the official CLI that parity tests compare against.
const CLIVersion = "3.0.69"

// CoreVersion is the newest core; protos are generated from it.
const CoreVersion = "3.0.62"

// RepoRoot is the repository's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

var (
	ensureMu sync.Mutex
	ensured  = map[string]string{}
)

// NPMPackage returns the directory of an exact npm package version,
// installing it into the cache on first use. A failed install fails the
// test rather than skipping it: CI must exercise what depends on it.
func NPMPackage(t testing.TB, spec string) string {
	t.Helper()
	ensureMu.Lock()
	defer ensureMu.Unlock()
	if d, ok := ensured[spec]; ok {
		return d
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatalf("npm is needed to install %s: %v", spec, err)
	}
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "tools", "npm", "ensure.sh"), spec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("installing %s: %v\n%s", spec, err, stderr.String())
	}
	d := strings.TrimSpace(string(out))
	ensured[spec] = d
	return d
}

// Node is the node binary on PATH, which oracle tests run the official CLI
// or core with. Without it the test fails rather than skips: CI must
// exercise the comparisons (scripts/test.sh requires node).
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to run this test's oracle: %v", err)
	}
	return p
}

// CoreDir is the package directory of @dataform/core@version.
func CoreDir(t testing.TB, version string) string {
	return NPMPackage(t, "@dataform/core@"+version)
}

// CLIBundle is the official CLI's entry point, run with node.
func CLIBundle(t testing.TB) string {
	return filepath.Join(NPMPackage(t, "@dataform/cli@"+CLIVersion), "bundle.js")
}

// Fixture is the path of a fixture project under testdata/projects.
func Fixture(name string) string {
	return filepath.Join(RepoRoot(), "testdata", "projects", name)
}

// ProjectCopy copies the project at src into a fresh temporary directory
// and, when coreVersion is not empty, copies that core into its
// node_modules (a copy, not a link: the CLI refuses modules whose real path
// leaves the project). It returns the copy's real path.
func ProjectCopy(t testing.TB, src, coreVersion string) string {
	t.Helper()
	dst, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	if coreVersion != "" {
		if err := CopyTree(CoreDir(t, coreVersion), filepath.Join(dst, "node_modules", "@dataform", "core")); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// WriteProject writes files (slash-separated names → content) into a fresh
// temporary project directory with core coreVersion, and returns its path.
func WriteProject(t testing.TB, coreVersion string, files map[string]string) string {
	t.Helper()
	dir := ProjectCopy(t, t.TempDir(), coreVersion)
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// CopyTree copies regular files and directories from src to dst, keeping
// symbolic links as links.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
}
