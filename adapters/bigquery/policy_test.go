package bigquery

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/internal/testkit/bqrecorder"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// sleeps records the waits between attempts instead of waiting them.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// TestCallPolicy: against each fault of the stand-in, a metadata call ends
// within its time limit, with the code and message the fault deserves,
// after as many attempts as the policy allows, spaced as it says (backoff
// doubling from Initial with ±25% jitter, or BigQuery's Retry-After when
// that is longer; never a wait past the call's limit).
func TestCallPolicy(t *testing.T) {
	backoff := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	tests := []struct {
		name      string
		fault     *bqrecorder.Fault
		wantCode  adapters.Code
		wantMsg   string
		attempts  int             // requests sent
		waits     []time.Duration // nil: the jittered backoff
		outage    bool            // the finding holds for the next call
		callLimit time.Duration
	}{
		{"hang", bqrecorder.Hang(), adapters.DeadlineExceeded, "no answer within 1s (", 0, nil, true, time.Second},
		{"503 on every attempt", bqrecorder.Status(503, 0), adapters.Unavailable, "bqrecorder fault: 503", 4, nil, true, 0},
		{"503 with Retry-After 1", bqrecorder.Status(503, 1), adapters.Unavailable, "bqrecorder fault: 503", 4, []time.Duration{time.Second, time.Second, time.Second}, true, 0},
		{"429 with Retry-After 2", bqrecorder.Status(429, 2), adapters.ResourceExhausted, "bqrecorder fault: 429", 4, []time.Duration{2 * time.Second, 2 * time.Second, 2 * time.Second}, false, 0},
		{"429 with Retry-After past the limit", bqrecorder.Status(429, 60), adapters.ResourceExhausted, "asked to retry after 1m0s", 1, []time.Duration{}, false, 0},
		{"401 expired credentials", bqrecorder.Status(401, 0), adapters.Unauthenticated, "bqrecorder fault: 401", 1, []time.Duration{}, false, 0},
		{"403 access denied", bqrecorder.Status(403, 0), adapters.PermissionDenied, "bqrecorder fault: 403", 1, []time.Duration{}, false, 0},
		{"body cut short", &bqrecorder.Fault{CutBody: true}, adapters.Unavailable, "unexpected EOF", 4, nil, true, 0},
		{"malformed JSON", &bqrecorder.Fault{Malformed: true}, adapters.Unavailable, "invalid character", 4, nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sl sleeps
			rec := bqrecorder.Start(t, bqrecorder.Options{Fault: func(r *http.Request, n int) *bqrecorder.Fault { return tt.fault }})
			limit := tt.callLimit
			if limit == 0 {
				limit = 20 * time.Second
			}
			a := adapterAt(t, rec.URL, Options{
				CallTimeout: limit, AttemptTimeout: 400 * time.Millisecond,
				Retry: Retry{Initial: 200 * time.Millisecond, Max: 3 * time.Second, Sleep: sl.sleep},
			})
			start := time.Now()
			err := getTable(a)
			if d := time.Since(start); d > limit+2*time.Second {
				t.Errorf("the call took %v, its limit is %v", d, limit)
			}
			if adapters.CodeOf(err) != tt.wantCode || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want %s with %q", err, tt.wantCode, tt.wantMsg)
			}
			sent := len(rec.Requests())
			switch {
			case tt.attempts > 0 && sent != tt.attempts:
				t.Errorf("%d requests, want %d", sent, tt.attempts)
			case tt.attempts == 0 && (sent < 2 || sent > 4):
				t.Errorf("%d requests, want 2 to 4 (attempts of 400ms within 1s)", sent)
			}
			waits := sl.got()
			if tt.waits != nil {
				if len(waits) != len(tt.waits) {
					t.Errorf("waits %v, want %v", waits, tt.waits)
				}
				for i := range min(len(waits), len(tt.waits)) {
					if waits[i] != tt.waits[i] {
						t.Errorf("waits %v, want %v", waits, tt.waits)
						break
					}
				}
			} else {
				if len(waits) != sent-1 {
					t.Errorf("%d waits between %d attempts", len(waits), sent)
				}
				for i, w := range waits {
					if lo, hi := backoff[i]*3/4, backoff[i]*5/4; w < lo || w > hi {
						t.Errorf("wait %d is %v, want %v ±25%%", i+1, w, backoff[i])
					}
				}
			}

			// The next call: after an outage, it fails at once without a
			// request; otherwise it asks BigQuery again.
			rec.Reset()
			if tt.outage && !strings.Contains(fmt.Sprint(a.Outage()), tt.wantMsg) {
				t.Errorf("Outage() = %v, want the finding %q", a.Outage(), tt.wantMsg)
			}
			err = getTable(a)
			if (a.Outage() != nil) != tt.outage {
				t.Errorf("Outage() = %v", a.Outage())
			}
			if tt.outage {
				if len(rec.Requests()) != 0 || adapters.CodeOf(err) != adapters.Unavailable || !strings.Contains(err.Error(), "BigQuery is not answering") {
					t.Errorf("after an outage: %d requests, %v", len(rec.Requests()), err)
				}
			} else if len(rec.Requests()) == 0 {
				t.Errorf("the next call was not sent: %v", err)
			}
		})
	}
}

// A call that finds BigQuery unresponsive cuts the calls in flight short:
// a command waits for a hung BigQuery one call limit, not one per call.
func TestOutageCutsCallsInFlight(t *testing.T) {
	rec := bqrecorder.Start(t, bqrecorder.Options{Fault: func(*http.Request, int) *bqrecorder.Fault { return bqrecorder.Hang() }})
	a := adapterAt(t, rec.URL, Options{CallTimeout: 2 * time.Second})
	first := make(chan error, 1)
	go func() { first <- getTable(a) }()
	// The second call starts once the first is on the wire; its own limit
	// would end a second after the first's.
	waitFor(t, 5*time.Second, func() bool { return len(rec.Requests()) > 0 })
	time.Sleep(time.Second)
	_, err := a.GetTable(context.Background(), &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: "p", Schema: "ds", Name: "other"}})
	if e := <-first; adapters.CodeOf(e) != adapters.DeadlineExceeded {
		t.Fatalf("first call: %v", e)
	}
	if adapters.CodeOf(err) != adapters.Unavailable || !strings.Contains(err.Error(), "BigQuery is not answering") || !strings.Contains(err.Error(), "tables.get p.ds.other") {
		t.Errorf("second call: %v", err)
	}
	// A query during the outage sends nothing: no job, and no jobs.cancel
	// for a job that was never submitted.
	rec.Reset()
	if _, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT 1"}); adapters.CodeOf(err) != adapters.Unavailable || len(rec.Requests()) != 0 {
		t.Errorf("a query during the outage: %d requests, %v", len(rec.Requests()), err)
	}
}

// The daemon's hold ends: calls try BigQuery again after it.
func TestOutageHoldEnds(t *testing.T) {
	o := newOutage(30 * time.Second)
	now := time.Unix(1000, 0)
	o.now = func() time.Time { return now }
	o.declare(context.DeadlineExceeded)
	if o.current() == nil {
		t.Fatal("no outage right after it was found")
	}
	now = now.Add(29 * time.Second)
	if o.current() == nil {
		t.Fatal("the outage ended before its hold")
	}
	now = now.Add(2 * time.Second)
	if err := o.current(); err != nil {
		t.Fatalf("the outage outlived its hold: %v", err)
	}
	// Without a hold, it lasts (a command's adapter).
	o = newOutage(0)
	o.declare(context.DeadlineExceeded)
	o.now = func() time.Time { return time.Unix(1<<40, 0) }
	if o.current() == nil {
		t.Fatal("a command's outage ended")
	}
}
