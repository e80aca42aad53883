package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Billing modes of --billing (and of dfd.cost.billing).
const (
	billingOnDemand = "on-demand"
	billingCapacity = "capacity"
)

// costReport is the "cost" object of `dfd check --cost --json`.
type costReport struct {
	// Available is false with a snapshot or no metadata (Reason says
	// why): there is no figure then, never a made-up one.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Billing   string `json:"billing"`
	// PricePerTiB is the on-demand price used (absent with capacity
	// billing, which shows bytes only).
	PricePerTiB float64      `json:"pricePerTiB,omitempty"`
	Actions     []actionCost `json:"actions"`
	Totals      *costTotals  `json:"totals,omitempty"`
}

// actionCost is one action's figures for one run.
type actionCost struct {
	Target string `json:"target"`
	Type   string `json:"type"`
	File   string `json:"file,omitempty"`
	// Status is "estimated" when every statement of the run has BigQuery's
	// figure, else why not: "upstreamNotBuilt", "sqlError", "unavailable"
	// (the dry run failed for a reason that is not the SQL) or "unknown"
	// (a JiT action whose code did not run).
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// TotalBytesProcessed is BigQuery's figure for one run (an
	// incremental table's full refresh), summed over its statements.
	TotalBytesProcessed int64    `json:"totalBytesProcessed"`
	CostUSD             *float64 `json:"costUSD,omitempty"`
	// Incremental is an incremental table's incremental run.
	Incremental *runCost `json:"incremental,omitempty"`
	// InTotal is false for views (creating a view bills nothing; the
	// figure is what its query reads) and actions without a figure.
	InTotal bool `json:"inTotal"`
}

type runCost struct {
	Status              string   `json:"status"`
	Reason              string   `json:"reason,omitempty"`
	TotalBytesProcessed int64    `json:"totalBytesProcessed"`
	CostUSD             *float64 `json:"costUSD,omitempty"`
}

// costTotals are the project's totals for one run: with every
// incremental table refreshed in full, and with each run incrementally.
type costTotals struct {
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

// costOptions are the --cost flags.
type costOptions struct {
	billing     string
	pricePerTiB float64
	timeout     time.Duration
}

func (o costOptions) price(bytes int64) *float64 {
	if o.billing == billingCapacity {
		return nil
	}
	v := drycost.Cost(bytes, o.pricePerTiB)
	return &v
}

// estimateCosts dry-runs every action's statements (jit: the JiT actions'
// responses) against the warehouse's BigQuery.
func estimateCosts(ctx context.Context, wh *checkWarehouse, g *dataformpb.CompiledGraph, jit map[string]*dataformpb.JitCompilationResponse, o costOptions) *costReport {
	rep := &costReport{Billing: o.billing, Actions: []actionCost{}}
	if o.billing != billingCapacity {
		rep.PricePerTiB = o.pricePerTiB
	}
	switch {
	case wh.snapshot != "":
		rep.Reason = "the metadata source is a snapshot (--metadata): cost needs BigQuery's dry runs"
		return rep
	case wh.offline:
		rep.Reason = "no BigQuery (--offline): cost needs BigQuery's dry runs"
		return rep
	case wh.bigquery == nil:
		rep.Reason = "BigQuery could not be opened"
		if wh.connectErr != nil {
			rep.Reason += ": " + wh.connectErr.Error()
		}
		return rep
	}
	rep.Available = true
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	svc := drycost.New(drycost.Options{
		Verifier:    policy.Policy{Mode: policy.Check}.Wrap(wh.bigquery).(adapters.Verifier),
		Metadata:    wh.cache,
		Concurrency: 8,
	})
	defer svc.Close()
	defined := drycost.Defined(g)
	actions := drycost.Actions(g, jit)
	rep.Actions = make([]actionCost, len(actions))
	var wg sync.WaitGroup
	for i, a := range actions {
		wg.Go(func() { rep.Actions[i] = actionFigures(ctx, svc, a, defined, o) })
	}
	wg.Wait()
	t := &costTotals{}
	for _, a := range rep.Actions {
		if !a.InTotal {
			if a.Status != "estimated" {
				t.WithoutFigure++
			}
			continue
		}
		t.TotalBytesProcessed += a.TotalBytesProcessed
		switch {
		case a.Incremental == nil:
			t.IncrementalTotalBytesProcessed += a.TotalBytesProcessed
		case a.Incremental.Status == "estimated":
			t.IncrementalTotalBytesProcessed += a.Incremental.TotalBytesProcessed
		default:
			t.WithoutFigure++ // in the full-refresh total only
		}
	}
	t.CostUSD, t.IncrementalCostUSD = o.price(t.TotalBytesProcessed), o.price(t.IncrementalTotalBytesProcessed)
	rep.Totals = t
	return rep
}

func actionFigures(ctx context.Context, svc *drycost.Service, a drycost.Action, defined func(string) bool, o costOptions) actionCost {
	out := actionCost{Target: a.Target, Type: a.Type, File: a.File}
	if a.Unknown != "" {
		out.Status, out.Reason = "unknown", a.Unknown
		return out
	}
	run := func(stmts []string) runCost {
		f, err := svc.Figure(ctx, stmts, defined)
		if err != nil {
			return runCost{Status: string(drycost.Unavailable), Reason: "no figure: " + err.Error()}
		}
		rc := runCost{Status: "estimated", TotalBytesProcessed: f.Bytes}
		if !f.Complete {
			rc.Status, rc.Reason = statusOf(f), f.Why()
			return rc
		}
		rc.CostUSD = o.price(f.Bytes)
		return rc
	}
	full := run(a.Run)
	out.Status, out.Reason, out.TotalBytesProcessed, out.CostUSD = full.Status, full.Reason, full.TotalBytesProcessed, full.CostUSD
	if a.Type == drycost.TypeIncremental {
		inc := run(a.Incremental)
		out.Incremental = &inc
	}
	out.InTotal = out.Status == "estimated" && a.Type != drycost.TypeView
	if out.Status != "estimated" {
		out.TotalBytesProcessed, out.CostUSD = 0, nil
	}
	return out
}

// statusOf is the status of a Figure that is not complete: its first
// statement without a figure says why.
func statusOf(f drycost.Figure) string {
	for _, e := range f.Estimates {
		if e.Kind != drycost.Estimated {
			return string(e.Kind)
		}
	}
	return "estimated"
}

// printCost writes the cost table of `dfd check --cost`.
func printCost(w io.Writer, rep *costReport) {
	if !rep.Available {
		fmt.Fprintf(w, "cost: not available: %s\n", rep.Reason)
		return
	}
	money := func(p *float64) string {
		if p == nil {
			return ""
		}
		return "  " + drycost.FormatUSD(*p)
	}
	if rep.Billing == billingCapacity {
		fmt.Fprintln(w, "cost of one run (BigQuery dry runs; capacity billing: bytes only):")
	} else {
		fmt.Fprintf(w, "cost of one run (BigQuery dry runs; on-demand at $%.2f per TiB):\n", rep.PricePerTiB)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range rep.Actions {
		var fig string
		switch {
		case a.Status != "estimated":
			fig = a.Reason
		case a.Incremental != nil:
			fig = drycost.FormatBytes(a.TotalBytesProcessed) + money(a.CostUSD) + " full refresh / "
			if a.Incremental.Status == "estimated" {
				fig += drycost.FormatBytes(a.Incremental.TotalBytesProcessed) + money(a.Incremental.CostUSD) + " incremental"
			} else {
				fig += "incremental: " + a.Incremental.Reason
			}
		default:
			fig = drycost.FormatBytes(a.TotalBytesProcessed) + money(a.CostUSD)
		}
		if a.Type == drycost.TypeView && a.Status == "estimated" {
			fig += " (what its query reads; creating the view bills nothing)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", a.Target, a.Type, fig)
	}
	tw.Flush()
	t := rep.Totals
	line := fmt.Sprintf("total: %s%s", drycost.FormatBytes(t.TotalBytesProcessed), money(t.CostUSD))
	if t.IncrementalTotalBytesProcessed != t.TotalBytesProcessed {
		line += fmt.Sprintf(" with full refreshes, %s%s with incremental runs", drycost.FormatBytes(t.IncrementalTotalBytesProcessed), money(t.IncrementalCostUSD))
	}
	if t.WithoutFigure > 0 {
		line += fmt.Sprintf("; %d action(s) without a figure are not in it", t.WithoutFigure)
	}
	fmt.Fprintln(w, strings.ReplaceAll(line, "  ", " "))
}
