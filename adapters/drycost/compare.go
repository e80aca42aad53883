package drycost

import "sort"

// Comparison is what one run costs at two revisions of a project: `dfd
// diff --cost`'s "cost" object. Both sides are dry-run against the same
// warehouse as it is now, so a difference is the change's, not the
// data's.
type Comparison struct {
	// Available is false when either side has no figures (Reason says
	// why): a comparison with one side missing would be made up.
	Available   bool    `json:"available"`
	Reason      string  `json:"reason,omitempty"`
	Billing     string  `json:"billing"`
	PricePerTiB float64 `json:"pricePerTiB,omitempty"`
	Base        *Totals `json:"base,omitempty"`
	Head        *Totals `json:"head,omitempty"`
	// DeltaBytesProcessed is Head's total minus Base's, with full
	// refreshes; DeltaCostUSD the same in dollars (absent with capacity
	// billing).
	DeltaBytesProcessed int64    `json:"deltaBytesProcessed"`
	DeltaCostUSD        *float64 `json:"deltaCostUSD,omitempty"`
	// Actions are the actions whose figure changed (or that have one on
	// one side only), by target.
	Actions []ActionDelta `json:"actions"`
}

// ActionDelta is one action's figures at both revisions.
type ActionDelta struct {
	Target string `json:"target"`
	// Base is absent for an action added at Head, Head for one removed.
	Base *Run `json:"base,omitempty"`
	Head *Run `json:"head,omitempty"`
	// DeltaBytesProcessed is Head's figure minus Base's (a side the
	// action is not on counts as 0); absent when a side it is on has no
	// figure.
	DeltaBytesProcessed *int64 `json:"deltaBytesProcessed,omitempty"`
	// IncrementalBase and IncrementalHead are an incremental table's
	// incremental runs.
	IncrementalBase *Run `json:"incrementalBase,omitempty"`
	IncrementalHead *Run `json:"incrementalHead,omitempty"`
}

// NotComparable is the Comparison of a project without BigQuery to ask.
func NotComparable(reason string, p Pricing) *Comparison {
	c := newComparison(p)
	c.Reason = reason
	return c
}

// newComparison is an empty Comparison priced as p says.
func newComparison(p Pricing) *Comparison {
	c := &Comparison{Actions: []ActionDelta{}, Billing: BillingOnDemand, PricePerTiB: p.PricePerTiB}
	if p.Billing == BillingCapacity {
		c.Billing, c.PricePerTiB = BillingCapacity, 0
	}
	return c
}

// Compare sets head's figures against base's. Either report not
// available makes the comparison not available, with its reason.
func Compare(base, head *Report, p Pricing) *Comparison {
	c := newComparison(p)
	switch {
	case !base.Available:
		c.Reason = "base: " + base.Reason
		return c
	case !head.Available:
		c.Reason = "head: " + head.Reason
		return c
	}
	c.Available, c.Base, c.Head = true, base.Totals, head.Totals
	c.DeltaBytesProcessed = head.Totals.TotalBytesProcessed - base.Totals.TotalBytesProcessed
	c.DeltaCostUSD = p.USD(c.DeltaBytesProcessed)

	type pair struct{ base, head *ActionReport }
	byTarget := map[string]*pair{}
	for i := range base.Actions {
		byTarget[base.Actions[i].Target] = &pair{base: &base.Actions[i]}
	}
	for i := range head.Actions {
		a := &head.Actions[i]
		if pr, ok := byTarget[a.Target]; ok {
			pr.head = a
		} else {
			byTarget[a.Target] = &pair{head: a}
		}
	}
	for target, pr := range byTarget {
		d := ActionDelta{Target: target}
		if pr.base != nil {
			d.Base, d.IncrementalBase = pr.base.run(), pr.base.Incremental
		}
		if pr.head != nil {
			d.Head, d.IncrementalHead = pr.head.run(), pr.head.Incremental
		}
		if sameRun(d.Base, d.Head) && sameRun(d.IncrementalBase, d.IncrementalHead) {
			continue
		}
		if known(d.Base) && known(d.Head) {
			delta := figure(d.Head) - figure(d.Base)
			d.DeltaBytesProcessed = &delta
		}
		c.Actions = append(c.Actions, d)
	}
	sort.Slice(c.Actions, func(i, j int) bool { return c.Actions[i].Target < c.Actions[j].Target })
	return c
}

// run is the action's (full refresh) run.
func (a *ActionReport) run() *Run {
	return &Run{Status: a.Status, Reason: a.Reason, TotalBytesProcessed: a.TotalBytesProcessed, CostUSD: a.CostUSD}
}

// sameRun says whether two runs show the same figure, or lack one for
// the same kind of reason.
func sameRun(a, b *Run) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Status == b.Status && a.TotalBytesProcessed == b.TotalBytesProcessed
}

// known: the action is not on that side, or has a figure there.
func known(r *Run) bool { return r == nil || r.Status == StatusEstimated }

func figure(r *Run) int64 {
	if r == nil {
		return 0
	}
	return r.TotalBytesProcessed
}
