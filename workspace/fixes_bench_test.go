package workspace

import (
	"fmt"
	"slices"
	"testing"
)

// BenchmarkClosestNames finds the names nearest to one that left the
// graph among 10,000 actions named as bench/projectgen names them
// (layer, domain, entity, a suffix): what an edit that breaks an action's
// config costs each of its refs' "did you mean".
func BenchmarkClosestNames(b *testing.B) {
	domains := []string{"finance", "logistics", "inventory", "marketing", "sales", "support", "hr", "product"}
	entities := []string{"accounts", "orders", "routes_us", "depots_eu", "tracking_events", "purchase_orders", "campaigns", "tickets", "employees", "invoices"}
	suffixes := []string{"", "_enriched", "_joined", "_scored", "_flagged", "_enriched_2", "_joined_2"}
	layers := []string{"stg", "int", "fct", "dim"}
	var actions []*Action
	for i := 0; len(actions) < 10000; i++ {
		name := fmt.Sprintf("%s_%s_%d_%s%s", layers[i%len(layers)], domains[i/7%len(domains)], i/56%25, entities[i/3%len(entities)], suffixes[i%len(suffixes)])
		t := Target{Database: "acme", Schema: "s", Name: name}
		actions = append(actions, &Action{Target: t, CanonicalTarget: t})
	}
	s := &Snapshot{Result: &CompileResult{Actions: actions}}
	gone := actions[4321].Target.Name + "_x"
	want := closestNames(s, gone)
	if !slices.Contains(want, actions[4321].Target.Name) {
		b.Fatalf("closestNames(%q) = %v", gone, want)
	}
	for b.Loop() {
		closestNames(s, gone)
	}
}
