// Package drycost asks BigQuery what statements would cost, through free
// dry runs, and keeps its answers: the figures of `dfd check --cost` and
// of the editor's code lenses, and BigQuery's own verdict on the SQL.
//
// # What is sent
//
// Only dry runs: Estimate calls an adapters.Verifier, which the caller
// builds as policy.Policy{Mode: policy.Check}.Wrap(the BigQuery adapter)
// — the policy's Verify always asks for a dry run, with the preview's
// byte cap and the dfd=preview label. Nothing is ever run for real here.
//
// # What is kept
//
// One answer per distinct statement text, with the lastModifiedTime of
// the tables BigQuery said it reads (statistics.query.referencedTables):
// a kept figure is served while those tables have not changed, and a
// table rebuilt since (its lastModifiedTime moved, as the metadata source
// sees it) makes the next Estimate dry-run again. A dry run that found a
// table missing is kept while the table is still missing. SQL errors are
// kept by text (new text is a new statement). Failures that are not the
// SQL's (quota, rate limits, 5xx, permissions, network) are never kept:
// the next Estimate asks again, so a recovered BigQuery is seen at once.
//
// Concurrent estimates of one text share a dry run; at most
// Options.Concurrency dry runs are in flight; a caller that gives up
// (its context ends) stops waiting at once. A dry run already sent goes
// on (it is free, bounded by the adapter's call limit, and its answer is
// kept: an edit elsewhere does not make an unchanged statement's dry run
// go twice); one not sent yet that nobody waits for any more is dropped.
package drycost

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Kind says what BigQuery's dry run made of a statement.
type Kind string

const (
	// Estimated: BigQuery accepted the statement; Bytes is what it would
	// process.
	Estimated Kind = "estimated"
	// SQLError: BigQuery refused the SQL (Message; Line and Column when it
	// said where).
	SQLError Kind = "sqlError"
	// UpstreamNotBuilt: the statement reads a table (Table) that the
	// project defines and that is not built yet: no verdict on the SQL.
	UpstreamNotBuilt Kind = "upstreamNotBuilt"
	// Unavailable: the dry run failed for a reason that is not the SQL
	// (Code, Message): quota or rate limit, BigQuery down, permissions,
	// network. No verdict on the SQL, and no figure.
	Unavailable Kind = "unavailable"
)

// Estimate is BigQuery's answer to one statement's dry run.
type Estimate struct {
	Kind Kind
	// Bytes is BigQuery's totalBytesProcessed (Kind Estimated).
	Bytes int64
	// Message is BigQuery's message, without dfd's "BigQuery dry run:"
	// (and, for SQLError and UpstreamNotBuilt, the HTTP status).
	Message string
	// Line and Column are where BigQuery placed a SQL error, 1-based in
	// the statement text ("… at [line:column]"); 0 when it did not say.
	Line, Column int
	// Table is the missing table ("project.dataset.table", or
	// "project.dataset" for a missing dataset) of UpstreamNotBuilt, and
	// of a SQLError about a table the project does not define.
	Table string
	// Code classifies an Unavailable failure (RESOURCE_EXHAUSTED,
	// UNAVAILABLE, PERMISSION_DENIED, …).
	Code adapters.Code
	// Cached says the answer was kept from an earlier dry run.
	Cached bool
}

// Options configure a Service.
type Options struct {
	// Verifier dry-runs statements: policy.Policy{Mode: policy.Check}
	// wrapping the BigQuery adapter itself, not the metadata cache's
	// verdict memory (which would hide a rebuilt table for its TTL).
	// Required.
	Verifier adapters.Verifier
	// Metadata answers the lastModifiedTime of the tables a kept answer
	// depends on (the metadata cache: usually without asking BigQuery).
	// Nil: kept answers are never checked against their tables.
	Metadata adapters.DbAdapter
	// Concurrency is how many dry runs may be in flight (default 4).
	Concurrency int
	// MaxEntries bounds the kept answers (default 4096); the oldest go
	// first.
	MaxEntries int
}

// Service estimates statements. It is safe for concurrent use.
type Service struct {
	opts Options
	sem  chan struct{}

	// Dry runs run under ctx, in goroutines the Service owns (wg): one
	// that has started goes on when its askers leave, so that its answer
	// is kept for the next ask of the same text; Close ends them.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	entries map[string]*entry
	order   []string // keys in the order they were kept, for eviction
	flights map[string]*flight
	sent    int // dry runs sent (DryRuns)
}

// entry is a kept answer: what the dry run said and what it depends on.
type entry struct {
	est     Estimate
	missing string           // the missing table of a NOT_FOUND, "" otherwise
	noKeep  bool             // answered, but not to be kept
	deps    map[string]int64 // table → lastModifiedTime (0: missing) when answered
}

// flight is a dry run that concurrent callers of one text wait for.
type flight struct {
	done    chan struct{} // closed when e or err is set
	e       *entry
	err     error         // the dry run was not made (abandoned, Close)
	waiters int           // callers waiting, under Service.mu
	started bool          // the dry run has been sent, under Service.mu
	abandon chan struct{} // closed when the last caller left before it started
}

// New returns a Service.
func New(opts Options) *Service {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 4096
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{opts: opts, sem: make(chan struct{}, opts.Concurrency), ctx: ctx, cancel: cancel,
		entries: map[string]*entry{}, flights: map[string]*flight{}}
}

// Close stops the dry runs in flight and waits for them. Estimate after
// Close answers with no figure.
func (s *Service) Close() {
	s.mu.Lock() // no flight starts (wg.Add) once this is done
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}

// DryRuns is how many dry runs the Service sent so far.
func (s *Service) DryRuns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

// Estimate is BigQuery's answer to a dry run of stmt: kept, or asked for
// now. defined says whether the project defines a table
// ("project.dataset.table") or has actions in a dataset
// ("project.dataset"), so that a missing one reads "upstream not built"
// rather than an error; nil: none. The error is the context's, and only
// when ctx ended before the answer came.
func (s *Service) Estimate(ctx context.Context, stmt string, defined func(table string) bool) (Estimate, error) {
	if strings.TrimSpace(stmt) == "" {
		return Estimate{Kind: Estimated}, nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return Estimate{}, err
		}
		s.mu.Lock()
		e := s.entries[stmt]
		s.mu.Unlock()
		if e != nil {
			if s.current(ctx, e) {
				out := e.result(defined)
				out.Cached = true
				return out, nil
			}
			s.mu.Lock()
			if s.entries[stmt] == e {
				delete(s.entries, stmt)
			}
			s.mu.Unlock()
		}

		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			return Estimate{Kind: Unavailable, Code: adapters.Canceled, Message: "dry runs stopped"}, nil
		}
		f := s.flights[stmt]
		if f == nil {
			f = &flight{done: make(chan struct{}), abandon: make(chan struct{})}
			s.flights[stmt] = f
			s.wg.Add(1)
			go s.fly(stmt, f)
		}
		f.waiters++
		s.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			s.mu.Lock()
			f.waiters--
			if f.waiters == 0 && !f.started && s.flights[stmt] == f {
				// Nobody wants it any more and it was not sent: it
				// never will be (stale text of an edit superseded).
				delete(s.flights, stmt)
				close(f.abandon)
			}
			s.mu.Unlock()
			return Estimate{}, ctx.Err()
		}
		if f.err != nil {
			if s.ctx.Err() != nil {
				return Estimate{Kind: Unavailable, Code: adapters.Canceled, Message: "dry runs stopped"}, nil
			}
			continue // abandoned just as this caller came: ask again
		}
		return f.e.result(defined), nil
	}
}

// fly makes f's dry run of stmt once a slot is free, unless every caller
// left before, and keeps the answer.
func (s *Service) fly(stmt string, f *flight) {
	defer s.wg.Done()
	finish := func(e *entry, err error) {
		s.mu.Lock()
		if s.flights[stmt] == f {
			delete(s.flights, stmt)
		}
		f.e, f.err = e, err
		if err == nil && e.est.Kind != Unavailable && !e.noKeep {
			s.keep(stmt, e)
		}
		close(f.done)
		s.mu.Unlock()
	}
	select {
	case s.sem <- struct{}{}:
	case <-f.abandon:
		finish(nil, context.Canceled)
		return
	case <-s.ctx.Done():
		finish(nil, s.ctx.Err())
		return
	}
	defer func() { <-s.sem }()
	s.mu.Lock()
	select {
	case <-f.abandon:
		s.mu.Unlock()
		finish(nil, context.Canceled)
		return
	default:
	}
	f.started = true
	s.sent++
	s.mu.Unlock()
	e, err := s.dryRun(s.ctx, stmt)
	finish(e, err)
}

// keep stores e under stmt, evicting the oldest answers past MaxEntries.
// s.mu is held.
func (s *Service) keep(stmt string, e *entry) {
	if _, ok := s.entries[stmt]; !ok {
		s.order = append(s.order, stmt)
	}
	s.entries[stmt] = e
	for len(s.entries) > s.opts.MaxEntries && len(s.order) > 0 {
		old := s.order[0]
		s.order = s.order[1:]
		delete(s.entries, old)
	}
	if len(s.order) > 2*s.opts.MaxEntries {
		// Keys deleted as stale still sit in order: drop them.
		live := s.order[:0]
		for _, k := range s.order {
			if _, ok := s.entries[k]; ok {
				live = append(live, k)
			}
		}
		s.order = live
	}
}

// current reports whether e's tables are as they were when BigQuery
// answered. A table whose state cannot be read (BigQuery down and nothing
// cached) does not discard the answer: it is the best there is.
func (s *Service) current(ctx context.Context, e *entry) bool {
	if s.opts.Metadata == nil {
		return true
	}
	for table, was := range e.deps {
		now, ok := s.modified(ctx, table)
		if ok && now != was {
			return false
		}
	}
	return true
}

// modified is table's lastModifiedTime (0: it does not exist); ok is
// false when the metadata source could not say.
func (s *Service) modified(ctx context.Context, table string) (int64, bool) {
	p := strings.SplitN(table, ".", 3)
	if len(p) != 3 || s.opts.Metadata == nil {
		return 0, false
	}
	m, err := s.opts.Metadata.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: p[0], Schema: p[1], Name: p[2]}})
	switch {
	case err == nil:
		return m.GetLastUpdatedMillis(), true
	case adapters.CodeOf(err) == adapters.NotFound:
		return 0, true
	}
	return 0, false
}

// dryRun asks BigQuery (the caller holds a slot).
func (s *Service) dryRun(ctx context.Context, stmt string) (*entry, error) {
	if s.opts.Verifier == nil {
		return &entry{est: Estimate{Kind: Unavailable, Code: adapters.Unimplemented, Message: "no BigQuery connection to dry-run statements"}}, nil
	}
	v, err := s.opts.Verifier.Verify(ctx, &dataformpb.ExecuteRequest{
		Statement:       stmt,
		BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true},
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		e := classify(err)
		if e.missing != "" {
			e.deps = map[string]int64{}
			if strings.Count(e.missing, ".") == 2 {
				e.deps[e.missing] = 0
			} else {
				// A missing dataset: no table to watch for its creation,
				// so the answer is not kept.
				e.noKeep = true
			}
		}
		return e, nil
	}
	e := &entry{est: Estimate{Kind: Estimated, Bytes: v.Bytes}, deps: map[string]int64{}}
	// The tables' state after the answer: a table rebuilt in between
	// keeps its older time here at worst (the metadata source serves what
	// it holds), and the next Estimate sees it moved and asks again.
	for _, t := range v.Tables {
		if m, ok := s.modified(ctx, t); ok {
			e.deps[t] = m
		}
	}
	return e, nil
}

// result is e's answer for a project that defines what defined says.
func (e *entry) result(defined func(string) bool) Estimate {
	out := e.est
	if e.missing != "" {
		out.Table = e.missing
		out.Kind = SQLError
		if defined != nil && defined(e.missing) {
			out.Kind = UpstreamNotBuilt
		}
	}
	return out
}

var (
	// BigQuery places SQL errors as "… at [3:15]" (1-based line:column).
	atPosition = regexp.MustCompile(`at \[(\d+):(\d+)\]`)
	// "Not found: Table p:ds.t was not found in location US",
	// "Not found: Dataset p:ds was not found in location US".
	notFound   = regexp.MustCompile(`Not found: (Table|Dataset) ([A-Za-z0-9_.:-]+)`)
	httpStatus = regexp.MustCompile(` \(HTTP \d+\)$`)
)

// classify turns a failed dry run into an entry.
func classify(err error) *entry {
	ae := adapters.AsError(err)
	msg := ae.Message
	if i := strings.Index(msg, "BigQuery dry run: "); i >= 0 {
		msg = msg[i+len("BigQuery dry run: "):]
	}
	est := Estimate{Message: msg, Code: ae.Code}
	// The HTTP status is noise on the SQL's errors (always 400 or 404),
	// and says who to ask on the others (401, 403, 429, 5xx): kept there.
	sqlMsg := httpStatus.ReplaceAllString(msg, "")
	switch ae.Code {
	case adapters.InvalidArgument:
		est.Message = sqlMsg
		est.Kind = SQLError
		if m := atPosition.FindStringSubmatch(msg); m != nil {
			est.Line, _ = strconv.Atoi(m[1])
			est.Column, _ = strconv.Atoi(m[2])
		}
		return &entry{est: est}
	case adapters.NotFound:
		if m := notFound.FindStringSubmatch(msg); m != nil {
			est.Kind, est.Message = SQLError, sqlMsg
			return &entry{est: est, missing: strings.Replace(m[2], ":", ".", 1)}
		}
		// A NOT_FOUND that names no table (a job, a location): not the SQL.
	}
	est.Kind = Unavailable
	return &entry{est: est}
}
