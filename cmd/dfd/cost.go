package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Billing modes of --billing (and of dfd.cost.billing).
const (
	billingOnDemand = drycost.BillingOnDemand
	billingCapacity = drycost.BillingCapacity
)

// costFlags are --cost, --price-per-tib and --billing, of dfd check and
// dfd diff.
type costFlags struct {
	on      *bool
	price   *float64
	billing *string
}

// addCostFlags defines them on fs; usage says what --cost adds.
func addCostFlags(fs *flag.FlagSet, usage string) costFlags {
	return costFlags{
		on:      fs.Bool("cost", false, usage),
		price:   fs.Float64("price-per-tib", drycost.DefaultPricePerTiB, "on-demand price in US dollars per TiB processed, for --cost"),
		billing: fs.String("billing", billingOnDemand, "billing model for --cost: on-demand (bytes and dollars) or capacity (bytes only)"),
	}
}

// pricing is the flags' pricing, or the usage error.
func (c costFlags) pricing() (drycost.Pricing, error) {
	if *c.billing != billingOnDemand && *c.billing != billingCapacity {
		return drycost.Pricing{}, fmt.Errorf("--billing %q: want on-demand or capacity", *c.billing)
	}
	if *c.price < 0 {
		return drycost.Pricing{}, fmt.Errorf("--price-per-tib %v: a price is not negative", *c.price)
	}
	return drycost.Pricing{Billing: *c.billing, PricePerTiB: *c.price}, nil
}

// costReport is the "cost" object of `dfd check --cost --json`.
type (
	costReport = drycost.Report
	actionCost = drycost.ActionReport
)

// estimateCosts dry-runs every action's statements (jit: the JiT actions'
// responses) against the warehouse's BigQuery, within timeout.
func estimateCosts(ctx context.Context, wh *checkWarehouse, g *dataformpb.CompiledGraph, jit map[string]*dataformpb.JitCompilationResponse, p drycost.Pricing, timeout time.Duration) *costReport {
	svc, reason := costService(wh)
	if svc == nil {
		return drycost.NotAvailable(reason, p)
	}
	defer svc.Close()
	return estimateWith(ctx, svc, g, jit, p, timeout)
}

// costService is the dry-run service of the warehouse's BigQuery, or
// nil and why there is none. The caller closes it.
func costService(wh *checkWarehouse) (*drycost.Service, string) {
	switch {
	case wh.snapshot != "":
		return nil, "the metadata source is a snapshot (--metadata): cost needs BigQuery's dry runs"
	case wh.offline:
		return nil, "no BigQuery (--offline): cost needs BigQuery's dry runs"
	case wh.bigquery == nil:
		reason := "BigQuery could not be opened"
		if wh.connectErr != nil {
			reason += ": " + wh.connectErr.Error()
		}
		return nil, reason
	}
	return drycost.New(drycost.Options{
		Verifier:    policy.Policy{Mode: policy.Check}.Wrap(wh.bigquery).(adapters.Verifier),
		Metadata:    wh.cache,
		Concurrency: 8,
	}), ""
}

// estimateWith is estimateCosts with a service of the caller's, which
// dry-runs a statement it has seen before only when a table it reads
// was rebuilt since.
func estimateWith(ctx context.Context, svc *drycost.Service, g *dataformpb.CompiledGraph, jit map[string]*dataformpb.JitCompilationResponse, p drycost.Pricing, timeout time.Duration) *costReport {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rep, err := svc.Report(ctx, drycost.Actions(g, jit), drycost.Defined(g), p)
	if err != nil {
		return drycost.NotAvailable(fmt.Sprintf("BigQuery's dry runs did not finish within %s", timeout), p)
	}
	return rep
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
		case a.Status != drycost.StatusEstimated:
			fig = a.Reason
		case a.Incremental != nil:
			fig = drycost.FormatBytes(a.TotalBytesProcessed) + money(a.CostUSD) + " full refresh / "
			if a.Incremental.Status == drycost.StatusEstimated {
				fig += drycost.FormatBytes(a.Incremental.TotalBytesProcessed) + money(a.Incremental.CostUSD) + " incremental"
			} else {
				fig += "incremental: " + a.Incremental.Reason
			}
		default:
			fig = drycost.FormatBytes(a.TotalBytesProcessed) + money(a.CostUSD)
		}
		if a.Type == drycost.TypeView && a.Status == drycost.StatusEstimated {
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
