// Package policy decides what JiT code may do to the database, by wrapping
// any adapters.DbAdapter.
//
// # Preview mode (the zero Mode)
//
// A preview shows what an action would compile to; it must never change
// the warehouse and never surprise the bill. So an Execute runs for real
// only when every gate below says yes; otherwise it is sent as a dry run
// (big_query_options.dry_run = true: the JiT code still gets a response —
// schema and statistics, no rows — and the call record says why):
//
//  1. The JiT code did not ask for a dry run itself, nor for legacy SQL
//     (which GoogleSQL does not read).
//  2. GoogleSQL — BigQuery's own parser, package gsql — parses the
//     statement as exactly one query statement that calls no routine,
//     model, connection or other database and has no writing pipe
//     operator. Scripts, DML, DDL, EXPORT DATA, CALL, EXECUTE IMMEDIATE,
//     parse errors, control characters the lexer refuses and statements
//     over gsql.MaxStatementBytes are dry runs.
//  3. When the backend can judge statements itself (adapters.Verifier:
//     BigQuery, through a free dry run whose verdict the cache keeps per
//     statement), BigQuery says the statement type is SELECT, that it
//     references no routines, and that it would process no more than the
//     byte cap. A dry run that fails fails the call, as the real query
//     would have.
//
// Every preview Execute, dry or not, carries the byte cap as byte_limit
// (MaxBytesBilled; DefaultMaxBytesBilled when that is 0; none only with
// the loud UnlimitedBytesBilled) and the label dfd=preview; the JiT code
// cannot choose its own location or reservation. DeleteTable is refused
// with PERMISSION_DENIED before it reaches the wrapped adapter: JiT code
// can catch the rejection, and the call record shows it. Pretending
// success instead would leave the JiT code believing a table is gone that
// every later GetTable/ListTables (served from the cache) still returns.
//
// # Check mode
//
// The JiT checks the daemon runs by itself after a compile (a file was
// opened, the user typed) must not bill anything the user did not ask
// for. Check mode is preview mode in which even a read-only query does not
// run: it is answered from the query cache when an earlier explicit
// preview left its answer there (adapters.QueryCache), and as a dry run
// otherwise, with a note saying so — unless the backend bills nothing
// (adapters.Unbilled: an offline snapshot), which answers as in a preview.
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
// In every mode, labels are merged the same way: Policy.Labels first, the
// request's labels on top. In preview and check mode the dfd=preview label
// is applied last and always wins, so a preview job is always recognisable
// in billing exports, whatever the JiT code asks for.
package policy

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Mode says whether JiT code runs for a preview, a check or a real run.
type Mode int

const (
	// Preview is the zero value, so a Policy that forgot its mode errs on
	// the side of changing nothing.
	Preview Mode = iota
	Run
	// Check is a preview nobody asked for: nothing billed runs.
	Check
)

// DefaultMaxBytesBilled is the byte cap of preview queries when none is
// configured: 10 GiB, about $0.06 at on-demand prices.
const DefaultMaxBytesBilled int64 = 10 << 30

func (m Mode) String() string {
	switch m {
	case Preview:
		return "preview"
	case Run:
		return "run"
	case Check:
		return "check"
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

	// MaxBytesBilled caps every Execute's byte_limit. A request asking for
	// a lower limit keeps its own. In preview and check mode 0 means
	// DefaultMaxBytesBilled; in run mode 0 means no cap.
	MaxBytesBilled int64
	// UnlimitedBytesBilled lifts the preview's byte cap altogether
	// (dfd.preview.unlimitedBytesBilled, dfd jit --unlimited-bytes-billed):
	// a separate, loud switch, so that no value of MaxBytesBilled turns
	// the cap off by accident.
	UnlimitedBytesBilled bool

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
// The adapter is also an adapters.Verifier (see adapter.Verify): dry runs
// with p's cap and labels.
func (p Policy) Wrap(inner adapters.DbAdapter) adapters.DbAdapter {
	p.Labels = maps.Clone(p.Labels)
	switch p.Mode {
	case Run, Check:
	default:
		p.Mode = Preview // unknown modes are treated as a preview
	}
	return &adapter{p: p, inner: inner}
}

// Cap is the byte cap p gives every Execute; 0 means none.
func (p Policy) Cap() int64 {
	switch {
	case p.Mode == Run:
		return max(p.MaxBytesBilled, 0)
	case p.UnlimitedBytesBilled:
		return 0
	case p.MaxBytesBilled > 0:
		return p.MaxBytesBilled
	}
	return DefaultMaxBytesBilled
}

type adapter struct {
	p     Policy
	inner adapters.DbAdapter
}

// prepare is req as the policy sends it, on a copy: the byte cap, the
// run's options merged under the request's and, outside run mode, dfd's
// location, reservation and preview label. opts is out's options, for the
// caller to finish (dry run or not) and set.
func (a *adapter) prepare(ctx context.Context, req *dataformpb.ExecuteRequest) (out *dataformpb.ExecuteRequest, opts *dataformpb.BigQueryExecuteOptions, guarded bool) {
	out = new(dataformpb.ExecuteRequest)
	if req != nil {
		out = proto.Clone(req).(*dataformpb.ExecuteRequest) // never modify the caller's request
	}
	p := a.p
	if cap := p.Cap(); cap > 0 && (out.ByteLimit <= 0 || out.ByteLimit > cap) {
		out.ByteLimit = cap
	}
	opts = mergeOptions(p, out.GetBigQueryOptions())
	guarded = p.Mode != Run
	if guarded {
		// Where a preview's job runs and whose slots it uses are dfd's
		// settings, not the JiT code's.
		if o := out.GetBigQueryOptions(); o.GetLocation() != "" || o.GetReservation() != "" {
			adapters.Note(ctx, "preview: the JiT code's own location/reservation is not used")
		}
		opts.Location, opts.Reservation = p.Location, p.Reservation
		if opts.Labels == nil {
			opts.Labels = map[string]string{}
		}
		opts.Labels[PreviewLabelKey] = PreviewLabelValue
	}
	return out, opts, guarded
}

// Verify implements adapters.Verifier when the wrapped adapter does: a
// dry run of req, whatever req asks, prepared as Execute prepares its
// requests (cap, labels, location). Nothing runs: it is how dfd asks
// BigQuery what a statement would cost (package drycost). Without a
// verifying backend it answers UNIMPLEMENTED.
func (a *adapter) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	ver, ok := a.inner.(adapters.Verifier)
	if !ok {
		return nil, adapters.Errorf(adapters.Unimplemented, "this backend cannot dry-run statements")
	}
	out, opts, _ := a.prepare(ctx, req)
	opts.DryRun = true
	out.BigQueryOptions = opts
	return ver.Verify(ctx, out)
}

func (a *adapter) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	out, opts, guarded := a.prepare(ctx, req)
	p := a.p
	set := func() {
		if proto.Size(opts) > 0 {
			out.BigQueryOptions = opts
		} else {
			out.BigQueryOptions = nil
		}
	}
	dry := func(reason string) (*dataformpb.ExecuteResponse, error) {
		opts.DryRun = true
		set()
		adapters.MarkDryRun(ctx, reason)
		return a.inner.Execute(ctx, out)
	}

	switch {
	case opts.DryRun:
		// Already a dry run: asked for by the JiT code or by the run.
		if p.DryRun {
			adapters.MarkDryRun(ctx, "dry-run mode")
		}
	case !guarded:
	case opts.UseLegacySql:
		return dry("preview: legacy SQL is not checked by GoogleSQL, executed as a dry run")
	default:
		v := gsql.Classify(ctx, out.GetStatement())
		if !v.ReadOnly() {
			return dry("preview: " + v.Reason + ", executed as a dry run")
		}
		set()
		if p.Mode == Check {
			return a.check(ctx, out, opts)
		}
		if ver, ok := a.inner.(adapters.Verifier); ok {
			return a.verified(ctx, ver, out, opts)
		}
		return a.inner.Execute(ctx, out)
	}
	set()
	return a.inner.Execute(ctx, out)
}

// check answers a read-only query in check mode: from the query cache if
// it can, else as a dry run. Nothing billed runs.
func (a *adapter) check(ctx context.Context, out *dataformpb.ExecuteRequest, opts *dataformpb.BigQueryExecuteOptions) (*dataformpb.ExecuteResponse, error) {
	if _, free := a.inner.(adapters.Unbilled); free {
		return a.inner.Execute(ctx, out)
	}
	if qc, ok := a.inner.(adapters.QueryCache); ok {
		if resp, ok := qc.CachedExecute(ctx, out); ok {
			adapters.Note(ctx, "check after a compile: answered from the query cache of an earlier preview")
			return resp, nil
		}
	}
	opts.DryRun = true
	out.BigQueryOptions = opts
	adapters.MarkDryRun(ctx, "check after a compile: queries run only in a preview you ask for, executed as a dry run")
	return a.inner.Execute(ctx, out)
}

// verified runs out for real only when the backend's own dry run agrees it
// is a SELECT that calls no routine and stays under the byte cap; else the
// dry run's answer is the answer.
func (a *adapter) verified(ctx context.Context, ver adapters.Verifier, out *dataformpb.ExecuteRequest, opts *dataformpb.BigQueryExecuteOptions) (*dataformpb.ExecuteResponse, error) {
	probe := proto.Clone(out).(*dataformpb.ExecuteRequest)
	po := proto.Clone(opts).(*dataformpb.BigQueryExecuteOptions)
	po.DryRun = true
	probe.BigQueryOptions = po
	v, err := ver.Verify(ctx, probe)
	if err != nil {
		return nil, err
	}
	why := ""
	switch cap := a.p.Cap(); {
	case v.StatementType != "SELECT":
		t := v.StatementType
		if t == "" {
			t = "no statement type"
		}
		why = "BigQuery's dry run says " + t
	case len(v.Routines) > 0:
		why = "BigQuery's dry run says it references " + strings.Join(v.Routines, ", ")
	case cap > 0 && v.Bytes > cap:
		why = fmt.Sprintf("BigQuery's dry run says it would process %s, more than the preview's cap of %s", bytesText(v.Bytes), bytesText(cap))
	}
	if why == "" {
		return a.inner.Execute(ctx, out)
	}
	adapters.MarkDryRun(ctx, "preview: "+why+", answered by the dry run")
	resp := v.Response
	if resp == nil {
		resp = &dataformpb.ExecuteResponse{}
	}
	return resp, nil
}

func bytesText(n int64) string {
	const gib = 1 << 30
	switch {
	case n >= gib:
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
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
	case a.p.Mode != Run:
		return adapters.Errorf(adapters.PermissionDenied, "dfd preview: DeleteTable(%s) is not executed in preview", target)
	case a.p.DryRun:
		adapters.MarkDryRun(ctx, fmt.Sprintf("dry-run mode: DeleteTable(%s) skipped", target))
		return nil
	}
	return a.inner.DeleteTable(ctx, req)
}
