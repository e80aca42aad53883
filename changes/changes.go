// Package changes compares two revisions of a Dataform project, each
// compiled with the project's own @dataform/core and analysed with
// GoogleSQL (package sqlcheck), and says what the change does to the
// warehouse: which actions are added, removed or renamed, how their output
// schemas and configs change, whether their SQL changes in meaning or only
// in layout, and which downstream actions and columns read what was
// removed, renamed or retyped. Each change gets one of SQLMesh's
// categories: breaking, non-breaking or metadata-only. `dfd diff` prints
// the report; the daemon warns with it while a file is edited.
//
// It imports gsql, sqlcheck, adapters and protos/dataformpb: it knows
// nothing of git, of the compiler or of how the analyses were made.
package changes

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/sqlcheck"
)

// Category is how much a change matters downstream, in SQLMesh's words.
type Category string

const (
	// Breaking: a downstream reader is affected (it reads a column or an
	// action that is removed, renamed, retyped or disabled), or the table
	// must be rebuilt (an incremental table's partitioning, clustering
	// or unique key changed).
	Breaking Category = "breaking"
	// NonBreaking: the data may change, but nothing that reads it is
	// affected: additions, SQL changes that keep every column read
	// downstream, config changes the next run applies.
	NonBreaking Category = "non-breaking"
	// MetadataOnly: nothing the warehouse computes changes: descriptions,
	// labels, tags, or SQL changed in layout only.
	MetadataOnly Category = "metadata-only"
)

// Categories in the order reports show them: the worst first.
var Categories = []Category{Breaking, NonBreaking, MetadataOnly}

// Status of an action between the revisions.
const (
	Added    = "added"
	Removed  = "removed"
	Renamed  = "renamed"
	Modified = "modified"
)

// SQL comparison of an action's statements.
const (
	SQLSame    = "unchanged"
	SQLLayout  = "layout"  // the text differs, the parse trees do not
	SQLMeaning = "meaning" // the parse trees differ (or a side does not parse and the text differs)
)

// Column change kinds.
const (
	ColumnAdded       = "added"
	ColumnRemoved     = "removed"
	ColumnRenamed     = "renamed"
	ColumnType        = "type"
	ColumnMode        = "mode"
	ColumnDescription = "description"
)

// Revision is one side of the comparison.
type Revision struct {
	// Label names it for people: "main (3f2a1c9)", "working tree".
	Label string
	Graph *dataformpb.CompiledGraph
	// Check is the GoogleSQL analysis of Graph, made with lineage
	// (sqlcheck.Options.Lineage); nil when the SQL was not analysed (the
	// graph has compilation errors): then no schema is compared.
	Check *sqlcheck.Result
	// Read returns a project file as of this revision (root-relative
	// slash path), to place changes on lines; nil places them on line 1.
	Read func(rel string) ([]byte, bool)
}

// Report is what changed from Base to Head.
type Report struct {
	Base    string   `json:"base"`
	Head    string   `json:"head"`
	Changes []Change `json:"changes"`
	// Notes say what could not be compared, and why.
	Notes []string `json:"notes"`
}

// Change is what happened to one action.
type Change struct {
	// Action is database.schema.name: at Head, or at Base for a removed one.
	Action string `json:"action"`
	// RenamedFrom is the action's name at Base, for a renamed one.
	RenamedFrom string `json:"renamedFrom,omitempty"`
	Kind        string `json:"kind"` // table, view, incremental, operation, assertion, declaration
	File        string `json:"file"`
	// Line is where the change shows in File (1-based; at Base for a
	// removed action).
	Line     int      `json:"line"`
	Status   string   `json:"status"`
	Category Category `json:"category"`
	// Reasons say why the category, one phrase each.
	Reasons []string `json:"reasons"`
	// SQL is how the action's statements changed: unchanged, layout or
	// meaning; Statements names those that changed.
	SQL        string            `json:"sql"`
	Statements []StatementChange `json:"statements"`
	Columns    []ColumnChange    `json:"columns"`
	Config     []ConfigChange    `json:"config"`
	Impact     []Impact          `json:"impact"`
}

// StatementChange is one statement of an action whose text changed.
type StatementChange struct {
	Statement string `json:"statement"` // query, incremental query, pre_operations[0], queries[1], jit code
	Change    string `json:"change"`    // layout, meaning, added, removed
	// Why says why only the text was compared (a side does not parse).
	Why string `json:"why,omitempty"`
}

// ColumnChange is one change of the action's output schema.
type ColumnChange struct {
	Column string `json:"column"` // at Head (at Base for a removed one)
	Change string `json:"change"` // added, removed, renamed, type, mode, description
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Line   int    `json:"line"`
}

// ConfigChange is one change of the action's config that matters in the
// warehouse (or to people reading it).
type ConfigChange struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
	// FullRefresh: the table must be rebuilt (run with --full-refresh).
	FullRefresh bool `json:"fullRefresh,omitempty"`
	Line        int  `json:"line"`
}

// Impact is one downstream action (and column) that reads something this
// change removes, renames or retypes.
type Impact struct {
	Action string `json:"action"` // as at Base
	// Column is the downstream action's output column whose lineage
	// reads Reads; empty when the action reads it elsewhere (an
	// operation, a WHERE clause) or reads the whole action.
	Column string `json:"column,omitempty"`
	// Reads is what it reads of the changed action: a column, or "*"
	// for the action as a whole.
	Reads string `json:"reads"`
	// Depth is 1 for a direct reader, 2 for a reader of an affected
	// column of a direct reader, and so on.
	Depth int `json:"depth"`
	// AtHead is how the reader fares at Head: "clean" (it analyses
	// without errors), "errors" (Error says the first), "removed",
	// "not analysed" (Error says why), "not compiled".
	AtHead string `json:"atHead"`
	Error  string `json:"error,omitempty"`
	File   string `json:"file"`
}

// Counts are the number of changes in each category.
func (r *Report) Counts() map[Category]int {
	out := map[Category]int{}
	for _, c := range r.Changes {
		out[c.Category]++
	}
	return out
}

// Has says whether some change is of category c.
func (r *Report) Has(c Category) bool { return r.Counts()[c] > 0 }

// Compare says what changed from base to head. Errors are failures of the
// GoogleSQL engine, or ctx's end.
func Compare(ctx context.Context, base, head Revision) (*Report, error) {
	b, h := index(base), index(head)
	rep := &Report{Base: base.Label, Head: head.Label, Changes: []Change{}, Notes: []string{}}
	if base.Check == nil {
		rep.Notes = append(rep.Notes, base.Label+": the SQL was not analysed (compilation errors): no output schema or lineage is compared")
	}
	if head.Check == nil {
		rep.Notes = append(rep.Notes, head.Label+": the SQL was not analysed (compilation errors): no output schema is compared")
	}
	cmp := &comparer{ctx: ctx, base: base, head: head, b: b, h: h, fps: map[string]fingerprint{}}
	pairs, err := cmp.match()
	if err != nil {
		return nil, err
	}
	for _, p := range pairs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, changed, err := cmp.change(p)
		if err != nil {
			return nil, err
		}
		if changed {
			rep.Changes = append(rep.Changes, c)
		}
	}
	rep.Notes = append(rep.Notes, cmp.notes...)
	sort.SliceStable(rep.Changes, func(i, j int) bool {
		ci, cj := rank(rep.Changes[i].Category), rank(rep.Changes[j].Category)
		if ci != cj {
			return ci < cj
		}
		return rep.Changes[i].Action < rep.Changes[j].Action
	})
	return rep, nil
}

func rank(c Category) int {
	for i, k := range Categories {
		if k == c {
			return i
		}
	}
	return len(Categories)
}

// pair is one action at Base, at Head, or both.
type pair struct {
	b, h    *act
	renamed bool
}

type comparer struct {
	ctx        context.Context
	base, head Revision
	b, h       *revIndex
	fps        map[string]fingerprint
	notes      []string
}

type fingerprint struct {
	fp, why string
	ok      bool
}

// fingerprint is sql's parse-tree fingerprint, remembered: a statement
// unchanged between the revisions is parsed once.
func (c *comparer) fingerprint(sql string) (fingerprint, error) {
	if f, ok := c.fps[sql]; ok {
		return f, nil
	}
	fp, ok, why, err := gsql.Fingerprint(sql)
	if err != nil {
		return fingerprint{}, fmt.Errorf("parsing SQL: %w", err)
	}
	f := fingerprint{fp: fp, ok: ok, why: why}
	c.fps[sql] = f
	return f, nil
}

// match pairs Base's actions with Head's: by name, then the rest by
// file, kind and SQL (a renamed action).
func (c *comparer) match() ([]pair, error) {
	var out []pair
	var removed []*act
	for _, a := range c.b.list {
		if h := c.h.byKey[a.key]; h != nil {
			out = append(out, pair{b: a, h: h})
			continue
		}
		removed = append(removed, a)
	}
	var added []*act
	for _, a := range c.h.list {
		if c.b.byKey[a.key] == nil {
			added = append(added, a)
		}
	}
	taken := map[*act]bool{}
	for _, r := range removed {
		var match *act
		for _, a := range added {
			if taken[a] || a.file != r.file || a.kind != r.kind {
				continue
			}
			same, err := c.sameMeaning(r, a)
			if err != nil {
				return nil, err
			}
			if same {
				match = a
				break
			}
		}
		if match != nil {
			taken[match] = true
			out = append(out, pair{b: r, h: match, renamed: true})
			continue
		}
		out = append(out, pair{b: r})
	}
	for _, a := range added {
		if !taken[a] {
			out = append(out, pair{h: a})
		}
	}
	return out, nil
}

// sameMeaning says whether two actions' statements parse the same (for a
// rename: the same SQL under a new name). Declarations have none: a
// declaration renamed in its file is a removal and an addition.
func (c *comparer) sameMeaning(x, y *act) (bool, error) {
	if len(x.stmts) == 0 || len(x.stmts) != len(y.stmts) || x.jitCode != y.jitCode {
		return false, nil
	}
	for i := range x.stmts {
		if x.stmts[i].label != y.stmts[i].label {
			return false, nil
		}
		ch, _, err := c.compareSQL(x.stmts[i].sql, y.stmts[i].sql)
		if err != nil || ch != SQLSame && ch != SQLLayout {
			return false, err
		}
	}
	return true, nil
}

// compareSQL is unchanged, layout or meaning; why is set when a side does
// not parse and only the text was compared.
func (c *comparer) compareSQL(x, y string) (string, string, error) {
	if x == y {
		return SQLSame, "", nil
	}
	fx, err := c.fingerprint(x)
	if err != nil {
		return "", "", err
	}
	fy, err := c.fingerprint(y)
	if err != nil {
		return "", "", err
	}
	switch {
	case fx.ok && fy.ok && fx.fp == fy.fp:
		return SQLLayout, "", nil
	case fx.ok && fy.ok:
		return SQLMeaning, "", nil
	case !fx.ok:
		return SQLMeaning, "compared as text: at Base " + fx.why, nil
	default:
		return SQLMeaning, "compared as text: at Head " + fy.why, nil
	}
}

// change is the change of one pair; changed is false when nothing did.
func (c *comparer) change(p pair) (Change, bool, error) {
	switch {
	case p.h == nil:
		return c.removedChange(p.b), true, nil
	case p.b == nil:
		return c.addedChange(p.h), true, nil
	}
	ch := Change{Action: p.h.name, Kind: p.h.kind, File: p.h.file, Line: 1, Status: Modified, SQL: SQLSame,
		Reasons: []string{}, Statements: []StatementChange{}, Columns: []ColumnChange{}, Config: []ConfigChange{}, Impact: []Impact{}}
	if p.renamed {
		ch.Status, ch.RenamedFrom = Renamed, p.b.name
	}
	if err := c.compareStatements(&ch, p.b, p.h); err != nil {
		return ch, false, err
	}
	c.compareColumns(&ch, p.b, p.h)
	c.compareConfig(&ch, p.b, p.h)
	c.impact(&ch, p)
	if ch.Status == Modified && ch.SQL == SQLSame && len(ch.Columns) == 0 && len(ch.Config) == 0 && len(ch.Impact) == 0 {
		return ch, false, nil
	}
	c.categorise(&ch)
	ch.Line = c.firstLine(&ch, p.h)
	return ch, true, nil
}

func (c *comparer) addedChange(a *act) Change {
	ch := Change{Action: a.name, Kind: a.kind, File: a.file, Line: 1, Status: Added, SQL: SQLMeaning,
		Category: NonBreaking, Reasons: []string{"a new action"},
		Statements: []StatementChange{}, Columns: []ColumnChange{}, Config: []ConfigChange{}, Impact: []Impact{}}
	if len(a.stmts) == 0 && a.jitCode == "" {
		ch.SQL = SQLSame
	}
	if cols, ok := c.h.schema(a); ok {
		for _, col := range cols {
			ch.Columns = append(ch.Columns, ColumnChange{Column: col.Name, Change: ColumnAdded, To: col.Type.String(), Line: columnLine(c.head.Read, a.file, col.Name, 1)})
		}
	}
	ch.Line = lineOf(c.head.Read, a.file, "", 1)
	return ch
}

func (c *comparer) removedChange(a *act) Change {
	ch := Change{Action: a.name, Kind: a.kind, File: a.file, Line: 1, Status: Removed, SQL: SQLMeaning,
		Reasons: []string{}, Statements: []StatementChange{}, Columns: []ColumnChange{}, Config: []ConfigChange{}, Impact: []Impact{}}
	if len(a.stmts) == 0 && a.jitCode == "" {
		ch.SQL = SQLSame
	}
	c.impact(&ch, pair{b: a})
	c.categorise(&ch)
	return ch
}

// compareStatements compares the actions' statements label by label.
func (c *comparer) compareStatements(ch *Change, b, h *act) error {
	worst := SQLSame
	bump := func(s string) {
		if s == SQLMeaning || s == SQLLayout && worst == SQLSame {
			worst = s
		}
	}
	hs := map[string]string{}
	for _, s := range h.stmts {
		hs[s.label] = s.sql
	}
	bs := map[string]bool{}
	for _, s := range b.stmts {
		bs[s.label] = true
		y, ok := hs[s.label]
		if !ok {
			ch.Statements = append(ch.Statements, StatementChange{Statement: s.label, Change: "removed"})
			bump(SQLMeaning)
			continue
		}
		got, why, err := c.compareSQL(s.sql, y)
		if err != nil {
			return err
		}
		if got != SQLSame {
			ch.Statements = append(ch.Statements, StatementChange{Statement: s.label, Change: got, Why: why})
		}
		bump(got)
	}
	for _, s := range h.stmts {
		if !bs[s.label] {
			ch.Statements = append(ch.Statements, StatementChange{Statement: s.label, Change: "added"})
			bump(SQLMeaning)
		}
	}
	if b.jitCode != h.jitCode {
		// JavaScript: no parse tree of GoogleSQL's to compare.
		change := SQLMeaning
		if strings.Join(strings.Fields(b.jitCode), " ") == strings.Join(strings.Fields(h.jitCode), " ") {
			change = SQLLayout
		}
		ch.Statements = append(ch.Statements, StatementChange{Statement: "jit code", Change: change, Why: "JavaScript: compared as text, whitespace aside"})
		bump(change)
	}
	ch.SQL = worst
	return nil
}

// categorise sets the category and its reasons from what changed.
func (c *comparer) categorise(ch *Change) {
	var breaking, nonBreaking, metadata []string
	readers := map[string]bool{}
	for _, im := range ch.Impact {
		readers[im.Action] = true
	}
	if len(readers) > 0 {
		names := make([]string, 0, len(readers))
		for n := range readers {
			names = append(names, n)
		}
		sort.Strings(names)
		breaking = append(breaking, "read downstream by "+strings.Join(names, ", "))
	}
	switch ch.Status {
	case Added:
		nonBreaking = append(nonBreaking, "a new action")
	case Removed:
		if len(readers) == 0 {
			nonBreaking = append(nonBreaking, "removed; no action of the project reads it")
		}
	case Renamed:
		if len(readers) == 0 {
			nonBreaking = append(nonBreaking, "renamed from "+ch.RenamedFrom+"; no action of the project reads it")
		}
	}
	switch ch.SQL {
	case SQLMeaning:
		if ch.Status == Modified || ch.Status == Renamed {
			nonBreaking = append(nonBreaking, "its SQL changed in meaning")
		}
	case SQLLayout:
		metadata = append(metadata, "its SQL changed in layout only")
	}
	for _, col := range ch.Columns {
		switch col.Change {
		case ColumnAdded:
			if ch.Status != Added {
				nonBreaking = append(nonBreaking, "column "+col.Column+" added")
			}
		case ColumnDescription:
			metadata = append(metadata, "description of "+col.Column+" changed")
		default:
			if !readsColumn(ch.Impact, col) {
				nonBreaking = append(nonBreaking, "column "+col.Column+" "+columnVerb(col)+"; nothing downstream reads it")
			}
		}
	}
	for _, cf := range ch.Config {
		switch {
		case cf.FullRefresh:
			breaking = append(breaking, cf.Field+" changed: the incremental table must be rebuilt (--full-refresh)")
		case metadataField[cf.Field]:
			metadata = append(metadata, cf.Field+" changed")
		default:
			nonBreaking = append(nonBreaking, cf.Field+" changed")
		}
	}
	switch {
	case len(breaking) > 0:
		ch.Category, ch.Reasons = Breaking, breaking
	case len(nonBreaking) > 0:
		ch.Category, ch.Reasons = NonBreaking, nonBreaking
	default:
		ch.Category, ch.Reasons = MetadataOnly, metadata
	}
	if ch.Reasons == nil {
		ch.Reasons = []string{}
	}
}

// metadataField: config fields that change nothing the warehouse computes.
var metadataField = map[string]bool{
	"description": true, "tags": true, "labels": true, "bigqueryLabels": true,
}

func columnVerb(col ColumnChange) string {
	switch col.Change {
	case ColumnRemoved:
		return "removed"
	case ColumnRenamed:
		return "renamed from " + col.From
	case ColumnType:
		return "changed type " + col.From + " → " + col.To
	case ColumnMode:
		return "changed mode " + col.From + " → " + col.To
	}
	return col.Change
}

// readsColumn says whether an impact reads the column change's column.
func readsColumn(ims []Impact, col ColumnChange) bool {
	name := col.Column
	if col.Change == ColumnRenamed {
		name = col.From
	}
	for _, im := range ims {
		if im.Reads == "*" || strings.EqualFold(im.Reads, name) || hasFieldPrefix(im.Reads, name) {
			return true
		}
	}
	return false
}

func hasFieldPrefix(path, column string) bool {
	return len(path) > len(column) && strings.EqualFold(path[:len(column)], column) && path[len(column)] == '.'
}

// firstLine is where a change shows first in the file at Head.
func (c *comparer) firstLine(ch *Change, h *act) int {
	best := 0
	for _, col := range ch.Columns {
		if col.Line > 0 && (best == 0 || col.Line < best) {
			best = col.Line
		}
	}
	for _, cf := range ch.Config {
		if cf.Line > 0 && (best == 0 || cf.Line < best) {
			best = cf.Line
		}
	}
	if ch.SQL != SQLSame || best == 0 {
		// The first line the file's text changed on: where a SQL change
		// shows (and a change of nothing else placed, somewhere near).
		if l := c.firstChangedLine(h.file); l > 0 && (best == 0 || l < best) {
			best = l
		}
	}
	return max(best, 1)
}

// firstChangedLine is the first line (1-based) where file differs between
// the revisions, or 0 when it does not or cannot be read.
func (c *comparer) firstChangedLine(file string) int {
	if c.base.Read == nil || c.head.Read == nil {
		return 0
	}
	b, okb := c.base.Read(file)
	h, okh := c.head.Read(file)
	if !okb || !okh {
		return 0
	}
	bl, hl := strings.Split(string(b), "\n"), strings.Split(string(h), "\n")
	for i := range hl {
		if i >= len(bl) || bl[i] != hl[i] {
			return i + 1
		}
	}
	return 0
}

// Breaks says whether the column change, alone, breaks a reader: it
// removes, renames or retypes a column that an impact reads.
func (ch *Change) Breaks(col ColumnChange) bool {
	switch col.Change {
	case ColumnRemoved, ColumnRenamed, ColumnType, ColumnMode:
		return readsColumn(ch.Impact, col)
	}
	return false
}

// BreaksConfig says whether the config change, alone, is breaking: a
// rebuild, or disabling an action that is read downstream.
func (ch *Change) BreaksConfig(cf ConfigChange) bool {
	return cf.FullRefresh || cf.Field == "disabled" && cf.To == "true" && len(ch.Impact) > 0
}
