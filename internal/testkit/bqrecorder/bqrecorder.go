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
	"strings"
	"sync"
	"testing"

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
}

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
}

// IsJob reports whether r submitted a job (jobs.insert).
func (r Request) IsJob() bool { return r.Job != nil }

// Server is a running stand-in.
type Server struct {
	URL  string
	opts Options
	srv  *httptest.Server
	up   *httputil.ReverseProxy

	mu   sync.Mutex // guards reqs
	reqs []Request
}

// Start starts a Server on a loopback port; it stops when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.StatementType == nil {
		opts.StatementType = func(string) string { return "SELECT" }
	}
	s := &Server{opts: opts}
	if opts.Upstream != "" {
		u, err := url.Parse(opts.Upstream)
		if err != nil {
			t.Fatalf("bqrecorder: upstream %q: %v", opts.Upstream, err)
		}
		s.up = httputil.NewSingleHostReverseProxy(u)
	}
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
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

// Reset forgets the requests so far.
func (s *Server) Reset() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := Request{Method: r.Method, Path: r.URL.Path, Body: body}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) > 1 && parts[0] == "bigquery" {
		parts = parts[2:] // /bigquery/v2/projects/…
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
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()

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

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// dryRun answers a dry run as BigQuery does: a DONE job with statistics,
// no job id kept.
func (s *Server) dryRun(w http.ResponseWriter, rec Request) {
	job := *rec.Job
	job.Status = &bq.JobStatus{State: "DONE"}
	st := &bq.JobStatistics2{
		TotalBytesProcessed: 1024,
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
	job.Statistics = &bq.JobStatistics{TotalBytesProcessed: 1024, Query: st}
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
		reply(w, &bq.TableList{})
	case r.Method == http.MethodGet && len(parts) == 6 && parts[4] == "tables":
		reply(w, &bq.Table{
			TableReference: &bq.TableReference{ProjectId: parts[1], DatasetId: parts[3], TableId: parts[5]},
			Type:           "TABLE",
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
