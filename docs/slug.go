package docs

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	mdLink  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag = regexp.MustCompile(`<[^>]+>`)
)

// Slug is GitHub's anchor for a Markdown heading: its text without links'
// targets and HTML tags, lower-cased, with every character that is not a
// letter, a digit, a space, '-' or '_' dropped and each space made '-'.
// The link check and the check of docs/commands.md's flag tables (in
// cmd/dfd) find sections by it.
func Slug(heading string) string {
	heading = mdLink.ReplaceAllString(heading, "$1")
	heading = htmlTag.ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	atxHeading = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	fenceLine  = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// Heading is an ATX heading (# …) of a Markdown text.
type Heading struct {
	Level int    // 1 to 6
	Line  int    // 0-based line of the text
	Text  string // without the #s
	Slug  string // Slug(Text)
}

// Headings are the headings of a Markdown text, outside fenced code
// blocks (a fence ends at a line that opens with the same marker).
func Headings(text string) []Heading {
	var hs []Heading
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		if fence != "" {
			if strings.HasPrefix(strings.TrimSpace(line), fence) {
				fence = ""
			}
			continue
		}
		if m := fenceLine.FindStringSubmatch(line); m != nil {
			fence = m[1]
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			hs = append(hs, Heading{Level: len(m[1]), Line: i, Text: m[2], Slug: Slug(m[2])})
		}
	}
	return hs
}
