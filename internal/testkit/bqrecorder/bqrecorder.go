// Package bqrecorder is a loopback stand-in for BigQuery's REST API that
// records every request, for tests that must show what dfd *sends*: the
// BigQuery emulator executes dry runs and reports DML as SELECT, so it
// cannot tell a dry run from a real job on its own.
//
// A Server answers on its own, as BigQuery would (jobs.insert,
// jobs.getQueryResults, jobs.get, tables.get/list, datasets.list,
// tables.delete), or, with Options.Upstream, forwards every request to
// another server (the emulator) except dry runs, which it answers itself
// the way BigQuery does — so nothing a dry run carries can reach a real
// engine. Point dfd at Server.URL (--endpoint, dfd.bigquery.endpoint) and
// assert on Requests / Jobs.
package bqrecorder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bq "google.golang.org/api/bigquery/v2"
)

// Options configure a Server.
type Options struct {
	// StatementType is BigQuery's verdict on a dry-run statement
	// (statistics.query.statementType). Default: "SELECT" for every
	// statement — a BigQuery that agrees with everything, so that a test
	// shows what dfd's own gate lets through.
	StatementType func(stmt string) string
	// Routines are the routines a dry run reports as referenced.
	Routines func(stmt string) []string
	// Upstream, when set, is a server to forward every request to but dry
	// runs (e.g. the emulator's URL).
	Upstream string
	// SlowJob, when it says so for a statement, makes its query job one
	// that never finishes: jobs.insert answers RUNNING, each
	// jobs.getQueryResults holds for its timeoutMs (or until the client
	// gives up) and answers jobComplete: false, jobs.get answers RUNNING —
	// until jobs.cancel, after which the job is DONE with BigQuery's
	// "stopped" error. With Upstream, the job is forwarded (it exists
	// there) but its polls are answered here.
	SlowJob func(stmt string) bool
	// Tables, when set, is how many tables each dataset holds (named t0000,
	// t0001, …): tables.list pages them by maxResults and pageToken, as
	// BigQuery does. Default: none.
	Tables func(dataset string) int
	// Fault, when it returns one for a request, answers the request with
	// that fault instead (after recording it). n counts the requests so far,
	// this one included (from 1).
	Fault func(r *http.Request, n int) *Fault

	// Bytes is the totalBytesProcessed a dry run of stmt reports (default
	// 1024 for every statement).
	Bytes func(stmt string) int64
	// Referenced are the tables a dry run of stmt reports as read
	// (statistics.query.referencedTables), as "project.dataset.table".
	Referenced func(stmt string) []string
	// DryRunError, when it returns a fault for stmt, answers its dry runs
	// with it, as BigQuery answers a dry run it refuses (see SQLError,
	// TableNotFound); nil: the dry run succeeds.
	DryRunError func(stmt string) *Fault
	// Table says whether tables.get finds a table and its lastModifiedTime
	// (milliseconds since the epoch). Default: every table exists, with
	// no lastModifiedTime.
	Table func(project, dataset, table string) (lastModifiedMs int64, exists bool)
	// Latency holds every answer (a fault's included) this long after the
	// request is recorded, as a distant BigQuery would: bench/cmd/lspbench
	// uses it to show that dry runs stay off the diagnostics path. A client
	// that gives up ends the wait.
	Latency time.Duration
}

// SQLError is BigQuery's answer to a dry run of SQL it refuses: 400
// invalidQuery, with the position ("at [line:column]", 1-based, in the
// statement) as BigQuery words it.
func SQLError(msg string, line, col int) *Fault {
	return &Fault{Status: http.StatusBadRequest, Reason: "invalidQuery", Message: fmt.Sprintf("%s at [%d:%d]", msg, line, col)}
}

// TableNotFound is BigQuery's answer to a dry run that reads a missing
// table ("project.dataset.table"): 404 notFound, worded as BigQuery does.
func TableNotFound(table string) *Fault {
	p := strings.SplitN(table, ".", 3)
	name := table
	if len(p) == 3 {
		name = p[0] + ":" + p[1] + "." + p[2]
	}
	return &Fault{Status: http.StatusNotFound, Reason: "notFound", Message: "Not found: Table " + name + " was not found in location US"}
}

// Fault is a way to answer a request badly.
type Fault struct {
	// Hang holds the request until the client gives up or the server
	// stops: a BigQuery that accepts connections and never answers.
	Hang bool
	// Status, when not 0, answers with this HTTP status and BigQuery's
	// error body ({"error":{"code","message","errors":[{"reason"}]}}).
	Status int
	// Reason is BigQuery's error reason (e.g. "backendError",
	// "rateLimitExceeded", "accessDenied"); empty picks one by Status.
	Reason string
	// Message is BigQuery's error message; empty says which fault it is.
	Message string
	// RetryAfter, when > 0, is sent as a Retry-After header (seconds).
	RetryAfter int
	// CutBody answers 200 with a Content-Length larger than the body,
	// then closes the connection: a body cut short.
	CutBody bool
	// Malformed answers 200 with a body that is not JSON.
	Malformed bool
}

// The faults of issue 25's fault-injection tests, each with the reason
// and message BigQuery sends.
var (
	// FaultUnauthenticated: 401, the credentials refused (expired, revoked).
	FaultUnauthenticated = &Fault{Status: http.StatusUnauthorized, Reason: "authError", Message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."}
	// FaultForbidden: 403 accessDenied, the identity lacks a grant.
	FaultForbidden = &Fault{Status: http.StatusForbidden, Reason: "accessDenied", Message: "Access Denied: User does not have bigquery.tables.get permission."}
	// FaultUnavailable: 503 backendError.
	FaultUnavailable = &Fault{Status: http.StatusServiceUnavailable, Reason: "backendError", Message: "The service is currently unavailable."}
	// FaultHang: the connection is accepted and never answered, until the
	// client gives up or the server stops.
	FaultHang = &Fault{Hang: true}
)

// Always is an Options.Fault that answers every request with f.
func Always(f *Fault) func(*http.Request, int) *Fault {
	return func(*http.Request, int) *Fault { return f }
}

// SetFault answers every following request with f, whatever Options.Fault
// says (nil: as Options.Fault says again).
func (s *Server) SetFault(f *Fault) {
	s.mu.Lock()
	s.override = f
	s.mu.Unlock()
}

// Hang is the fault of a BigQuery that never answers.
func Hang() *Fault { return &Fault{Hang: true} }

// Status is the fault of an HTTP error status with BigQuery's error body.
func Status(code int, retryAfter int) *Fault { return &Fault{Status: code, RetryAfter: retryAfter} }

// Request is one recorded request.
type Request struct {
	Method, Path string
	Body         []byte
	// For jobs.insert (Method POST, Path …/jobs):
	Job                *bq.Job
	Statement          string
	DryRun             bool
	MaximumBytesBilled int64
	Labels             map[string]string
	// Query is the request's URL query (location, timeoutMs, pageToken…).
	Query url.Values
	// CancelJob is the job id of a jobs.cancel request.
	CancelJob string
	// Fault is how the request was answered, when Options.Fault chose one.
	Fault *Fault
}

// IsJob reports whether r submitted a job (jobs.insert).
func (r Request) IsJob() bool { return r.Job != nil }

// Server is a running stand-in.
type Server struct {
	URL  string
	opts Options
	srv  *httptest.Server
	up   *httputil.ReverseProxy

	closing   chan struct{} // closed by Close: hung requests end
	closeOnce sync.Once
	holding   atomic.Int64 // requests inside Options.Latency's wait

	mu        sync.Mutex // guards reqs, cancelled and override
	override  *Fault     // SetFault's
	reqs      []Request
	slow      map[string]bool // job id → a slow job (Options.SlowJob)
	cancelled map[string]bool // job id → jobs.cancel was called
}

// Start starts a Server on a loopback port; it stops when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Listen starts a Server on a loopback port outside a test (a bench
// command); its caller stops it with Close.
func Listen(opts Options) (*Server, error) {
	if opts.StatementType == nil {
		opts.StatementType = func(string) string { return "SELECT" }
	}
	s := &Server{opts: opts, closing: make(chan struct{}), slow: map[string]bool{}, cancelled: map[string]bool{}}
	if opts.Upstream != "" {
		u, err := url.Parse(opts.Upstream)
		if err != nil {
			return nil, fmt.Errorf("bqrecorder: upstream %q: %w", opts.Upstream, err)
		}
		s.up = httputil.NewSingleHostReverseProxy(u)
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the server: requests still held (a hang, a latency) end
// first, then it waits for every handler.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing) // before Close, which waits for every request
		s.srv.Close()
	})
}

// Cancels returns the job ids of the jobs.cancel requests so far, in order.
func (s *Server) Cancels() []string {
	var out []string
	for _, r := range s.Requests() {
		if r.CancelJob != "" {
			out = append(out, r.CancelJob)
		}
	}
	return out
}

// Requests returns every request so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Jobs returns the jobs.insert requests so far, in order.
func (s *Server) Jobs() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.IsJob() {
			out = append(out, r)
		}
	}
	return out
}

// DryRuns returns the dry-run jobs.insert requests so far, in order.
func (s *Server) DryRuns() []Request {
	var out []Request
	for _, r := range s.Jobs() {
		if r.DryRun {
			out = append(out, r)
		}
	}
	return out
}

// Reset forgets the requests so far.
func (s *Server) Reset() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := Request{Method: r.Method, Path: r.URL.Path, Body: body, Query: r.URL.Query()}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) > 1 && parts[0] == "bigquery" {
		parts = parts[2:] // /bigquery/v2/projects/…
	}
	if r.Method == http.MethodPost && len(parts) == 5 && parts[0] == "projects" && parts[2] == "jobs" && parts[4] == "cancel" {
		rec.CancelJob = parts[3]
	}
	isInsert := r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "projects" && parts[2] == "jobs"
	if isInsert {
		var job bq.Job
		if err := json.Unmarshal(body, &job); err == nil {
			rec.Job = &job
			if c := job.Configuration; c != nil {
				rec.DryRun = c.DryRun
				rec.Labels = c.Labels
				if q := c.Query; q != nil {
					rec.Statement = q.Query
					rec.MaximumBytesBilled = q.MaximumBytesBilled
				}
			}
		}
	}
	var dryErr *Fault
	if rec.DryRun && s.opts.DryRunError != nil {
		dryErr = s.opts.DryRunError(rec.Statement) // not under mu: a test may hold the answer
	}
	s.mu.Lock()
	if s.override != nil {
		rec.Fault = s.override
	} else if s.opts.Fault != nil {
		rec.Fault = s.opts.Fault(r, len(s.reqs)+1)
	}
	if rec.Fault == nil {
		rec.Fault = dryErr
	}
	s.reqs = append(s.reqs, rec)
	slow := false
	if isInsert && rec.Job != nil && !rec.DryRun && s.opts.SlowJob != nil && s.opts.SlowJob(rec.Statement) && rec.Job.JobReference != nil {
		s.slow[rec.Job.JobReference.JobId] = true
		slow = true
	}
	if rec.CancelJob != "" {
		s.cancelled[rec.CancelJob] = true
	}
	jobSlow := len(parts) == 4 && (parts[2] == "queries" || parts[2] == "jobs") && s.slow[parts[3]]
	s.mu.Unlock()

	if s.opts.Latency > 0 && !s.hold(r) {
		return
	}
	if rec.Fault != nil {
		s.fault(w, r, rec.Fault)
		return
	}
	switch {
	case slow && s.up == nil:
		job := *rec.Job
		job.Status = &bq.JobStatus{State: "RUNNING"}
		reply(w, &job)
		return
	case jobSlow && r.Method == http.MethodGet:
		s.slowJob(w, r, parts[1], parts[2], parts[3])
		return
	case rec.CancelJob != "" && s.up == nil:
		reply(w, &bq.JobCancelResponse{Job: s.jobState(parts[1], rec.CancelJob, r.URL.Query().Get("location"))})
		return
	}
	if isInsert && rec.Job != nil && rec.DryRun {
		s.dryRun(w, rec)
		return
	}
	if s.up != nil {
		s.up.ServeHTTP(w, r)
		return
	}
	s.answer(w, r, parts, rec)
}

// hold waits Options.Latency; false when the client gave up or the server
// is closing first.
func (s *Server) hold(r *http.Request) bool {
	s.holding.Add(1)
	defer s.holding.Add(-1)
	t := time.NewTimer(s.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

// Holding is how many requests are waiting out Options.Latency now: a
// bench tells from it whether an edit came while a dry run was in flight.
func (s *Server) Holding() int { return int(s.holding.Load()) }

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// dryRun answers a dry run as BigQuery does: a DONE job with statistics,
// no job id kept.
func (s *Server) dryRun(w http.ResponseWriter, rec Request) {
	job := *rec.Job
	job.Status = &bq.JobStatus{State: "DONE"}
	bytes := int64(1024)
	if s.opts.Bytes != nil {
		bytes = s.opts.Bytes(rec.Statement)
	}
	st := &bq.JobStatistics2{
		TotalBytesProcessed: bytes,
		StatementType:       s.opts.StatementType(rec.Statement),
		Schema:              &bq.TableSchema{Fields: []*bq.TableFieldSchema{{Name: "n", Type: "INTEGER"}}},
	}
	if s.opts.Routines != nil {
		for _, r := range s.opts.Routines(rec.Statement) {
			p := strings.SplitN(r, ".", 3)
			if len(p) == 3 {
				st.ReferencedRoutines = append(st.ReferencedRoutines, &bq.RoutineReference{ProjectId: p[0], DatasetId: p[1], RoutineId: p[2]})
			}
		}
	}
	if s.opts.Referenced != nil {
		for _, t := range s.opts.Referenced(rec.Statement) {
			p := strings.SplitN(t, ".", 3)
			if len(p) == 3 {
				st.ReferencedTables = append(st.ReferencedTables, &bq.TableReference{ProjectId: p[0], DatasetId: p[1], TableId: p[2]})
			}
		}
	}
	job.Statistics = &bq.JobStatistics{TotalBytesProcessed: bytes, Query: st}
	reply(w, &job)
}

// answer serves BigQuery's REST shapes for the calls dfd makes.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, parts []string, rec Request) {
	switch {
	case rec.Job != nil:
		job := *rec.Job
		job.Status = &bq.JobStatus{State: "RUNNING"}
		reply(w, &job)
	case r.Method == http.MethodGet && len(parts) == 3 && parts[2] == "datasets":
		reply(w, &bq.DatasetList{})
	case r.Method == http.MethodGet && len(parts) == 5 && parts[4] == "tables":
		n := 0
		if s.opts.Tables != nil {
			n = s.opts.Tables(parts[3])
		}
		from, _ := strconv.Atoi(r.URL.Query().Get("pageToken"))
		size, err := strconv.Atoi(r.URL.Query().Get("maxResults"))
		if err != nil || size <= 0 {
			size = 1000
		}
		page := &bq.TableList{TotalItems: int64(n)}
		for i := from; i < n && i < from+size; i++ {
			page.Tables = append(page.Tables, &bq.TableListTables{
				TableReference: &bq.TableReference{ProjectId: parts[1], DatasetId: parts[3], TableId: fmt.Sprintf("t%04d", i)},
				Type:           "TABLE",
			})
		}
		if from+size < n {
			page.NextPageToken = strconv.Itoa(from + size)
		}
		reply(w, page)
	case r.Method == http.MethodGet && len(parts) == 6 && parts[4] == "tables":
		var modified int64
		if s.opts.Table != nil {
			var ok bool
			if modified, ok = s.opts.Table(parts[1], parts[3], parts[5]); !ok {
				s.fault(w, r, TableNotFound(parts[1]+"."+parts[3]+"."+parts[5]))
				return
			}
		}
		reply(w, &bq.Table{
			TableReference:   &bq.TableReference{ProjectId: parts[1], DatasetId: parts[3], TableId: parts[5]},
			Type:             "TABLE",
			LastModifiedTime: uint64(modified),
			Schema: &bq.TableSchema{Fields: []*bq.TableFieldSchema{
				{Name: "id", Type: "INTEGER"}, {Name: "name", Type: "STRING"},
			}},
		})
	case r.Method == http.MethodDelete && len(parts) == 6:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && len(parts) == 4 && parts[2] == "queries":
		reply(w, &bq.GetQueryResultsResponse{
			JobComplete: true,
			Schema:      &bq.TableSchema{Fields: []*bq.TableFieldSchema{{Name: "n", Type: "INTEGER"}}},
			Rows:        []*bq.TableRow{{F: []*bq.TableCell{{V: "1"}}}},
			TotalRows:   1,
		})
	case r.Method == http.MethodGet && len(parts) == 4 && parts[2] == "jobs":
		reply(w, &bq.Job{
			JobReference: &bq.JobReference{ProjectId: parts[1], JobId: parts[3]},
			Status:       &bq.JobStatus{State: "DONE"},
			Statistics:   &bq.JobStatistics{Query: &bq.JobStatistics2{TotalBytesProcessed: 100, TotalBytesBilled: 10 << 20}},
		})
	default:
		http.Error(w, fmt.Sprintf("bqrecorder: no route for %s %s", r.Method, r.URL.Path), http.StatusNotImplemented)
	}
}

// fault answers r with f.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, f *Fault) {
	switch {
	case f.Hang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
	case f.CutBody:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "4096")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"kind":"bigquery#table","tableReference":{"projectId":`)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		// Returning with fewer bytes than announced makes net/http close
		// the connection: the client reads an unexpected EOF.
	case f.Malformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "<html><body>502 Bad Gateway (not JSON)</body></html>")
	case f.Status != 0:
		reason := f.Reason
		if reason == "" {
			reason = map[int]string{401: "authError", 403: "accessDenied", 404: "notFound", 429: "rateLimitExceeded", 500: "internalError", 503: "backendError"}[f.Status]
		}
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", fmt.Sprint(f.RetryAfter))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		msg := f.Message
		if msg == "" {
			msg = fmt.Sprintf("bqrecorder fault: %d %s", f.Status, http.StatusText(f.Status))
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"code": f.Status, "message": msg, "status": strings.ToUpper(strings.ReplaceAll(http.StatusText(f.Status), " ", "_")),
			"errors": []map[string]any{{"reason": reason, "message": msg, "domain": "global"}},
		}})
	}
}

// jobState is a slow job as jobs.get and jobs.cancel show it.
func (s *Server) jobState(project, id, location string) *bq.Job {
	s.mu.Lock()
	cancelled := s.cancelled[id]
	s.mu.Unlock()
	job := &bq.Job{
		JobReference: &bq.JobReference{ProjectId: project, JobId: id, Location: location},
		Status:       &bq.JobStatus{State: "RUNNING"},
	}
	if cancelled {
		job.Status = &bq.JobStatus{State: "DONE", ErrorResult: &bq.ErrorProto{Reason: "stopped", Message: "Job execution was cancelled: User requested cancellation"}}
	}
	return job
}

// slowJob answers a poll (getQueryResults) or jobs.get of a slow job.
func (s *Server) slowJob(w http.ResponseWriter, r *http.Request, project, kind, id string) {
	job := s.jobState(project, id, r.URL.Query().Get("location"))
	if kind == "jobs" {
		reply(w, job)
		return
	}
	if job.Status.State == "DONE" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"code": 400, "message": job.Status.ErrorResult.Message,
			"errors": []map[string]any{{"reason": "stopped", "message": job.Status.ErrorResult.Message}},
		}})
		return
	}
	// BigQuery holds a poll for timeoutMs (default 10 s) before saying the
	// job is not done yet.
	hold := 10 * time.Second
	if ms, err := strconv.Atoi(r.URL.Query().Get("timeoutMs")); err == nil && ms >= 0 {
		hold = time.Duration(ms) * time.Millisecond
	}
	t := time.NewTimer(hold)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	case <-s.closing:
		return
	}
	reply(w, &bq.GetQueryResultsResponse{
		JobComplete:  false,
		JobReference: job.JobReference,
	})
}

// String names the fault, for test names: "none" for nil.
func (f *Fault) String() string {
	switch {
	case f == nil:
		return "none"
	case f.Hang:
		return "hang"
	case f.CutBody:
		return "cut-body"
	case f.Malformed:
		return "malformed"
	case f.RetryAfter > 0:
		return fmt.Sprintf("%d-retry-after-%ds", f.Status, f.RetryAfter)
	}
	return fmt.Sprint(f.Status)
}
