package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dfdtools/dfd/source"
)

// Renaming an output column of a table, view or incremental table: the
// backend plans it (the project's SQL analysis knows which statements read
// the column, and where each writes its name) and verifies it on the
// project compiled with the edits; the workspace finds the column at the
// cursor and turns the plan into edits of the documents it was planned
// against.

// ColumnRenamer is implemented by project backends that can rename an
// action's output column across the project's SQL (dfd's daemon, with
// its SQL analysis). RenameColumn may analyse and compile the whole
// project: it must honour ctx.
type ColumnRenamer interface {
	RenameColumn(ctx context.Context, req ColumnRenameRequest) (*ColumnRenamePlan, error)
}

// ColumnRenameRequest asks for the rename of Column of Action to NewName
// in the snapshot's graph.
type ColumnRenameRequest struct {
	Graph           any // CompileResult.Graph of the snapshot
	Action          *Action
	Column, NewName string
}

// ColumnRenamePlan is the backend's answer: edits, or a refusal (Refused
// set) with the places in the way.
type ColumnRenamePlan struct {
	// Item is where the action's query names the column (its alias, or
	// the bare item's name): the rename must start there.
	Item  ColumnEdit
	Edits []ColumnEdit
	// Texts are the files' texts the edits were planned against.
	Texts   map[string][]byte
	Refused string
	Places  []ColumnPlace
}

// ColumnEdit replaces [Start, End) of File (root-relative, slash) — Old —
// with New.
type ColumnEdit struct {
	File       string
	Start, End int
	Old, New   string
}

// ColumnPlace is a place in the way of a column rename.
type ColumnPlace struct {
	File   string
	Offset int
	Why    string
}

// ErrNoColumnRename is the error of a column rename when the project's
// backend cannot rename columns.
var ErrNoColumnRename = errors.New("this project's backend does not rename columns")

// columnSubjectAt is the output column whose name the cursor is on in a
// .sqlx file's select list — an alias or a bare item — when the file's
// action has that output column (as the last SQL check inferred it).
func (s *Session) columnSubjectAt(snap *Snapshot, rel string, d *Document, offset int) (*RenameSubject, bool) {
	var a *Action
	for _, x := range snap.ActionsIn(rel) {
		if x.Kind == KindTable || x.Kind == KindView || x.Kind == KindIncremental {
			if a != nil {
				return nil, false
			}
			a = x
		}
	}
	if a == nil {
		return nil, false
	}
	sp, ok := outputNameAt(d.Text, d.SQLX(), offset)
	if !ok {
		return nil, false
	}
	name := string(d.Text[sp.Start:sp.End])
	// NoWait: the last check's schemas, never a check on this path.
	lin, err := snap.ColumnTypes(context.Background(), a)
	if err != nil || lin == nil {
		return nil, false
	}
	for _, c := range lin.Columns {
		if strings.EqualFold(c.Name, name) {
			return &RenameSubject{Action: a, Column: c.Name, Name: name, Span: sp}, true
		}
	}
	return nil, false
}

// outputNameAt is the name at offset when it is written as an output
// column's name in a select list: after AS, or a whole item that is a
// name or a path (`customer_id`, `o.customer_id`) between SELECT or a
// comma and a comma or FROM. Outside blocks and ${…} only.
func outputNameAt(text []byte, x *source.SQLX, offset int) (source.Span, bool) {
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if _, in := x.BlockAt(offset); in {
		return source.Span{}, false
	}
	for _, p := range x.Placeholders {
		if offset >= p.Start && offset < p.End {
			return source.Span{}, false
		}
	}
	start, end := offset, offset
	for start > 0 && isWord(text[start-1]) {
		start--
	}
	for end < len(text) && isWord(text[end]) {
		end++
	}
	if start == end || text[start] >= '0' && text[start] <= '9' || x.ClauseAt(text, start) != "select" {
		return source.Span{}, false
	}
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	prevWord := func(i int) (string, int) {
		for i > 0 && space(text[i-1]) {
			i--
		}
		j := i
		for j > 0 && isWord(text[j-1]) {
			j--
		}
		return strings.ToUpper(string(text[j:i])), j
	}
	if w, _ := prevWord(start); w == "AS" {
		return source.Span{Start: start, End: end}, true
	}
	// A bare item: the path's first name, then what is before it.
	i := start
	for i > 0 && text[i-1] == '.' {
		j := i - 1
		for j > 0 && isWord(text[j-1]) {
			j--
		}
		if j == i-1 {
			return source.Span{}, false
		}
		i = j
	}
	k := i
	for k > 0 && space(text[k-1]) {
		k--
	}
	before := k > 0 && text[k-1] == ','
	if !before {
		w, _ := prevWord(i)
		before = w == "SELECT" || w == "DISTINCT" || w == "ALL"
	}
	if !before {
		return source.Span{}, false
	}
	e := end
	for e < len(text) && space(text[e]) {
		e++
	}
	after := e == len(text) || text[e] == ','
	if !after && e+4 <= len(text) && strings.EqualFold(string(text[e:e+4]), "FROM") && (e+4 == len(text) || !isWord(text[e+4])) {
		after = true
	}
	return source.Span{Start: start, End: end}, after
}

// PlanColumnRename computes the edits that rename subj's column (a
// subject with Column) to newName, or a *Refusal.
func (s *Session) PlanColumnRename(ctx context.Context, snap *Snapshot, subj *RenameSubject, newName string) (*Change, error) {
	if snap == nil || snap.Result == nil {
		return nil, &Refusal{Reason: "dfd cannot rename yet: the project has not compiled"}
	}
	a := subj.Action
	root := snap.Root
	refuse := func(reason string, places ...Place) error {
		return &Refusal{Root: root, Reason: fmt.Sprintf("dfd cannot rename column %s of %s to %s: %s", subj.Column, a.Target.Name, newName, reason), Places: places}
	}
	if newName == subj.Name {
		return &Change{}, nil
	}
	cr, ok := snap.backend.(ColumnRenamer)
	if !ok {
		return nil, ErrNoColumnRename
	}
	var plan *ColumnRenamePlan
	err := s.recovered("column rename", func() error {
		var err error
		plan, err = cr.RenameColumn(ctx, ColumnRenameRequest{Graph: snap.Result.Graph, Action: a, Column: subj.Column, NewName: newName})
		return err
	})
	if err != nil {
		return nil, err
	}
	docs := map[string]*Document{}
	doc := func(rel string) *Document {
		if d, ok := docs[rel]; ok {
			return d
		}
		d, err := s.View(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			d = nil
		}
		docs[rel] = d
		return d
	}
	if plan.Refused != "" {
		var places []Place
		for _, p := range plan.Places {
			pl := Place{Path: filepath.Join(root, filepath.FromSlash(p.File)), What: p.Why}
			if d := doc(p.File); d != nil && p.Offset >= 0 && p.Offset <= len(d.Text) {
				at := placeOf(d, source.Span{Start: p.Offset, End: p.Offset})
				pl.Line, pl.Col = at.Line, at.Col
			}
			places = append(places, pl)
		}
		return nil, refuse(plan.Refused, places...)
	}
	rel, _ := RelSlash(root, filepath.Join(root, filepath.FromSlash(a.File)))
	if it := plan.Item; it.File != rel || subj.Span.Start < it.Start || subj.Span.End > it.End {
		p := Place{Path: filepath.Join(root, filepath.FromSlash(it.File)), What: "the query names " + subj.Column + " here"}
		if d := doc(it.File); d != nil && it.Start <= len(d.Text) {
			at := placeOf(d, source.Span{Start: it.Start, End: it.Start})
			p.Line, p.Col = at.Line, at.Col
		}
		return nil, refuse("the cursor is not where the query names its output column; rename it there", p)
	}
	var b changeBuilder
	for _, e := range plan.Edits {
		d := doc(e.File)
		if d == nil || !bytes.Equal(d.Text, plan.Texts[e.File]) {
			return nil, refuse(e.File + " changed since dfd analysed it: try again")
		}
		if e.Start < 0 || e.End > len(d.Text) || string(d.Text[e.Start:e.End]) != e.Old {
			return nil, fmt.Errorf("dfd: column rename: %s:%d does not hold %q (please report this)", e.File, e.Start, e.Old)
		}
		b.edit(d, source.Span{Start: e.Start, End: e.End}, e.New)
	}
	return b.build()
}
