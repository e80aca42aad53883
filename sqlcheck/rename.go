package sqlcheck

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Renaming an output column of an action across the project: a check of
// the whole graph in which, besides the usual analysis, the action's query
// says which select item names the column (gsql.OutputItem) and every
// statement that reads the action's table says where it writes the
// column's name (gsql.ColumnUses). Each place is mapped back to the file
// the text came from (positions.go); a rename is planned only when every
// place is literal text of a file, nothing reads the column where its name
// is not written (*, USING, …) and every reader was analysed. A dependent
// whose select passes the column through under its own name gets
// `new AS old`, so that no dependent's output changes: the rename stops at
// the action. The plan is then verified on the project compiled with the
// edits (rename_verify.go).

// RenameRequest asks for the rename of column Column of action Target
// (database.schema.name, any case) to NewName.
type RenameRequest struct {
	Target, Column, NewName string
}

// RenameEdit replaces [Start, End) of a project file (root-relative,
// slash-separated) — Old, as planned against — with New.
type RenameEdit struct {
	File       string
	Start, End int
	Old, New   string
}

// RenamePlace is a place that stands in the way of a rename.
type RenamePlace struct {
	File   string
	Offset int
	Why    string
}

// RenamePlan is a planned column rename, or a refusal (Refused set, with
// the places in the way).
type RenamePlan struct {
	Target string // as the check names it
	// Item is where the action's query names the column (the alias, or
	// the bare item's name) in its file.
	Item    RenameEdit
	Edits   []RenameEdit
	Files   map[string][]byte // the texts the edits were planned against
	Refused string
	Places  []RenamePlace

	req    RenameRequest
	before *Result
	// stmts are the statements of every action before the rename, and
	// edited the ones the edits change, old text → new text, by
	// lower-case action name.
	stmts  map[string][]labelled
	edited map[string]map[string]string
	files  map[string]string // each action's file, by lower-case name
}

type labelled struct{ label, sql string }

// validColumn is a column name a rename writes: one BigQuery takes
// unquoted (quoted names are not renamed to).
var validColumn = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// PlanColumnRename plans req on graph g. It analyses the whole graph on a
// scratch checker (it shares the warehouse schemas k fetched, never k's
// remembered analyses).
func (k *Checker) PlanColumnRename(ctx context.Context, g *dataformpb.CompiledGraph, opts Options, req RenameRequest) (*RenamePlan, error) {
	plan := &RenamePlan{req: req, Files: map[string][]byte{}, edited: map[string]map[string]string{}}
	refuse := func(why string, places ...RenamePlace) (*RenamePlan, error) {
		plan.Refused, plan.Places = why, places
		return plan, nil
	}
	switch {
	case !validColumn.MatchString(req.NewName) || len(req.NewName) > 300:
		return refuse("a column name here is letters, digits and _, not starting with a digit, at most 300 characters (dfd does not write quoted names)")
	case gsql.IsReserved(req.NewName):
		return refuse(req.NewName + " is a reserved keyword of BigQuery, which a column name must quote (dfd does not write quoted names)")
	case strings.HasPrefix(strings.ToLower(req.NewName), "_partition") || strings.HasPrefix(strings.ToLower(req.NewName), "_table_"):
		return refuse("BigQuery reserves column names starting with _PARTITION and _TABLE_")
	}
	actions := order(g)
	dp := g.GetProjectConfig().GetDefaultDatabase()
	var target *action
	for _, a := range actions {
		if strings.EqualFold(a.name, req.Target) {
			target = a
		}
	}
	if target == nil {
		return refuse("the project has no action " + req.Target)
	}
	plan.Target = target.name
	switch {
	case target.kind != "table" && target.kind != "view" && target.kind != "incremental":
		return refuse("only a table's, view's or incremental table's columns are renamed (this is a " + target.kind + ")")
	case target.jit:
		return refuse("its SQL comes from JiT code, which dfd does not rename in", RenamePlace{File: target.file, Why: "a JiT action"})
	case path.Ext(target.file) != ".sqlx":
		return refuse("dfd renames the columns of actions defined in .sqlx files (this one is defined in " + target.file + ")")
	}
	var blocked []RenamePlace
	for _, a := range actions {
		if a != target && a.jit && dependsOn(a, target.name, dp) {
			blocked = append(blocked, RenamePlace{File: a.file, Why: a.name + " depends on it and is a JiT action, whose SQL dfd cannot see"})
		}
	}
	for _, t := range g.GetTests() {
		for _, q := range []string{t.GetTestQuery(), t.GetExpectedOutputQuery()} {
			if mentionsWord(q, req.Column) && mentionsWord(q, target.target.GetName()) {
				blocked = append(blocked, RenamePlace{File: t.GetFileName(), Why: "the unit test " + t.GetName() + " may name it: dfd does not rename in tests' inputs and expectations"})
				break
			}
		}
	}
	if len(blocked) > 0 {
		return refuse("these actions read it where dfd cannot rename it", dedupePlaces(blocked)...)
	}
	run := &renameRun{plan: plan, target: target, table: target.name, dp: dp, stmtEdits: map[*action]map[string]*stmtEdits{}}
	scratch := &Checker{metadataID: k.metadataID, warehouse: make(map[string]*warehouseTable, len(k.warehouse))}
	for key, w := range k.warehouse {
		scratch.warehouse[key] = w
	}
	res, err := scratch.check(ctx, g, opts, run)
	if err != nil {
		return nil, fmt.Errorf("analysing the project for the rename of %s.%s: %w", req.Target, req.Column, err)
	}
	plan.before = res
	plan.stmts, plan.files = map[string][]labelled{}, map[string]string{}
	for _, a := range order(g) {
		plan.stmts[strings.ToLower(a.name)] = statementsOf(a)
		plan.files[strings.ToLower(a.name)] = path.Clean(a.file)
	}
	if !run.itemFound && len(run.places) == 0 {
		plan.Places = append(plan.Places, RenamePlace{File: path.Clean(target.file), Why: "dfd did not analyse its query"})
		return refuse("dfd did not analyse the query of "+target.name, plan.Places...)
	}
	if len(run.places) > 0 {
		return refuse("these places stand in the way (each says why); change them, then rename again", dedupePlaces(run.places)...)
	}
	if err := run.mapEdits(); err != nil {
		return nil, err
	}
	if len(run.places) == 0 {
		run.configEdits()
	}
	if len(run.places) > 0 {
		return refuse("these places name "+req.Column+" where dfd cannot rename it (text from ${…}, an includes function or JavaScript, or not a plain string); change them, then rename again", dedupePlaces(run.places)...)
	}
	sort.Slice(plan.Edits, func(i, j int) bool {
		a, b := plan.Edits[i], plan.Edits[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Start < b.Start
	})
	for i := 1; i < len(plan.Edits); i++ {
		if a, b := plan.Edits[i-1], plan.Edits[i]; a.File == b.File && b.Start < a.End {
			return nil, fmt.Errorf("rename of %s.%s: overlapping edits in %s (please report this)", req.Target, req.Column, a.File)
		}
	}
	return plan, nil
}

// renameRun is a column rename's look at the statements of one check.
type renameRun struct {
	plan      *RenamePlan
	target    *action
	table     string // the target's table as the catalog has it
	dp        string
	itemFound bool
	itemStmt  string // the query the item was found in
	item      gsql.OutputItem
	// stmtEdits are the edits of each statement, in its bytes.
	stmtEdits map[*action]map[string]*stmtEdits
	places    []RenamePlace
	c         *checker // the check running (for its files)
}

// stmtEdits are a statement's planned edits.
type stmtEdits struct {
	label, sql string
	edits      []stmtEdit
}

type stmtEdit struct {
	start, end int
	text       string
	// insert: text goes after the name at [start, end), which stays.
	insert bool
}

func dependsOn(a *action, target, dp string) bool {
	for _, d := range a.deps {
		if strings.EqualFold(targetPath(d, dp), target) {
			return true
		}
	}
	return false
}

// builtin reports whether a is an assertion the target's config generates
// (uniqueKey, nonNull, rowConditions): edited through the config.
func (r *renameRun) builtin(a *action) bool {
	return a.kind == "assertion" && strings.EqualFold(a.parent, r.target.name)
}

// reads reports whether statement sql of a may read the target's table:
// a depends on it, or the SQL writes the table's name.
func (r *renameRun) reads(a *action, sql string) bool {
	return mentionsWord(sql, r.target.target.GetName())
}

// block records a place in the way: offset off of statement sql of a,
// where the file has it (else a's definition).
func (r *renameRun) block(a *action, label, sql string, off int, why string) {
	p := RenamePlace{File: path.Clean(a.file), Why: why}
	if src := r.c.file(a.file); src != nil {
		if o, _, ok := r.fileOffset(a, label, sql, off); ok {
			p.Offset = o
		} else {
			p.Offset = definition(src, a)
		}
	}
	r.places = append(r.places, p)
}

// blinded: a statement after one dfd could not analyse.
func (r *renameRun) blinded(c *checker, a *action, label, sql, why string) {
	r.c = c
	if r.isTarget(a) || (!r.builtin(a) && r.reads(a, sql)) {
		r.block(a, label, sql, 0, a.name+" ("+label+") was not analysed: "+why)
	}
}

// statement looks at one analysed statement of the check.
func (r *renameRun) statement(c *checker, a *action, label, sql string, an gsql.Analysis) error {
	r.c = c
	if an.Empty || r.builtin(a) {
		return nil
	}
	isTarget := r.isTarget(a)
	if !isTarget && !r.reads(a, sql) {
		return nil
	}
	if an.Skipped != "" || an.Problem != nil {
		why := an.Skipped
		if an.Problem != nil {
			why = "its SQL has an error: " + an.Problem.Message
		} else if len(an.Unknown) > 0 {
			why = c.why(an)
		}
		r.block(a, label, sql, 0, a.name+" ("+label+") was not analysed: "+why)
		return nil
	}
	if declares(sql) {
		r.block(a, label, sql, 0, "it declares a temporary function or table, or script variables, which dfd does not rename in")
		return nil
	}
	if c.cat.HasVariable(r.plan.req.NewName) {
		// A column of the new name would take the variable's place
		// wherever the statement uses the variable.
		r.block(a, label, sql, 0, "its script declares a variable "+r.plan.req.NewName)
		return nil
	}
	if isTarget && (label == "query" || label == "incremental query") {
		if err := r.own(c, a, label, sql, an); err != nil {
			return err
		}
	}
	_, uses, err := c.cat.ColumnUses(c.ctx, sql, r.table, r.plan.req.Column)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", a.name, label, err)
	}
	if uses == nil {
		r.block(a, label, sql, 0, a.name+" ("+label+") was not analysed")
		return nil
	}
	for _, h := range uses.Hidden {
		r.block(a, label, sql, h.Offset, "it reads "+r.plan.req.Column+" here, but "+h.Why)
	}
	for _, u := range uses.Uses {
		old := sql[u.Start:u.End]
		text := quoteLike(old, r.plan.req.NewName)
		if u.Implicit {
			// The select's output keeps the old name.
			text += " AS " + old
		}
		r.add(a, label, sql, stmtEdit{start: u.Start, end: u.End, text: text})
	}
	return nil
}

// own finds the item of the target's query naming the column.
func (r *renameRun) own(c *checker, a *action, label, sql string, an gsql.Analysis) error {
	req := r.plan.req
	_, it, err := c.cat.OutputItem(c.ctx, sql, req.Column)
	if err != nil {
		return fmt.Errorf("%s (%s): %w", a.name, label, err)
	}
	if it == nil {
		r.block(a, label, sql, 0, "dfd did not analyse its "+label)
		return nil
	}
	if it.Why != "" {
		r.block(a, label, sql, 0, it.Why)
		return nil
	}
	for _, col := range an.Columns {
		if strings.EqualFold(col.Name, req.NewName) && !strings.EqualFold(col.Name, req.Column) {
			r.block(a, label, sql, it.Start, a.name+" already has a column "+col.Name)
			return nil
		}
	}
	if it.Alias {
		// Other words of the same name may be the alias (GROUP BY,
		// ORDER BY, QUALIFY name it) or another column: which, dfd does
		// not tell, so it does not guess.
		toks, err := gsql.Tokens(sql)
		if err != nil {
			return fmt.Errorf("%s (%s): tokens: %w", a.name, label, err)
		}
		uses, err := r.selfUses(c, sql)
		if err != nil {
			return err
		}
		for _, t := range toks {
			if t.Kind != gsql.Word && t.Kind != gsql.QuotedIdent || t.Start == it.Start || uses[t.Start] {
				continue
			}
			if strings.EqualFold(strings.Trim(sql[t.Start:t.End], "`"), req.Column) {
				r.block(a, label, sql, t.Start, "its query names "+req.Column+" here too (the alias in GROUP BY, ORDER BY or QUALIFY, or another column of that name): rename it there, or write the expression, then rename again")
			}
		}
		r.add(a, label, sql, stmtEdit{start: it.Start, end: it.End, text: quoteLike(sql[it.Start:it.End], req.NewName)})
	} else {
		r.add(a, label, sql, stmtEdit{start: it.Start, end: it.End, text: " AS " + req.NewName, insert: true})
	}
	if label == "query" {
		r.itemFound, r.itemStmt, r.item = true, sql, *it
	}
	return nil
}

// selfUses are the starts of the target's own column's uses in its SQL
// (an incremental query reading its own table).
func (r *renameRun) selfUses(c *checker, sql string) (map[int]bool, error) {
	_, uses, err := c.cat.ColumnUses(c.ctx, sql, r.table, r.plan.req.Column)
	if err != nil {
		return nil, err
	}
	out := map[int]bool{}
	if uses != nil {
		for _, u := range uses.Uses {
			out[u.Start] = true
		}
	}
	return out, nil
}

func (r *renameRun) add(a *action, label, sql string, e stmtEdit) {
	m := r.stmtEdits[a]
	if m == nil {
		m = map[string]*stmtEdits{}
		r.stmtEdits[a] = m
	}
	s := m[label]
	if s == nil {
		s = &stmtEdits{label: label, sql: sql}
		m[label] = s
	}
	for _, x := range s.edits {
		if x.start == e.start && x.end == e.end && x.insert == e.insert {
			return
		}
	}
	s.edits = append(s.edits, e)
}

// quoteLike is name written as old is: back-quoted when old is.
func quoteLike(old, name string) string {
	if strings.HasPrefix(old, "`") {
		return "`" + name + "`"
	}
	return name
}

// declares reports whether sql is a DECLARE or a CREATE TEMP FUNCTION / TABLE (whose
// analysis declares something: it is not analysed twice).
func declares(sql string) bool {
	toks, err := gsql.Tokens(sql)
	if err != nil {
		return true
	}
	var words []string
	for _, t := range toks {
		if t.Kind == gsql.Word && len(words) < 4 {
			words = append(words, strings.ToUpper(sql[t.Start:t.End]))
		}
	}
	if len(words) > 0 && words[0] == "DECLARE" {
		return true
	}
	return len(words) >= 2 && words[0] == "CREATE" && (words[1] == "TEMP" || words[1] == "TEMPORARY" ||
		len(words) >= 4 && words[1] == "OR" && (words[3] == "TEMP" || words[3] == "TEMPORARY"))
}

// mentionsWord reports whether s has word as a whole word (any case).
func mentionsWord(s, word string) bool {
	lw := strings.ToLower(word)
	for _, w := range words(s) {
		if w == lw {
			return true
		}
	}
	return false
}

func dedupePlaces(ps []RenamePlace) []RenamePlace {
	seen := map[string]bool{}
	var out []RenamePlace
	for _, p := range ps {
		k := fmt.Sprintf("%s:%d:%s", p.File, p.Offset, p.Why)
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// isTarget: the check's own action values are not the plan's.
func (r *renameRun) isTarget(a *action) bool { return strings.EqualFold(a.name, r.target.name) }
