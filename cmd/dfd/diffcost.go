package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dfdtools/dfd/adapters/drycost"
)

// The cost part of dfd diff's outputs (--cost): what one run costs at
// BASE and at HEAD, and the actions whose figure changed.

// costBasis says where the figures come from and how bytes become dollars.
func costBasis(c *drycost.Comparison) string {
	s := "BigQuery dry runs of both revisions against the warehouse as it is now"
	if c.Billing == drycost.BillingCapacity {
		return s + "; capacity billing: bytes only"
	}
	return s + fmt.Sprintf("; on-demand at $%.2f per TiB", c.PricePerTiB)
}

// signedBytes is "+1.0 GiB", "−3.0 GiB" or "±0 B".
func signedBytes(n int64) string {
	switch {
	case n > 0:
		return "+" + drycost.FormatBytes(n)
	case n < 0:
		return "−" + drycost.FormatBytes(-n)
	}
	return "±0 B"
}

// signedUSD is "+$0.01", "−$0.02", "+<$0.01"; "" without a price.
func signedUSD(v *float64) string {
	switch {
	case v == nil:
		return ""
	case *v > 0:
		return "+" + drycost.FormatUSD(*v)
	case *v < 0:
		return "−" + drycost.FormatUSD(-*v)
	}
	return "±$0.00"
}

// totalChange is the project's change in bytes and dollars: "+513 MiB +<$0.01".
func totalChange(c *drycost.Comparison) string {
	return strings.TrimSpace(signedBytes(c.DeltaBytesProcessed) + " " + signedUSD(c.DeltaCostUSD))
}

// withUSD is "3.0 GiB · $0.02", or the bytes alone without a price.
func withUSD(bytes int64, usd *float64) string {
	if usd == nil {
		return drycost.FormatBytes(bytes)
	}
	return drycost.FormatBytes(bytes) + " · " + drycost.FormatUSD(*usd)
}

// totalsText is a side's totals: with full refreshes, and with
// incremental runs when that differs.
func totalsText(t *drycost.Totals) string {
	s := withUSD(t.TotalBytesProcessed, t.CostUSD)
	if t.IncrementalTotalBytesProcessed != t.TotalBytesProcessed {
		s += " (" + withUSD(t.IncrementalTotalBytesProcessed, t.IncrementalCostUSD) + " incremental)"
	}
	if t.WithoutFigure > 0 {
		s += fmt.Sprintf(", %d without a figure", t.WithoutFigure)
	}
	return s
}

// runText is a run's figure, or why it has none; "—" for a side the
// action is not on.
func runText(r *drycost.Run) string {
	switch {
	case r == nil:
		return "—"
	case r.Status != drycost.StatusEstimated:
		if r.Reason != "" {
			return r.Reason
		}
		return r.Status
	}
	return withUSD(r.TotalBytesProcessed, r.CostUSD)
}

// deltaText is an action's change in bytes, or "" when a side has no
// figure to compare.
func deltaText(a drycost.ActionDelta) string {
	if a.DeltaBytesProcessed == nil {
		return ""
	}
	return signedBytes(*a.DeltaBytesProcessed)
}

// incrementalText is an incremental table's incremental runs, when they
// changed.
func incrementalText(a drycost.ActionDelta) string {
	if a.IncrementalBase == nil && a.IncrementalHead == nil {
		return ""
	}
	if a.IncrementalBase != nil && a.IncrementalHead != nil && *a.IncrementalBase == *a.IncrementalHead {
		return ""
	}
	return "incremental run: " + runText(a.IncrementalBase) + " → " + runText(a.IncrementalHead)
}

func writeCostText(w io.Writer, c *drycost.Comparison) {
	if c == nil {
		return
	}
	if !c.Available {
		fmt.Fprintf(w, "\ncost: not available: %s\n", c.Reason)
		return
	}
	fmt.Fprintf(w, "\ncost of one run (%s):\n", costBasis(c))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  base\t%s\n", totalsText(c.Base))
	fmt.Fprintf(tw, "  head\t%s\n", totalsText(c.Head))
	fmt.Fprintf(tw, "  change\t%s\n", totalChange(c))
	tw.Flush()
	if len(c.Actions) == 0 {
		fmt.Fprintln(w, "  no action's figure changed")
		return
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range c.Actions {
		line := fmt.Sprintf("  %s\t%s → %s\t%s", a.Target, runText(a.Base), runText(a.Head), deltaText(a))
		if inc := incrementalText(a); inc != "" {
			line += "\t" + inc
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

func writeCostMarkdown(w io.Writer, c *drycost.Comparison) {
	if c == nil {
		return
	}
	fmt.Fprintln(w, "\n### Cost of one run")
	if !c.Available {
		fmt.Fprintf(w, "\nNot available: %s\n", mdCell(c.Reason))
		return
	}
	fmt.Fprintf(w, "\n%s.\n\n", costBasis(c))
	fmt.Fprintln(w, "| | Base | Head | Change |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	fmt.Fprintf(w, "| **Project** | %s | %s | %s |\n", mdCell(totalsText(c.Base)), mdCell(totalsText(c.Head)), totalChange(c))
	for _, a := range c.Actions {
		change := deltaText(a)
		if inc := incrementalText(a); inc != "" {
			change = strings.TrimSpace(change + " (" + inc + ")")
		}
		fmt.Fprintf(w, "| `%s` | %s | %s | %s |\n", mdCell(a.Target), mdCell(runText(a.Base)), mdCell(runText(a.Head)), mdCell(change))
	}
}

// writeCostGitHub is one notice with the totals (a warning when there
// are none): the cost is the project's, on no line of its own.
func writeCostGitHub(w io.Writer, c *drycost.Comparison) {
	if c == nil {
		return
	}
	if !c.Available {
		fmt.Fprintf(w, "::warning title=%s::%s\n", ghProp("dfd diff: cost"), ghData("not available: "+c.Reason))
		return
	}
	msg := fmt.Sprintf("one run: %s at base, %s at head (%s)", totalsText(c.Base), totalsText(c.Head), totalChange(c))
	for _, a := range c.Actions {
		msg += "\n" + strings.TrimSpace(fmt.Sprintf("%s: %s → %s %s", a.Target, runText(a.Base), runText(a.Head), deltaText(a)))
	}
	fmt.Fprintf(w, "::notice title=%s::%s\n", ghProp("dfd diff: cost"), ghData(msg))
}
