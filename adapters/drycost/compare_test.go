package drycost

import (
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	p := Pricing{PricePerTiB: 6.25}
	est := func(target string, bytes int64) ActionReport {
		return ActionReport{Target: target, Type: TypeTable, Status: StatusEstimated, TotalBytesProcessed: bytes, CostUSD: p.USD(bytes), InTotal: true}
	}
	base := &Report{Available: true, Actions: []ActionReport{
		est("p.d.same", 1<<30),
		est("p.d.grows", 2<<30),
		est("p.d.removed", 3<<30),
		est("p.d.loses_figure", 4<<30),
		{Target: "p.d.inc", Type: TypeIncremental, Status: StatusEstimated, TotalBytesProcessed: 5 << 30, InTotal: true,
			Incremental: &Run{Status: StatusEstimated, TotalBytesProcessed: 1 << 20}},
	}, Totals: &Totals{TotalBytesProcessed: 15 << 30}}
	head := &Report{Available: true, Actions: []ActionReport{
		est("p.d.same", 1<<30),
		est("p.d.grows", 3<<30),
		est("p.d.added", 1<<20),
		{Target: "p.d.loses_figure", Type: TypeTable, Status: "upstreamNotBuilt", Reason: "upstream not built: p.d.x"},
		{Target: "p.d.inc", Type: TypeIncremental, Status: StatusEstimated, TotalBytesProcessed: 5 << 30, InTotal: true,
			Incremental: &Run{Status: StatusEstimated, TotalBytesProcessed: 2 << 20}},
	}, Totals: &Totals{TotalBytesProcessed: 9<<30 + 1<<20}}

	c := Compare(base, head, p)
	if !c.Available || c.Billing != BillingOnDemand || c.PricePerTiB != 6.25 {
		t.Fatalf("comparison: %+v", c)
	}
	if want := int64(9<<30+1<<20) - 15<<30; c.DeltaBytesProcessed != want || c.DeltaCostUSD == nil || *c.DeltaCostUSD >= 0 {
		t.Errorf("delta %d (%v), want %d and a negative cost", c.DeltaBytesProcessed, c.DeltaCostUSD, want)
	}
	var got []string
	for _, a := range c.Actions {
		s := a.Target
		if a.DeltaBytesProcessed != nil {
			s += " " + FormatBytes(abs(*a.DeltaBytesProcessed))
		} else {
			s += " no delta"
		}
		if a.Base == nil {
			s += " added"
		}
		if a.Head == nil {
			s += " removed"
		}
		if a.IncrementalHead != nil {
			s += " inc " + FormatBytes(a.IncrementalHead.TotalBytesProcessed)
		}
		got = append(got, s)
	}
	want := []string{
		"p.d.added 1.0 MiB added",
		"p.d.grows 1.0 GiB",
		"p.d.inc 0 B inc 2.0 MiB",
		"p.d.loses_figure no delta",
		"p.d.removed 3.0 GiB removed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Capacity billing: bytes only.
	if c := Compare(base, head, Pricing{Billing: BillingCapacity}); c.DeltaCostUSD != nil || c.PricePerTiB != 0 || c.Billing != BillingCapacity {
		t.Errorf("capacity: %+v", c)
	}
	// A side without figures: no comparison, and why.
	c = Compare(NotAvailable("no BigQuery (--offline)", p), head, p)
	if c.Available || c.Reason != "base: no BigQuery (--offline)" || c.Base != nil || len(c.Actions) != 0 {
		t.Errorf("base not available: %+v", c)
	}
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
