package daemon

import (
	"strings"

	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/workspace"
)

// actionsOf turns a compiled graph into the LSP's model of actions.
func actionsOf(g *dataformpb.CompiledGraph) []*workspace.Action {
	var out []*workspace.Action
	for _, t := range g.GetTables() {
		a := base(t.GetTarget(), t.GetCanonicalTarget(), t.GetFileName(), t.GetTags(), t.GetDependencyTargets(), t.GetActionDescriptor())
		a.Kind = tableKind(t)
		a.Disabled = t.GetDisabled()
		a.Jit = t.GetJitCode() != ""
		a.SQL = workspace.SQL{
			Query: t.GetQuery(), PreOps: t.GetPreOps(), PostOps: t.GetPostOps(),
			IncrementalQuery: t.GetIncrementalQuery(), IncrementalPreOps: t.GetIncrementalPreOps(), IncrementalPostOps: t.GetIncrementalPostOps(),
		}
		out = append(out, a)
	}
	for _, o := range g.GetOperations() {
		a := base(o.GetTarget(), o.GetCanonicalTarget(), o.GetFileName(), o.GetTags(), o.GetDependencyTargets(), o.GetActionDescriptor())
		a.Kind = workspace.KindOperation
		a.Disabled = o.GetDisabled()
		a.Jit = o.GetJitCode() != ""
		a.SQL = workspace.SQL{Queries: o.GetQueries()}
		out = append(out, a)
	}
	for _, s := range g.GetAssertions() {
		a := base(s.GetTarget(), s.GetCanonicalTarget(), s.GetFileName(), s.GetTags(), s.GetDependencyTargets(), s.GetActionDescriptor())
		a.Kind = workspace.KindAssertion
		a.Disabled = s.GetDisabled()
		a.Jit = s.GetJitCode() != ""
		a.SQL = workspace.SQL{Query: s.GetQuery()}
		out = append(out, a)
	}
	for _, d := range g.GetDeclarations() {
		a := base(d.GetTarget(), d.GetCanonicalTarget(), d.GetFileName(), d.GetTags(), nil, d.GetActionDescriptor())
		a.Kind = workspace.KindDeclaration
		out = append(out, a)
	}
	for _, t := range g.GetTests() {
		target := t.GetTarget()
		if target == nil {
			// Older cores give tests no target.
			target = &dataformpb.Target{Name: t.GetName()}
		}
		a := base(target, t.GetCanonicalTarget(), t.GetFileName(), t.GetTags(), t.GetDependencyTargets(), nil)
		a.Kind = workspace.KindTest
		a.Disabled = t.GetDisabled()
		// The test query, then the expected output.
		a.SQL = workspace.SQL{Query: t.GetTestQuery(), Queries: []string{t.GetExpectedOutputQuery()}}
		out = append(out, a)
	}
	return out
}

func target(t *dataformpb.Target) workspace.Target {
	return workspace.Target{Database: t.GetDatabase(), Schema: t.GetSchema(), Name: t.GetName()}
}

func base(t, canonical *dataformpb.Target, file string, tags []string, deps []*dataformpb.Target, d *dataformpb.ActionDescriptor) *workspace.Action {
	a := &workspace.Action{
		Target:          target(t),
		CanonicalTarget: target(canonical),
		File:            file,
		Tags:            append([]string{}, tags...),
		Dependencies:    []workspace.Target{},
		Description:     d.GetDescription(),
	}
	if canonical == nil {
		a.CanonicalTarget = a.Target
	}
	for _, dep := range deps {
		a.Dependencies = append(a.Dependencies, target(dep))
	}
	for _, c := range d.GetColumns() {
		a.Columns = append(a.Columns, workspace.Column{Name: strings.Join(c.GetPath(), "."), Description: c.GetDescription()})
	}
	return a
}

func tableKind(t *dataformpb.Table) string {
	switch t.GetEnumType() {
	case dataformpb.TableType_VIEW:
		return workspace.KindView
	case dataformpb.TableType_INCREMENTAL:
		return workspace.KindIncremental
	case dataformpb.TableType_TABLE:
		return workspace.KindTable
	}
	switch t.GetType() {
	case "view":
		return workspace.KindView
	case "incremental":
		return workspace.KindIncremental
	}
	return workspace.KindTable
}
