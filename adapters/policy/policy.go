// Package policy decides what JiT code may do to the database, by wrapping
// any adapters.DbAdapter.
//
// # Preview mode (the zero Mode)
//
// A preview shows what an action would compile to; it must not change
// anything. So:
//
//   - Execute runs for real only when the statement is one read-only query
//     (sqlclass.Classify says Query: SELECT, WITH … SELECT, pipe-syntax FROM,
//     optionally parenthesised, comments and literals understood). Anything
//     else — DML, DDL, scripts, DECLARE, CALL, EXPORT DATA, statements that
//     cannot be classified — is sent as a dry run (big_query_options.dry_run =
//     true): the JiT code still gets a response (schema and statistics, no
//     rows) and the call record says why it was a dry run.
//   - DeleteTable is refused with PERMISSION_DENIED before it reaches the
//     wrapped adapter. JiT code can catch the rejection; the preview then
//     shows the code's failure path, and the call record shows the refusal.
//     Pretending success instead would leave the JiT code believing a table
//     is gone that every later GetTable/ListTables (served from the cache)
//     still returns.
//   - Every Execute carries MaxBytesBilled (as byte_limit, when the request's
//     is unset or larger) and the label dfd=preview.
//
// # Run mode
//
// Calls pass through, with the run's options merged into Execute requests as
// the Dataform CLI does: run options first, the request's options on top —
// labels merged key by key (the request's value wins), job prefixes joined
// with "-" (run prefix first), location and reservation from the request
// when it sets them, dry_run when either asks. With DryRun set (the CLI's
// --dry-run), every Execute is a dry run and DeleteTable is a no-op.
//
// # Labels
//
// In both modes, labels are merged the same way: Policy.Labels first, the
// request's labels on top. In preview mode the dfd=preview label is applied
// last and always wins, so a preview job is always recognisable in billing
// exports, whatever the JiT code asks for.
package policy

import (
	"context"
	"fmt"
	"maps"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/sqlclass"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Mode says whether JiT code runs for a preview or for a real run.
type Mode int

const (
	// Preview is the zero value, so a Policy that forgot its mode errs on
	// the side of changing nothing.
	Preview Mode = iota
	Run
)

func (m Mode) String() string {
	switch m {
	case Preview:
		return "preview"
	case Run:
		return "run"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// The label every preview query carries.
const (
	PreviewLabelKey   = "dfd"
	PreviewLabelValue = "preview"
)

// Policy is the set of rules and run options applied to JiT database calls.
type Policy struct {
	Mode Mode

	// MaxBytesBilled caps every Execute's byte_limit (0: no cap). A request
	// asking for a lower limit keeps its own.
	MaxBytesBilled int64

	// Labels, JobPrefix, Location and Reservation are the run's BigQuery
	// options; the request's own options go on top of them.
	Labels      map[string]string
	JobPrefix   string
	Location    string
	Reservation string

	// DryRun makes every Execute a dry run and DeleteTable a no-op, like
	// the Dataform CLI's --dry-run. (Preview mode is stricter regardless.)
	DryRun bool
}

// Wrap returns a DbAdapter that applies p to every call before inner sees
// it. p is copied: later changes to it (or to its Labels map) do not apply.
func (p Policy) Wrap(inner adapters.DbAdapter) adapters.DbAdapter {
	p.Labels = maps.Clone(p.Labels)
	if p.Mode != Run {
		p.Mode = Preview // unknown modes are treated as the safe one
	}
	return &adapter{p: p, inner: inner}
}

type adapter struct {
	p     Policy
	inner adapters.DbAdapter
}

func (a *adapter) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	out := new(dataformpb.ExecuteRequest)
	if req != nil {
		out = proto.Clone(req).(*dataformpb.ExecuteRequest) // never modify the caller's request
	}
	p := a.p
	if p.MaxBytesBilled > 0 && (out.ByteLimit <= 0 || out.ByteLimit > p.MaxBytesBilled) {
		out.ByteLimit = p.MaxBytesBilled
	}
	opts := mergeOptions(p, out.GetBigQueryOptions())

	switch {
	case opts.DryRun:
		// Already a dry run: asked for by the JiT code or by the run.
		if p.DryRun {
			adapters.MarkDryRun(ctx, "dry-run mode")
		}
	case p.Mode == Preview:
		if kind, why := sqlclass.Classify(out.GetStatement()); kind != sqlclass.Query {
			opts.DryRun = true
			adapters.MarkDryRun(ctx, fmt.Sprintf("preview: %s, executed as a dry run", why))
		}
	}
	if p.Mode == Preview {
		if opts.Labels == nil {
			opts.Labels = map[string]string{}
		}
		opts.Labels[PreviewLabelKey] = PreviewLabelValue
	}

	if proto.Size(opts) > 0 {
		out.BigQueryOptions = opts
	} else {
		out.BigQueryOptions = nil
	}
	return a.inner.Execute(ctx, out)
}

// mergeOptions puts the request's BigQuery options on top of the run's, as
// the Dataform CLI does for JiT Execute calls.
func mergeOptions(p Policy, req *dataformpb.BigQueryExecuteOptions) *dataformpb.BigQueryExecuteOptions {
	out := &dataformpb.BigQueryExecuteOptions{
		Interactive:  req.GetInteractive(),
		UseLegacySql: req.GetUseLegacySql(),
		Location:     p.Location,
		Reservation:  p.Reservation,
		JobPrefix:    joinPrefix(p.JobPrefix, req.GetJobPrefix()),
		DryRun:       p.DryRun || req.GetDryRun(),
	}
	if req.GetLocation() != "" {
		out.Location = req.GetLocation()
	}
	if req.GetReservation() != "" {
		out.Reservation = req.GetReservation()
	}
	if len(p.Labels)+len(req.GetLabels()) > 0 {
		out.Labels = make(map[string]string, len(p.Labels)+len(req.GetLabels())+1)
		maps.Copy(out.Labels, p.Labels)
		maps.Copy(out.Labels, req.GetLabels())
	}
	return out
}

func joinPrefix(run, req string) string {
	switch {
	case run == "":
		return req
	case req == "":
		return run
	}
	return run + "-" + req
}

func (a *adapter) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	return a.inner.ListTables(ctx, req) // metadata reads are safe in every mode
}

func (a *adapter) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	return a.inner.GetTable(ctx, req)
}

func (a *adapter) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	target := adapters.TargetString(req.GetTarget())
	switch {
	case a.p.Mode == Preview:
		return adapters.Errorf(adapters.PermissionDenied, "dfd preview: DeleteTable(%s) is not executed in preview", target)
	case a.p.DryRun:
		adapters.MarkDryRun(ctx, fmt.Sprintf("dry-run mode: DeleteTable(%s) skipped", target))
		return nil
	}
	return a.inner.DeleteTable(ctx, req)
}
