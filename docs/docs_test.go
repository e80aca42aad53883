// Package docs holds dfd's user documentation (Markdown) and the test that
// keeps its links honest: every relative link and anchor in README.md,
// CONTRIBUTING.md, the pages of docs/ and the other front pages must point
// at a file of the repository and, with a #fragment, at a heading of it.
// A reader who follows a dead link from the front door stops reading.
//
// The flag tables of docs/commands.md are checked against the commands in
// cmd/dfd (TestCommandsDocListsEveryFlag), and the SQLX snippets against
// dfd format and dfd check (TestDocsSQLXSnippets), where the commands live.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// pages are the Markdown files whose links are checked, relative to the
// repository's root; every docs/*.md is added.
var pages = []string{
	"README.md",
	"CONTRIBUTING.md",
	"lsp/PROTOCOL.md",
	"vscode-extension/README.md",
	"bench/README.md",
	"testdata/README.md",
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Dir(filepath.Dir(file))
}

func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	files := append([]string(nil), pages...)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	anchors := map[string]map[string]bool{} // file → its headings' slugs
	anchorsOf := func(file string) map[string]bool {
		if a, ok := anchors[file]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(b))
		anchors[file] = a
		return a
	}
	checked := 0
	for _, page := range files {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		for _, l := range links(string(b)) {
			checked++
			if err := checkLink(root, page, l.target, anchorsOf); err != nil {
				t.Errorf("%s:%d: link %q: %v", page, l.line, l.target, err)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d links found: is the link parser broken?", checked)
	}
}

// checkLink resolves one link target of page: a URL is not followed; a
// path must exist inside the repository; a fragment must name a heading
// of the Markdown file it points at (or of page itself).
func checkLink(root, page, target string, anchorsOf func(string) map[string]bool) error {
	if i := strings.Index(target, "://"); i > 0 || strings.HasPrefix(target, "mailto:") {
		return nil
	}
	path, fragment, _ := strings.Cut(target, "#")
	file := page
	if path != "" {
		if strings.HasPrefix(path, "/") {
			return fmt.Errorf("an absolute path: links are relative, so they work on any host")
		}
		file = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path)))
		if file == ".." || strings.HasPrefix(file, "../") {
			return fmt.Errorf("leaves the repository")
		}
		info, err := os.Stat(filepath.Join(root, file))
		if err != nil {
			return fmt.Errorf("no such file or directory: %s", file)
		}
		if fragment != "" && (info.IsDir() || !strings.HasSuffix(file, ".md")) {
			return fmt.Errorf("an anchor into %s, which is not a Markdown file", file)
		}
	}
	if fragment == "" {
		return nil
	}
	if !anchorsOf(file)[fragment] {
		return fmt.Errorf("%s has no heading with the anchor #%s", file, fragment)
	}
	return nil
}

type link struct {
	target string
	line   int
}

var (
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDef     = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	inlineCode = regexp.MustCompile("`+[^`]*`+")
	fence      = regexp.MustCompile("^\\s{0,3}(```|~~~)")
	htmlHref   = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
)

// links returns the link targets of a Markdown text outside code blocks
// and code spans: inline links and images, reference definitions and the
// href/src of inline HTML.
func links(text string) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if m := refDef.FindStringSubmatch(line); m != nil {
			out = append(out, link{m[1], i + 1})
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{m[1], i + 1})
		}
		for _, m := range htmlHref.FindAllStringSubmatch(line, -1) {
			out = append(out, link{m[1], i + 1})
		}
	}
	return out
}

var htmlAnchor = regexp.MustCompile(`<a\s[^>]*(?:name|id)="([^"]+)"`)

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text (a repeated slug gets -1, -2, … in order), plus the ids of
// explicit <a name="…"> / id="…" anchors.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		anchors[m[1]] = true
	}
	seen := map[string]int{}
	for _, h := range Headings(text) {
		if n := seen[h.Slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", h.Slug, n)] = true
		} else {
			anchors[h.Slug] = true
		}
		seen[h.Slug]++
	}
	return anchors
}

// The checker must catch what it exists for: a test of the test.
func TestDocsLinkChecker(t *testing.T) {
	text := "# dfd check\n## `dfd serve` — the language server\n## Notes\n## Notes\n" +
		"```sh\n[not a link](nowhere.md)\n```\n" +
		"See [a](#dfd-check), [b](#dfd-serve--the-language-server), [c](#notes-1), `[d](x.md)`.\n" +
		"![img](images/x.png \"title\")\n[ref]: ../README.md#top\n"
	var got []string
	for _, l := range links(text) {
		got = append(got, l.target)
	}
	want := []string{"#dfd-check", "#dfd-serve--the-language-server", "#notes-1", "images/x.png", "../README.md#top"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("links = %q, want %q", got, want)
	}
	a := headingAnchors(text)
	for _, s := range []string{"dfd-check", "dfd-serve--the-language-server", "notes", "notes-1"} {
		if !a[s] {
			t.Errorf("no anchor %q in %v", s, a)
		}
	}
	if a["notes-2"] {
		t.Errorf("an anchor for a third Notes heading that does not exist")
	}
	root := repoRoot(t)
	none := func(string) map[string]bool { return map[string]bool{} }
	for _, bad := range []string{"no-such-file.md", "/etc/passwd", "../../outside.md", "README.md#no-such-heading"} {
		if checkLink(root, "docs/x.md", bad, none) == nil && checkLink(root, "README.md", bad, none) == nil {
			t.Errorf("link %q was accepted", bad)
		}
	}
}
