package drycost

import (
	"context"
	"sync"
)

// Billing models: on-demand shows bytes and dollars, capacity (slots)
// bytes only.
const (
	BillingOnDemand = "on-demand"
	BillingCapacity = "capacity"
)

// Pricing says how bytes become dollars.
type Pricing struct {
	Billing     string  // BillingOnDemand (also for "") or BillingCapacity
	PricePerTiB float64 // on-demand price, US dollars
}

// USD is the cost of bytes, nil with capacity billing (bytes only).
func (p Pricing) USD(bytes int64) *float64 {
	if p.Billing == BillingCapacity {
		return nil
	}
	v := Cost(bytes, p.PricePerTiB)
	return &v
}

// Statuses of a run's figure.
const (
	StatusEstimated = "estimated"
	StatusUnknown   = "unknown" // a JiT action whose code did not run
)

// Report is one run of a project's actions: `dfd check --cost --json`'s
// "cost" object, and the editor's figures.
type Report struct {
	// Available is false when there is no BigQuery to ask (Reason says
	// why): there is no figure then, never a made-up one.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Billing   string `json:"billing"`
	// PricePerTiB is the on-demand price used (absent with capacity
	// billing, which shows bytes only).
	PricePerTiB float64        `json:"pricePerTiB,omitempty"`
	Actions     []ActionReport `json:"actions"`
	Totals      *Totals        `json:"totals,omitempty"`
}

// ActionReport is one action's figures for one run.
type ActionReport struct {
	Target string `json:"target"`
	Type   string `json:"type"`
	File   string `json:"file,omitempty"`
	// Status is StatusEstimated when every statement of the run has
	// BigQuery's figure, else why not: a Kind ("upstreamNotBuilt",
	// "sqlError", "unavailable") or StatusUnknown.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// TotalBytesProcessed is BigQuery's figure for one run (an
	// incremental table's full refresh), summed over its statements.
	TotalBytesProcessed int64    `json:"totalBytesProcessed"`
	CostUSD             *float64 `json:"costUSD,omitempty"`
	// Incremental is an incremental table's incremental run.
	Incremental *Run `json:"incremental,omitempty"`
	// InTotal is false for views (creating a view bills nothing; the
	// figure is what its query reads) and actions without a figure.
	InTotal bool `json:"inTotal"`
	// Figures are the runs' answers (not in the JSON): the run, then an
	// incremental table's incremental run; Action is what was asked.
	Figures []Figure `json:"-"`
	Action  Action   `json:"-"`
}

// Run is the figure of one run of an action.
type Run struct {
	Status              string   `json:"status"`
	Reason              string   `json:"reason,omitempty"`
	TotalBytesProcessed int64    `json:"totalBytesProcessed"`
	CostUSD             *float64 `json:"costUSD,omitempty"`
}

// Totals are a project's totals for one run: with every incremental
// table refreshed in full, and with each run incrementally.
type Totals struct {
	TotalBytesProcessed            int64    `json:"totalBytesProcessed"`
	CostUSD                        *float64 `json:"costUSD,omitempty"`
	IncrementalTotalBytesProcessed int64    `json:"incrementalTotalBytesProcessed"`
	IncrementalCostUSD             *float64 `json:"incrementalCostUSD,omitempty"`
	// WithoutFigure counts the actions left out of the totals because
	// BigQuery gave no figure for them (an incremental table with a full
	// refresh figure but none for its incremental run is left out of the
	// incremental total only).
	WithoutFigure int `json:"actionsWithoutFigure"`
}

// NotAvailable is the Report of a project without BigQuery to ask.
func NotAvailable(reason string, p Pricing) *Report {
	r := &Report{Reason: reason, Actions: []ActionReport{}}
	r.setPricing(p)
	return r
}

func (r *Report) setPricing(p Pricing) {
	r.Billing = BillingOnDemand
	if p.Billing == BillingCapacity {
		r.Billing = BillingCapacity
	} else {
		r.PricePerTiB = p.PricePerTiB
	}
}

// Report dry-runs every statement of actions (all at once, within the
// Service's bound) and adds them up. The error is ctx's, when it ended
// first.
func (s *Service) Report(ctx context.Context, actions []Action, defined func(string) bool, p Pricing) (*Report, error) {
	rep := &Report{Available: true, Actions: make([]ActionReport, len(actions))}
	rep.setPricing(p)
	errs := make([]error, len(actions))
	var wg sync.WaitGroup
	for i, a := range actions {
		wg.Go(func() { rep.Actions[i], errs[i] = s.action(ctx, a, defined, p) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t := &Totals{}
	for _, a := range rep.Actions {
		if !a.InTotal {
			if a.Status != StatusEstimated {
				t.WithoutFigure++
			}
			continue
		}
		t.TotalBytesProcessed += a.TotalBytesProcessed
		switch {
		case a.Incremental == nil:
			t.IncrementalTotalBytesProcessed += a.TotalBytesProcessed
		case a.Incremental.Status == StatusEstimated:
			t.IncrementalTotalBytesProcessed += a.Incremental.TotalBytesProcessed
		default:
			t.WithoutFigure++ // in the full-refresh total only
		}
	}
	t.CostUSD, t.IncrementalCostUSD = p.USD(t.TotalBytesProcessed), p.USD(t.IncrementalTotalBytesProcessed)
	rep.Totals = t
	return rep, nil
}

func (s *Service) action(ctx context.Context, a Action, defined func(string) bool, p Pricing) (ActionReport, error) {
	out := ActionReport{Target: a.Target, Type: a.Type, File: a.File, Action: a}
	if a.Unknown != "" {
		out.Status, out.Reason = StatusUnknown, a.Unknown
		return out, nil
	}
	run := func(stmts []string) (Run, error) {
		f, err := s.Figure(ctx, stmts, defined)
		if err != nil {
			return Run{}, err
		}
		out.Figures = append(out.Figures, f)
		if !f.Complete {
			return Run{Status: f.status(), Reason: f.Why()}, nil
		}
		return Run{Status: StatusEstimated, TotalBytesProcessed: f.Bytes, CostUSD: p.USD(f.Bytes)}, nil
	}
	full, err := run(a.Run)
	if err != nil {
		return out, err
	}
	out.Status, out.Reason, out.TotalBytesProcessed, out.CostUSD = full.Status, full.Reason, full.TotalBytesProcessed, full.CostUSD
	if a.Type == TypeIncremental {
		inc, err := run(a.Incremental)
		if err != nil {
			return out, err
		}
		out.Incremental = &inc
	}
	out.InTotal = out.Status == StatusEstimated && a.Type != TypeView
	return out, nil
}

// status is the status of a Figure: its first statement without a
// figure says why.
func (f Figure) status() string {
	for _, e := range f.Estimates {
		if e.Kind != Estimated {
			return string(e.Kind)
		}
	}
	return StatusEstimated
}
