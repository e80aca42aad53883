package incrtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/bench/projectgen"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// EachFixture runs f, as a subtest, on a copy of every project of
// testdata/projects (core testenv.CoreVersion), each with a seed of its
// own.
func EachFixture(t *testing.T, f func(t *testing.T, root string, seed uint64)) {
	each(t, filepath.Join(testenv.RepoRoot(), "testdata", "projects"), 1, f)
}

// EachRealProject is EachFixture for testdata/realprojects.
func EachRealProject(t *testing.T, f func(t *testing.T, root string, seed uint64)) {
	each(t, filepath.Join(testenv.RepoRoot(), "testdata", "realprojects"), 100, f)
}

func each(t *testing.T, dir string, seed0 uint64, f func(t *testing.T, root string, seed uint64)) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			f(t, testenv.ProjectCopy(t, filepath.Join(dir, e.Name()), testenv.CoreVersion), seed0+uint64(i))
		})
	}
}

// Generated writes a generated project of n actions with JiT actions
// (bench/projectgen, seed) with core testenv.CoreVersion, and returns its
// root, its files sorted, and the first .sqlx of a table (the file
// benchmarks edit).
func Generated(t testing.TB, n int, seed int64) (root string, paths []string, table string) {
	t.Helper()
	p, err := projectgen.Plan(projectgen.Options{Actions: n, Seed: seed, JiT: true})
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := p.Write(src); err != nil {
		t.Fatal(err)
	}
	root = testenv.ProjectCopy(t, src, testenv.CoreVersion)
	for name := range p.Files {
		paths = append(paths, name)
	}
	slices.Sort(paths)
	for _, name := range paths {
		if strings.HasSuffix(name, ".sqlx") && strings.Contains(p.Files[name], "type: \"table\"") {
			return root, paths, name
		}
	}
	t.Fatalf("no .sqlx table in a generated project of %d actions", n)
	return "", nil, ""
}
