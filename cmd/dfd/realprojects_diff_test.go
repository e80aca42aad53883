package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dfdtools/dfd/changes"
	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// selectAliasRE is a select-list item's alias: "AS name," (a table alias
// or a CTE is not followed by a comma).
var selectAliasRE = regexp.MustCompile(`(?i)\bAS\s+([a-z_][a-z0-9_]*)\s*,`)

// realSources are the project's source files, sorted: what the edits of
// the diff history may touch.
func realSources(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{"definitions", "includes"} {
		_ = filepath.WalkDir(filepath.Join(dir, sub), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch filepath.Ext(p) {
			case ".sqlx", ".sql", ".js":
				rel, _ := filepath.Rel(dir, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// renameAlias renames the first select-list alias of the sources that
// another source file names too (likely a column read downstream), else
// the first one; false when there is none.
func renameAlias(t *testing.T, dir string) (string, bool) {
	t.Helper()
	srcs := realSources(t, dir)
	texts := map[string]string{}
	for _, s := range srcs {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(s)))
		if err != nil {
			t.Fatal(err)
		}
		texts[s] = string(b)
	}
	type cand struct {
		file  string
		loc   []int
		alias string
	}
	var first *cand
	for _, s := range srcs {
		for _, m := range selectAliasRE.FindAllStringSubmatchIndex(texts[s], -1) {
			c := cand{s, m, texts[s][m[2]:m[3]]}
			if first == nil {
				first = &c
			}
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(c.alias) + `\b`)
			for _, o := range srcs {
				if o != s && word.MatchString(texts[o]) {
					first = &c
					goto found
				}
			}
		}
	}
found:
	if first == nil {
		return "", false
	}
	text := texts[first.file]
	text = text[:first.loc[3]] + "_v2" + text[first.loc[3]:]
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(first.file)), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return first.file + ": " + first.alias + " → " + first.alias + "_v2", true
}

// TestRealProjectsDiff builds a git history on each real project (the
// fixtures have no history of their own): the project, then dfd format
// (layout only), then a select-list alias renamed (where another file
// names it: a column read downstream, as far as a text search knows),
// then the last SQL file removed. dfd diff of each commit against its
// parent must not fail, its JSON must follow the schema, a layout-only
// commit must change nothing's meaning, and every breaking change must
// have its reason: an incremental table to rebuild, or readers whose
// state at HEAD (errors or clean) is what dfd check at HEAD says.
func TestRealProjectsDiff(t *testing.T) {
	needGit(t)
	t.Setenv("DFD_CACHE_DIR", filepath.Join(os.Getenv("HOME"), ".cache", "dfd-ci", "dfd"))
	schema := diffSchema(t)
	entries, err := os.ReadDir(realProjectsDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range entries {
		if !d.IsDir() {
			continue
		}
		name := d.Name()
		t.Run(name, func(t *testing.T) {
			snapshot := filepath.Join(realMetadataDir(), name+".json")
			dir := testenv.ProjectCopy(t, filepath.Join(realProjectsDir(), name), testenv.CoreVersion)
			writeFile(t, dir, ".gitignore", "node_modules/\n")
			gitRun(t, dir, "init", "-q", "-b", "main")
			gitRun(t, dir, "add", "-A")
			gitRun(t, dir, "commit", "-q", "-m", "as published")
			edits := []struct {
				name       string
				edit       func() (string, bool)
				layoutOnly bool
			}{
				{"dfd format", func() (string, bool) {
					if res := runDFD(t, "format", dir); res.code != 0 {
						t.Fatalf("dfd format: exit %d\n%s", res.code, res.stderr)
					}
					return "formatted", true
				}, true},
				{"rename an alias", func() (string, bool) { return renameAlias(t, dir) }, false},
				{"remove the last SQL file", func() (string, bool) {
					var last string
					for _, s := range realSources(t, dir) {
						if strings.HasPrefix(s, "definitions/") && (strings.HasSuffix(s, ".sqlx") || strings.HasSuffix(s, ".sql")) {
							last = s
						}
					}
					if last == "" {
						return "", false
					}
					if err := os.Remove(filepath.Join(dir, filepath.FromSlash(last))); err != nil {
						t.Fatal(err)
					}
					return "removed " + last, true
				}, false},
			}
			for _, e := range edits {
				what, ok := e.edit()
				if !ok {
					t.Logf("%s: nothing to do", e.name)
					continue
				}
				gitRun(t, dir, "add", "-A")
				if strings.TrimSpace(gitRun(t, dir, "status", "--porcelain")) == "" {
					t.Logf("%s: no change", e.name)
					continue
				}
				gitRun(t, dir, "commit", "-q", "-m", e.name)

				start := time.Now()
				res := runDFD(t, "diff", "HEAD~1", "HEAD", "--project", dir, "--offline", "--metadata", snapshot, "--format", "json", realTimeout)
				took := time.Since(start)
				if res.code == exitDiffFailed && strings.HasPrefix(string(res.stderr), "dfd diff: HEAD: ") {
					// HEAD cannot be compiled at all (core throws: an
					// actions.yaml naming a file that is gone): there is
					// nothing to compare, and dfd compile must agree.
					if cr := runDFD(t, "compile", dir, realTimeout); cr.code == 0 {
						t.Errorf("%s: dfd diff could not compile HEAD, dfd compile could:\n%s", e.name, res.stderr)
					}
					t.Logf("%s (%s): HEAD does not compile: %s", e.name, what, firstLine(string(res.stderr)))
					continue
				}
				if res.code != 0 {
					t.Fatalf("%s: dfd diff: exit %d\n%s", e.name, res.code, res.stderr)
				}
				validateDiffJSON(t, schema, res.stdout)
				rep := decodeDiff(t, res.stdout)

				start = time.Now()
				chk := runDFD(t, "check", dir, "--offline", "--metadata", snapshot, "--json", realTimeout)
				checkTook := time.Since(start)
				var findings []checkFinding
				if err := json.Unmarshal(chk.stdout, &findings); err != nil {
					t.Fatalf("%s: dfd check --json: %v\n%s", e.name, err, chk.stderr)
				}
				errorsOf := map[string]bool{}
				for _, f := range findings {
					if f.Severity == "error" {
						errorsOf[strings.ToLower(f.Action)] = true
					}
				}
				counts := rep.Counts()
				t.Logf("%s (%s): %d breaking, %d non-breaking, %d metadata-only; dfd diff %s, dfd check of HEAD %s",
					e.name, what, counts[changes.Breaking], counts[changes.NonBreaking], counts[changes.MetadataOnly], took.Round(time.Millisecond), checkTook.Round(time.Millisecond))
				for _, c := range rep.Changes {
					if e.layoutOnly && (c.Category != changes.MetadataOnly || c.SQL == changes.SQLMeaning || c.Status != changes.Modified) {
						t.Errorf("%s: a layout-only commit: %s is %s %s (SQL %s): %v", e.name, c.Action, c.Status, c.Category, c.SQL, c.Statements)
					}
					if c.Category != changes.Breaking {
						continue
					}
					rebuild := false
					for _, cf := range c.Config {
						rebuild = rebuild || cf.FullRefresh
					}
					if !rebuild && len(c.Impact) == 0 {
						t.Errorf("%s: %s is breaking with no reader and nothing to rebuild: %v", e.name, c.Action, c.Reasons)
					}
					for _, im := range c.Impact {
						bad := false
						switch im.AtHead {
						case "errors":
							bad = !errorsOf[strings.ToLower(im.Action)]
						case "clean":
							bad = errorsOf[strings.ToLower(im.Action)]
						case "not compiled":
							bad = chk.code == 0
						}
						if bad {
							t.Errorf("%s: %s's reader %s is %q at HEAD, which dfd check at HEAD contradicts", e.name, c.Action, im.Action, im.AtHead)
						}
					}
				}
			}
		})
	}
}
