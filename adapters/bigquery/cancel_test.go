package bigquery

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/option"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/internal/testkit/bqtest"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// slowQuery is the statement the stand-in runs as a job that never ends.
const slowQuery = "SELECT slow FROM big"

// recorderAdapter is an Adapter of a bqrecorder stand-in whose slowQuery
// jobs never finish.
func recorderAdapter(t *testing.T, opts bqrecorder.Options, o Options) (*Adapter, *bqrecorder.Server) {
	t.Helper()
	if opts.SlowJob == nil {
		opts.SlowJob = func(stmt string) bool { return stmt == slowQuery }
	}
	rec := bqrecorder.Start(t, opts)
	if o.Location == "" {
		o.Location = "EU"
	}
	return adapterAt(t, rec.URL, o), rec
}

// insertedJobs are the ids of the (real) jobs submitted so far.
func insertedJobs(rec *bqrecorder.Server) []string {
	var ids []string
	for _, r := range rec.Jobs() {
		if !r.DryRun && r.Job.JobReference != nil && !slices.Contains(ids, r.Job.JobReference.JobId) {
			ids = append(ids, r.Job.JobReference.JobId)
		}
	}
	return ids
}

// A job dfd stops waiting for is cancelled on the wire — whatever made it
// stop: the deadline, the caller's cancellation (a newer edit), the
// cache's owner closing it (shutdown), the only caller of a shared query
// giving up, BigQuery no longer answering polls, or a jobs.insert whose
// answer never came — under the id it was submitted with, in its location.
func TestAbandonedJobIsCancelled(t *testing.T) {
	slow := &dataformpb.ExecuteRequest{Statement: slowQuery, FetchResults: true}
	tests := []struct {
		name     string
		fault    func(r *http.Request, n int) *bqrecorder.Fault
		run      func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error
		wantCode adapters.Code
		// says: the caller's error says the job was cancelled.
		says bool
	}{
		{"deadline", nil, func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := a.Execute(ctx, slow)
			return err
		}, adapters.DeadlineExceeded, true},
		{"caller cancelled (a newer edit)", nil, func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			_, err := a.Execute(ctx, slow)
			return err
		}, adapters.Canceled, true},
		{"through the cache: its only waiter's deadline", nil, func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error {
			c := cache.Open(a, cache.Options{ReadOnly: func(context.Context, string) bool { return true }})
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := c.Execute(ctx, slow)
			// The flight was called off before the caller returned, not
			// by the cache closing.
			if len(rec.Cancels()) == 0 {
				t.Errorf("Execute returned before the job was cancelled")
			}
			return err
		}, adapters.DeadlineExceeded, true},
		{"through the cache: closed (shutdown)", nil, func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error {
			c := cache.Open(a, cache.Options{ReadOnly: func(context.Context, string) bool { return true }})
			time.AfterFunc(300*time.Millisecond, func() { c.Close() })
			_, err := c.Execute(context.Background(), slow)
			return err
		}, adapters.Canceled, true},
		{"polls stop being answered", func(r *http.Request, n int) *bqrecorder.Fault {
			if strings.Contains(r.URL.Path, "/queries/") && n > 3 {
				return bqrecorder.Status(503, 0)
			}
			return nil
		}, func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error {
			_, err := a.Execute(context.Background(), slow)
			return err
		}, adapters.Unavailable, true},
		{"jobs.insert answer never comes", func(r *http.Request, n int) *bqrecorder.Fault {
			if r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/jobs") {
				return bqrecorder.Hang()
			}
			return nil
		}, func(t *testing.T, a *Adapter, rec *bqrecorder.Server) error {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := a.Execute(ctx, slow)
			return err
		}, adapters.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, rec := recorderAdapter(t, bqrecorder.Options{Fault: tt.fault}, Options{PollTimeout: 100 * time.Millisecond})
			start := time.Now()
			err := tt.run(t, a, rec)
			if got := adapters.CodeOf(err); got != tt.wantCode {
				t.Fatalf("code %q, want %q: %v", got, tt.wantCode, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("Execute returned after %v", d)
			}
			jobs, cancels := insertedJobs(rec), rec.Cancels()
			if len(jobs) != 1 || !slices.Equal(cancels, jobs) {
				t.Fatalf("jobs %v, cancels %v", jobs, cancels)
			}
			for _, r := range rec.Requests() {
				if r.CancelJob != "" && r.Query.Get("location") != "EU" {
					t.Errorf("jobs.cancel without the job's location: %s?%s", r.Path, r.Query.Encode())
				}
			}
			if tt.says && !strings.Contains(err.Error(), "job "+jobs[0]+" cancelled") {
				t.Errorf("the error does not say the job was cancelled: %v", err)
			}
		})
	}
}

// A job that ends, and one BigQuery reports failed, are not cancelled; a
// shared query goes on while one of its callers still waits.
func TestFinishedJobIsNotCancelled(t *testing.T) {
	a, rec := recorderAdapter(t, bqrecorder.Options{}, Options{PollTimeout: 100 * time.Millisecond})
	if _, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT 1", FetchResults: true}); err != nil {
		t.Fatal(err)
	}
	if c := rec.Cancels(); len(c) != 0 {
		t.Errorf("a finished job was cancelled: %v", c)
	}

	rec.Reset()
	c := cache.Open(a, cache.Options{ReadOnly: func(context.Context, string) bool { return true }})
	defer c.Close()
	req := &dataformpb.ExecuteRequest{Statement: slowQuery, FetchResults: true}
	quick, cancelQuick := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelQuick()
	patient, cancelPatient := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { _, err := c.Execute(patient, req); done <- err }()
	go func() { _, err := c.Execute(quick, req); done <- err }()
	if err := <-done; !errors.Is(err, context.DeadlineExceeded) && adapters.CodeOf(err) != adapters.DeadlineExceeded {
		t.Fatalf("the quick caller: %v", err)
	}
	// Two polls more: the job is still waited for.
	polls := func() int {
		n := 0
		for _, r := range rec.Requests() {
			if strings.Contains(r.Path, "/queries/") {
				n++
			}
		}
		return n
	}
	then := polls()
	waitFor(t, 5*time.Second, func() bool { return polls() >= then+2 })
	if n := len(rec.Cancels()); n != 0 {
		t.Fatalf("cancelled while a caller still waits: %v", rec.Cancels())
	}
	cancelPatient()
	if err := <-done; adapters.CodeOf(err) != adapters.Canceled {
		t.Fatalf("the patient caller: %v", err)
	}
	c.Close() // waits for the flight, and so for its jobs.cancel
	if jobs := insertedJobs(rec); len(jobs) != 1 || !slices.Equal(rec.Cancels(), jobs) {
		t.Errorf("jobs %v, cancels %v", jobs, rec.Cancels())
	}
}

// waitFor waits until cond holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("still not so after %v", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The emulator runs every job to completion inside jobs.insert, so it
// cannot hold a slow job; behind the stand-in (which forwards the job and
// its jobs.cancel to it, but answers the polls itself as for a job that
// never ends) it shows that BigQuery's API accepts the cancel dfd sends:
// the error says the job was cancelled, not that cancelling failed. (The
// emulator's jobs.cancel is a no-op that answers the job.)
func TestEmulatorAcceptsCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the BigQuery emulator")
	}
	emu := bqtest.Shared(t)
	rec := bqrecorder.Start(t, bqrecorder.Options{Upstream: emu.URL, SlowJob: func(stmt string) bool { return stmt == "SELECT 1 AS slow" }})
	a, err := New(context.Background(), Options{
		Project:       bqtest.Project,
		PollTimeout:   100 * time.Millisecond,
		ClientOptions: []option.ClientOption{option.WithEndpoint(rec.URL), option.WithoutAuthentication()},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Given up once the job is polled, so it exists in the emulator (a
	// deadline could pass inside a slow jobs.insert, and then there is no
	// job to cancel).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			for _, r := range rec.Requests() {
				if strings.Contains(r.Path, "/queries/") {
					cancel()
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err = a.Execute(ctx, &dataformpb.ExecuteRequest{Statement: "SELECT 1 AS slow", FetchResults: true})
	jobs := insertedJobs(rec)
	if adapters.CodeOf(err) != adapters.Canceled || len(jobs) != 1 {
		t.Fatalf("jobs %v: %v", jobs, err)
	}
	if !slices.Equal(rec.Cancels(), jobs) || !strings.Contains(err.Error(), "job "+jobs[0]+" cancelled") {
		t.Errorf("cancels %v: %v", rec.Cancels(), err)
	}
}
