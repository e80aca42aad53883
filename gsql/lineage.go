package gsql

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	googlesql "github.com/goccy/go-googlesql"
)

// Column-level lineage of one query: for each output column, the columns
// of the tables it reads that its values are computed from, read off the
// resolved tree GoogleSQL's analyzer builds (every ResolvedColumn has an id;
// a ColumnRef names the id that a ComputedColumn, a TableScan or another
// scan defines).
//
// # What counts
//
// An input counts when its values flow into the output column's values:
// selected or renamed columns, function and operator arguments, aggregate
// and window function arguments, the values IF, CASE, COALESCE, IFNULL,
// NULLIF and IFERROR choose among, the elements of arrays (UNNEST, array
// literals, ARRAY_AGG, ARRAY_CONCAT), scalar and ARRAY subqueries, and
// both sides of an IN. What only decides which rows there are, how they are
// grouped or ordered, or which value is chosen does not: WHERE, HAVING,
// QUALIFY, JOIN ON (and USING's equality), GROUP BY keys that are not
// selected, window PARTITION BY and ORDER BY, ORDER BY and LIMIT inside
// aggregates, the conditions of IF and CASE (and CASE's operand), PIVOT's
// FOR column, EXISTS. This is OpenLineage's "direct" lineage (identity,
// transformation, aggregation) without its "indirect" kinds (filter,
// join, group by, sort, window, conditional). A column computed from no
// column (a literal, COUNT(*), ROW_NUMBER(), CURRENT_DATE()) has no input.
//
// # Paths
//
// A STRUCT field read is its own input: t.page.url is column "page.url"
// of t; selecting t.page whole is "page". Fields of ARRAY<STRUCT> columns
// read through UNNEST are paths too (items.sku), as BigQuery names nested
// fields. A STRUCT built in the query (STRUCT(a AS x, b AS y), SELECT AS
// STRUCT) keeps each field's lineage apart (ColumnLineage.Fields), so a
// later s.x is a, not a and b.

// Input is one column a value is computed from.
type Input struct {
	// Table is the table read, as the catalog has it: "project.dataset.table".
	Table string
	// Column is the column, or a STRUCT field as a dotted path ("page.url").
	Column string
	// Identity: the values are this column's values unchanged (selected,
	// renamed, through CTEs, subqueries, joins, set operations, UNNEST, or
	// chosen by IF, CASE, COALESCE); false: computed from them (functions,
	// operators, casts, aggregates).
	Identity bool
}

func (in Input) String() string { return in.Table + "." + in.Column }

// ColumnLineage is where the values of one output column come from.
type ColumnLineage struct {
	Name string
	Type Type
	// Inputs are the columns of the tables the statement reads that the
	// values are computed from (see the package's "What counts"), sorted
	// by table and column; none for a column computed from no column.
	Inputs []Input
	// Fields is set for a STRUCT (or ARRAY of STRUCT) whose fields the
	// statement builds or combines: each field's own lineage, complete
	// (Inputs is their union). Without it, a field's lineage is read off
	// Inputs (Field).
	Fields []ColumnLineage
	// Unresolved says why part of the lineage is not known (a table-valued
	// function's output, a construct dfd does not follow), sorted; the
	// Inputs are then only what could be followed.
	Unresolved []string
}

// Field is the lineage of a field of the column: path is field names
// below it ("url" for page.url; none: the column itself). A field the
// column does not have is read as Field reads a field of a computed value:
// the inputs of the whole.
func (l ColumnLineage) Field(path ...string) ColumnLineage {
	cur := l
	for _, name := range path {
		next := ColumnLineage{Name: name, Unresolved: cur.Unresolved}
		if f, ok := fieldOf(cur.Fields, name); ok {
			next = f
		} else if cur.Fields == nil {
			for _, in := range cur.Inputs {
				if in.Identity {
					in.Column += "." + name
				}
				next.Inputs = append(next.Inputs, in)
			}
			for _, f := range cur.Type.fields() {
				if strings.EqualFold(f.Name, name) {
					next.Type = f.Type
				}
			}
		} else {
			next.Inputs = cur.Inputs
		}
		cur = next
	}
	return cur
}

func fieldOf(fields []ColumnLineage, name string) (ColumnLineage, bool) {
	for _, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return ColumnLineage{}, false
}

// fields are a STRUCT's fields, or its elements' for an ARRAY of STRUCT.
func (t Type) fields() []Column {
	for t.Kind == "ARRAY" && t.Elem != nil {
		t = *t.Elem
	}
	return t.Fields
}

// SetLineage says whether Analyze reads each query's column lineage
// (Analysis.Lineage): a walk of the resolved tree, each node a call into
// the engine. BenchmarkLineage measured 0.1–2 ms more per statement on
// top of 1.5–6 ms of analysis (most for STRUCT and UNNEST work), hence
// off unless asked for.
func (c *Catalog) SetLineage(on bool) { c.lineage = on }

// Lineage analyses one query statement and returns its column lineage:
// Analyze with SetLineage on for this statement.
func (c *Catalog) Lineage(ctx context.Context, stmt string) (Analysis, error) {
	was := c.lineage
	c.lineage = true
	defer func() { c.lineage = was }()
	return c.Analyze(ctx, stmt)
}

// lineageOf is the lineage of q's output columns (cols, as Analyze read
// them); reads are the table names the statement reads as written. It
// never fails: what the walk cannot follow is Unresolved.
func (c *Catalog) lineageOf(q *googlesql.ResolvedQueryStmt, reads []string, cols []Column) []ColumnLineage {
	w := &lineageWalk{c: c, reads: reads, vals: map[int32]*val{}, tableCols: map[int32]tableCol{}, tablePaths: map[string]string{}}
	out := make([]ColumnLineage, len(cols))
	for i := range cols {
		out[i] = ColumnLineage{Name: cols[i].Name, Type: cols[i].Type}
	}
	fail := func(err error) []ColumnLineage {
		for i := range out {
			out[i].Inputs, out[i].Fields = nil, nil
			out[i].Unresolved = []string{"dfd could not read its lineage: " + firstLine(err.Error())}
		}
		return out
	}
	root, err := q.Query()
	if err != nil {
		return fail(err)
	}
	if err := w.scan(root); err != nil {
		return fail(err)
	}
	ocs, err := q.OutputColumnList()
	if err != nil {
		return fail(err)
	}
	if len(ocs) != len(cols) {
		return fail(fmt.Errorf("%d output columns, %d in the schema", len(ocs), len(cols)))
	}
	for i, oc := range ocs {
		rc, err := oc.Column()
		if err != nil {
			return fail(err)
		}
		v, err := w.col(rc)
		if err != nil {
			return fail(err)
		}
		out[i] = v.lineage(cols[i].Name, cols[i].Type)
	}
	return out
}

// ref is an input without its identity flag.
type ref struct{ table, column string }

// val is the lineage of a value while the walk runs: the inputs it is
// computed from (true: unchanged), the fields of a STRUCT built here, and
// why part of it is unknown.
type val struct {
	refs       map[ref]bool
	fields     map[string]*val // by lower-case name
	fieldNames []string        // in order, as written
	unresolved map[string]bool
}

var emptyVal = &val{}

func (v *val) addRef(r ref, identity bool) {
	if v.refs == nil {
		v.refs = map[ref]bool{}
	}
	if was, ok := v.refs[r]; ok {
		identity = identity && was
	}
	v.refs[r] = identity
}

func (v *val) addUnresolved(why ...string) {
	for _, w := range why {
		if v.unresolved == nil {
			v.unresolved = map[string]bool{}
		}
		v.unresolved[w] = true
	}
}

func unresolvedVal(why string) *val {
	v := &val{}
	v.addUnresolved(why)
	return v
}

// flatInto adds every input of v, fields included, to out; identity
// keeps each input's flag when keep.
func (v *val) flatInto(out *val, keep bool) {
	for r, id := range v.refs {
		out.addRef(r, id && keep)
	}
	for _, f := range v.fields {
		f.flatInto(out, keep)
	}
	for w := range v.unresolved {
		out.addUnresolved(w)
	}
}

// computed is a value computed from vs: all their inputs, none unchanged.
func computed(vs ...*val) *val {
	out := &val{}
	for _, v := range vs {
		v.flatInto(out, false)
	}
	return out
}

// oneOf is a value that is one of vs unchanged (a set operation's column,
// IF's and COALESCE's result, an array's elements): inputs keep their
// flags, STRUCT fields merge.
func oneOf(vs ...*val) *val {
	if len(vs) == 1 {
		return vs[0]
	}
	out := &val{}
	for _, v := range vs {
		for r, id := range v.refs {
			out.addRef(r, id)
		}
		for w := range v.unresolved {
			out.addUnresolved(w)
		}
	}
	// Fields merge only when every value has them: a field of a value
	// without fields is read off its inputs (field).
	for _, v := range vs {
		for _, name := range v.fieldNames {
			key := strings.ToLower(name)
			if out.fields == nil {
				out.fields = map[string]*val{}
			}
			if _, ok := out.fields[key]; !ok {
				out.fieldNames = append(out.fieldNames, name)
				out.fields[key] = emptyVal
			}
		}
	}
	for _, name := range out.fieldNames {
		var parts []*val
		for _, v := range vs {
			parts = append(parts, v.field(name))
		}
		out.fields[strings.ToLower(name)] = oneOf(parts...)
	}
	if out.fields != nil {
		// The inputs of the value itself are its fields'.
		out.refs = nil
	}
	return out
}

// field is the lineage of field name of v: the field's own when v's
// fields are known; else each unchanged input's field, and the computed
// inputs whole.
func (v *val) field(name string) *val {
	if f, ok := v.fields[strings.ToLower(name)]; ok {
		return f
	}
	out := &val{}
	for r, id := range v.refs {
		if id {
			out.addRef(ref{r.table, r.column + "." + name}, true)
		} else {
			out.addRef(r, false)
		}
	}
	for _, f := range v.fields {
		f.flatInto(out, false)
	}
	for w := range v.unresolved {
		out.addUnresolved(w)
	}
	return out
}

// lineage is v as the lineage of a column named name of type t.
func (v *val) lineage(name string, t Type) ColumnLineage {
	flat := &val{}
	v.flatInto(flat, true)
	out := ColumnLineage{Name: name, Type: t}
	for r, id := range flat.refs {
		out.Inputs = append(out.Inputs, Input{Table: r.table, Column: r.column, Identity: id})
	}
	sort.Slice(out.Inputs, func(i, j int) bool {
		a, b := out.Inputs[i], out.Inputs[j]
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.Column < b.Column
	})
	for w := range flat.unresolved {
		out.Unresolved = append(out.Unresolved, w)
	}
	sort.Strings(out.Unresolved)
	if len(v.fields) > 0 {
		for _, f := range t.fields() {
			out.Fields = append(out.Fields, v.field(f.Name).lineage(f.Name, f.Type))
		}
	}
	return out
}

// tableCol is a table scan's column, named when first read.
type tableCol struct {
	scan *googlesql.ResolvedTableScan
	path string
	idx  int32
}

type lineageWalk struct {
	c          *Catalog
	reads      []string
	vals       map[int32]*val     // by ResolvedColumn id
	tableCols  map[int32]tableCol // table scans' columns not read yet
	tablePaths map[string]string  // a table's name in the tree → its path
	withs      []map[string]googlesql.ResolvedScanNode
	recursive  []*recursion
	flattened  *val // the value FLATTEN's field accesses apply to
}

// recursion is a WITH RECURSIVE entry being walked: what its recursive
// references read in this round.
type recursion struct{ cols []*val }

// col is the lineage of a column.
func (w *lineageWalk) col(rc *googlesql.ResolvedColumn) (*val, error) {
	id, err := rc.ColumnId()
	if err != nil {
		return nil, err
	}
	if v, ok := w.vals[id]; ok {
		return v, nil
	}
	if tc, ok := w.tableCols[id]; ok {
		t, err := tc.scan.Table()
		if err != nil {
			return nil, err
		}
		c, err := t.GetColumn(tc.idx)
		if err != nil {
			return nil, err
		}
		name, err := c.Name()
		if err != nil {
			return nil, err
		}
		v := &val{}
		v.addRef(ref{tc.path, name}, true)
		w.vals[id] = v
		return v, nil
	}
	name, _ := rc.Name()
	return unresolvedVal("dfd does not know where " + name + " comes from"), nil
}

func (w *lineageWalk) define(rc *googlesql.ResolvedColumn, v *val) error {
	id, err := rc.ColumnId()
	if err != nil {
		return err
	}
	w.vals[id] = v
	return nil
}

func (w *lineageWalk) computedColumn(cc googlesql.ResolvedComputedColumnBaseNode) error {
	e, err := cc.Expr()
	if err != nil {
		return err
	}
	v, err := w.expr(e)
	if err != nil {
		return err
	}
	rc, err := cc.Column()
	if err != nil {
		return err
	}
	return w.define(rc, v)
}

func (w *lineageWalk) computedColumns(list []googlesql.ResolvedComputedColumnBaseNode, err error) error {
	if err != nil {
		return err
	}
	for _, cc := range list {
		if err := w.computedColumn(cc); err != nil {
			return err
		}
	}
	return nil
}

// computedList is computedColumns for the lists typed *ResolvedComputedColumn.
func (w *lineageWalk) computedList(list []*googlesql.ResolvedComputedColumn, err error) error {
	if err != nil {
		return err
	}
	for _, cc := range list {
		if err := w.computedColumn(cc); err != nil {
			return err
		}
	}
	return nil
}

func (w *lineageWalk) input(s interface {
	InputScan() (googlesql.ResolvedScanNode, error)
}) error {
	in, err := s.InputScan()
	if err != nil || in == nil {
		return err
	}
	return w.scan(in)
}

// scan walks a scan: the lineage of every column it creates, its inputs'
// first.
func (w *lineageWalk) scan(s googlesql.ResolvedScanNode) error {
	switch s := s.(type) {
	case *googlesql.ResolvedTableScan:
		path, why, err := w.tablePath(s)
		if err != nil {
			return err
		}
		cols, err := s.ColumnList()
		if err != nil {
			return err
		}
		if why != "" {
			return w.unresolvedColumns(cols, why)
		}
		idx, err := s.ColumnIndexList()
		if err != nil {
			return err
		}
		for i, rc := range cols {
			id, err := rc.ColumnId()
			if err != nil {
				return err
			}
			if i < len(idx) {
				w.tableCols[id] = tableCol{scan: s, path: path, idx: idx[i]}
			}
		}
		return nil
	case *googlesql.ResolvedProjectScan:
		if err := w.input(s); err != nil {
			return err
		}
		return w.computedList(s.ExprList())
	case *googlesql.ResolvedAggregateScan:
		if err := w.input(s); err != nil {
			return err
		}
		if err := w.computedList(s.GroupByList()); err != nil {
			return err
		}
		if err := w.computedColumns(s.AggregateList()); err != nil {
			return err
		}
		calls, err := s.GroupingCallList()
		if err != nil {
			return err
		}
		for _, gc := range calls {
			// GROUPING(x) says whether x is aggregated away in a row: it
			// is computed from no value.
			oc, err := gc.OutputColumn()
			if err != nil {
				return err
			}
			if err := w.define(oc, emptyVal); err != nil {
				return err
			}
		}
		return nil
	case *googlesql.ResolvedAnalyticScan:
		if err := w.input(s); err != nil {
			return err
		}
		groups, err := s.FunctionGroupList()
		if err != nil {
			return err
		}
		for _, g := range groups {
			if err := w.computedColumns(g.AnalyticFunctionList()); err != nil {
				return err
			}
		}
		return nil
	case *googlesql.ResolvedFilterScan:
		return w.input(s)
	case *googlesql.ResolvedOrderByScan:
		return w.input(s)
	case *googlesql.ResolvedLimitOffsetScan:
		return w.input(s)
	case *googlesql.ResolvedSampleScan:
		return w.input(s)
	case *googlesql.ResolvedSingleRowScan:
		return nil
	case *googlesql.ResolvedJoinScan:
		l, err := s.LeftScan()
		if err != nil {
			return err
		}
		if err := w.scan(l); err != nil {
			return err
		}
		r, err := s.RightScan()
		if err != nil {
			return err
		}
		return w.scan(r)
	case *googlesql.ResolvedArrayScan:
		if err := w.input(s); err != nil {
			return err
		}
		exprs, err := s.ArrayExprList()
		if err != nil {
			return err
		}
		elems, err := s.ElementColumnList()
		if err != nil {
			return err
		}
		var arrays []*val
		for i, e := range exprs {
			v, err := w.expr(e)
			if err != nil {
				return err
			}
			arrays = append(arrays, v)
			if i < len(elems) {
				// An element is the array's value: UNNEST(t.items) AS it,
				// it.sku reads items.sku.
				if err := w.define(elems[i], v); err != nil {
					return err
				}
			}
		}
		if off, err := s.ArrayOffsetColumn(); err != nil {
			return err
		} else if off != nil {
			rc, err := off.Column()
			if err != nil {
				return err
			}
			// WITH OFFSET: a position, computed from no value.
			if err := w.define(rc, emptyVal); err != nil {
				return err
			}
		}
		return nil
	case *googlesql.ResolvedSetOperationScan:
		items, err := s.InputItemList()
		if err != nil {
			return err
		}
		return w.setOperation(s, items)
	case *googlesql.ResolvedWithScan:
		scope := map[string]googlesql.ResolvedScanNode{}
		w.withs = append(w.withs, scope)
		defer func() { w.withs = w.withs[:len(w.withs)-1] }()
		entries, err := s.WithEntryList()
		if err != nil {
			return err
		}
		for _, e := range entries {
			name, err := e.WithQueryName()
			if err != nil {
				return err
			}
			sub, err := e.WithSubquery()
			if err != nil {
				return err
			}
			// WITH RECURSIVE: the entry's references to itself find it.
			scope[strings.ToLower(name)] = sub
			if err := w.scan(sub); err != nil {
				return err
			}
		}
		q, err := s.Query()
		if err != nil {
			return err
		}
		return w.scan(q)
	case *googlesql.ResolvedWithRefScan:
		name, err := s.WithQueryName()
		if err != nil {
			return err
		}
		var sub googlesql.ResolvedScanNode
		for i := len(w.withs) - 1; i >= 0 && sub == nil; i-- {
			sub = w.withs[i][strings.ToLower(name)]
		}
		cols, err := s.ColumnList()
		if err != nil {
			return err
		}
		if sub == nil {
			return w.unresolvedColumns(cols, "it reads the WITH query "+name+", which dfd did not find")
		}
		subCols, err := scanColumns(sub)
		if err != nil {
			return err
		}
		return w.copyColumns(cols, subCols)
	case *googlesql.ResolvedRecursiveScan:
		return w.recursiveScan(s)
	case *googlesql.ResolvedRecursiveRefScan:
		cols, err := s.ColumnList()
		if err != nil {
			return err
		}
		if len(w.recursive) == 0 {
			return w.unresolvedColumns(cols, "a recursive reference outside its WITH RECURSIVE")
		}
		r := w.recursive[len(w.recursive)-1]
		for i, rc := range cols {
			v := emptyVal
			if i < len(r.cols) {
				v = r.cols[i]
			}
			if err := w.define(rc, v); err != nil {
				return err
			}
		}
		return nil
	case *googlesql.ResolvedPivotScan:
		if err := w.input(s); err != nil {
			return err
		}
		if err := w.computedList(s.GroupByList()); err != nil {
			return err
		}
		exprs, err := s.PivotExprList()
		if err != nil {
			return err
		}
		pcs, err := s.PivotColumnList()
		if err != nil {
			return err
		}
		vals := make([]*val, len(exprs))
		for _, pc := range pcs {
			i, err := pc.PivotExprIndex()
			if err != nil {
				return err
			}
			if i < 0 || int(i) >= len(exprs) {
				continue
			}
			if vals[i] == nil {
				if vals[i], err = w.expr(exprs[i]); err != nil {
					return err
				}
			}
			rc, err := pc.Column()
			if err != nil {
				return err
			}
			if err := w.define(rc, vals[i]); err != nil {
				return err
			}
		}
		return nil
	case *googlesql.ResolvedUnpivotScan:
		if err := w.input(s); err != nil {
			return err
		}
		if err := w.computedList(s.ProjectedInputColumnList()); err != nil {
			return err
		}
		valueCols, err := s.ValueColumnList()
		if err != nil {
			return err
		}
		args, err := s.UnpivotArgList()
		if err != nil {
			return err
		}
		for i, vc := range valueCols {
			var parts []*val
			for _, a := range args {
				refs, err := a.ColumnList()
				if err != nil {
					return err
				}
				if i < len(refs) {
					v, err := w.expr(refs[i])
					if err != nil {
						return err
					}
					parts = append(parts, v)
				}
			}
			if err := w.define(vc, oneOf(parts...)); err != nil {
				return err
			}
		}
		if lc, err := s.LabelColumn(); err != nil {
			return err
		} else if lc != nil {
			// The label names the column a value came from: a literal.
			if err := w.define(lc, emptyVal); err != nil {
				return err
			}
		}
		return nil
	case *googlesql.ResolvedTVFScan:
		cols, err := s.ColumnList()
		if err != nil {
			return err
		}
		name := "a table-valued function"
		if tvf, err := s.Tvf(); err == nil && tvf != nil {
			if n, err := tvf.Name(); err == nil {
				name = "the table-valued function " + n
			}
		}
		return w.unresolvedColumns(cols, "it comes from "+name+", whose lineage dfd does not follow")
	}
	return w.otherScan(s)
}

// otherScan walks a scan dfd has no rule for: its input scans and computed
// columns, in that order; the columns it creates otherwise are unresolved.
func (w *lineageWalk) otherScan(s googlesql.ResolvedScanNode) error {
	children, err := s.GetChildNodes()
	if err != nil {
		return err
	}
	for _, ch := range children {
		if sc, ok := ch.(googlesql.ResolvedScanNode); ok {
			if err := w.scan(sc); err != nil {
				return err
			}
		}
	}
	for _, ch := range children {
		if cc, ok := ch.(googlesql.ResolvedComputedColumnBaseNode); ok {
			if err := w.computedColumn(cc); err != nil {
				return err
			}
		}
	}
	cols, err := scanColumns(s)
	if err != nil {
		return err
	}
	kind, _ := s.NodeKindString()
	var missing []*googlesql.ResolvedColumn
	for _, rc := range cols {
		id, err := rc.ColumnId()
		if err != nil {
			return err
		}
		if _, ok := w.vals[id]; !ok {
			if _, ok := w.tableCols[id]; !ok {
				missing = append(missing, rc)
			}
		}
	}
	return w.unresolvedColumns(missing, "it comes from a "+kind+", which dfd does not follow")
}

func (w *lineageWalk) unresolvedColumns(cols []*googlesql.ResolvedColumn, why string) error {
	v := unresolvedVal(why)
	for _, rc := range cols {
		if err := w.define(rc, v); err != nil {
			return err
		}
	}
	return nil
}

// copyColumns gives cols the lineage of from, position by position.
func (w *lineageWalk) copyColumns(cols, from []*googlesql.ResolvedColumn) error {
	for i, rc := range cols {
		v := emptyVal
		if i < len(from) {
			var err error
			if v, err = w.col(from[i]); err != nil {
				return err
			}
		}
		if err := w.define(rc, v); err != nil {
			return err
		}
	}
	return nil
}

// setOperation: each output column is one of the items' columns at its
// position (UNION, INTERSECT, EXCEPT: every branch).
func (w *lineageWalk) setOperation(s *googlesql.ResolvedSetOperationScan, items []*googlesql.ResolvedSetOperationItem) error {
	var outs [][]*googlesql.ResolvedColumn
	for _, it := range items {
		sc, err := it.Scan()
		if err != nil {
			return err
		}
		if err := w.scan(sc); err != nil {
			return err
		}
		oc, err := it.OutputColumnList()
		if err != nil {
			return err
		}
		outs = append(outs, oc)
	}
	cols, err := s.ColumnList()
	if err != nil {
		return err
	}
	for i, rc := range cols {
		var parts []*val
		for _, oc := range outs {
			if i < len(oc) {
				v, err := w.col(oc[i])
				if err != nil {
					return err
				}
				parts = append(parts, v)
			}
		}
		if err := w.define(rc, oneOf(parts...)); err != nil {
			return err
		}
	}
	return nil
}

// recursiveScan is WITH RECURSIVE's UNION: the recursive term is walked
// with its references to the CTE reading what the rounds before produced,
// until a round adds nothing (a few rounds: lineage only grows).
func (w *lineageWalk) recursiveScan(s *googlesql.ResolvedRecursiveScan) error {
	nonRec, err := s.NonRecursiveTerm()
	if err != nil {
		return err
	}
	rec, err := s.RecursiveTerm()
	if err != nil {
		return err
	}
	cols, err := s.ColumnList()
	if err != nil {
		return err
	}
	base := make([]*val, len(cols))
	if err := w.itemColumns(nonRec, base); err != nil {
		return err
	}
	r := &recursion{cols: base}
	w.recursive = append(w.recursive, r)
	defer func() { w.recursive = w.recursive[:len(w.recursive)-1] }()
	cur := base
	for range 4 {
		step := make([]*val, len(cols))
		if err := w.itemColumns(rec, step); err != nil {
			return err
		}
		next := make([]*val, len(cols))
		changed := false
		for i := range cols {
			next[i] = oneOf(base[i], step[i])
			if !next[i].sameAs(cur[i]) {
				changed = true
			}
		}
		cur = next
		r.cols = cur
		if !changed {
			break
		}
	}
	for i, rc := range cols {
		if err := w.define(rc, cur[i]); err != nil {
			return err
		}
	}
	return nil
}

// itemColumns walks a set operation item and puts its output columns'
// lineage in out.
func (w *lineageWalk) itemColumns(it *googlesql.ResolvedSetOperationItem, out []*val) error {
	sc, err := it.Scan()
	if err != nil {
		return err
	}
	if err := w.scan(sc); err != nil {
		return err
	}
	oc, err := it.OutputColumnList()
	if err != nil {
		return err
	}
	for i := range out {
		out[i] = emptyVal
		if i < len(oc) {
			if out[i], err = w.col(oc[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameAs compares the inputs of two values (flattened).
func (v *val) sameAs(o *val) bool {
	a, b := &val{}, &val{}
	v.flatInto(a, true)
	o.flatInto(b, true)
	if len(a.refs) != len(b.refs) || len(a.unresolved) != len(b.unresolved) {
		return false
	}
	for r, id := range a.refs {
		if oid, ok := b.refs[r]; !ok || oid != id {
			return false
		}
	}
	return true
}

// choosers are the functions whose result is one of some arguments
// unchanged, the rest only choosing which: the indexes of the chosen
// arguments of a call with n.
var choosers = map[string]func(n int) []int{
	"if":     func(n int) []int { return []int{1, 2} },
	"nullif": func(n int) []int { return []int{0} },
	// CASE WHEN c1 THEN r1 … [ELSE e]: c1, r1, c2, r2, …, [e].
	"$case_no_value": func(n int) []int {
		var out []int
		for i := 1; i < n; i += 2 {
			out = append(out, i)
		}
		if n%2 == 1 {
			out = append(out, n-1)
		}
		return out
	},
	// An element of an array (arr[OFFSET(i)], arr[SAFE_ORDINAL(i)], …) is
	// one of the array's values unchanged, and an array reversed holds
	// them all: items[OFFSET(0)].sku reads items.sku, as UNNEST does.
	// (ARRAY_FIRST, ARRAY_LAST and ARRAY_SLICE reach the walk rewritten
	// into these and CASE.)
	"$array_at_offset":       first,
	"$array_at_ordinal":      first,
	"$safe_array_at_offset":  first,
	"$safe_array_at_ordinal": first,
	"array_reverse":          first,
	// CASE x WHEN v1 THEN r1 … [ELSE e]: x, v1, r1, v2, r2, …, [e].
	"$case_with_value": func(n int) []int {
		var out []int
		for i := 2; i < n; i += 2 {
			out = append(out, i)
		}
		if n%2 == 0 && n > 1 {
			out = append(out, n-1)
		}
		return out
	},
}

func first(n int) []int { return []int{0} }

// elementwise are the functions whose result is one of their arguments
// unchanged, or an array of them: COALESCE's value is one of its
// arguments, ARRAY_AGG's elements are its argument's values.
var elementwise = map[string]bool{
	"coalesce": true, "ifnull": true, "iferror": true,
	"$make_array": true, "array_concat": true, "array_agg": true, "array_concat_agg": true,
}

// expr is the lineage of an expression's value.
func (w *lineageWalk) expr(e googlesql.ResolvedExprNode) (*val, error) {
	if e == nil {
		return emptyVal, nil
	}
	switch e := e.(type) {
	case *googlesql.ResolvedColumnRef:
		rc, err := e.Column()
		if err != nil {
			return nil, err
		}
		return w.col(rc)
	case *googlesql.ResolvedLiteral, *googlesql.ResolvedParameter, *googlesql.ResolvedSystemVariable,
		*googlesql.ResolvedExpressionColumn, *googlesql.ResolvedDMLDefault, *googlesql.ResolvedConstant:
		return emptyVal, nil
	case *googlesql.ResolvedGetStructField:
		inner, err := e.Expr()
		if err != nil {
			return nil, err
		}
		v, err := w.expr(inner)
		if err != nil {
			return nil, err
		}
		idx, err := e.FieldIdx()
		if err != nil {
			return nil, err
		}
		name, err := structFieldName(inner, idx)
		if err != nil {
			return nil, err
		}
		return v.field(name), nil
	case *googlesql.ResolvedMakeStruct:
		list, err := e.FieldList()
		if err != nil {
			return nil, err
		}
		t, err := e.Type()
		if err != nil {
			return nil, err
		}
		out := &val{fields: map[string]*val{}}
		for i, fe := range list {
			name, err := structFieldName2(t, int32(i))
			if err != nil {
				return nil, err
			}
			v, err := w.expr(fe)
			if err != nil {
				return nil, err
			}
			key := strings.ToLower(name)
			if _, dup := out.fields[key]; !dup {
				out.fieldNames = append(out.fieldNames, name)
			}
			out.fields[key] = v
		}
		return out, nil
	case *googlesql.ResolvedCast:
		inner, err := e.Expr()
		if err != nil {
			return nil, err
		}
		v, err := w.expr(inner)
		if err != nil {
			return nil, err
		}
		return computed(v), nil
	case *googlesql.ResolvedSubqueryExpr:
		return w.subquery(e)
	case *googlesql.ResolvedWithExpr:
		if err := w.computedList(e.AssignmentList()); err != nil {
			return nil, err
		}
		inner, err := e.Expr()
		if err != nil {
			return nil, err
		}
		return w.expr(inner)
	case *googlesql.ResolvedFlatten:
		inner, err := e.Expr()
		if err != nil {
			return nil, err
		}
		v, err := w.expr(inner)
		if err != nil {
			return nil, err
		}
		steps, err := e.GetFieldList()
		if err != nil {
			return nil, err
		}
		saved := w.flattened
		defer func() { w.flattened = saved }()
		for _, st := range steps {
			w.flattened = v
			if v, err = w.expr(st); err != nil {
				return nil, err
			}
		}
		return v, nil
	case *googlesql.ResolvedFlattenedArg:
		if w.flattened == nil {
			return emptyVal, nil
		}
		return w.flattened, nil
	case *googlesql.ResolvedFunctionCall:
		return w.call(e, e.ResolvedFunctionCallBase)
	case *googlesql.ResolvedAggregateFunctionCall:
		return w.call(e, e.ResolvedFunctionCallBase)
	case *googlesql.ResolvedAnalyticFunctionCall:
		return w.call(e, e.ResolvedFunctionCallBase)
	}
	// Any other expression: computed from every expression under it.
	children, err := e.GetChildNodes()
	if err != nil {
		return nil, err
	}
	var parts []*val
	for _, ch := range children {
		if ce, ok := ch.(googlesql.ResolvedExprNode); ok {
			v, err := w.expr(ce)
			if err != nil {
				return nil, err
			}
			parts = append(parts, v)
		}
	}
	return computed(parts...), nil
}

// call is a function call's lineage: its arguments' (only the chosen
// ones of IF, CASE, NULLIF), unchanged for COALESCE and array builders,
// else computed. ORDER BY, LIMIT and HAVING inside aggregates, and the
// window of analytic functions (ResolvedAnalyticFunctionGroup) are not
// arguments.
func (w *lineageWalk) call(e googlesql.ResolvedExprNode, base *googlesql.ResolvedFunctionCallBase) (*val, error) {
	args, err := base.ArgumentList()
	if err != nil {
		return nil, err
	}
	name := ""
	if fn, err := base.Function(); err != nil {
		return nil, err
	} else if fn != nil {
		if name, err = fn.Name(); err != nil {
			return nil, err
		}
		name = strings.ToLower(name)
	}
	if pick, ok := choosers[name]; ok && len(args) > 0 {
		var parts []*val
		for _, i := range pick(len(args)) {
			if i < len(args) {
				v, err := w.expr(args[i])
				if err != nil {
					return nil, err
				}
				parts = append(parts, v)
			}
		}
		return oneOf(parts...), nil
	}
	var parts []*val
	for _, a := range args {
		v, err := w.expr(a)
		if err != nil {
			return nil, err
		}
		parts = append(parts, v)
	}
	generic, err := base.GenericArgumentList()
	if err != nil {
		return nil, err
	}
	for _, g := range generic {
		v, err := w.genericArgument(g, parts)
		if err != nil {
			return nil, err
		}
		parts = append(parts, v)
	}
	if elementwise[name] && len(parts) > 0 {
		if name == "array_agg" {
			parts = parts[:1]
		}
		return oneOf(parts...), nil
	}
	return computed(parts...), nil
}

// genericArgument is the lineage of a function argument that may be a
// lambda (ARRAY_TRANSFORM(a, e -> e.x)): its parameters are the elements
// of the call's first argument.
func (w *lineageWalk) genericArgument(g *googlesql.ResolvedFunctionArgument, before []*val) (*val, error) {
	if e, err := g.Expr(); err != nil {
		return nil, err
	} else if e != nil {
		return w.expr(e)
	}
	lambda, err := g.InlineLambda()
	if err != nil || lambda == nil {
		return emptyVal, err
	}
	params, err := lambda.ArgumentList()
	if err != nil {
		return nil, err
	}
	elem := emptyVal
	if len(before) > 0 {
		elem = before[0]
	}
	for _, p := range params {
		if err := w.define(p, elem); err != nil {
			return nil, err
		}
	}
	body, err := lambda.Body()
	if err != nil {
		return nil, err
	}
	return w.expr(body)
}

// subquery is a subquery expression's lineage: a scalar or ARRAY
// subquery's is its column's; IN's is its operand's and the subquery's
// column's; EXISTS is computed from no value.
func (w *lineageWalk) subquery(e *googlesql.ResolvedSubqueryExpr) (*val, error) {
	kind, err := e.SubqueryType()
	if err != nil {
		return nil, err
	}
	if kind == googlesql.ResolvedSubqueryExprEnums_SubqueryTypeExists {
		return emptyVal, nil
	}
	sub, err := e.Subquery()
	if err != nil {
		return nil, err
	}
	if err := w.scan(sub); err != nil {
		return nil, err
	}
	cols, err := scanColumns(sub)
	if err != nil {
		return nil, err
	}
	v := emptyVal
	if len(cols) > 0 {
		if v, err = w.col(cols[0]); err != nil {
			return nil, err
		}
	}
	if kind == googlesql.ResolvedSubqueryExprEnums_SubqueryTypeScalar || kind == googlesql.ResolvedSubqueryExprEnums_SubqueryTypeArray {
		return v, nil
	}
	in, err := e.InExpr()
	if err != nil {
		return nil, err
	}
	iv, err := w.expr(in)
	if err != nil {
		return nil, err
	}
	return computed(iv, v), nil
}

// structFieldName is the name of field idx of e's STRUCT type.
func structFieldName(e googlesql.ResolvedExprNode, idx int32) (string, error) {
	t, err := e.Type()
	if err != nil {
		return "", err
	}
	return structFieldName2(t, idx)
}

func structFieldName2(t googlesql.Googlesql_TypeNode, idx int32) (string, error) {
	st, err := t.AsStruct()
	if err != nil {
		return "", err
	}
	if st == nil {
		return "", fmt.Errorf("field %d of a value that is no STRUCT", idx)
	}
	f, err := st.Field(idx)
	if err != nil {
		return "", err
	}
	if f == nil {
		return "", fmt.Errorf("no field %d", idx)
	}
	return f.Name, nil
}

// tablePath is the catalog path of a scanned table. A table is in the
// engine's catalog under several names (analyze.go's Add): its full path,
// "dataset.table" in the default project, and "table" inside its
// project's and dataset's catalogs, which alone does not say which
// dataset: that one is found among the tables the statement reads, by
// schema when several of them have the name. When even the schemas do
// not tell, the path is "" and why says so.
func (w *lineageWalk) tablePath(s *googlesql.ResolvedTableScan) (path, why string, err error) {
	t, err := s.Table()
	if err != nil {
		return "", "", err
	}
	name, err := t.Name()
	if err != nil {
		return "", "", err
	}
	if p, ok := w.tablePaths[name]; ok {
		return p, "", nil
	}
	if strings.Count(name, ".") > 0 {
		p := w.c.qualify(name)
		if tb, ok := w.c.Table(p); ok {
			p = tb.Path
		}
		w.tablePaths[name] = p
		return p, "", nil
	}
	var found []Table
	seen := map[string]bool{}
	for _, r := range w.reads {
		q := w.c.qualify(r)
		parts := strings.Split(q, ".")
		if len(parts) == 3 && strings.EqualFold(parts[2], name) {
			if tb, ok := w.c.Table(q); ok && !seen[strings.ToLower(tb.Path)] {
				seen[strings.ToLower(tb.Path)] = true
				found = append(found, tb)
			}
		}
	}
	if len(found) == 1 {
		w.tablePaths[name] = found[0].Path
		return found[0].Path, "", nil
	}
	// Several tables of this name (proj.sales.orders and
	// proj.archive.orders): the one whose columns the scanned table has.
	var same []string
	for _, tb := range found {
		ok, err := sameColumns(t, tb)
		if err != nil {
			return "", "", err
		}
		if ok {
			same = append(same, tb.Path)
		}
	}
	if len(same) == 1 {
		return same[0], "", nil
	}
	if len(same) == 0 {
		// Not one of the statement's reads as written (cannot happen
		// while every read is qualified as Analyze qualifies it).
		return "", "dfd could not tell which table " + name + " is", nil
	}
	return "", "it reads " + name + ", one of " + strings.Join(same, ", ") + " (same columns): dfd cannot tell which", nil
}

// sameColumns says whether the engine's table t has tb's columns, pseudo-
// columns included, by name and type, in order.
func sameColumns(t googlesql.TableNode, tb Table) (bool, error) {
	n, err := t.NumColumns()
	if err != nil {
		return false, err
	}
	want := append(slices.Clone(tb.Columns), tb.Pseudo...)
	if int(n) != len(want) {
		return false, nil
	}
	for i := range want {
		c, err := t.GetColumn(int32(i))
		if err != nil {
			return false, err
		}
		name, err := c.Name()
		if err != nil {
			return false, err
		}
		gt, err := c.GetType()
		if err != nil {
			return false, err
		}
		typ, err := typeOf(gt)
		if err != nil {
			return false, err
		}
		if !strings.EqualFold(name, want[i].Name) || typ.String() != want[i].Type.String() {
			return false, nil
		}
	}
	return true, nil
}

// scanColumns is a scan's column list (every scan has one; the interface
// does not say so).
func scanColumns(s googlesql.ResolvedScanNode) ([]*googlesql.ResolvedColumn, error) {
	if c, ok := s.(interface {
		ColumnList() ([]*googlesql.ResolvedColumn, error)
	}); ok {
		return c.ColumnList()
	}
	return nil, fmt.Errorf("a scan without a column list (%T)", s)
}
