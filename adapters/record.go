package adapters

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Call is one recorded DbAdapter call.
type Call struct {
	Seq     int    `json:"seq"`     // order in which calls started, from 1
	Method  string `json:"method"`  // "Execute", "ListTables", "GetTable", "DeleteTable"
	Summary string `json:"summary"` // target, "database.schema", or the statement's first line (Visible)
	// Statement is an Execute's whole statement, with invisible characters
	// made visible (Visible): what ran, as it ran.
	Statement string        `json:"statement,omitempty"`
	Start     time.Time     `json:"start"`            // when the call started
	Duration  time.Duration `json:"durationNs"`       // how long it took
	Cached    bool          `json:"cached,omitempty"` // answered from a cache (MarkCached)
	DryRun    bool          `json:"dryRun,omitempty"` // executed as a dry run (request flag or MarkDryRun)
	Code      Code          `json:"code,omitempty"`   // error code; "" when the call succeeded
	Error     string        `json:"error,omitempty"`  // error text as the JiT code saw it
	Notes     []string      `json:"notes,omitempty"`  // why it was a dry run, stale-cache warnings, …
}

// Recorder is a DbAdapter that forwards to another and records every call.
// It is safe for concurrent use; make one per preview to show that preview's
// calls.
type Recorder struct {
	inner DbAdapter

	mu    sync.Mutex // guards seq and calls
	seq   int
	calls []Call
}

// NewRecorder returns a Recorder that forwards to inner.
func NewRecorder(inner DbAdapter) *Recorder {
	return &Recorder{inner: inner}
}

// Calls returns a copy of the finished calls, in the order they started.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	out := slices.Clone(r.calls)
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Call) int { return a.Seq - b.Seq })
	return out
}

func (r *Recorder) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (resp *dataformpb.ExecuteResponse, err error) {
	ctx, c := r.begin(ctx, MethodExecute, firstLine(req.GetStatement()))
	c.call.Statement = Visible(req.GetStatement())
	c.call.DryRun = req.GetBigQueryOptions().GetDryRun()
	defer c.end(&err)
	return r.inner.Execute(ctx, req)
}

func (r *Recorder) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (resp *dataformpb.ListTablesResponse, err error) {
	summary := req.GetDatabase() + "." + req.GetSchema()
	ctx, c := r.begin(ctx, MethodListTables, summary)
	defer c.end(&err)
	return r.inner.ListTables(ctx, req)
}

func (r *Recorder) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (resp *dataformpb.TableMetadata, err error) {
	ctx, c := r.begin(ctx, MethodGetTable, TargetString(req.GetTarget()))
	defer c.end(&err)
	return r.inner.GetTable(ctx, req)
}

func (r *Recorder) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) (err error) {
	ctx, c := r.begin(ctx, MethodDeleteTable, TargetString(req.GetTarget()))
	defer c.end(&err)
	return r.inner.DeleteTable(ctx, req)
}

// Add records a call that was answered elsewhere (for example by a JiT
// worker from an answer sent along with the request): c keeps its fields
// but gets the next sequence number, and Start is set to now when zero.
func (r *Recorder) Add(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	c.Seq = r.seq
	if c.Start.IsZero() {
		c.Start = time.Now()
	}
	c.Notes = slices.Clone(c.Notes)
	r.calls = append(r.calls, c)
}

// pending is a call in flight.
type pending struct {
	r     *Recorder
	call  Call
	notes *notes
}

func (r *Recorder) begin(ctx context.Context, method, summary string) (context.Context, *pending) {
	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	n := &notes{parent: notesFrom(ctx)}
	return context.WithValue(ctx, notesKey{}, n), &pending{
		r:     r,
		notes: n,
		call:  Call{Seq: seq, Method: method, Summary: summary, Start: time.Now()},
	}
}

// end records the call. Deferred, it also records a panic (as INTERNAL)
// before letting it continue to Dispatch's recover.
func (p *pending) end(errp *error) {
	c := p.call
	c.Duration = time.Since(c.Start)
	err := *errp
	if v := recover(); v != nil {
		defer panic(v)
		err = Errorf(Internal, "adapter panicked in %s: %v", c.Method, v)
	}
	if err != nil {
		ae := AsError(err)
		c.Code, c.Error = ae.Code, ae.Error()
	}
	p.notes.mu.Lock()
	c.Cached = p.notes.cached
	c.DryRun = c.DryRun || p.notes.dryRun
	c.Notes = slices.Clone(p.notes.notes)
	p.notes.mu.Unlock()

	p.r.mu.Lock()
	p.r.calls = append(p.r.calls, c)
	p.r.mu.Unlock()
}

// firstLine is the first non-blank line of a statement, shortened, as a
// one-line summary of the call, with invisible characters made visible
// and "…" when more of the statement follows: a summary must not hide
// that a statement goes on (after a carriage return, say).
func firstLine(stmt string) string {
	const max = 100
	rest := stmt
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.Trim(line, " \t")
		if line == "" {
			continue
		}
		line = Visible(line)
		more := strings.TrimSpace(rest) != ""
		if r := []rune(line); len(r) > max {
			line, more = string(r[:max]), true
		}
		if more {
			line += " …"
		}
		return line
	}
	return ""
}

// notes collects what the adapters under a Recorder report about one call.
// It is reached through the context because the reporting adapter (a cache,
// the policy) sits several wrappers below the recorder and the DbAdapter
// methods have no other channel for it.
type notes struct {
	parent *notes // an outer Recorder's notes for the same call, also told

	mu     sync.Mutex // guards the fields below
	cached bool
	dryRun bool
	notes  []string
}

type notesKey struct{}

func notesFrom(ctx context.Context) *notes {
	n, _ := ctx.Value(notesKey{}).(*notes)
	return n
}

func (n *notes) update(f func(*notes)) {
	for ; n != nil; n = n.parent {
		n.mu.Lock()
		f(n)
		n.mu.Unlock()
	}
}

// MarkCached reports that the current call was answered from a cache. It is a
// no-op when no Recorder is recording ctx.
func MarkCached(ctx context.Context) {
	notesFrom(ctx).update(func(n *notes) { n.cached = true })
}

// MarkDryRun reports that the current call's statement runs as a dry run, and
// why. It is a no-op when no Recorder is recording ctx.
func MarkDryRun(ctx context.Context, reason string) {
	notesFrom(ctx).update(func(n *notes) {
		n.dryRun = true
		if reason != "" {
			n.notes = append(n.notes, reason)
		}
	})
}

// Note attaches a remark to the current call's record (e.g. "stale: served
// from the on-disk cache, BigQuery unavailable"). It is a no-op when no
// Recorder is recording ctx.
func Note(ctx context.Context, format string, args ...any) {
	n := notesFrom(ctx)
	if n == nil {
		return // skip the formatting too
	}
	msg := fmt.Sprintf(format, args...)
	n.update(func(n *notes) { n.notes = append(n.notes, msg) })
}
