package sqlcheck

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Mapping a column rename's statement edits to the files: each name must
// be literal text of the file the statement came from (positions.go), the
// same bytes there; one that a ${…}, an includes function or JavaScript
// wrote cannot be edited where it is written.

// fileOffset is where statement offset so of a's statement label is in
// a's file; literal: the file writes the text there (else it is the ${…}
// that wrote it).
func (r *renameRun) fileOffset(a *action, label, sql string, so int) (off int, literal, ok bool) {
	src := r.c.file(a.file)
	if src == nil || so < 0 || so > len(sql) {
		return 0, false, false
	}
	if src.sqlx != nil {
		off, placed, ok := alignSQLX(src, label, sql, so)
		return off, ok && !placed, ok
	}
	off, ok = lookup(src.text, sql, so)
	return off, ok, ok
}

// fileSpan is where the name at [start, end) of the statement is in the
// file, when the file writes exactly it there.
func (r *renameRun) fileSpan(a *action, label, sql string, start, end int) (int, bool) {
	off, literal, _ := r.fileOffset(a, label, sql, start)
	if !literal || end <= start {
		return 0, false
	}
	if r.c.file(a.file).sqlx != nil {
		// The name's last byte must come from the same literal piece.
		last, literal, _ := r.fileOffset(a, label, sql, end-1)
		if !literal || last != off+end-start-1 {
			return 0, false
		}
	}
	text := r.c.file(a.file).text
	return off, off+end-start <= len(text) && string(text[off:off+end-start]) == sql[start:end]
}

// mapEdits turns the statements' edits into file edits and the edited
// statements' texts.
func (r *renameRun) mapEdits() error {
	type key struct {
		file       string
		start, end int
	}
	seen := map[key]string{}
	actions := make([]*action, 0, len(r.stmtEdits))
	for a := range r.stmtEdits {
		actions = append(actions, a)
	}
	sort.Slice(actions, func(i, j int) bool { return actions[i].name < actions[j].name })
	for _, a := range actions {
		labels := make([]string, 0, len(r.stmtEdits[a]))
		for l := range r.stmtEdits[a] {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		for _, l := range labels {
			se := r.stmtEdits[a][l]
			rel := path.Clean(a.file)
			for _, e := range se.edits {
				off, ok := r.fileSpan(a, se.label, se.sql, e.start, e.end)
				if !ok {
					r.block(a, se.label, se.sql, e.start, "it names "+r.plan.req.Column+" here in text dfd cannot edit where it is written (from ${…}, an includes function, or JavaScript building the SQL)")
					continue
				}
				fe := RenameEdit{File: rel, Start: off, End: off + e.end - e.start, Old: se.sql[e.start:e.end], New: e.text}
				if e.insert {
					fe.Start, fe.Old = fe.End, ""
				}
				if r.isTarget(a) && se.label == "query" && e.start == r.item.Start && r.itemStmt == se.sql {
					r.plan.Item = RenameEdit{File: rel, Start: off, End: off + e.end - e.start, Old: se.sql[e.start:e.end], New: e.text}
				}
				k := key{rel, fe.Start, fe.End}
				if prev, ok := seen[k]; ok {
					if prev != fe.New {
						return fmt.Errorf("rename of %s: %s:%d is edited two ways (please report this)", r.plan.req.Column, rel, fe.Start)
					}
					continue
				}
				seen[k] = fe.New
				r.plan.Edits = append(r.plan.Edits, fe)
				r.plan.Files[rel] = r.c.file(a.file).text
			}
			lower := strings.ToLower(a.name)
			if r.plan.edited[lower] == nil {
				r.plan.edited[lower] = map[string]string{}
			}
			r.plan.edited[lower][se.sql] = applyStmtEdits(se.sql, se.edits)
		}
	}
	return nil
}

// applyStmtEdits is sql with edits made.
func applyStmtEdits(sql string, edits []stmtEdit) string {
	es := append([]stmtEdit(nil), edits...)
	sort.Slice(es, func(i, j int) bool { return es[i].start < es[j].start })
	var b strings.Builder
	cur := 0
	for _, e := range es {
		if e.insert {
			b.WriteString(sql[cur:e.end])
			b.WriteString(e.text)
			cur = e.end
			continue
		}
		b.WriteString(sql[cur:e.start])
		b.WriteString(e.text)
		cur = e.end
	}
	b.WriteString(sql[cur:])
	return b.String()
}
