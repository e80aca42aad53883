// Package bigquery is the DbAdapter that talks to Google BigQuery.
//
// It speaks BigQuery's REST API through google.golang.org/api/bigquery/v2
// for every call, not through the higher-level cloud.google.com/go/bigquery
// client, for two reasons: Execute must hand JiT code BigQuery's raw row form
// ({"f":[{"v":…}]}), which only the REST types keep, and the higher-level
// client retries on its own — Table.Delete included, with backoff up to 32 s
// until the context ends — while dfd must never retry a write and must keep
// reads within an editor's patience. Retries here are explicit (see Retry):
// GetTable, ListTables, job polling and job submission (under one job id,
// which BigQuery deduplicates, so a statement never runs twice) are
// retried; DeleteTable is not.
//
// # Calls
//
//   - GetTable: tables.get. A missing table is NOT_FOUND.
//   - ListTables: tables.list (paged) for the request's project and dataset —
//     every dataset of the project (datasets.list, paged) when no dataset is
//     given — then tables.get for each table, a few at a time, as the
//     Dataform CLI does (tables.list carries no schemas). Results are sorted
//     by dataset and name. A request without a project uses
//     Options.DefaultDatabase and says so in the call record (adapters.Note).
//   - DeleteTable: tables.delete, once; a table that is already gone is not
//     an error (as in the CLI).
//   - Execute: jobs.insert of a query job with a job id of our own
//     (Options.JobPrefix, the request's job_prefix, then random), then
//     jobs.getQueryResults until the job completes, paging until row_limit
//     rows, then jobs.get for the bytes processed and billed. byte_limit is
//     maximumBytesBilled; params are named query parameters; interactive
//     picks INTERACTIVE priority; otherwise Options.Priority (INTERACTIVE by
//     default, like the CLI, whose JiT queries always run interactively).
//     A dry run returns the schema and the bytes it would process, no rows
//     and no job id. A job dfd stops waiting for before it is over — the
//     caller's deadline passed, the caller was cancelled (a newer edit, a
//     shutdown), BigQuery stopped answering — is cancelled (jobs.cancel,
//     with a context of its own bounded by Options.CancelTimeout), so it
//     does not go on running and billing; the error says whether that
//     worked. dfd always knows the job's id, even when the jobs.insert
//     answer is lost: it chose the id itself.
//   - Verify (adapters.Verifier): a dry run that also reports BigQuery's
//     statement type, the routines the statement references and the bytes
//     it would process: the preview policy's second opinion.
//
// Errors are *adapters.Error values with BigQuery's message (see classify).
package bigquery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	bq "google.golang.org/api/bigquery/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Options configure an Adapter.
type Options struct {
	// Project is the billing project: query jobs run in it. Required.
	Project string
	// DefaultDatabase is the project of targets and ListTables requests that
	// name none (the workflow's defaultProject); default Project.
	DefaultDatabase string
	// Location is the job location when the request names none.
	Location string
	// ClientOptions carry the endpoint and credentials (see package
	// credentials) or, in tests, an HTTP client.
	ClientOptions []option.ClientOption

	// JobPrefix starts every job id (default "dfd"), so dfd's jobs are easy
	// to find in BigQuery's job history.
	JobPrefix string
	// Priority is the priority of queries that do not ask for an interactive
	// one: "INTERACTIVE" (default) or "BATCH".
	Priority string
	// PageSize is the page size of tables.list and datasets.list (default
	// 1000, BigQuery's maximum) and the largest getQueryResults page.
	PageSize int
	// Concurrency is how many tables.get calls one ListTables makes at a
	// time (default 8).
	Concurrency int
	// MaxRows caps the rows of an Execute without row_limit (default 10000):
	// previews show samples, and a runaway SELECT must not fill the daemon's
	// memory.
	MaxRows int64
	// Retry is the backoff policy of idempotent calls.
	Retry Retry
	// CallTimeout bounds each metadata call (tables.get, one page of
	// tables.list or datasets.list, jobs.insert, jobs.get), all its
	// attempts and the waits between them included (default 20s; the
	// settings dfd.bigquery.timeoutMs, $DFD_BIGQUERY_TIMEOUT and
	// --bigquery-timeout set it).
	CallTimeout time.Duration
	// AttemptTimeout bounds each HTTP attempt of a call (default 10s, at
	// most CallTimeout), so a hung connection is retried rather than
	// waited on for the whole CallTimeout.
	AttemptTimeout time.Duration
	// OutageHold is how long, once a call found BigQuery unresponsive (no
	// answer within CallTimeout, no connection, 5xx on every attempt),
	// every other call fails at once with that finding rather than wait
	// its own timeout; the calls in flight then are cut short too. Zero:
	// for the Adapter's life — a command waits for an unresponsive
	// BigQuery about one CallTimeout in all. The daemon, which lives for
	// hours, holds it for less (and serves cached metadata meanwhile).
	OutageHold time.Duration
	// PollTimeout is how long one getQueryResults call waits for the job to
	// finish (BigQuery's timeoutMs; default 10s).
	PollTimeout time.Duration
	// CancelTimeout bounds the jobs.cancel of a job dfd stopped waiting for
	// (default 3s): it runs after the caller's deadline or cancellation,
	// which it delays by at most this.
	CancelTimeout time.Duration
}

// Adapter is a DbAdapter backed by BigQuery. It is safe for concurrent use.
type Adapter struct {
	opts   Options
	svc    *bq.Service
	outage *outage
}

var _ adapters.DbAdapter = (*Adapter)(nil)

// New creates an Adapter. It does not contact BigQuery.
func New(ctx context.Context, opts Options) (*Adapter, error) {
	if opts.Project == "" {
		return nil, errors.New("bigquery: Options.Project is required")
	}
	if opts.DefaultDatabase == "" {
		opts.DefaultDatabase = opts.Project
	}
	if opts.JobPrefix == "" {
		opts.JobPrefix = "dfd"
	}
	switch opts.Priority {
	case "":
		opts.Priority = "INTERACTIVE"
	case "INTERACTIVE", "BATCH":
	default:
		return nil, fmt.Errorf("bigquery: Options.Priority %q is not INTERACTIVE or BATCH", opts.Priority)
	}
	if opts.PageSize <= 0 || opts.PageSize > 1000 {
		opts.PageSize = 1000
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = 10000
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = 10 * time.Second
	}
	opts.AttemptTimeout = min(opts.AttemptTimeout, opts.CallTimeout)
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 10 * time.Second
	}
	if opts.CancelTimeout <= 0 {
		opts.CancelTimeout = 3 * time.Second
	}
	opts.Retry = opts.Retry.withDefaults()
	svc, err := bq.NewService(ctx, opts.ClientOptions...)
	if err != nil {
		return nil, fmt.Errorf("bigquery: %w", err)
	}
	return &Adapter{opts: opts, svc: svc, outage: newOutage(opts.OutageHold)}, nil
}

// DefaultCallTimeout is Options.CallTimeout's default.
const DefaultCallTimeout = 20 * time.Second

// Project is the billing project.
func (a *Adapter) Project() string { return a.opts.Project }

// CallTimeout is the time limit of each call (Options.CallTimeout).
func (a *Adapter) CallTimeout() time.Duration { return a.opts.CallTimeout }

// Outage is the finding that BigQuery is unresponsive while it holds (see
// Options.OutageHold), else nil: what a command can report once, as the
// cause of everything it could not look up.
func (a *Adapter) Outage() error { return a.outage.current() }

// read runs an idempotent call with retries, within Options.CallTimeout.
func (a *Adapter) read(ctx context.Context, call func(ctx context.Context) error) error {
	return a.call(ctx, a.opts.Retry, a.opts.CallTimeout, a.opts.AttemptTimeout, call)
}

// poll runs a jobs.getQueryResults call, which BigQuery holds for up to
// PollTimeout before it answers: its limits are the others' plus that.
func (a *Adapter) poll(ctx context.Context, call func(ctx context.Context) error) error {
	return a.call(ctx, a.opts.Retry, a.opts.PollTimeout+a.opts.CallTimeout, a.opts.PollTimeout+a.opts.AttemptTimeout, call)
}

// call runs call under r within budget (each attempt within attempt),
// unless BigQuery was found unresponsive (see Options.OutageHold); a call
// that finds it so says it for the others.
func (a *Adapter) call(ctx context.Context, r Retry, budget, attempt time.Duration, call func(ctx context.Context) error) error {
	if err := a.outage.current(); err != nil {
		return err
	}
	wctx, stop := a.outage.watch(ctx)
	defer stop()
	err := r.do(wctx, budget, attempt, call)
	if err == nil || ctx.Err() != nil {
		return err
	}
	var cut errOutage
	if errors.As(context.Cause(wctx), &cut) {
		return cut // another call found BigQuery unresponsive meanwhile
	}
	if unresponsive(err) {
		a.outage.declare(err)
	}
	return err
}

func (a *Adapter) GetTable(ctx context.Context, req *dataformpb.GetTableRequest) (*dataformpb.TableMetadata, error) {
	t := req.GetTarget()
	if t.GetSchema() == "" || t.GetName() == "" {
		return nil, adapters.Errorf(adapters.InvalidArgument, "GetTableRequest.target needs a schema and a name, got %s", adapters.TargetString(t))
	}
	target := &dataformpb.Target{Database: t.GetDatabase(), Schema: t.GetSchema(), Name: t.GetName()}
	if target.Database == "" {
		target.Database = a.opts.DefaultDatabase
	}
	return a.getTable(ctx, target)
}

func (a *Adapter) getTable(ctx context.Context, target *dataformpb.Target) (*dataformpb.TableMetadata, error) {
	var table *bq.Table
	err := a.read(ctx, func(ctx context.Context) error {
		var err error
		table, err = a.svc.Tables.Get(target.Database, target.Schema, target.Name).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, classify(err, "BigQuery tables.get %s", adapters.TargetString(target))
	}
	return tableMetadata(target, table), nil
}

func (a *Adapter) ListTables(ctx context.Context, req *dataformpb.ListTablesRequest) (*dataformpb.ListTablesResponse, error) {
	project := req.GetDatabase()
	if project == "" {
		project = a.opts.DefaultDatabase
		adapters.Note(ctx, "bigquery: no database in ListTables request; listing default database %s", project)
	}
	datasets := []string{req.GetSchema()}
	if req.GetSchema() == "" {
		var err error
		if datasets, err = a.listDatasets(ctx, project); err != nil {
			return nil, err
		}
	}
	var targets []*dataformpb.Target
	progress := adapters.ListProgress{Database: project, Schema: req.GetSchema()}
	for _, ds := range datasets {
		names, err := a.listTableNames(ctx, project, ds, &progress)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			targets = append(targets, &dataformpb.Target{Database: project, Schema: ds, Name: n})
		}
	}
	tables, err := a.getTables(ctx, targets, progress)
	if err != nil {
		return nil, err
	}
	return &dataformpb.ListTablesResponse{Tables: tables}, nil
}

func (a *Adapter) listDatasets(ctx context.Context, project string) ([]string, error) {
	var out []string
	token := ""
	for {
		var page *bq.DatasetList
		err := a.read(ctx, func(ctx context.Context) error {
			var err error
			page, err = a.svc.Datasets.List(project).MaxResults(int64(a.opts.PageSize)).PageToken(token).Context(ctx).Do()
			return err
		})
		if err != nil {
			return nil, classify(err, "BigQuery datasets.list %s", project)
		}
		for _, d := range page.Datasets {
			if d.DatasetReference != nil {
				out = append(out, d.DatasetReference.DatasetId)
			}
		}
		if page.NextPageToken == "" || page.NextPageToken == token {
			break
		}
		token = page.NextPageToken
	}
	slices.Sort(out)
	return out, nil
}

// listTableNames lists the tables of a dataset, adding them to progress as
// each page comes.
func (a *Adapter) listTableNames(ctx context.Context, project, dataset string, progress *adapters.ListProgress) ([]string, error) {
	var out []string
	token := ""
	for {
		var page *bq.TableList
		err := a.read(ctx, func(ctx context.Context) error {
			var err error
			page, err = a.svc.Tables.List(project, dataset).MaxResults(int64(a.opts.PageSize)).PageToken(token).Context(ctx).Do()
			return err
		})
		if err != nil {
			return nil, classify(err, "BigQuery tables.list %s.%s", project, dataset)
		}
		for _, t := range page.Tables {
			if t.TableReference != nil {
				out = append(out, t.TableReference.TableId)
				progress.Listed++
			}
		}
		adapters.ReportListProgress(ctx, *progress)
		// A server that hands back the same token would loop forever.
		if page.NextPageToken == "" || page.NextPageToken == token {
			break
		}
		token = page.NextPageToken
	}
	slices.Sort(out)
	return out, nil
}

// getTables fetches the metadata of targets, Concurrency at a time, in the
// order given, counting them in progress. Tables deleted since they were
// listed are left out.
func (a *Adapter) getTables(ctx context.Context, targets []*dataformpb.Target, progress adapters.ListProgress) ([]*dataformpb.TableMetadata, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]*dataformpb.TableMetadata, len(targets))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, a.opts.Concurrency)
	for i, t := range targets {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			m, err := a.getTable(ctx, t)
			if err == nil || adapters.CodeOf(err) == adapters.NotFound {
				mu.Lock() // reports in order: Fetched only grows
				progress.Fetched++
				adapters.ReportListProgress(ctx, progress)
				mu.Unlock()
			}
			switch {
			case err == nil:
				results[i] = m
			case adapters.CodeOf(err) == adapters.NotFound:
				// Listed, then deleted: the CLI skips it too.
			default:
				mu.Lock()
				if firstErr == nil {
					firstErr = err
					cancel()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, classify(err, "BigQuery ListTables")
	}
	return slices.DeleteFunc(results, func(m *dataformpb.TableMetadata) bool { return m == nil }), nil
}

func (a *Adapter) DeleteTable(ctx context.Context, req *dataformpb.DeleteTableRequest) error {
	t := req.GetTarget()
	if t.GetSchema() == "" || t.GetName() == "" {
		return adapters.Errorf(adapters.InvalidArgument, "DeleteTableRequest.target needs a schema and a name, got %s", adapters.TargetString(t))
	}
	project := t.GetDatabase()
	if project == "" {
		project = a.opts.DefaultDatabase
	}
	// Exactly one attempt: a delete whose answer was lost may have run.
	err := a.call(ctx, Retry{Attempts: 1}, a.opts.CallTimeout, 0, func(ctx context.Context) error {
		return a.svc.Tables.Delete(project, t.GetSchema(), t.GetName()).Context(ctx).Do()
	})
	var gerr *googleapi.Error
	if errors.As(err, &gerr) && gerr.Code == 404 {
		return nil // already gone, as the CLI's ignoreNotFound
	}
	return classify(err, "BigQuery tables.delete %s.%s.%s", project, t.GetSchema(), t.GetName())
}
