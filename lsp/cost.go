package lsp

import (
	"context"
	"strings"

	"github.com/dfdtools/dfd/workspace"
)

// ActionCost is an action's figure for one run in dfd/preview (`cost`),
// from BigQuery's dry runs of its statements, for the snapshot the
// result is of.
type ActionCost struct {
	// Status is "estimated" when BigQuery answered for every statement,
	// else why not: "upstreamNotBuilt", "sqlError", "unavailable",
	// "unknown" (a JiT action whose code did not run); Reason in words.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Label is the code lens' text: "≈ 1.2 GiB · $0.01".
	Label string `json:"label"`
	// TotalBytesProcessed is BigQuery's figure for one run (an
	// incremental table's full refresh); CostUSD its on-demand cost
	// (absent with capacity billing).
	TotalBytesProcessed int64    `json:"totalBytesProcessed"`
	CostUSD             *float64 `json:"costUSD,omitempty"`
	// Incremental is an incremental table's incremental run.
	Incremental *IncrementalCost `json:"incremental,omitempty"`
	// InTotal is false for views (creating one bills nothing) and
	// actions without a figure.
	InTotal bool `json:"inTotal"`
}

// IncrementalCost is the figure of an incremental table's incremental run.
type IncrementalCost struct {
	Status              string   `json:"status"`
	Reason              string   `json:"reason,omitempty"`
	TotalBytesProcessed int64    `json:"totalBytesProcessed"`
	CostUSD             *float64 `json:"costUSD,omitempty"`
}

// ProjectCost is a project's figure for one run in dfd/status (`cost`):
// present once the latest compile's figures are known.
type ProjectCost struct {
	// Available is false when there are no figures (Reason: not BigQuery
	// as the metadata source).
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Version is the compile the figures are of (compiledVersion).
	Version int64 `json:"version"`
	// Label is the total as a status bar says it.
	Label string `json:"label"`
	// Billing is "on-demand" or "capacity" (bytes only); PricePerTiB the
	// on-demand price used.
	Billing     string  `json:"billing"`
	PricePerTiB float64 `json:"pricePerTiB,omitempty"`
	// TotalBytesProcessed and CostUSD: every incremental table refreshed
	// in full; Incremental…: each run incrementally. ActionsWithoutFigure
	// are not in them.
	TotalBytesProcessed            int64    `json:"totalBytesProcessed"`
	CostUSD                        *float64 `json:"costUSD,omitempty"`
	IncrementalTotalBytesProcessed int64    `json:"incrementalTotalBytesProcessed"`
	IncrementalCostUSD             *float64 `json:"incrementalCostUSD,omitempty"`
	ActionsWithoutFigure           int      `json:"actionsWithoutFigure"`
}

// actionCost is a's figure in snap, nil when there is none (yet).
func actionCost(snap *workspace.Snapshot, a *workspace.Action) *ActionCost {
	if snap == nil {
		return nil
	}
	c := snap.Costs()
	if c == nil || !c.Available {
		return nil
	}
	ac := c.Actions[a.Target.String()]
	if ac == nil {
		return nil
	}
	out := &ActionCost{Status: ac.Status, Reason: ac.Reason, Label: ac.Label, InTotal: ac.InTotal,
		TotalBytesProcessed: ac.Figure.Bytes, CostUSD: ac.Figure.USD}
	if ac.Incremental {
		out.Incremental = &IncrementalCost{Status: ac.IncrementalStatus, Reason: ac.IncrementalReason,
			TotalBytesProcessed: ac.Figure.IncrementalBytes, CostUSD: ac.Figure.IncrementalUSD}
	}
	return out
}

// projectCost is snap's total, nil when not known (yet).
func projectCost(snap *workspace.Snapshot) *ProjectCost {
	if snap == nil {
		return nil
	}
	c := snap.Costs()
	if c == nil {
		return nil
	}
	return &ProjectCost{Available: c.Available, Reason: c.Reason, Version: snap.Version, Label: c.Label,
		Billing: c.Billing, PricePerTiB: c.PricePerTiB,
		TotalBytesProcessed: c.Total.Bytes, CostUSD: c.Total.USD,
		IncrementalTotalBytesProcessed: c.Total.IncrementalBytes, IncrementalCostUSD: c.Total.IncrementalUSD,
		ActionsWithoutFigure: c.WithoutFigure}
}

// CostsEstimated implements workspace.CostListener: the figures of snap
// are known; code lenses and previews are asked for again.
func (e events) CostsEstimated(snap *workspace.Snapshot) {
	s := e.s
	if s.lifecycle() != stateInitialized {
		return
	}
	s.notifyPreviewChanged(snap)
	s.mu.Lock()
	refresh := s.caps.codeLensRefresh
	s.mu.Unlock()
	if refresh {
		// A request: sent from a goroutine of the server's, so that the
		// project's goroutine does not wait for the client.
		s.goBackground(func(ctx context.Context) {
			if err := s.client.CodeLensRefresh(ctx); err != nil {
				s.log.Debug("workspace/codeLens/refresh", "error", err)
			}
		})
	}
}

// costLine is the hover's line about a's cost, "" when there is no figure.
func costLine(snap *workspace.Snapshot, a *workspace.Action) string {
	ac := actionCost(snap, a)
	if ac == nil {
		return ""
	}
	line := "**Cost of one run** (BigQuery's dry run): " + ac.Label
	if !ac.InTotal && ac.Status == "estimated" && strings.EqualFold(a.Kind, "view") {
		line += " — what its query reads; creating the view bills nothing"
	}
	return line
}
