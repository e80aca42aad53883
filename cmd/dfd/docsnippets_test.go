package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// The example and the docs are what users copy: the shipped example passes
// its own `dfd format --check` and `dfd check` (TestCheckCommandExample
// holds the check), and so does every SQLX snippet of README.md and docs/.

// TestExampleIsFormatted runs `dfd format --check` over the shipped example.
func TestExampleIsFormatted(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(), "examples", "clickstream")
	res := runDFD(t, "format", "--check", dir)
	if res.code != 0 {
		t.Fatalf("dfd format --check %s: exit %d (run `dfd format %s`):\n%s%s", dir, res.code, dir, res.stdout, res.stderr)
	}
}

var sqlxFence = regexp.MustCompile("(?s)```sqlx\n(.*?)```")

// docsSQLXSnippets returns the ```sqlx blocks of README.md and docs/*.md,
// each named by its file and line.
func docsSQLXSnippets(t *testing.T) map[string]string {
	t.Helper()
	root := testenv.RepoRoot()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	snippets := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, m := range sqlxFence.FindAllSubmatchIndex(b, -1) {
			line := 1 + strings.Count(string(b[:m[0]]), "\n")
			snippets[fmt.Sprintf("%s:%d", rel, line)] = string(b[m[2]:m[3]])
		}
	}
	return snippets
}

// TestDocsSQLXSnippets puts every SQLX snippet of the docs into a copy of
// the shipped example, as a file of its own, and requires `dfd format
// --check` and `dfd check` (with the example's metadata snapshot) to pass
// with no finding: a snippet shows SQLX that works, against the example's
// tables. Illustrations of broken code are ```text blocks.
func TestDocsSQLXSnippets(t *testing.T) {
	snippets := docsSQLXSnippets(t)
	if len(snippets) == 0 {
		t.Skip("no ```sqlx snippet in README.md or docs/")
	}
	dir := testenv.ProjectCopy(t, filepath.Join(testenv.RepoRoot(), "examples", "clickstream"), "")
	where := map[string]string{} // snippet file → where it comes from
	n := 0
	for name, text := range snippets {
		n++
		file := filepath.Join("definitions", "docs", fmt.Sprintf("doc_snippet_%d.sqlx", n))
		where[file] = name
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	explain := func(out []byte) string {
		s := string(out)
		for file, name := range where {
			s = strings.ReplaceAll(s, file, file+" ("+name+")")
		}
		return s
	}
	if res := runDFD(t, "format", "--check", filepath.Join(dir, "definitions", "docs")); res.code != 0 {
		t.Errorf("dfd format --check: exit %d; these snippets are not formatted as dfd format leaves them:\n%s%s", res.code, explain(res.stdout), explain(res.stderr))
	}
	res := runDFD(t, "check", dir, "--metadata", filepath.Join(dir, "metadata.json"), "--verbose")
	if res.code != 0 || strings.Contains(string(res.stdout), ": error: ") || strings.Contains(string(res.stdout), ": warning: ") {
		t.Errorf("dfd check of the snippets: exit %d:\n%s%s", res.code, explain(res.stdout), explain(res.stderr))
	}
	for file, name := range where {
		if strings.Contains(string(res.stdout), file) {
			t.Errorf("dfd check has something to say about the snippet at %s:\n%s", name, explain(res.stdout))
		}
	}
}
