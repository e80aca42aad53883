package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/drycost"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/settings"
	"github.com/dfdtools/dfd/sqlcheck"
	"github.com/dfdtools/dfd/workspace"
)

var _ workspace.CostEstimator = (*openProject)(nil)

// costState is a BigQuery connection's dry-run service (package drycost):
// its kept answers live as long as the connection.
type costState struct {
	mu  sync.Mutex
	svc *drycost.Service
}

// service is the connection's dry-run service, made on first use. Its
// dry runs go through the check policy of the settings of the moment
// (cap, label), to BigQuery itself: the metadata cache's verdicts are kept
// for minutes, and would hide a rebuilt table.
func (c *bqConn) costService(b *Backend) *drycost.Service {
	c.cost.mu.Lock()
	defer c.cost.mu.Unlock()
	if c.cost.svc == nil {
		c.cost.svc = drycost.New(drycost.Options{
			Verifier: verifierFunc(func(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
				return checkPolicy(b.currentSettings()).Wrap(c.b.BigQuery).(adapters.Verifier).Verify(ctx, req)
			}),
			Metadata: c.b.Cache,
		})
	}
	return c.cost.svc
}

// closeCost ends the connection's dry runs in flight.
func (c *bqConn) closeCost() {
	c.cost.mu.Lock()
	svc := c.cost.svc
	c.cost.svc = nil
	c.cost.mu.Unlock()
	if svc != nil {
		svc.Close()
	}
}

type verifierFunc func(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error)

func (f verifierFunc) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	return f(ctx, req)
}

func pricing(s settings.Settings) drycost.Pricing {
	return drycost.Pricing{Billing: s.CostBilling, PricePerTiB: s.CostPricePerTiB}
}

// CostsUnavailable implements workspace.CostEstimator: with a metadata
// source other than BigQuery there will be no figure, and every snapshot
// says so from the moment it is published.
func (op *openProject) CostsUnavailable() *workspace.Costs {
	s := op.b.currentSettings()
	if !s.CostEnabled {
		return nil
	}
	src := sourceKind(s)
	if src == SourceBigQuery {
		return nil
	}
	if src == SourceNone {
		src = "none"
	}
	return costsOf(drycost.NotAvailable("the metadata source is "+src+"; cost figures need BigQuery's dry runs (dfd.metadata.source \"bigquery\")", pricing(s)))
}

// Costs implements workspace.CostEstimator: with metadata source
// bigquery, every action's statements are dry-run (one dry run per
// distinct statement text while its tables are unchanged: see drycost)
// and added up; JiT actions with the SQL their code produced in the
// check of this compile.
func (op *openProject) Costs(ctx context.Context, req workspace.CheckRequest) *workspace.Costs {
	s := op.b.currentSettings()
	if !s.CostEnabled {
		return nil
	}
	h, ok := req.Result.Graph.(*graphHandle)
	if !ok || h == nil {
		return nil
	}
	if c := op.CostsUnavailable(); c != nil {
		return c
	}
	p := pricing(s)
	ms := op.metadataSource()
	if ms.bq == nil || ms.bq.b == nil {
		why := "BigQuery cannot be used"
		if ms.err != nil {
			why += ": " + ms.err.Error()
		}
		return costsOf(drycost.NotAvailable(why, p))
	}
	var jit map[string]*dataformpb.JitCompilationResponse
	if last := op.sql.last.Load(); last != nil && last.g == h.graph {
		jit = last.jit
	}
	rep, err := ms.bq.costService(op.b).Report(ctx, drycost.Actions(h.graph, jit), drycost.Defined(h.graph), p)
	if err != nil {
		return nil // cancelled: a newer compile follows
	}
	c := costsOf(rep)
	c.Diagnostics = verdictDiagnostics(op.p.Root, h.graph, reader(op.p.Root, req.Overlays), rep)
	// A dry run that failed for a reason that is not the SQL gives no
	// diagnostic: dfd/status says it, as it says a failed metadata fetch;
	// a dry run answered says BigQuery answers again.
	var failed error
	answered := false
	for _, a := range rep.Actions {
		for _, f := range a.Figures {
			for _, e := range f.Estimates {
				switch {
				case e.Kind == drycost.Unavailable && e.Code != adapters.Canceled && failed == nil:
					failed = adapters.Errorf(e.Code, "BigQuery dry run: %s", e.Message)
				case e.Kind != drycost.Unavailable && !e.Cached:
					answered = true
				}
			}
		}
	}
	if failed != nil {
		ms.bq.noteFetch(failed)
	} else if answered {
		ms.bq.noteFetch(nil)
	}
	return c
}

// costsOf is a Report as the editor shows it.
func costsOf(rep *drycost.Report) *workspace.Costs {
	c := &workspace.Costs{Available: rep.Available, Reason: rep.Reason, Billing: rep.Billing, PricePerTiB: rep.PricePerTiB,
		Actions: map[string]*workspace.ActionCost{}}
	if !rep.Available {
		c.Label = "cost not available"
		return c
	}
	for _, a := range rep.Actions {
		ac := &workspace.ActionCost{Status: a.Status, Reason: a.Reason, InTotal: a.InTotal,
			Figure: workspace.CostFigure{Bytes: a.TotalBytesProcessed, USD: a.CostUSD}}
		if inc := a.Incremental; inc != nil {
			ac.Incremental, ac.IncrementalStatus, ac.IncrementalReason = true, inc.Status, inc.Reason
			ac.Figure.IncrementalBytes, ac.Figure.IncrementalUSD = inc.TotalBytesProcessed, inc.CostUSD
		}
		ac.Label = actionLabel(ac)
		c.Actions[a.Target] = ac
	}
	if t := rep.Totals; t != nil {
		c.Total = workspace.CostFigure{Bytes: t.TotalBytesProcessed, USD: t.CostUSD,
			IncrementalBytes: t.IncrementalTotalBytesProcessed, IncrementalUSD: t.IncrementalCostUSD}
		c.WithoutFigure = t.WithoutFigure
		c.Label = "≈ " + figure(t.TotalBytesProcessed, t.CostUSD) + " per run"
		if t.IncrementalTotalBytesProcessed != t.TotalBytesProcessed {
			c.Label = "≈ " + figure(t.TotalBytesProcessed, t.CostUSD) + " full refresh / " + figure(t.IncrementalTotalBytesProcessed, t.IncrementalCostUSD) + " incremental"
		}
		if t.WithoutFigure > 0 {
			c.Label += fmt.Sprintf(" (%d action(s) without a figure)", t.WithoutFigure)
		}
	}
	return c
}

// figure says bytes, and dollars when known: "1.2 GiB · $0.01".
func figure(bytes int64, usd *float64) string {
	s := drycost.FormatBytes(bytes)
	if usd != nil {
		s += " · " + drycost.FormatUSD(*usd)
	}
	return s
}

// actionLabel is an action's code lens text.
func actionLabel(a *workspace.ActionCost) string {
	if a.Status != drycost.StatusEstimated {
		return short(a.Reason)
	}
	if !a.Incremental {
		return "≈ " + figure(a.Figure.Bytes, a.Figure.USD)
	}
	s := "≈ " + figure(a.Figure.Bytes, a.Figure.USD) + " full refresh / "
	if a.IncrementalStatus != drycost.StatusEstimated {
		return s + "incremental: " + short(a.IncrementalReason)
	}
	return s + figure(a.Figure.IncrementalBytes, a.Figure.IncrementalUSD) + " incremental"
}

// short cuts a reason to a lens' width.
func short(s string) string {
	if r := []rune(s); len(r) > 80 {
		return strings.TrimSpace(string(r[:79])) + "…"
	}
	return s
}

var bigQueryPosition = regexp.MustCompile(` at \[\d+:\d+\]`)

// verdictDiagnostics are BigQuery's refusals of SQL as errors (source
// "BigQuery"), placed where GoogleSQL's findings are placed: BigQuery's
// "[line:column]" in the compiled statement, mapped to the .sqlx or .js
// text. Only a refusal of the SQL itself: not a missing table (a project
// table not built yet is not an error; a missing warehouse table is the
// metadata check's warning already), not a failure that is not the SQL's.
func verdictDiagnostics(root string, g *dataformpb.CompiledGraph, read fileReader, rep *drycost.Report) []workspace.Diagnostic {
	type at struct {
		path      string
		line, col int
		msg       string
	}
	seen := map[at]bool{}
	var out []workspace.Diagnostic
	for _, a := range rep.Actions {
		for i, f := range a.Figures {
			stmts, labels := a.Action.Run, a.Action.RunLabels
			if i == 1 {
				stmts, labels = a.Action.Incremental, a.Action.IncrementalLabels
			}
			for j, e := range f.Estimates {
				if e.Kind != drycost.SQLError || e.Table != "" || j >= len(stmts) || j >= len(labels) {
					continue
				}
				fd, ok := sqlcheck.Place(g, read, a.Target, labels[j], stmts[j], e.Line, e.Column)
				if !ok {
					continue
				}
				// Placed in the file: BigQuery's position in the compiled
				// statement would only mislead there.
				msg := bigQueryPosition.ReplaceAllString(e.Message, "")
				if labels[j] != "query" {
					msg += " (" + labels[j] + ")"
				}
				d := workspace.Diagnostic{
					Path: filepath.Join(root, filepath.FromSlash(fd.File)), Line: fd.Line, Col: fd.Col, EndLine: fd.EndLine, EndCol: fd.EndCol,
					Severity: workspace.SeverityError, Message: msg, Source: "BigQuery", Code: "dry-run",
				}
				k := at{d.Path, d.Line, d.Col, e.Message}
				if seen[k] {
					continue // the same error in both runs of an incremental table
				}
				seen[k] = true
				out = append(out, d)
			}
		}
	}
	return out
}
