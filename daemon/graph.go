package daemon

import (
	"strings"

	"github.com/dfdtools/dfd/lsp"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// actionsOf turns a compiled graph into the LSP's model of actions.
func actionsOf(g *dataformpb.CompiledGraph) []*lsp.Action {
	var out []*lsp.Action
	for _, t := range g.GetTables() {
		a := base(t.GetTarget(), t.GetCanonicalTarget(), t.GetFileName(), t.GetTags(), t.GetDependencyTargets(), t.GetActionDescriptor())
		a.Kind = tableKind(t)
		a.Disabled = t.GetDisabled()
		a.Jit = t.GetJitCode() != ""
		a.SQL = lsp.SQL{
			Query: t.GetQuery(), PreOps: t.GetPreOps(), PostOps: t.GetPostOps(),
			IncrementalQuery: t.GetIncrementalQuery(), IncrementalPreOps: t.GetIncrementalPreOps(), IncrementalPostOps: t.GetIncrementalPostOps(),
		}
		out = append(out, a)
	}
	for _, o := range g.GetOperations() {
		a := base(o.GetTarget(), o.GetCanonicalTarget(), o.GetFileName(), o.GetTags(), o.GetDependencyTargets(), o.GetActionDescriptor())
		a.Kind = lsp.KindOperation
		a.Disabled = o.GetDisabled()
		a.Jit = o.GetJitCode() != ""
		a.SQL = lsp.SQL{Queries: o.GetQueries()}
		out = append(out, a)
	}
	for _, s := range g.GetAssertions() {
		a := base(s.GetTarget(), s.GetCanonicalTarget(), s.GetFileName(), s.GetTags(), s.GetDependencyTargets(), s.GetActionDescriptor())
		a.Kind = lsp.KindAssertion
		a.Disabled = s.GetDisabled()
		a.Jit = s.GetJitCode() != ""
		a.SQL = lsp.SQL{Query: s.GetQuery()}
		out = append(out, a)
	}
	for _, d := range g.GetDeclarations() {
		a := base(d.GetTarget(), d.GetCanonicalTarget(), d.GetFileName(), d.GetTags(), nil, d.GetActionDescriptor())
		a.Kind = lsp.KindDeclaration
		out = append(out, a)
	}
	for _, t := range g.GetTests() {
		target := t.GetTarget()
		if target == nil {
			// Older cores give tests no target.
			target = &dataformpb.Target{Name: t.GetName()}
		}
		a := base(target, t.GetCanonicalTarget(), t.GetFileName(), t.GetTags(), t.GetDependencyTargets(), nil)
		a.Kind = lsp.KindTest
		a.Disabled = t.GetDisabled()
		// The test query, then the expected output.
		a.SQL = lsp.SQL{Query: t.GetTestQuery(), Queries: []string{t.GetExpectedOutputQuery()}}
		out = append(out, a)
	}
	return out
}

func target(t *dataformpb.Target) lsp.Target {
	return lsp.Target{Database: t.GetDatabase(), Schema: t.GetSchema(), Name: t.GetName()}
}

func base(t, canonical *dataformpb.Target, file string, tags []string, deps []*dataformpb.Target, d *dataformpb.ActionDescriptor) *lsp.Action {
	a := &lsp.Action{
		Target:          target(t),
		CanonicalTarget: target(canonical),
		File:            file,
		Tags:            append([]string{}, tags...),
		Dependencies:    []lsp.Target{},
		Description:     d.GetDescription(),
	}
	if canonical == nil {
		a.CanonicalTarget = a.Target
	}
	for _, dep := range deps {
		a.Dependencies = append(a.Dependencies, target(dep))
	}
	for _, c := range d.GetColumns() {
		a.Columns = append(a.Columns, lsp.Column{Name: strings.Join(c.GetPath(), "."), Description: c.GetDescription()})
	}
	return a
}

func tableKind(t *dataformpb.Table) string {
	switch t.GetEnumType() {
	case dataformpb.TableType_VIEW:
		return lsp.KindView
	case dataformpb.TableType_INCREMENTAL:
		return lsp.KindIncremental
	case dataformpb.TableType_TABLE:
		return lsp.KindTable
	}
	switch t.GetType() {
	case "view":
		return lsp.KindView
	case "incremental":
		return lsp.KindIncremental
	}
	return lsp.KindTable
}
