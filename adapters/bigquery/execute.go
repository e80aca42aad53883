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
	inserted, err := a.insert(ctx, job)
	if err != nil {
		return nil, classify(err, "%s", what)
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
	return a.results(ctx, req, ref, what)
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
// statistics.
func (a *Adapter) results(ctx context.Context, req *dataformpb.ExecuteRequest, ref *bq.JobReference, what string) (*dataformpb.ExecuteResponse, error) {
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
		err := a.read(ctx, func(ctx context.Context) error {
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
			return nil, classify(err, "%s", what)
		}
		if !res.JobComplete {
			// BigQuery held the poll for timeoutMs; ask again (after a pause,
			// in case a server answers at once).
			if err := sleep(ctx, pollPause); err != nil {
				return nil, classify(err, "%s: waiting for the job", what)
			}
			continue
		}
		if out.SchemaFields == nil && res.Schema != nil {
			out.SchemaFields = fields(res.Schema.Fields)
		}
		for _, r := range res.Rows {
			if rows >= limit {
				break
			}
			s, err := rowStruct(r)
			if err != nil {
				return nil, adapters.Errorf(adapters.Internal, "%s: row %d: %v", what, rows, err)
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
		return nil, classify(err, "%s: reading job statistics", what)
	}
	if s := job.Status; s != nil {
		if s.ErrorResult != nil {
			return nil, jobError(s.ErrorResult, "%s", what)
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
	return out, nil
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
