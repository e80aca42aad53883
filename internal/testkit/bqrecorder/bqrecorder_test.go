package bqrecorder

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// Latency holds every answer: a client that waits gets it no sooner, one
// that gives up first gets none (and the request is still recorded), and
// Close ends a held request at once rather than waiting it out.
func TestLatency(t *testing.T) {
	const latency = 300 * time.Millisecond
	s, err := Listen(Options{Latency: latency})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/bigquery/v2/projects/p/datasets", nil)
		if err != nil {
			t.Fatal(err)
		}
		return http.DefaultClient.Do(req)
	}

	start := time.Now()
	resp, err := get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); resp.StatusCode != http.StatusOK || took < latency {
		t.Errorf("answered %d after %v, want 200 after at least %v", resp.StatusCode, took, latency)
	}

	ctx, cancel := context.WithTimeout(context.Background(), latency/10)
	_, err = get(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a client giving up after %v got %v, want its deadline", latency/10, err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests recorded, want 2", n)
	}
	for s.Holding() != 0 { // the given-up request's handler returns
		time.Sleep(5 * time.Millisecond)
	}

	// A latency longer than the test: Close must not wait for it.
	slow, err := Listen(Options{Latency: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(slow.URL + "/bigquery/v2/projects/p/datasets")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for slow.Holding() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { slow.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a held request")
	}
	select {
	case <-done: // the held request has its answer (an empty one)
	case <-time.After(10 * time.Second):
		t.Fatal("the held request did not end with Close")
	}
}
