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
