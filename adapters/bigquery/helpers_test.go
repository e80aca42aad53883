package bigquery

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/dfdtools/dfd/internal/testkit/bqtest"
)

func TestMain(m *testing.M) { bqtest.Main(m) }

// wire records every HTTP request an adapter sends, and can answer some
// itself instead of passing them on (intercept returns a non-nil response).
type wire struct {
	next      http.RoundTripper
	intercept func(r *request) *http.Response

	mu   sync.Mutex
	reqs []*request
}

// request is one recorded HTTP request, with what matters of a job in it.
type request struct {
	Method, Path string
	Query        string
	Body         []byte
	Statement    string // configuration.query.query (jobs.insert) or query (jobs.query)
	DryRun       bool
	Job          map[string]any
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := &request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
	if r.Body != nil {
		rec.Body, _ = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(rec.Body))
	}
	if len(rec.Body) > 0 && r.Method == http.MethodPost {
		var job struct {
			Configuration struct {
				DryRun bool `json:"dryRun"`
				Query  struct {
					Query string `json:"query"`
				} `json:"query"`
			} `json:"configuration"`
			Query  string `json:"query"`
			DryRun bool   `json:"dryRun"`
		}
		if json.Unmarshal(rec.Body, &job) == nil {
			rec.Statement = job.Configuration.Query.Query + job.Query
			rec.DryRun = job.Configuration.DryRun || job.DryRun
		}
		json.Unmarshal(rec.Body, &rec.Job)
	}
	w.mu.Lock()
	w.reqs = append(w.reqs, rec)
	w.mu.Unlock()
	if w.intercept != nil {
		if resp := w.intercept(rec); resp != nil {
			resp.Request = r
			return resp, nil
		}
	}
	return w.next.RoundTrip(r)
}

func (w *wire) requests() []*request {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*request(nil), w.reqs...)
}

func (w *wire) count(method, pathPart string) int {
	n := 0
	for _, r := range w.requests() {
		if r.Method == method && strings.Contains(r.Path, pathPart) {
			n++
		}
	}
	return n
}

func (w *wire) reset() {
	w.mu.Lock()
	w.reqs = nil
	w.mu.Unlock()
}

func jsonResponse(status int, v any) *http.Response {
	b, _ := json.Marshal(v)
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(b)),
	}
}

// emulatorAdapter is an Adapter of the package's emulator whose requests go
// through a wire.
func emulatorAdapter(t testing.TB, opts Options) (*Adapter, *wire) {
	t.Helper()
	emu := bqtest.Shared(t)
	w := &wire{next: http.DefaultTransport}
	opts.Project = bqtest.Project
	opts.ClientOptions = []option.ClientOption{option.WithEndpoint(emu.URL), option.WithHTTPClient(&http.Client{Transport: w})}
	if opts.Retry.Initial == 0 {
		opts.Retry = Retry{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}
	}
	a, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, w
}
