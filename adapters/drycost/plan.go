package drycost

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// DefaultPricePerTiB is BigQuery's on-demand list price for queries, in
// US dollars per TiB processed (US multi-region; other regions differ,
// hence the setting and the flag).
const DefaultPricePerTiB = 6.25

// Action types, as Action.Type says them.
const (
	TypeTable       = "table"
	TypeView        = "view"
	TypeIncremental = "incremental"
	TypeOperations  = "operations"
	TypeAssertion   = "assertion"
)

// Action is what one run of an action sends to BigQuery.
type Action struct {
	Target string // "project.dataset.name"
	Type   string // TypeTable, TypeView, …
	File   string // the action's file, relative to the project
	// Run are the statements of one run (an incremental table's full
	// refresh): pre-operations, the query, post-operations.
	Run []string
	// Incremental are the statements of an incremental table's
	// incremental run (nil for other types).
	Incremental []string
	// RunLabels and IncrementalLabels name each statement of Run and
	// Incremental as dfd's findings do: "pre_operations[0]", "query",
	// "incremental query", "queries[1]".
	RunLabels, IncrementalLabels []string
	// JiT says the statements are those the action's JiT code produced.
	JiT bool
	// Unknown, when not empty, says why the statements are not known (a
	// JiT action whose code was not run).
	Unknown string
}

// Actions lists the enabled actions of g with their statements; jit holds
// the responses of the JiT actions' code by target (an action missing
// from it is Unknown).
func Actions(g *dataformpb.CompiledGraph, jit map[string]*dataformpb.JitCompilationResponse) []Action {
	var out []Action
	jitOf := func(a *Action, code string) *dataformpb.JitCompilationResponse {
		if code == "" {
			return nil
		}
		a.JiT = true
		r := jit[a.Target]
		if r == nil {
			a.Unknown = "its JiT code was not run"
		}
		return r
	}
	opsOf := func(prefix string, pre []string, q string, post []string) ([]string, []string) {
		var s, l []string
		for i, x := range pre {
			s, l = append(s, x), append(l, fmt.Sprintf("%spre_operations[%d]", prefix, i))
		}
		if strings.TrimSpace(q) != "" {
			s, l = append(s, q), append(l, prefix+"query")
		}
		for i, x := range post {
			s, l = append(s, x), append(l, fmt.Sprintf("%spost_operations[%d]", prefix, i))
		}
		return s, l
	}
	queries := func(qs []string) ([]string, []string) {
		var l []string
		for i := range qs {
			l = append(l, fmt.Sprintf("queries[%d]", i))
		}
		return qs, l
	}
	fromJit := func(prefix string, r *dataformpb.JitTableResult) ([]string, []string) {
		return opsOf(prefix, r.GetPreOps(), r.GetQuery(), r.GetPostOps())
	}
	for _, t := range g.GetTables() {
		if t.GetDisabled() {
			continue
		}
		a := Action{Target: adapters.TargetString(t.GetTarget()), Type: tableType(t), File: t.GetFileName()}
		r := jitOf(&a, t.GetJitCode())
		switch {
		case a.JiT && r == nil:
		case a.JiT && r.GetIncrementalTable() != nil:
			a.Run, a.RunLabels = fromJit("", r.GetIncrementalTable().GetRegular())
			a.Incremental, a.IncrementalLabels = fromJit("incremental ", r.GetIncrementalTable().GetIncremental())
		case a.JiT:
			a.Run, a.RunLabels = fromJit("", r.GetTable())
		case a.Type == TypeIncremental:
			a.Run, a.RunLabels = opsOf("", t.GetPreOps(), t.GetQuery(), t.GetPostOps())
			a.Incremental, a.IncrementalLabels = opsOf("incremental ", t.GetIncrementalPreOps(), t.GetIncrementalQuery(), t.GetIncrementalPostOps())
		default:
			a.Run, a.RunLabels = opsOf("", t.GetPreOps(), t.GetQuery(), t.GetPostOps())
		}
		out = append(out, a)
	}
	for _, o := range g.GetOperations() {
		if o.GetDisabled() {
			continue
		}
		a := Action{Target: adapters.TargetString(o.GetTarget()), Type: TypeOperations, File: o.GetFileName()}
		if r := jitOf(&a, o.GetJitCode()); a.JiT {
			if r != nil {
				a.Run, a.RunLabels = queries(r.GetOperation().GetQueries())
			}
		} else {
			a.Run, a.RunLabels = queries(o.GetQueries())
		}
		out = append(out, a)
	}
	for _, as := range g.GetAssertions() {
		if as.GetDisabled() {
			continue
		}
		a := Action{Target: adapters.TargetString(as.GetTarget()), Type: TypeAssertion, File: as.GetFileName()}
		if r := jitOf(&a, as.GetJitCode()); a.JiT {
			if r != nil {
				a.Run, a.RunLabels = opsOf("", nil, r.GetAssertion().GetQuery(), nil)
			}
		} else {
			a.Run, a.RunLabels = opsOf("", nil, as.GetQuery(), nil)
		}
		out = append(out, a)
	}
	return out
}

func tableType(t *dataformpb.Table) string {
	switch t.GetEnumType() {
	case dataformpb.TableType_VIEW:
		return TypeView
	case dataformpb.TableType_INCREMENTAL:
		return TypeIncremental
	case dataformpb.TableType_TABLE:
		return TypeTable
	}
	switch t.GetType() {
	case "view":
		return TypeView
	case "incremental":
		return TypeIncremental
	}
	return TypeTable
}

// Defined is the defined function of Estimate for g: the targets of its
// actions and declarations, and their datasets.
func Defined(g *dataformpb.CompiledGraph) func(table string) bool {
	set := map[string]bool{}
	add := func(t *dataformpb.Target) {
		if t == nil || t.GetDatabase() == "" {
			return
		}
		set[t.GetDatabase()+"."+t.GetSchema()] = true
		set[adapters.TargetString(t)] = true
	}
	for _, t := range g.GetTables() {
		add(t.GetTarget())
	}
	for _, o := range g.GetOperations() {
		add(o.GetTarget())
	}
	for _, a := range g.GetAssertions() {
		add(a.GetTarget())
	}
	return func(table string) bool { return set[table] }
}

// Figure is the dry runs of a list of statements: one run of an action.
type Figure struct {
	// Bytes is the sum of the statements' totalBytesProcessed.
	Bytes int64
	// Complete says every statement was estimated: Bytes is the whole.
	Complete bool
	// Estimates are the statements' answers, in order.
	Estimates []Estimate
}

// Why is, for a Figure that is not Complete, the first reason: "upstream
// not built (p.ds.t)", BigQuery's error, or why BigQuery could not
// answer.
func (f Figure) Why() string {
	for _, e := range f.Estimates {
		switch e.Kind {
		case UpstreamNotBuilt:
			return "upstream not built (" + e.Table + ")"
		case SQLError:
			return "BigQuery: " + e.Message
		case Unavailable:
			return "no figure: " + string(e.Code) + ": " + e.Message
		}
	}
	return ""
}

// Figure estimates stmts, concurrently (within the Service's bound).
func (s *Service) Figure(ctx context.Context, stmts []string, defined func(string) bool) (Figure, error) {
	f := Figure{Complete: true, Estimates: make([]Estimate, len(stmts))}
	errs := make([]error, len(stmts))
	var wg sync.WaitGroup
	for i, st := range stmts {
		wg.Go(func() { f.Estimates[i], errs[i] = s.Estimate(ctx, st, defined) })
	}
	wg.Wait()
	for i, e := range f.Estimates {
		if errs[i] != nil {
			return Figure{}, errs[i]
		}
		if e.Kind != Estimated {
			f.Complete = false
		}
		f.Bytes += e.Bytes
	}
	return f, nil
}

// Cost is what bytes cost at pricePerTiB (on-demand billing).
func Cost(bytes int64, pricePerTiB float64) float64 {
	return float64(bytes) / (1 << 40) * pricePerTiB
}

// FormatBytes says n in binary units, as BigQuery's console does: "512 B",
// "1.2 GiB".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%d B", n)
	case v < 10:
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

// FormatUSD says a cost in dollars to the cent; a cost below a cent that
// is not zero is "<$0.01", never "$0.00".
func FormatUSD(v float64) string {
	if v > 0 && v < 0.005 {
		return "<$0.01"
	}
	return fmt.Sprintf("$%.2f", v)
}
