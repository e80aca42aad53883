package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/sqlcheck"
	"github.com/dfdtools/dfd/workspace"
)

var _ workspace.LineageProvider = (*openProject)(nil)

// Lineage implements workspace.LineageProvider (dfd/lineage): the column
// lineage of one action of the compiled graph, from the project's SQL
// analysis. The first request turns lineage on for the project's checks
// (sticky: an editor that asked once will ask again); when the last check
// has none for this graph, a check with lineage runs now, against the
// request's graph, under ctx.
func (op *openProject) Lineage(ctx context.Context, req workspace.LineageRequest) (*workspace.Lineage, error) {
	h, ok := req.Graph.(*graphHandle)
	if !ok || h == nil || req.Action == nil {
		return &workspace.Lineage{Reason: "the project has not compiled yet"}, nil
	}
	a := req.Action
	t := a.Target
	if t.Database == "" {
		t.Database = h.graph.GetProjectConfig().GetDefaultDatabase()
	}
	out := &workspace.Lineage{Action: t.String()}
	if !req.TypesOnly {
		op.sql.lineage.Store(true) // asked for once: traced in every check from now on
	}
	switch a.Kind {
	case workspace.KindAssertion:
		out.Reason = "an assertion outputs no table: its rows are the failures it looks for"
	case workspace.KindOperation:
		out.Reason = "an operation's output schema is not inferred"
	case workspace.KindDeclaration:
		out.Reason = "a declaration is a warehouse table: its columns are where lineage ends"
	case workspace.KindTest:
		out.Reason = "a unit test outputs no table"
	}
	if out.Reason == "" && !op.b.currentSettings().SQLCheck {
		out.Reason = "SQL analysis is off (setting dfd.sql.check)"
	}
	if out.Reason == "" && h.errors > 0 {
		out.Reason = fmt.Sprintf("the project has %d compilation error(s): its SQL is analysed after a compile without errors", h.errors)
	}
	if out.Reason != "" {
		return out, nil
	}
	var checked *sqlChecked
	if req.NoWait {
		last := op.sql.last.Load()
		if last == nil || last.g != h.graph {
			out.Reason = "the SQL of this compile has not been analysed yet"
			return out, nil
		}
		if req.TypesOnly {
			return typesOnly(out, last.res, req.Column, false), nil
		}
		if !last.lineage {
			// Traced in the background, owned by the project, for the
			// next request; this one gets the types the check inferred.
			op.bg.do("lineage", func(ctx context.Context) { _, _ = op.lineageCheck(ctx, h) })
			return typesOnly(out, last.res, req.Column, true), nil
		}
		checked = last
	} else {
		var err error
		if checked, err = op.lineageCheck(ctx, h); err != nil {
			return nil, err
		}
	}
	res := checked.res
	cols, name, ok := res.ActionLineage(out.Action)
	if !ok {
		out.Reason = whyNoLineage(res, a, out.Action)
		return out, nil
	}
	out.Action = name
	if req.Column != "" {
		l, ok := res.Column(name, req.Column)
		if !ok {
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = c.Name
			}
			out.Reason = fmt.Sprintf("%s has no output column %s (its columns: %s)", name, req.Column, strings.Join(names, ", "))
			return out, nil
		}
		cols = []sqlcheck.ColumnLineage{l}
	}
	for _, c := range cols {
		out.Columns = append(out.Columns, workspace.ColumnLineage{
			Name: c.Name, Type: c.Type.String(),
			Direct: lineageInputs(c.Direct), Origins: lineageInputs(c.Origins),
			Unresolved: c.Unresolved,
		})
	}
	return out, nil
}

// lineageCheck is a check of graph h with lineage: the last check's when
// it is of h and recorded lineage, else a new one. A new check's result
// replaces the last only when that was of the same graph (or there was
// none), so that a newer snapshot's check is never replaced by an older
// one's.
func (op *openProject) lineageCheck(ctx context.Context, h *graphHandle) (*sqlChecked, error) {
	st := &op.sql
	if last := st.last.Load(); last != nil && last.g == h.graph && last.lineage {
		return last, nil
	}
	if err := st.acquire(ctx); err != nil {
		return nil, err
	}
	defer st.release()
	last := st.last.Load()
	if last != nil && last.g == h.graph && last.lineage {
		return last, nil // the check it waited for recorded lineage
	}
	var jitSQL map[string]*dataformpb.JitCompilationResponse
	if last != nil && last.g == h.graph {
		jitSQL = last.jit // the JiT actions' SQL this graph's check had
	}
	res, err := st.checker.Check(ctx, h.graph, op.sqlOptions(op.metadataSource(), h.overlays, jitSQL, true))
	if err != nil {
		return nil, fmt.Errorf("analysing the SQL of %s for lineage: %w", op.p.Root, err)
	}
	c := &sqlChecked{res: res, g: h.graph, jit: jitSQL, lineage: true}
	if last == nil || last.g == h.graph {
		st.last.Store(c)
	}
	return c, nil
}

// whyNoLineage says why a check has no lineage of an action with an
// output: its SQL has an error or was not analysed (the check's finding
// says why), or it comes from JiT code that did not run.
func whyNoLineage(res *sqlcheck.Result, a *workspace.Action, target string) string {
	if why, ok := res.WhyNotAnalysed(target); ok {
		return why
	}
	if a.Jit {
		return "its SQL comes from JiT code, which is analysed only when it ran against the warehouse's metadata with every database call answered"
	}
	return "dfd did not analyse its SQL"
}

func lineageInputs(ins []gsql.Input) []workspace.LineageInput {
	out := make([]workspace.LineageInput, len(ins))
	for i, in := range ins {
		out[i] = workspace.LineageInput{Table: in.Table, Column: in.Column, Computed: !in.Identity}
	}
	return out
}

// typesOnly is out with the columns (or the column) of out.Action as the
// check inferred them, without their lineage; tracing says a trace runs
// for the next request.
func typesOnly(out *workspace.Lineage, res *sqlcheck.Result, column string, tracing bool) *workspace.Lineage {
	var cols []gsql.Column
	for name, cs := range res.Schemas {
		if strings.EqualFold(name, out.Action) {
			out.Action, cols = name, cs
		}
	}
	if cols == nil {
		out.Reason = "dfd did not infer its output schema"
		return out
	}
	path := strings.Split(column, ".")
	for _, c := range cols {
		if column != "" && !strings.EqualFold(c.Name, path[0]) {
			continue
		}
		name, t := c.Name, c.Type
		for _, f := range path[1:] {
			if t.Kind == "ARRAY" && t.Elem != nil {
				t = *t.Elem
			}
			found := false
			for _, fc := range t.Fields {
				if strings.EqualFold(fc.Name, f) {
					name, t, found = name+"."+fc.Name, fc.Type, true
					break
				}
			}
			if !found {
				out.Reason = fmt.Sprintf("%s has no output column %s", out.Action, column)
				return out
			}
		}
		col := workspace.ColumnLineage{Name: name, Type: t.String()}
		if tracing {
			col.Unresolved = []string{"its lineage is being traced: ask again in a moment"}
		}
		out.Columns = append(out.Columns, col)
	}
	if column != "" && len(out.Columns) == 0 {
		out.Reason = fmt.Sprintf("%s has no output column %s", out.Action, column)
	}
	return out
}
