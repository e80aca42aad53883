package bigquery

// Unit tests against a small in-process fake of BigQuery's REST API, for
// what the emulator cannot show: paging, faults (403, 404, 429, 500, slow
// or absent servers) and which calls are retried.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bq "google.golang.org/api/bigquery/v2"
	"google.golang.org/api/option"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// fakeBQ answers tables.get/list/delete, datasets.list and query jobs.
type fakeBQ struct {
	tables   []string // table ids of dataset "ds"
	datasets []string
	// fault, when it returns a status, answers the request with that
	// status and BigQuery error reason instead; n counts requests to the
	// same route (method + path), from 1.
	fault func(r *http.Request, n int) (status int, reason string)
	delay time.Duration // before answering

	mu     sync.Mutex
	counts map[string]int
	jobs   []*bq.Job // inserted
	raw    [][]byte  // their request bodies
	// submitted are the job ids of every jobs.insert request, faulted
	// ones included.
	submitted []string
	total     atomic.Int64
}

func (f *fakeBQ) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.total.Add(1)
	route := r.Method + " " + r.URL.Path
	f.mu.Lock()
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	f.counts[route]++
	n := f.counts[route]
	f.mu.Unlock()
	if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/jobs") {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var j bq.Job
		json.Unmarshal(body, &j)
		f.mu.Lock()
		if j.JobReference != nil {
			f.submitted = append(f.submitted, j.JobReference.JobId)
		}
		f.mu.Unlock()
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.fault != nil {
		if status, reason := f.fault(r, n); status != 0 {
			w.Header().Set("Content-Type", "application/json")
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "0")
			}
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
				"code": status, "message": fmt.Sprintf("fake %d %s", status, reason),
				"errors": []any{map[string]any{"reason": reason, "message": fmt.Sprintf("fake %d %s", status, reason)}},
			}})
			return
		}
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) > 0 && parts[0] == "bigquery" {
		parts = parts[2:]
	}
	reply := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	q := r.URL.Query()
	switch {
	case r.Method == "GET" && len(parts) == 3 && parts[2] == "datasets":
		page, next := paginate(f.datasets, q)
		out := &bq.DatasetList{NextPageToken: next}
		for _, d := range page {
			out.Datasets = append(out.Datasets, &bq.DatasetListDatasets{DatasetReference: &bq.DatasetReference{ProjectId: parts[1], DatasetId: d}})
		}
		reply(out)
	case r.Method == "GET" && len(parts) == 5 && parts[4] == "tables":
		page, next := paginate(f.tables, q)
		out := &bq.TableList{NextPageToken: next}
		for _, t := range page {
			out.Tables = append(out.Tables, &bq.TableListTables{TableReference: &bq.TableReference{ProjectId: parts[1], DatasetId: parts[3], TableId: t}})
		}
		reply(out)
	case r.Method == "GET" && len(parts) == 6 && parts[4] == "tables":
		reply(&bq.Table{
			TableReference:   &bq.TableReference{ProjectId: parts[1], DatasetId: parts[3], TableId: parts[5]},
			Type:             "TABLE",
			LastModifiedTime: 1718236800123,
			StreamingBuffer:  &bq.Streamingbuffer{EstimatedRows: 3},
			Labels:           map[string]string{"team": "growth"},
			Schema: &bq.TableSchema{Fields: []*bq.TableFieldSchema{
				{Name: "a", Type: "BIGNUMERIC"}, {Name: "b", Type: "JSON"}, {Name: "c", Type: "GEOGRAPHY"},
				{Name: "d", Type: "STRUCT", Mode: "REPEATED", Fields: []*bq.TableFieldSchema{{Name: "e", Type: "FLOAT64"}}},
				{Name: "f", Type: "RANGE"},
			}},
		})
	case r.Method == "DELETE" && len(parts) == 6:
		w.WriteHeader(http.StatusNoContent)
	case r.Method == "POST" && len(parts) == 3 && parts[2] == "jobs":
		var job bq.Job
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &job)
		f.mu.Lock()
		f.jobs = append(f.jobs, &job)
		f.raw = append(f.raw, body)
		f.mu.Unlock()
		job.Status = &bq.JobStatus{State: "RUNNING"}
		if job.Configuration.DryRun {
			job.Status.State = "DONE"
			job.Statistics = &bq.JobStatistics{Query: &bq.JobStatistics2{TotalBytesProcessed: 1234,
				Schema: &bq.TableSchema{Fields: []*bq.TableFieldSchema{{Name: "n", Type: "INT64"}}}}}
		}
		reply(&job)
	case r.Method == "GET" && len(parts) == 4 && parts[2] == "queries":
		// The first poll of each job is not complete yet.
		if n == 1 {
			reply(&bq.GetQueryResultsResponse{JobComplete: false})
			return
		}
		rows := make([]string, 25)
		for i := range rows {
			rows[i] = strconv.Itoa(i + 1)
		}
		page, next := paginate(rows, q)
		out := &bq.GetQueryResultsResponse{JobComplete: true, PageToken: next,
			Schema: &bq.TableSchema{Fields: []*bq.TableFieldSchema{{Name: "n", Type: "INT64"}}}}
		for _, v := range page {
			out.Rows = append(out.Rows, &bq.TableRow{F: []*bq.TableCell{{V: v}}})
		}
		reply(out)
	case r.Method == "GET" && len(parts) == 4 && parts[2] == "jobs":
		reply(&bq.Job{
			JobReference: &bq.JobReference{ProjectId: parts[1], JobId: parts[3]},
			Status:       &bq.JobStatus{State: "DONE"},
			Statistics:   &bq.JobStatistics{Query: &bq.JobStatistics2{TotalBytesProcessed: 1000, TotalBytesBilled: 10485760}},
		})
	default:
		http.Error(w, "fake: no route "+route, http.StatusNotImplemented)
	}
}

func paginate(items []string, q map[string][]string) ([]string, string) {
	start, _ := strconv.Atoi(first(q["pageToken"]))
	size, err := strconv.Atoi(first(q["maxResults"]))
	if err != nil {
		size = len(items)
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = strconv.Itoa(end)
	}
	return items[start:end], next
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func (f *fakeBQ) count(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[route]
}

func fakeAdapter(t *testing.T, f *fakeBQ, opts Options) *Adapter {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return adapterAt(t, srv.URL, opts)
}

func adapterAt(t *testing.T, url string, opts Options) *Adapter {
	t.Helper()
	opts.Project = "p"
	opts.ClientOptions = []option.ClientOption{option.WithEndpoint(url), option.WithoutAuthentication()}
	if opts.Retry.Initial == 0 {
		opts.Retry = Retry{Initial: time.Millisecond, Max: 4 * time.Millisecond}
	}
	a, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var tgt = &dataformpb.Target{Database: "p", Schema: "ds", Name: "t"}

func TestFakeGetTableConversion(t *testing.T) {
	a := fakeAdapter(t, &fakeBQ{}, Options{})
	m, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: tgt})
	if err != nil {
		t.Fatal(err)
	}
	if m.GetLastUpdatedMillis() != 1718236800123 || !m.GetBigquery().GetHasStreamingBuffer() || m.GetLabels()["team"] != "growth" {
		t.Errorf("metadata = %v", m)
	}
	// The CLI's type mapping, quirks included.
	f := m.GetFields()
	if f[0].GetPrimitive() != dataformpb.Field_NUMERIC || f[1].GetPrimitive() != dataformpb.Field_STRING ||
		f[2].GetPrimitive() != dataformpb.Field_GEOGRAPHY || f[3].GetStruct().GetFields()[0].GetPrimitive() != dataformpb.Field_FLOAT ||
		f[3].GetFlags()[0] != dataformpb.Field_REPEATED || f[4].GetPrimitive() != dataformpb.Field_UNKNOWN {
		t.Errorf("fields = %v", f)
	}
}

func TestFakeListPaging(t *testing.T) {
	f := &fakeBQ{datasets: []string{"ds", "b", "a"}}
	for i := range 23 {
		f.tables = append(f.tables, fmt.Sprintf("t%02d", i))
	}
	a := fakeAdapter(t, f, Options{PageSize: 5, Concurrency: 4})
	resp, err := a.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetTables()) != 23 || resp.GetTables()[22].GetTarget().GetName() != "t22" {
		t.Errorf("%d tables", len(resp.GetTables()))
	}
	if n := f.count("GET /projects/p/datasets/ds/tables"); n != 5 { // 5+5+5+5+3
		t.Errorf("%d list pages", n)
	}
	resp, err = a.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p"})
	if err != nil || len(resp.GetTables()) != 3*23 {
		t.Fatalf("project: %d tables, %v", len(resp.GetTables()), err)
	}
	if s := resp.GetTables()[0].GetTarget().GetSchema(); s != "a" {
		t.Errorf("datasets not sorted: first is %q", s)
	}
}

func TestFakeFaults(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		reason   string
		times    int // fail the first n requests of a route (0: always)
		call     func(a *Adapter) error
		route    string
		wantCode adapters.Code
		wantReqs int
	}{
		{"401 refused credentials are final", 401, "", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.Unauthenticated, 1},
		{"403 access denied is final", 403, "accessDenied", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.PermissionDenied, 1},
		{"403 rate limit is retried", 403, "rateLimitExceeded", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.ResourceExhausted, 4},
		{"403 quota is final", 403, "quotaExceeded", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.ResourceExhausted, 1},
		{"404", 404, "notFound", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.NotFound, 1},
		{"400", 400, "invalid", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.InvalidArgument, 1},
		{"409", 409, "duplicate", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.FailedPrecondition, 1},
		{"429 retried until it works", 429, "", 2, getTable, "GET /projects/p/datasets/ds/tables/t", "", 3},
		{"429 retried then given up", 429, "", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.ResourceExhausted, 4},
		{"500 retried until it works", 500, "backendError", 3, getTable, "GET /projects/p/datasets/ds/tables/t", "", 4},
		{"503 retried then given up", 503, "", 0, getTable, "GET /projects/p/datasets/ds/tables/t", adapters.Unavailable, 4},
		{"500 in a listing is retried", 500, "", 1, listTables, "GET /projects/p/datasets/ds/tables", "", 2},
		{"500 while polling results is retried", 500, "", 3, selectQuery, "GET /projects/p/queries/", "", 3},
		{"500 on submitting a SELECT is retried", 500, "", 1, selectQuery, "POST /projects/p/jobs", "", 2},
		{"409 on resubmitting a SELECT means it went through", 500, "", 1, selectQueryDuplicate, "POST /projects/p/jobs", "", 2},
		{"500 on submitting an INSERT is retried under one job id", 500, "", 0, insertQuery, "POST /projects/p/jobs", adapters.Unavailable, 4},
		{"409 on resubmitting an INSERT means it went through", 500, "", 1, insertQueryDuplicate, "POST /projects/p/jobs", "", 2},
		{"500 on DeleteTable is not retried", 500, "", 0, deleteTable, "DELETE /projects/p/datasets/ds/tables/t", adapters.Unavailable, 1},
		{"404 on DeleteTable is success", 404, "notFound", 0, deleteTable, "DELETE /projects/p/datasets/ds/tables/t", "", 1},
		{"403 on DeleteTable", 403, "accessDenied", 0, deleteTable, "DELETE /projects/p/datasets/ds/tables/t", adapters.PermissionDenied, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeBQ{tables: []string{"t"}}
			matches := func(route string) bool {
				return route == tt.route || strings.HasSuffix(tt.route, "/") && strings.HasPrefix(route, tt.route)
			}
			f.fault = func(r *http.Request, n int) (int, string) {
				route := r.Method + " " + r.URL.Path
				if !matches(route) || (tt.times > 0 && n > tt.times) {
					if strings.HasPrefix(tt.name, "409 on resubmitting") && route == tt.route && n == 2 {
						return 409, "duplicate"
					}
					return 0, ""
				}
				if strings.HasPrefix(tt.route, "GET /projects/p/queries/") && n == 1 {
					return 0, "" // let the first "not complete yet" poll through
				}
				return tt.status, tt.reason
			}
			a := fakeAdapter(t, f, Options{})
			err := tt.call(a)
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, tt.wantCode)
			}
			if err != nil && !strings.Contains(err.Error(), "fake ") {
				t.Errorf("BigQuery's message lost: %v", err)
			}
			got := 0
			f.mu.Lock()
			for route, n := range f.counts {
				if matches(route) {
					got += n
				}
			}
			f.mu.Unlock()
			want := tt.wantReqs
			if strings.HasPrefix(tt.route, "GET /projects/p/queries/") {
				want++ // the first, incomplete poll
			}
			if got != want {
				t.Errorf("%d requests to %s, want %d", got, tt.route, want)
			}
			// A job is always resubmitted under its first id, so that
			// BigQuery runs it at most once.
			f.mu.Lock()
			for _, id := range f.submitted {
				if id != f.submitted[0] {
					t.Errorf("job submitted under ids %v", f.submitted)
					break
				}
			}
			f.mu.Unlock()
		})
	}
}

func getTable(a *Adapter) error {
	_, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: tgt})
	return err
}

func listTables(a *Adapter) error {
	_, err := a.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	return err
}

func selectQuery(a *Adapter) error {
	_, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT n FROM t", FetchResults: true})
	return err
}

var selectQueryDuplicate = selectQuery

var insertQueryDuplicate = insertQuery

func insertQuery(a *Adapter) error {
	_, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "INSERT INTO t VALUES (1)"})
	return err
}

func deleteTable(a *Adapter) error {
	return a.DeleteTable(context.Background(), &dataformpb.DeleteTableRequest{Target: tgt})
}

// A retried submission keeps its job id, so BigQuery can tell it is the
// same job.
func TestFakeRetryKeepsJobID(t *testing.T) {
	f := &fakeBQ{}
	var failedID string
	f.fault = func(r *http.Request, n int) (int, string) {
		if r.Method == "POST" && n == 1 {
			var job bq.Job
			json.NewDecoder(r.Body).Decode(&job)
			failedID = job.JobReference.JobId
			return 503, "backendError"
		}
		return 0, ""
	}
	a := fakeAdapter(t, f, Options{})
	if err := selectQuery(a); err != nil {
		t.Fatal(err)
	}
	if len(f.jobs) != 1 || f.jobs[0].JobReference.JobId != failedID {
		t.Fatalf("retried job id %v, first attempt %q", f.jobs[0].JobReference, failedID)
	}
	f.fault = func(r *http.Request, n int) (int, string) { return 0, "" }
	f.jobs = nil
	f.counts = nil
	selectQuery(a)
	selectQuery(a)
	if f.jobs[0].JobReference.JobId == f.jobs[1].JobReference.JobId {
		t.Error("two queries share a job id")
	}
}

func TestFakeExecute(t *testing.T) {
	f := &fakeBQ{}
	a := fakeAdapter(t, f, Options{PageSize: 10, JobPrefix: "ci", Location: "US", Priority: "BATCH"})
	params, _ := structpb.NewStruct(map[string]any{"ids": []any{1, 2.5}, "s": "", "o": map[string]any{"k": true}})
	resp, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{
		Statement: "SELECT n FROM t", FetchResults: true, RowLimit: 23, Params: params,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetRows()) != 23 || f.count("GET /projects/p/queries/"+f.jobs[0].JobReference.JobId) != 4 { // incomplete, 10, 10, 3
		t.Errorf("%d rows, %d polls", len(resp.GetRows()), f.count("GET /projects/p/queries/"+f.jobs[0].JobReference.JobId))
	}
	md := resp.GetExecutionMetadata().GetBigquery()
	if md.GetTotalBytesBilled() != 10485760 || md.GetTotalBytesProcessed() != 1000 || !strings.HasPrefix(md.GetJobId(), "ci-") {
		t.Errorf("metadata = %v", md)
	}
	job := f.jobs[0]
	q := job.Configuration.Query
	if q.Priority != "BATCH" || job.JobReference.Location != "US" || q.ParameterMode != "NAMED" || len(q.QueryParameters) != 3 {
		t.Errorf("job = %+v %+v", job.JobReference, q)
	}
	var sent struct {
		Configuration struct {
			Query struct {
				QueryParameters json.RawMessage `json:"queryParameters"`
			} `json:"query"`
		} `json:"configuration"`
	}
	json.Unmarshal(f.raw[0], &sent)
	b := sent.Configuration.Query.QueryParameters
	want := `[{"name":"ids","parameterType":{"arrayType":{"type":"FLOAT64"},"type":"ARRAY"},"parameterValue":{"arrayValues":[{"value":"1"},{"value":"2.5"}]}},` +
		`{"name":"o","parameterType":{"structTypes":[{"name":"k","type":{"type":"BOOL"}}],"type":"STRUCT"},"parameterValue":{"structValues":{"k":{"value":"true"}}}},` +
		`{"name":"s","parameterType":{"type":"STRING"},"parameterValue":{"value":""}}]`
	if string(b) != want {
		t.Errorf("params = %s\nwant     %s", b, want)
	}

	// Interactive beats the adapter's default priority; a dry run reports
	// the schema and bytes without polling.
	f.jobs = nil
	resp, err = a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "DELETE FROM t WHERE true",
		BigQueryOptions: &dataformpb.BigQueryExecuteOptions{DryRun: true, Interactive: true}})
	if err != nil || resp.GetExecutionMetadata().GetBigquery().GetTotalBytesProcessed() != 1234 || resp.GetSchemaFields()[0].GetName() != "n" {
		t.Errorf("dry run: %v %v", resp, err)
	}
	if f.jobs[0].Configuration.Query.Priority != "INTERACTIVE" || !f.jobs[0].Configuration.DryRun {
		t.Errorf("dry run job = %+v", f.jobs[0].Configuration)
	}
}

func TestFakeTimeouts(t *testing.T) {
	t.Run("slow server: each attempt times out, then the error", func(t *testing.T) {
		f := &fakeBQ{delay: 200 * time.Millisecond}
		a := fakeAdapter(t, f, Options{AttemptTimeout: 30 * time.Millisecond, Retry: Retry{Attempts: 3, Initial: time.Millisecond}})
		start := time.Now()
		err := getTable(a)
		if adapters.CodeOf(err) != adapters.DeadlineExceeded || f.total.Load() != 3 {
			t.Errorf("err = %v after %d requests", err, f.total.Load())
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("caller's deadline", func(t *testing.T) {
		f := &fakeBQ{delay: time.Second}
		a := fakeAdapter(t, f, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := a.GetTable(ctx, &dataformpb.GetTableRequest{Target: tgt})
		if adapters.CodeOf(err) != adapters.DeadlineExceeded || time.Since(start) > 500*time.Millisecond {
			t.Errorf("err = %v after %v", err, time.Since(start))
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := &fakeBQ{delay: time.Second}
		a := fakeAdapter(t, f, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := a.GetTable(ctx, &dataformpb.GetTableRequest{Target: tgt})
		if adapters.CodeOf(err) != adapters.Canceled {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("nobody listening", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		url := "http://" + l.Addr().String()
		l.Close()
		a := adapterAt(t, url, Options{})
		err := getTable(a)
		if adapters.CodeOf(err) != adapters.Unavailable || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("err = %v", err)
		}
		if err := deleteTable(a); adapters.CodeOf(err) != adapters.Unavailable {
			t.Errorf("delete: %v", err)
		}
	})
	t.Run("server accepts but never answers", func(t *testing.T) {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		go func() { // accept and hold connections until the listener closes
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				conns = append(conns, c)
			}
		}()
		a := adapterAt(t, "http://"+l.Addr().String(), Options{AttemptTimeout: 20 * time.Millisecond, Retry: Retry{Attempts: 2, Initial: time.Millisecond}})
		if err := getTable(a); adapters.CodeOf(err) != adapters.DeadlineExceeded {
			t.Errorf("err = %v", err)
		}
	})
}

func TestQueryParamErrors(t *testing.T) {
	for _, v := range []any{nil, []any{}, []any{"a", 1}, []any{[]any{"x"}}, map[string]any{}} {
		p, err := structpb.NewStruct(map[string]any{"x": v})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := queryParams(p); adapters.CodeOf(err) != adapters.InvalidArgument {
			t.Errorf("%v: err = %v", v, err)
		}
	}
}

func TestJobID(t *testing.T) {
	a := &Adapter{opts: Options{JobPrefix: "dfd"}}
	for prefix, want := range map[string]string{"": "dfd-", "run 7/β": "dfd-run_7_-"} {
		id := a.jobID(prefix)
		if !strings.HasPrefix(id, want) || len(id) != len(want)+16 {
			t.Errorf("jobID(%q) = %q", prefix, id)
		}
	}
}
