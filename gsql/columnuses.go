package gsql

import (
	"context"
	"fmt"
	"strings"

	googlesql "github.com/goccy/go-googlesql"
)

// Where a statement names one column of one table, for a column rename
// (workspace's): the resolved tree says which references resolve to the
// column — a ColumnRef to a column the table's scan produced — and the
// parse locations GoogleSQL records on resolved nodes when asked
// (AnalyzerOptions' parse location record type) say where each is written.
// Recording locations costs every node a little, so only ColumnUses asks
// for it.
//
// A select item that passes a table column through unchanged
// (`SELECT customer_id FROM t`) has no ColumnRef: the select's scan lists
// the table's column itself. Such items are found by lining the scan's
// columns up with the select's items, which the parser gives; a column
// that reaches a select through * (or t.*) has no item of its own, and one
// compared through JOIN … USING has no location: both are Hidden, never
// guessed at.

// ColumnUse is a place where a statement writes the column's name.
type ColumnUse struct {
	// Start, End are the name's bytes in the statement (with its back
	// quotes, if quoted): the last name of a path such as t.customer_id.
	Start, End int
	// Implicit: the name is a whole select item without an alias, so it
	// also names that select's output column (renaming it renames the
	// output column too, unless the item gets `AS old`).
	Implicit bool
}

// HiddenUse is a reference to the column whose name is not written where
// a rename could change it.
type HiddenUse struct {
	Offset int // in the statement: the construct that reads it
	Why    string
}

// ColumnUses are a statement's references to one column of one table.
type ColumnUses struct {
	Uses   []ColumnUse
	Hidden []HiddenUse
}

// usesRequest is what ColumnUses (or, with output, OutputItem) asks
// Analyze for.
type usesRequest struct {
	table, column string
	output        bool
}

// ColumnUses analyses stmt as Analyze does, recording parse locations, and
// finds its references to column of table (a catalog path). The uses are
// nil when the statement was not analysed (a Problem, Skipped).
func (c *Catalog) ColumnUses(ctx context.Context, stmt, table, column string) (Analysis, *ColumnUses, error) {
	an, err := c.analyzeLocating(ctx, stmt, &usesRequest{table: table, column: column})
	if err != nil {
		return an, nil, err
	}
	u := c.usesOut
	c.usesOut = nil
	return an, u, nil
}

// analyzeLocating is Analyze with parse locations recorded for req, whose
// answer the analysis leaves in usesOut or outputOut.
func (c *Catalog) analyzeLocating(ctx context.Context, stmt string, req *usesRequest) (Analysis, error) {
	c.uses = req
	defer func() { c.uses = nil }()
	return c.Analyze(ctx, stmt)
}

// recordLocations turns parse location recording on or off.
func (c *Catalog) recordLocations(on bool) error {
	mode := googlesql.ParseLocationRecordTypeParseLocationRecordNone
	if on {
		mode = googlesql.ParseLocationRecordTypeParseLocationRecordFullNodeScope
	}
	if err := c.opts.SetParseLocationRecordType(mode); err != nil {
		return fmt.Errorf("parse locations: %w", err)
	}
	return nil
}

// usesWalk collects, in one walk of the resolved tree, the target table's
// scans, the column references and the project scans (selects), each with
// the project scans around it.
type usesWalk struct {
	c        *Catalog
	lw       *lineageWalk // for tablePath
	req      *usesRequest
	stmt     string
	targets  map[int32]int // target column id → index of the project scan around its table scan (-1: none)
	refs     []colRef
	projects []projectScan
	// groups are GROUP BY keys that are a column as it is (key id →
	// the column's id): references after the grouping read the key.
	groups map[int32]int32
	// named are the ranges of field accesses (s.field), whose last name
	// is a field's, not a column's.
	named [][2]int
	// passed are select items that pass a column through.
	passed [][2]int
	stack  []int                      // project scans around the node being walked
	node   googlesql.ASTStatementNode // the statement as parsed
	hidden []HiddenUse
}

type colRef struct {
	id         int32
	start, end int // -1: no location
	near       int // the nearest location around it
	around     []int
}

type projectScan struct {
	// start, end: its location, or (located false) the nearest one
	// around it (a WITH's).
	start, end int
	located    bool
	cols       []int32
	computed   map[int32]bool
}

// location is a node's recorded range, or ok false.
func location(n any) (start, end int, ok bool) {
	l, isLoc := n.(interface {
		GetParseLocationRangeOrNULL() (*googlesql.ParseLocationRange, error)
	})
	if !isLoc {
		return 0, 0, false
	}
	r, err := l.GetParseLocationRangeOrNULL()
	if err != nil || r == nil {
		return 0, 0, false
	}
	return rangeOffsets(r)
}

func rangeOffsets(r *googlesql.ParseLocationRange) (start, end int, ok bool) {
	s, err := r.Start()
	if err != nil || s == nil {
		return 0, 0, false
	}
	e, err := r.End()
	if err != nil || e == nil {
		return 0, 0, false
	}
	so, err1 := s.GetByteOffset()
	eo, err2 := e.GetByteOffset()
	if err1 != nil || err2 != nil || so < 0 || eo < so {
		return 0, 0, false
	}
	return int(so), int(eo), true
}

func (w *usesWalk) walk(n googlesql.ResolvedNode, near, nearEnd int) error {
	if s, e, ok := location(n); ok {
		near, nearEnd = s, e
	}
	pushed := false
	switch n := n.(type) {
	case *googlesql.ResolvedTableScan:
		if err := w.tableScan(n, near); err != nil {
			return err
		}
	case *googlesql.ResolvedColumnRef:
		rc, err := n.Column()
		if err != nil {
			return err
		}
		id, err := rc.ColumnId()
		if err != nil {
			return err
		}
		r := colRef{id: id, start: -1, end: -1, near: near, around: append([]int(nil), w.stack...)}
		if s, e, ok := location(n); ok {
			r.start, r.end = s, e
		}
		w.refs = append(w.refs, r)
	case *googlesql.ResolvedGetStructField:
		if s, e, ok := location(n); ok {
			w.named = append(w.named, [2]int{s, e})
		}
	case *googlesql.ResolvedAggregateScan:
		keys, err := n.GroupByList()
		if err != nil {
			return err
		}
		for _, k := range keys {
			x, err := k.Expr()
			if err != nil {
				return err
			}
			ref, ok := x.(*googlesql.ResolvedColumnRef)
			if !ok {
				continue
			}
			from, err := ref.Column()
			if err != nil {
				return err
			}
			to, err := k.Column()
			if err != nil {
				return err
			}
			fid, err := from.ColumnId()
			if err != nil {
				return err
			}
			tid, err := to.ColumnId()
			if err != nil {
				return err
			}
			w.groups[tid] = fid
		}
	case *googlesql.ResolvedProjectScan, *googlesql.ResolvedOrderByScan:
		// A select's output: a project scan, or an order-by scan when
		// the select list only passes columns through (ORDER BY on top).
		p := projectScan{start: near, end: nearEnd, computed: map[int32]bool{}}
		if s, e, ok := location(n); ok {
			p.start, p.end, p.located = s, e, true
		}
		cols, err := scanColumns(n.(googlesql.ResolvedScanNode))
		if err != nil {
			return err
		}
		for _, rc := range cols {
			id, err := rc.ColumnId()
			if err != nil {
				return err
			}
			p.cols = append(p.cols, id)
		}
		var exprs []*googlesql.ResolvedComputedColumn
		if ps, ok := n.(*googlesql.ResolvedProjectScan); ok {
			if exprs, err = ps.ExprList(); err != nil {
				return err
			}
		}
		for _, cc := range exprs {
			rc, err := cc.Column()
			if err != nil {
				return err
			}
			id, err := rc.ColumnId()
			if err != nil {
				return err
			}
			p.computed[id] = true
		}
		w.projects = append(w.projects, p)
		w.stack = append(w.stack, len(w.projects)-1)
		pushed = true
	}
	kids, err := n.GetChildNodes()
	if err != nil {
		return err
	}
	_, subquery := n.(*googlesql.ResolvedSubqueryExpr)
	for _, k := range kids {
		if k == nil {
			continue
		}
		if _, ref := k.(*googlesql.ResolvedColumnRef); ref && subquery {
			if _, _, ok := location(k); !ok {
				// The subquery's parameter list: the columns its
				// correlated references (walked in it) read.
				continue
			}
		}
		if err := w.walk(k, near, nearEnd); err != nil {
			return err
		}
	}
	if pushed {
		w.stack = w.stack[:len(w.stack)-1]
	}
	return nil
}

// tableScan notes the target column's ids in a scan of the target table.
func (w *usesWalk) tableScan(s *googlesql.ResolvedTableScan, near int) error {
	path, why, err := w.lw.tablePath(s)
	if err != nil {
		return err
	}
	if why != "" {
		// Which table this is cannot be told: it may be the target.
		w.hidden = append(w.hidden, HiddenUse{Offset: near, Why: why})
		return nil
	}
	if !strings.EqualFold(path, w.req.table) {
		return nil
	}
	t, err := s.Table()
	if err != nil {
		return err
	}
	cols, err := s.ColumnList()
	if err != nil {
		return err
	}
	idx, err := s.ColumnIndexList()
	if err != nil {
		return err
	}
	if len(idx) != len(cols) {
		return fmt.Errorf("table scan of %s: %d columns, %d indexes", path, len(cols), len(idx))
	}
	around := -1
	if len(w.stack) > 0 {
		around = w.stack[len(w.stack)-1]
	}
	for i, rc := range cols {
		tc, err := t.GetColumn(idx[i])
		if err != nil {
			return err
		}
		name, err := tc.Name()
		if err != nil {
			return err
		}
		if strings.EqualFold(name, w.req.column) {
			id, err := rc.ColumnId()
			if err != nil {
				return err
			}
			w.targets[id] = around
		}
	}
	return nil
}

// selectItem is one item of a select list as parsed.
type selectItem struct {
	start, end int  // the whole item
	star       bool // *, t.*, * EXCEPT …
	path       bool // the expression is a path (t.col, col)
	alias      bool
	// nameStart, nameEnd: the path's last name (path), or the alias's
	// name (alias).
	nameStart, nameEnd int
	lastStart, lastEnd int // the path's last name, when path
}

type parsedSelect struct {
	start, end int
	items      []selectItem
}

// selects are the statement's selects (every SELECT, nested ones too), as
// the parser has them.
func (c *Catalog) selects(e *engine, st parsedStatement) ([]parsedSelect, error) {
	nodes, err := st.node.GetDescendantsWithKinds([]int32{int32(googlesql.ASTNodeKindAstSelect) + e.kindShift})
	if err != nil {
		return nil, err
	}
	var out []parsedSelect
	for _, n := range nodes {
		sel, ok := n.(*googlesql.ASTSelect)
		if !ok {
			continue
		}
		ps := parsedSelect{start: -1, end: -1}
		if r, err := sel.GetParseLocationRange(); err == nil && r != nil {
			ps.start, ps.end, _ = rangeOffsets(r)
		}
		list, err := sel.SelectList()
		if err != nil || list == nil {
			return nil, fmt.Errorf("select list: %v", err)
		}
		n, err := list.NumChildren()
		if err != nil {
			return nil, err
		}
		for i := int32(0); i < n; i++ {
			col, err := list.Columns(i)
			if err != nil {
				return nil, err
			}
			it, err := itemOf(col)
			if err != nil {
				return nil, err
			}
			ps.items = append(ps.items, it)
		}
		out = append(out, ps)
	}
	return out, nil
}

func itemOf(col *googlesql.ASTSelectColumn) (selectItem, error) {
	it := selectItem{start: -1, end: -1, nameStart: -1, nameEnd: -1, lastStart: -1, lastEnd: -1}
	if r, err := col.GetParseLocationRange(); err == nil && r != nil {
		it.start, it.end, _ = rangeOffsets(r)
	}
	e, err := col.Expression()
	if err != nil {
		return it, err
	}
	switch x := e.(type) {
	case *googlesql.ASTStar, *googlesql.ASTDotStar, *googlesql.ASTStarWithModifiers, *googlesql.ASTDotStarWithModifiers:
		it.star = true
	case *googlesql.ASTPathExpression:
		last, err := x.LastName()
		if err != nil || last == nil {
			return it, err
		}
		if r, err := last.GetParseLocationRange(); err == nil && r != nil {
			if s, e, ok := rangeOffsets(r); ok {
				it.path, it.lastStart, it.lastEnd = true, s, e
				it.nameStart, it.nameEnd = s, e
			}
		}
	}
	a, err := col.Alias()
	if err != nil {
		return it, err
	}
	if a != nil {
		id, err := a.Identifier()
		if err != nil {
			return it, err
		}
		if id != nil {
			if r, err := id.GetParseLocationRange(); err == nil && r != nil {
				if s, e, ok := rangeOffsets(r); ok {
					it.alias, it.nameStart, it.nameEnd = true, s, e
				}
			}
		}
	}
	return it, nil
}

// columnUses is what ColumnUses returns for a resolved statement.
func (c *Catalog) columnUses(e *engine, st parsedStatement, stmt string, res googlesql.ResolvedStatementNode) (*ColumnUses, error) {
	w := &usesWalk{c: c, req: c.uses, stmt: stmt, targets: map[int32]int{}, groups: map[int32]int32{},
		lw: &lineageWalk{c: c, reads: st.tables, tablePaths: map[string]string{}}, node: st.node}
	if err := w.walk(res, 0, len(stmt)); err != nil {
		return nil, err
	}
	for key, col := range w.groups {
		if around, ok := w.targets[col]; ok {
			w.targets[key] = around // the same select's scope
		}
	}
	out := &ColumnUses{Hidden: w.hidden}
	if len(w.targets) == 0 {
		return out, nil
	}
	if _, ok := res.(*googlesql.ResolvedQueryStmt); !ok {
		// INSERT's column list, MERGE's and UPDATE's SET name columns
		// through ResolvedColumns, not references: not followed.
		out.Hidden = append(out.Hidden, HiddenUse{Offset: 0, Why: "it is not a query (DML or DDL), whose column lists dfd does not follow"})
		return out, nil
	}
	sels, err := c.selects(e, st)
	if err != nil {
		return nil, err
	}
	seen := map[[2]int]bool{}
	add := func(u ColumnUse) {
		if k := [2]int{u.Start, u.End}; !seen[k] {
			seen[k] = true
			out.Uses = append(out.Uses, u)
		}
	}
	hide := func(off int, why string) { out.Hidden = append(out.Hidden, HiddenUse{Offset: off, Why: why}) }
	// References: direct when the scan of the table is inside the same
	// select (or one around it: a correlated reference); one above a
	// select the column passed through names that select's output.
	for _, r := range w.refs {
		around, ok := w.targets[r.id]
		if !ok || !(around < 0 || contains(r.around, around)) {
			continue
		}
		if r.start < 0 {
			hide(r.near, "it is read where its name is not written as the table's column (JOIN … USING, ORDER BY an output column, a whole-row value)")
			continue
		}
		s, e, ok := lastName(stmt, r.start, r.end)
		if !ok || !strings.EqualFold(unquote(stmt[s:e]), c.uses.column) {
			hide(r.start, "it is read as "+stmt[r.start:r.end]+", not by its name")
			continue
		}
		add(ColumnUse{Start: s, End: e})
	}
	scanSel := w.selectsOfScans(sels)
	// Select items passing a column through: the target's are uses,
	// others' references to another column (accounted for by account).
	for pi, p := range w.projects {
		if sel, ok := scanSel[pi]; ok && starItem(sel) < 0 && len(sel.items) == len(p.cols) {
			for i, id := range p.cols {
				if it := sel.items[i]; it.path && !p.computed[id] {
					w.passed = append(w.passed, [2]int{it.lastStart, it.lastEnd})
				}
			}
		}
		var pass []int
		for i, id := range p.cols {
			if around, ok := w.targets[id]; ok && around == pi && !p.computed[id] {
				pass = append(pass, i)
			}
		}
		if len(pass) == 0 {
			continue
		}
		sel, ok := scanSel[pi]
		if !ok {
			hide(max(p.start, 0), "dfd cannot tell which select item outputs it")
			continue
		}
		if i := starItem(sel); i >= 0 {
			hide(sel.items[i].start, "it is selected through *, so the select's output would change")
			continue
		}
		if len(sel.items) != len(p.cols) {
			hide(sel.start, "dfd cannot line the select's items up with its columns")
			continue
		}
		for _, i := range pass {
			it := sel.items[i]
			if !it.path || !strings.EqualFold(unquote(stmt[it.lastStart:it.lastEnd]), c.uses.column) {
				hide(it.start, "dfd cannot tell where this item names it")
				continue
			}
			add(ColumnUse{Start: it.lastStart, End: it.lastEnd})
		}
	}
	if err := w.account(out, sels); err != nil {
		return nil, err
	}
	// A use that is a whole select item without an alias names the
	// output column too.
	for i, u := range out.Uses {
		for _, sel := range sels {
			for _, it := range sel.items {
				if it.path && !it.alias && it.lastStart == u.Start && it.lastEnd == u.End {
					out.Uses[i].Implicit = true
				}
			}
		}
	}
	return out, nil
}

func contains(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// selectsOfScans are the selects the project scans resolve, by scan: a
// located scan's is the outermost select inside its range (the range may
// include the parentheses around the select); an unlocated one's (the
// main query of a WITH) the one select in the range around it that no
// located scan has, if there is exactly one.
func (w *usesWalk) selectsOfScans(sels []parsedSelect) map[int]parsedSelect {
	out := map[int]parsedSelect{}
	claimed := map[int]bool{}
	for pi, p := range w.projects {
		if !p.located {
			continue
		}
		best := -1
		for i, s := range sels {
			if s.start < p.start || s.end > p.end {
				continue
			}
			if best < 0 || s.start < sels[best].start || (s.start == sels[best].start && s.end > sels[best].end) {
				best = i
			}
		}
		if best >= 0 {
			out[pi] = sels[best]
			claimed[best] = true
		}
	}
	for pi, p := range w.projects {
		if p.located {
			continue
		}
		found := -1
		for i, s := range sels {
			if claimed[i] || s.start < p.start || s.end > p.end {
				continue
			}
			if found >= 0 {
				found = -2 // more than one: no telling
				break
			}
			found = i
		}
		if found >= 0 {
			out[pi] = sels[found]
		}
	}
	return out
}

func starItem(s parsedSelect) int {
	for i, it := range s.items {
		if it.star {
			return i
		}
	}
	return -1
}

// lastName is the span of the last name of the path written at
// [start, end) of stmt: `a`.`b`, a.b, b.
func lastName(stmt string, start, end int) (int, int, bool) {
	if end > len(stmt) || start >= end {
		return 0, 0, false
	}
	if stmt[end-1] == '`' {
		i := strings.LastIndexByte(stmt[start:end-1], '`')
		if i < 0 {
			return 0, 0, false
		}
		return start + i, end, true
	}
	i := end
	for i > start && isIdentPart(stmt[i-1]) {
		i--
	}
	if i == end || !isIdentStart(stmt[i]) {
		return 0, 0, false
	}
	return i, end, true
}

func unquote(name string) string {
	if len(name) >= 2 && name[0] == '`' && name[len(name)-1] == '`' {
		return name[1 : len(name)-1]
	}
	return name
}

// account makes sure every time the statement writes the column's name
// (as a name: not in a string or a comment) is understood: a use, a
// reference to another column of that name (another table's, a CTE's, a
// subquery's output), a field access, an alias being defined, or a GROUP
// BY key naming a select item the rename keeps the name of. Any other is
// Hidden: a rename leaving it would break, or change, what it means.
func (w *usesWalk) account(out *ColumnUses, sels []parsedSelect) error {
	toks, err := Tokens(w.stmt)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	known := map[[2]int]bool{}
	for _, u := range out.Uses {
		known[[2]int{u.Start, u.End}] = true
	}
	for _, r := range w.refs {
		if r.start >= 0 {
			if s, e, ok := lastName(w.stmt, r.start, r.end); ok {
				known[[2]int{s, e}] = true
			}
		}
	}
	for _, n := range append(w.named, w.passed...) {
		if s, e, ok := lastName(w.stmt, n[0], n[1]); ok {
			known[[2]int{s, e}] = true
		}
	}
	keys, err := w.groupKeys()
	if err != nil {
		return err
	}
	for _, sel := range sels {
		implicit := false
		for _, it := range sel.items {
			if it.alias {
				known[[2]int{it.nameStart, it.nameEnd}] = true
			}
			if it.path && !it.alias && known[[2]int{it.lastStart, it.lastEnd}] &&
				strings.EqualFold(unquote(w.stmt[it.lastStart:it.lastEnd]), w.req.column) {
				implicit = true
			}
		}
		if implicit {
			// GROUP BY customer_id after SELECT customer_id: the key
			// names the item, which keeps its name (`new AS customer_id`).
			for _, k := range keys {
				if k[0] >= sel.start && k[1] <= sel.end {
					known[k] = true
				}
			}
		}
	}
	for _, t := range toks {
		if t.Kind != Word && t.Kind != QuotedIdent {
			continue
		}
		if !strings.EqualFold(unquote(w.stmt[t.Start:t.End]), w.req.column) || known[[2]int{t.Start, t.End}] {
			continue
		}
		out.Hidden = append(out.Hidden, HiddenUse{Offset: t.Start, Why: "dfd cannot tell what " + w.stmt[t.Start:t.End] + " names here"})
	}
	return nil
}

// groupKeys are the GROUP BY keys written as one name, as parsed.
func (w *usesWalk) groupKeys() ([][2]int, error) {
	e, err := theEngine()
	if err != nil {
		return nil, err
	}
	nodes, err := w.node.GetDescendantsWithKinds([]int32{int32(googlesql.ASTNodeKindAstGroupingItem) + e.kindShift})
	if err != nil {
		return nil, err
	}
	var out [][2]int
	for _, n := range nodes {
		gi, ok := n.(*googlesql.ASTGroupingItem)
		if !ok {
			continue
		}
		x, err := gi.Expression()
		if err != nil {
			return nil, err
		}
		p, ok := x.(*googlesql.ASTPathExpression)
		if !ok {
			continue
		}
		if k, err := p.NumNames(); err != nil || k != 1 {
			continue
		}
		if r, err := p.GetParseLocationRange(); err == nil && r != nil {
			if s, e, ok := rangeOffsets(r); ok {
				out = append(out, [2]int{s, e})
			}
		}
	}
	return out, nil
}
