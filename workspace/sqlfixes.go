package workspace

import (
	"regexp"

	"github.com/dfdtools/dfd/source"
)

// unrecognizedRE is GoogleSQL's unknown column with its suggestion:
// "Unrecognized name: total_revenu; Did you mean total_revenue?".
var unrecognizedRE = regexp.MustCompile(`^Unrecognized name: ([A-Za-z_][A-Za-z0-9_]*); Did you mean ([A-Za-z_][A-Za-z0-9_]*)\?`)

// annotateChecks adds to the check phase's diagnostics the fixes their
// messages carry: GoogleSQL's "Did you mean" for an unknown column,
// offered where the diagnostic's span starts with the unknown name in
// the text as compiled (a name that came through a ${…} is not there, and
// gets no fix: the edit would land in the wrong text).
func (s *Session) annotateChecks(snap *Snapshot, diags []Diagnostic) []Diagnostic {
	for i, d := range diags {
		m := unrecognizedRE.FindStringSubmatch(d.Message)
		if m == nil || d.Line < 0 {
			continue
		}
		doc, _, ok := s.docFor(snap, d.Path)
		if !ok {
			continue
		}
		mp := source.NewMapper(doc.Text)
		start := mp.OffsetBytes(d.Line, d.Col)
		end := start + len(m[1])
		if start < 0 || end > len(doc.Text) || string(doc.Text[start:end]) != m[1] {
			continue
		}
		var b changeBuilder
		b.edit(doc, source.Span{Start: start, End: end}, m[2])
		c, err := b.build()
		if err != nil {
			continue
		}
		diags[i].Fixes = append(append([]Fix(nil), d.Fixes...), Fix{Title: "Change to " + m[2], Preferred: true, Change: c})
	}
	return diags
}
