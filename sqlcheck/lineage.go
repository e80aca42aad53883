package sqlcheck

import (
	"sort"
	"strings"

	"github.com/dfdtools/dfd/gsql"
)

// Column lineage through the project. gsql reads one statement's lineage:
// the columns of the tables it reads. With Options.Lineage, a check keeps
// that for every action whose output schema it inferred (Result.Lineage);
// an input that is another action's output column is followed into that
// action's own lineage, and so on, until warehouse columns: the origins.

// ColumnLineage is one output column of an action, through the project.
type ColumnLineage struct {
	Name string
	Type gsql.Type
	// Direct are the columns the action's SQL reads (gsql's lineage):
	// warehouse tables' or the project's own actions'.
	Direct []gsql.Input
	// Origins are the warehouse columns the values come from: Direct with
	// every own action's column replaced by its origins, recursively. An
	// origin's Identity says the values reach the column unchanged
	// through every hop.
	Origins []gsql.Input
	// Unresolved says why part of the lineage is not known, at any hop.
	Unresolved []string
}

// recordLineage keeps the lineage of action a's query, when asked for.
func (c *checker) recordLineage(a *action, an gsql.Analysis) {
	if c.opts.Lineage && len(an.Lineage) == len(an.Columns) {
		c.res.Lineage[a.name] = an.Lineage
	}
}

// hasLineage says whether a remembered analysis serves this check: one
// made without lineage does not serve a check that wants it.
func (c *checker) hasLineage(an gsql.Analysis) bool {
	return !c.opts.Lineage || len(an.Columns) == 0 || len(an.Lineage) == len(an.Columns)
}

// ActionLineage is the lineage of each output column of the action named
// target (database.schema.name, any case), and the target as the check
// names it; ok is false when the check has no lineage of it (Lineage was
// off, the action has no output schema, or its SQL was not analysed).
func (r *Result) ActionLineage(target string) (cols []ColumnLineage, name string, ok bool) {
	name, ok = r.lineageKey(target)
	if !ok {
		return nil, "", false
	}
	t := r.tracer()
	for _, l := range r.Lineage[name] {
		cols = append(cols, t.column(l))
	}
	return cols, name, true
}

// Column is the lineage of one column of target's output, or of a field
// below it ("page.url"); ok is false when there is none.
func (r *Result) Column(target, column string) (ColumnLineage, bool) {
	name, ok := r.lineageKey(target)
	if !ok {
		return ColumnLineage{}, false
	}
	l, ok := outputColumn(r.Lineage[name], column)
	if !ok {
		return ColumnLineage{}, false
	}
	return r.tracer().column(l), true
}

// Origins are the warehouse columns the values of column (a dotted path)
// of table come from: the column itself for a warehouse table's.
func (r *Result) Origins(table, column string) ([]gsql.Input, []string) {
	o := r.tracer().trace(table, column)
	return o.inputs(), o.unresolvedList()
}

func (r *Result) lineageKey(target string) (string, bool) {
	if _, ok := r.Lineage[target]; ok {
		return target, true
	}
	for k := range r.Lineage {
		if strings.EqualFold(k, target) {
			return k, true
		}
	}
	return "", false
}

// outputColumn is the lineage of column (a dotted path: a column and
// fields below it) among an action's output columns.
func outputColumn(cols []gsql.ColumnLineage, column string) (gsql.ColumnLineage, bool) {
	path := strings.Split(column, ".")
	for _, l := range cols {
		if strings.EqualFold(l.Name, path[0]) {
			if len(path) == 1 {
				return l, true
			}
			f := l.Field(path[1:]...)
			f.Name = column
			return f, true
		}
	}
	return gsql.ColumnLineage{}, false
}

// tracer follows inputs through the project's actions, remembering each
// column's origins.
type tracer struct {
	r       *Result
	byLower map[string]string // lower-case target → Result.Lineage key
	done    map[string]*origins
	active  map[string]bool // columns being traced: a cycle comes back to one
}

// origins are what a trace found: inputs by table and column, with their
// identity, and reasons for what it could not follow.
type origins struct {
	in         map[[2]string]bool
	unresolved map[string]bool
	cut        bool // a cycle cut the trace short: not remembered
}

func (r *Result) tracer() *tracer {
	t := &tracer{r: r, byLower: map[string]string{}, done: map[string]*origins{}, active: map[string]bool{}}
	for k := range r.Lineage {
		t.byLower[strings.ToLower(k)] = k
	}
	return t
}

func (t *tracer) column(l gsql.ColumnLineage) ColumnLineage {
	out := ColumnLineage{Name: l.Name, Type: l.Type, Direct: l.Inputs}
	all := &origins{}
	for _, why := range l.Unresolved {
		all.addUnresolved(why)
	}
	for _, in := range l.Inputs {
		all.merge(t.trace(in.Table, in.Column), in.Identity)
	}
	out.Origins, out.Unresolved = all.inputs(), all.unresolvedList()
	return out
}

// trace is the origins of column (a dotted path) of table.
func (t *tracer) trace(table, column string) *origins {
	key, own := t.byLower[strings.ToLower(table)]
	if !own {
		// A warehouse table's column: an origin.
		o := &origins{}
		o.add(table, column, true)
		return o
	}
	id := strings.ToLower(table + "\x00" + column)
	if o, ok := t.done[id]; ok {
		return o
	}
	if t.active[id] {
		o := &origins{cut: true}
		o.addUnresolved("its lineage loops back to " + table + "." + column)
		return o
	}
	t.active[id] = true
	defer delete(t.active, id)
	o := &origins{}
	l, ok := outputColumn(t.r.Lineage[key], column)
	if !ok {
		// Not a column the action's query outputs: a pseudo-column
		// BigQuery adds (_PARTITIONTIME), where the values start.
		o.add(table, column, true)
		return o
	}
	for _, why := range l.Unresolved {
		o.addUnresolved(why + " (in " + key + ")")
	}
	for _, in := range l.Inputs {
		o.merge(t.trace(in.Table, in.Column), in.Identity)
	}
	if !o.cut {
		t.done[id] = o
	}
	return o
}

func (o *origins) add(table, column string, identity bool) {
	if o.in == nil {
		o.in = map[[2]string]bool{}
	}
	k := [2]string{table, column}
	if was, ok := o.in[k]; ok {
		identity = identity && was
	}
	o.in[k] = identity
}

func (o *origins) addUnresolved(why string) {
	if o.unresolved == nil {
		o.unresolved = map[string]bool{}
	}
	o.unresolved[why] = true
}

// merge adds from's origins, unchanged only if identity too.
func (o *origins) merge(from *origins, identity bool) {
	for k, id := range from.in {
		o.add(k[0], k[1], id && identity)
	}
	for why := range from.unresolved {
		o.addUnresolved(why)
	}
	o.cut = o.cut || from.cut
}

func (o *origins) inputs() []gsql.Input {
	var out []gsql.Input
	for k, id := range o.in {
		out = append(out, gsql.Input{Table: k[0], Column: k[1], Identity: id})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].Column < out[j].Column
	})
	return out
}

func (o *origins) unresolvedList() []string {
	var out []string
	for why := range o.unresolved {
		out = append(out, why)
	}
	sort.Strings(out)
	return out
}
