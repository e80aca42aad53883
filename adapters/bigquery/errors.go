package bigquery

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	bq "google.golang.org/api/bigquery/v2"
	"google.golang.org/api/googleapi"

	"github.com/dfdtools/dfd/adapters"
)

// classify turns an error from the BigQuery API into an *adapters.Error
// whose message starts with what dfd was doing and keeps BigQuery's own
// message.
//
// BigQuery's error reason is more precise than the HTTP status, so it is
// looked at first: BigQuery answers 403 for rate limits and quotas
// (rateLimitExceeded, quotaExceeded) and 400 for a byte cap
// (bytesBilledLimitExceeded), and those are RESOURCE_EXHAUSTED, not
// PERMISSION_DENIED or INVALID_ARGUMENT.
func classify(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	var ae *adapters.Error
	if errors.As(err, &ae) {
		return adapters.AsError(fmt.Errorf("%s: %w", what, err))
	}
	switch {
	case errors.Is(err, context.Canceled):
		return &adapters.Error{Code: adapters.Canceled, Message: what + ": " + err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return &adapters.Error{Code: adapters.DeadlineExceeded, Message: what + ": " + err.Error()}
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		reason, msg := "", gerr.Message
		if len(gerr.Errors) > 0 {
			reason = gerr.Errors[0].Reason
			if msg == "" {
				msg = gerr.Errors[0].Message
			}
		}
		if msg == "" {
			msg = strings.TrimSpace(gerr.Body)
		}
		if msg == "" {
			msg = http.StatusText(gerr.Code)
		}
		return &adapters.Error{Code: codeOf(gerr.Code, reason), Message: fmt.Sprintf("%s: %s", what, msg)}
	}
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		return &adapters.Error{Code: adapters.DeadlineExceeded, Message: fmt.Sprintf("%s: %v", what, err)}
	}
	// Anything else below HTTP (connection refused, reset, DNS, TLS, a
	// response that is not JSON) means BigQuery could not be reached.
	return &adapters.Error{Code: adapters.Unavailable, Message: fmt.Sprintf("%s: %v", what, err)}
}

// jobError classifies a failed job's error result.
func jobError(e *bq.ErrorProto, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	msg := e.Message
	if msg == "" {
		msg = e.Reason
	}
	return &adapters.Error{Code: codeOf(0, e.Reason), Message: what + ": " + msg}
}

// codeOf maps an HTTP status and a BigQuery error reason
// (https://cloud.google.com/bigquery/docs/error-messages) to a code.
func codeOf(status int, reason string) adapters.Code {
	switch reason {
	case "notFound":
		return adapters.NotFound
	case "accessDenied", "billingNotEnabled":
		return adapters.PermissionDenied
	case "rateLimitExceeded", "quotaExceeded", "bytesBilledLimitExceeded", "resourcesExceeded",
		"responseTooLarge", "billingTierLimitExceeded":
		return adapters.ResourceExhausted
	case "invalid", "invalidQuery":
		return adapters.InvalidArgument
	case "duplicate", "resourceInUse":
		return adapters.FailedPrecondition
	case "backendError", "internalError", "jobBackendError":
		return adapters.Unavailable
	case "timeout":
		return adapters.DeadlineExceeded
	case "stopped":
		return adapters.Canceled
	}
	switch {
	case status == http.StatusNotFound:
		return adapters.NotFound
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return adapters.PermissionDenied
	case status == http.StatusConflict, status == http.StatusPreconditionFailed:
		return adapters.FailedPrecondition
	case status == http.StatusTooManyRequests:
		return adapters.ResourceExhausted
	case status == http.StatusRequestTimeout, status == http.StatusGatewayTimeout:
		return adapters.DeadlineExceeded
	case status >= 500:
		return adapters.Unavailable
	case status >= 400:
		return adapters.InvalidArgument
	}
	return adapters.Internal
}

// Retry is the backoff policy for idempotent reads (GetTable, ListTables,
// polling a job's results, and submitting read-only queries under a fixed
// job id). Writes are never retried: a DeleteTable or a DML statement whose
// answer was lost may have run.
type Retry struct {
	// Attempts is the total number of tries (default 4; 1 disables retries).
	Attempts int
	// Initial is the first backoff (default 200ms); each next one doubles,
	// up to Max (default 3s), with ±25% jitter. A Retry-After header from
	// BigQuery is honoured up to Max.
	Initial, Max time.Duration
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 4
	}
	if r.Initial <= 0 {
		r.Initial = 200 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 3 * time.Second
	}
	if r.Max < r.Initial {
		r.Max = r.Initial
	}
	return r
}

// retryable reports whether a read that failed with err may succeed when
// tried again: rate limits (not quotas: those last for the day), 5xx,
// timeouts of one attempt, and connections that did not go through.
func retryable(err error) bool {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		reason := ""
		if len(gerr.Errors) > 0 {
			reason = gerr.Errors[0].Reason
		}
		switch reason {
		case "rateLimitExceeded", "backendError", "internalError":
			return true
		case "quotaExceeded":
			return false
		}
		return gerr.Code == http.StatusTooManyRequests || gerr.Code == http.StatusRequestTimeout || gerr.Code >= 500
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	// Per-attempt deadlines (the caller's own deadline is checked before
	// retrying) and transport errors.
	return true
}

// do runs call up to r.Attempts times while it fails with retryable errors,
// sleeping between attempts; each attempt gets its own deadline (attempt)
// so one hung connection does not eat the caller's whole budget.
func (r Retry) do(ctx context.Context, attempt time.Duration, call func(ctx context.Context) error) error {
	r = r.withDefaults()
	backoff := r.Initial
	for i := 1; ; i++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if attempt > 0 {
			actx, cancel = context.WithTimeout(ctx, attempt)
		}
		err := call(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return lastError(ctx, err)
		}
		if i >= r.Attempts || !retryable(err) {
			return err
		}
		wait := jitter(backoff)
		if ra := retryAfter(err); ra > 0 {
			wait = min(ra, r.Max)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return lastError(ctx, err)
		case <-t.C:
		}
		backoff = min(2*backoff, r.Max)
	}
}

// lastError is what a retry loop ended by the caller's context returns: the
// context's error (so it classifies as CANCELLED or DEADLINE_EXCEEDED) and,
// when it says more, the last attempt's error.
func lastError(ctx context.Context, err error) error {
	if errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
}

func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

// retryAfter reads a Retry-After header (seconds) from an API error.
func retryAfter(err error) time.Duration {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Header == nil {
		return 0
	}
	if s, err := strconv.Atoi(gerr.Header.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 0
}
