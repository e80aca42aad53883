package workspace

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/source"
)

// Edits to a project's files, as renames and quick fixes produce them:
// byte spans of the text they were computed against (the Document read),
// so that the LSP server converts them to the editor's positions and
// versions. The workspace never writes files itself.

// Edit replaces Span of a file's text (byte offsets) with NewText.
type Edit struct {
	Span    source.Span
	NewText string
}

// FileEdit is a set of edits of one file, against Doc's text (an open
// buffer at its version, or the file on disk: version 0).
type FileEdit struct {
	Path  string // absolute
	Doc   *Document
	Edits []Edit // sorted, non-overlapping
}

// FileRename renames a file (absolute paths).
type FileRename struct{ From, To string }

// FileCreate creates a file that does not exist with Text.
type FileCreate struct {
	Path string
	Text string
}

// Change is what a rename or a quick fix does: text edits first (against
// the files' current names), then file renames, then creations.
type Change struct {
	Edits   []*FileEdit
	Renames []FileRename
	Creates []FileCreate
}

// Empty reports whether the change does nothing.
func (c *Change) Empty() bool {
	return c == nil || len(c.Edits) == 0 && len(c.Renames) == 0 && len(c.Creates) == 0
}

// changeBuilder collects edits per file, refusing overlapping ones.
type changeBuilder struct {
	files map[string]*FileEdit
	c     Change
}

func (b *changeBuilder) edit(d *Document, sp source.Span, text string) {
	if b.files == nil {
		b.files = map[string]*FileEdit{}
	}
	fe := b.files[d.Path]
	if fe == nil {
		fe = &FileEdit{Path: d.Path, Doc: d}
		b.files[d.Path] = fe
	}
	for _, e := range fe.Edits {
		if e.Span == sp && e.NewText == text {
			return // found twice (a ref seen by two scans): once is enough
		}
	}
	fe.Edits = append(fe.Edits, Edit{Span: sp, NewText: text})
}

// build sorts the edits. Overlapping edits are a bug of the caller's
// scans; they are reported as an error rather than applied.
func (b *changeBuilder) build() (*Change, error) {
	paths := make([]string, 0, len(b.files))
	for p := range b.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fe := b.files[p]
		sort.Slice(fe.Edits, func(i, j int) bool { return fe.Edits[i].Span.Start < fe.Edits[j].Span.Start })
		for i := 1; i < len(fe.Edits); i++ {
			if fe.Edits[i].Span.Start < fe.Edits[i-1].Span.End {
				return nil, fmt.Errorf("dfd: overlapping edits in %s (please report this)", p)
			}
		}
		b.c.Edits = append(b.c.Edits, fe)
	}
	return &b.c, nil
}

// Place is a position in a project file, for messages.
type Place struct {
	Path      string // absolute
	Line, Col int    // 0-based; Col in bytes
	// What is the text there (a call, an entry), shortened.
	What string
}

// placeOf is the place of span sp of document d.
func placeOf(d *Document, sp source.Span) Place {
	m := d.Lines()
	line := m.LineOf(sp.Start)
	what := string(d.Text[sp.Start:min(sp.End, len(d.Text))])
	if i := strings.IndexByte(what, '\n'); i >= 0 {
		what = strings.TrimSpace(what[:i]) + " …"
	}
	if len(what) > 80 {
		what = what[:77] + "…"
	}
	return Place{Path: d.Path, Line: line, Col: sp.Start - m.OffsetBytes(line, 0), What: what}
}

// Refusal is why a rename (or a fix) cannot be done, with the places that
// stand in the way. Its Error lists them as file:line, relative to Root.
type Refusal struct {
	Root   string
	Reason string
	Places []Place
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString(r.Reason)
	sort.SliceStable(r.Places, func(i, j int) bool {
		if r.Places[i].Path != r.Places[j].Path {
			return r.Places[i].Path < r.Places[j].Path
		}
		return r.Places[i].Line < r.Places[j].Line
	})
	for _, p := range r.Places {
		rel := p.Path
		if x, err := filepath.Rel(r.Root, p.Path); err == nil && !strings.HasPrefix(x, "..") {
			rel = filepath.ToSlash(x)
		}
		fmt.Fprintf(&b, "\n  %s:%d: %s", rel, p.Line+1, p.What)
	}
	return b.String()
}
