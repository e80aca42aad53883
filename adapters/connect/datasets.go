package connect

import (
	"slices"
	"strings"

	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// GraphDatasets lists the datasets a compiled graph references: those of
// its actions' targets, of their dependencies and of its declarations.
// Targets without a database are in defaultDB.
func GraphDatasets(g *dataformpb.CompiledGraph, defaultDB string) []cache.Dataset {
	var out []cache.Dataset
	add := func(ts ...*dataformpb.Target) {
		for _, t := range ts {
			if t.GetSchema() == "" {
				continue
			}
			db := t.GetDatabase()
			if db == "" {
				db = defaultDB
			}
			out = append(out, cache.Dataset{Database: db, Schema: t.GetSchema()})
		}
	}
	for _, a := range g.GetTables() {
		add(a.GetTarget())
		add(a.GetDependencyTargets()...)
	}
	for _, a := range g.GetOperations() {
		add(a.GetTarget())
		add(a.GetDependencyTargets()...)
	}
	for _, a := range g.GetAssertions() {
		add(a.GetTarget())
		add(a.GetDependencyTargets()...)
	}
	for _, d := range g.GetDeclarations() {
		add(d.GetTarget())
	}
	return dedupeDatasets(out)
}

// dedupeDatasets sorts ds and drops repeats.
func dedupeDatasets(ds []cache.Dataset) []cache.Dataset {
	slices.SortFunc(ds, func(a, b cache.Dataset) int {
		return strings.Compare(a.Database+"."+a.Schema, b.Database+"."+b.Schema)
	})
	return slices.Compact(ds)
}
