package bigquery

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"
	"google.golang.org/api/googleapi"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

func (a *Adapter) Execute(ctx context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	job, err := a.queryJob(req)
	if err != nil {
		return nil, err
	}
	dry := job.Configuration.DryRun
	what := "BigQuery query " + job.JobReference.JobId
	if dry {
		what = "BigQuery dry run"
	}
	if err := a.outage.current(); err != nil {
		// Not sent at all, so there is no job to cancel either.
		return nil, classify(err, "%s", what)
	}
	inserted, err := a.insert(ctx, job)
	if err != nil {
		err = classify(err, "%s", what)
		if !dry && lostTrack(err) {
			// The job id is ours, so a job the lost answer would have
			// named can be cancelled all the same.
			err = a.abandon(ctx, job.JobReference, err)
		}
		return nil, err
	}
	if e := inserted.Status; e != nil && e.ErrorResult != nil {
		return nil, jobError(e.ErrorResult, "%s", what)
	}
	if dry {
		return dryRunResponse(inserted), nil
	}
	ref := inserted.JobReference
	if ref == nil || ref.JobId == "" {
		ref = job.JobReference
	}
	resp, complete, err := a.results(ctx, req, ref, what)
	if err != nil && !complete && lostTrack(err) {
		// The deadline passed, the caller went away (a newer edit, a
		// shutdown) or BigQuery stopped answering polls: dfd no longer
		// waits for the job, so it must not go on running and billing.
		// (A poll that BigQuery answered with the job's own error means
		// the job is over.)
		err = a.abandon(ctx, ref, err)
	}
	return resp, err
}

// lostTrack reports whether a call about a job failed because its answer
// was lost — the deadline, a cancellation, a connection that broke or a
// BigQuery that is down — rather than because BigQuery answered that the
// job was refused or failed (a 4xx status with its reason). After a lost
// answer the job may exist and be running: a jobs.insert may have created
// it (a duplicate id after a lost answer is not an error: see insert), a
// poll tells nothing of it.
func lostTrack(err error) bool {
	switch adapters.CodeOf(err) {
	case adapters.Canceled, adapters.DeadlineExceeded, adapters.Unavailable:
		return true
	}
	return false
}

// abandon cancels the job of ref, which dfd no longer waits for, and says
// on err (and in the call record) whether that worked. The caller's
// context is done, or about to be given up, so jobs.cancel gets a context
// of its own: the caller's values without its cancellation, bounded by
// Options.CancelTimeout.
func (a *Adapter) abandon(ctx context.Context, ref *bq.JobReference, err error) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opts.CancelTimeout)
	defer cancel()
	// Not through a.call: a job must be cancelled even when BigQuery was
	// found unresponsive (which is often why dfd stopped waiting).
	cerr := a.opts.Retry.do(cctx, a.opts.CancelTimeout, a.opts.CancelTimeout, func(ctx context.Context) error {
		call := a.svc.Jobs.Cancel(ref.ProjectId, ref.JobId).Context(ctx)
		if ref.Location != "" {
			call = call.Location(ref.Location)
		}
		_, err := call.Do()
		return err
	})
	var gerr *googleapi.Error
	msg := "job " + ref.JobId + " cancelled"
	switch {
	case errors.As(cerr, &gerr) && gerr.Code == http.StatusNotFound:
		msg = "job " + ref.JobId + " was never created"
	case cerr != nil:
		msg = "cancelling job " + ref.JobId + " failed: " + classify(cerr, "BigQuery jobs.cancel").Error() + "; it may still be running"
	}
	adapters.Note(ctx, "bigquery: %s", msg)
	ae := adapters.AsError(err)
	return &adapters.Error{Code: ae.Code, Message: ae.Message + " (" + msg + ")"}
}

// Verify implements adapters.Verifier: it dry-runs req (which must ask for
// a dry run) and reports what BigQuery says the statement is.
func (a *Adapter) Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*adapters.Verdict, error) {
	if !req.GetBigQueryOptions().GetDryRun() {
		return nil, adapters.Errorf(adapters.InvalidArgument, "Verify needs a dry-run request")
	}
	job, err := a.queryJob(req)
	if err != nil {
		return nil, err
	}
	inserted, err := a.insert(ctx, job)
	if err != nil {
		return nil, classify(err, "BigQuery dry run")
	}
	if e := inserted.Status; e != nil && e.ErrorResult != nil {
		return nil, jobError(e.ErrorResult, "BigQuery dry run")
	}
	v := &adapters.Verdict{Response: dryRunResponse(inserted)}
	if st := inserted.Statistics; st != nil {
		v.Bytes = st.TotalBytesProcessed
		if q := st.Query; q != nil {
			v.StatementType = q.StatementType
			if q.TotalBytesProcessed != 0 {
				v.Bytes = q.TotalBytesProcessed
			}
			for _, r := range q.ReferencedRoutines {
				if r != nil {
					v.Routines = append(v.Routines, r.ProjectId+"."+r.DatasetId+"."+r.RoutineId)
				}
			}
			for _, t := range q.ReferencedTables {
				if t != nil {
					v.Tables = append(v.Tables, t.ProjectId+"."+t.DatasetId+"."+t.TableId)
				}
			}
		}
	}
	return v, nil
}

// queryJob is the query job of req, with a job id of our own.
func (a *Adapter) queryJob(req *dataformpb.ExecuteRequest) (*bq.Job, error) {
	stmt := req.GetStatement()
	if strings.TrimSpace(stmt) == "" {
		return nil, adapters.Errorf(adapters.InvalidArgument, "ExecuteRequest.statement must not be empty")
	}
	o := req.GetBigQueryOptions()
	params, err := queryParams(req.GetParams())
	if err != nil {
		return nil, err
	}
	location := o.GetLocation()
	if location == "" {
		location = a.opts.Location
	}
	priority := a.opts.Priority
	if o.GetInteractive() {
		priority = "INTERACTIVE"
	}
	legacy := o.GetUseLegacySql()
	q := &bq.JobConfigurationQuery{
		Query:           stmt,
		UseLegacySql:    &legacy, // BigQuery's default is legacy SQL: always say which
		Priority:        priority,
		QueryParameters: params,
	}
	if len(params) > 0 {
		q.ParameterMode = "NAMED"
	}
	if req.GetByteLimit() > 0 {
		q.MaximumBytesBilled = req.GetByteLimit()
	}
	return &bq.Job{
		JobReference: &bq.JobReference{ProjectId: a.opts.Project, JobId: a.jobID(o.GetJobPrefix()), Location: location},
		Configuration: &bq.JobConfiguration{
			Query:       q,
			DryRun:      o.GetDryRun(),
			Labels:      o.GetLabels(),
			Reservation: o.GetReservation(),
		},
	}, nil
}

// insert submits job, retrying transient failures always under the same
// job id: BigQuery creates at most one job per id, so when an earlier
// attempt did reach it the retry answers 409 duplicate and the existing job
// is used — a statement never runs twice, whatever it is. (This is how
// BigQuery's own clients make job insertion safe to retry.)
func (a *Adapter) insert(ctx context.Context, job *bq.Job) (*bq.Job, error) {
	call := func(ctx context.Context) (*bq.Job, error) {
		return a.svc.Jobs.Insert(job.JobReference.ProjectId, job).Context(ctx).Do()
	}
	var out *bq.Job
	attempts := 0
	err := a.read(ctx, func(ctx context.Context) error {
		attempts++
		var err error
		out, err = call(ctx)
		var gerr *googleapi.Error
		if attempts > 1 && errors.As(err, &gerr) && gerr.Code == http.StatusConflict {
			out, err = &bq.Job{JobReference: job.JobReference}, nil
		}
		return err
	})
	return out, err
}

// results waits for the job, reads up to the row limit and the job's
// statistics. complete says whether BigQuery said the job was over, even
// when reading its rows failed afterwards.
func (a *Adapter) results(ctx context.Context, req *dataformpb.ExecuteRequest, ref *bq.JobReference, what string) (_ *dataformpb.ExecuteResponse, complete bool, _ error) {
	limit := req.GetRowLimit()
	if limit <= 0 || limit > a.opts.MaxRows {
		limit = a.opts.MaxRows
	}
	// fetch_results is ignored, as the Dataform CLI ignores it: JiT code
	// that leaves it unset gets rows under `dataform run`.
	out := &dataformpb.ExecuteResponse{}
	var (
		rows  int64
		token string
	)
	for {
		page := min(limit-rows, int64(a.opts.PageSize))
		var res *bq.GetQueryResultsResponse
		err := a.poll(ctx, func(ctx context.Context) error {
			call := a.svc.Jobs.GetQueryResults(ref.ProjectId, ref.JobId).
				MaxResults(page).
				TimeoutMs(a.opts.PollTimeout.Milliseconds()).
				Context(ctx)
			if ref.Location != "" {
				call = call.Location(ref.Location)
			}
			if token != "" {
				call = call.PageToken(token)
			}
			var err error
			res, err = call.Do()
			return err
		})
		if err != nil {
			return nil, complete, classify(err, "%s", what)
		}
		if !res.JobComplete {
			// BigQuery held the poll for timeoutMs; ask again (after a pause,
			// in case a server answers at once).
			if err := sleep(ctx, pollPause); err != nil {
				return nil, false, classify(err, "%s: waiting for the job", what)
			}
			continue
		}
		complete = true
		if out.SchemaFields == nil && res.Schema != nil {
			out.SchemaFields = fields(res.Schema.Fields)
		}
		for _, r := range res.Rows {
			if rows >= limit {
				break
			}
			s, err := rowStruct(r)
			if err != nil {
				return nil, true, adapters.Errorf(adapters.Internal, "%s: row %d: %v", what, rows, err)
			}
			out.Rows = append(out.Rows, s)
			rows++
		}
		if rows >= limit || res.PageToken == "" || res.PageToken == token {
			break
		}
		token = res.PageToken
	}

	var job *bq.Job
	err := a.read(ctx, func(ctx context.Context) error {
		call := a.svc.Jobs.Get(ref.ProjectId, ref.JobId).Context(ctx)
		if ref.Location != "" {
			call = call.Location(ref.Location)
		}
		var err error
		job, err = call.Do()
		return err
	})
	if err != nil {
		return nil, true, classify(err, "%s: reading job statistics", what)
	}
	if s := job.Status; s != nil {
		if s.ErrorResult != nil {
			return nil, true, jobError(s.ErrorResult, "%s", what)
		}
		for _, e := range s.Errors {
			out.Errors = append(out.Errors, e.Message)
		}
	}
	md := &dataformpb.ExecutionMetadata_BigqueryMetadata{JobId: ref.JobId}
	if st := job.Statistics; st != nil {
		md.TotalBytesProcessed = st.TotalBytesProcessed
		if st.Query != nil {
			md.TotalBytesBilled = st.Query.TotalBytesBilled
			if st.Query.TotalBytesProcessed != 0 {
				md.TotalBytesProcessed = st.Query.TotalBytesProcessed
			}
		}
	}
	out.ExecutionMetadata = &dataformpb.ExecutionMetadata{Bigquery: md}
	return out, true, nil
}

// dryRunResponse describes a dry run: the schema the query would produce
// and the bytes it would process. A dry run creates no job, so there is no
// job id.
func dryRunResponse(job *bq.Job) *dataformpb.ExecuteResponse {
	out := &dataformpb.ExecuteResponse{}
	md := &dataformpb.ExecutionMetadata_BigqueryMetadata{}
	if st := job.Statistics; st != nil {
		md.TotalBytesProcessed = st.TotalBytesProcessed
		if q := st.Query; q != nil {
			if q.TotalBytesProcessed != 0 {
				md.TotalBytesProcessed = q.TotalBytesProcessed
			}
			if q.Schema != nil {
				out.SchemaFields = fields(q.Schema.Fields)
			}
		}
	}
	out.ExecutionMetadata = &dataformpb.ExecutionMetadata{Bigquery: md}
	return out
}

const pollPause = 100 * time.Millisecond

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

var jobIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// jobID is Options.JobPrefix, the request's prefix and 16 random hex digits,
// joined with "-". BigQuery allows letters, digits, "_" and "-" (up to 1024
// characters); anything else in a prefix becomes "_".
func (a *Adapter) jobID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	parts := []string{a.opts.JobPrefix}
	if prefix != "" {
		parts = append(parts, prefix)
	}
	id := jobIDUnsafe.ReplaceAllString(strings.Join(parts, "-"), "_")
	if len(id) > 1000 {
		id = id[:1000]
	}
	return id + "-" + hex.EncodeToString(b[:])
}
