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

	"golang.org/x/oauth2"
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
		if gerr.Code != http.StatusNotFound && gerr.Code != 0 {
			// What BigQuery answered, for whoever must fix it (401: the
			// credentials, 403: a grant, 5xx: wait); a missing table's
			// message stays BigQuery's own, which JiT code may match.
			msg += fmt.Sprintf(" (HTTP %d)", gerr.Code)
		}
		var n noted
		if errors.As(err, &n) {
			msg += " (" + n.note + ")"
		}
		return &adapters.Error{Code: codeOf(gerr.Code, reason), Message: fmt.Sprintf("%s: %s", what, msg)}
	}
	// The token source could not get a token: the credentials were
	// refused (expired, revoked), which no retry mends.
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return &adapters.Error{Code: adapters.Unauthenticated, Message: fmt.Sprintf("%s: %v", what, err)}
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
	case status == http.StatusUnauthorized:
		return adapters.Unauthenticated
	case status == http.StatusForbidden:
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

// Retry is the backoff policy of BigQuery calls, and the one place that
// owns it: the REST client (google.golang.org/api, gensupport.SendRequest)
// does not retry on its own, and the credentials' transport neither.
// Idempotent reads (GetTable, ListTables' pages, polling a job's results,
// jobs.cancel, and submitting a query under a fixed job id) are retried;
// writes are not: a DeleteTable whose answer was lost may have run.
//
// A call makes at most Attempts attempts within its budget
// (Options.CallTimeout), each bounded by Options.AttemptTimeout; between
// two it waits the backoff (Initial, doubling up to Max, ±25% jitter) or
// what BigQuery's Retry-After asks (429, 503), whichever is longer. A
// wait that would not end before the budget does is not waited: the call
// fails at once with BigQuery's answer.
type Retry struct {
	// Attempts is the total number of tries (default 4; 1 disables retries).
	Attempts int
	// Initial is the first backoff (default 200ms); each next one doubles,
	// up to Max (default 3s), with ±25% jitter.
	Initial, Max time.Duration
	// Sleep waits d unless ctx ends first (then it returns ctx's error);
	// default a timer. Tests record the spacing of attempts with it.
	Sleep func(ctx context.Context, d time.Duration) error
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
	if r.Sleep == nil {
		r.Sleep = sleep
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
	var rerr *oauth2.RetrieveError
	if errors.Is(err, context.Canceled) || errors.As(err, &rerr) {
		return false
	}
	// Per-attempt deadlines (the caller's own deadline is checked before
	// retrying) and transport errors.
	return true
}

// callTimeout is the cause of a call's context when its budget ran out.
type callTimeout struct {
	budget   time.Duration
	attempts *int
}

func (c callTimeout) Error() string {
	return fmt.Sprintf("no answer within %s (%d attempt(s); the limit is dfd.bigquery.timeoutMs, $DFD_BIGQUERY_TIMEOUT, --bigquery-timeout)", c.budget, *c.attempts)
}

// noted is an error with a remark of dfd's own, which classify adds to
// BigQuery's message.
type noted struct {
	error
	note string
}

func (n noted) Unwrap() error { return n.error }

// attemptTimeout marks the error of an attempt that got no answer within
// Options.AttemptTimeout.
type attemptTimeout time.Duration

func (a attemptTimeout) Error() string {
	return fmt.Sprintf("no answer within %s", time.Duration(a))
}

// do runs call up to r.Attempts times while it fails with retryable
// errors, within budget (0: the caller's context alone bounds it), each
// attempt within attempt (0: no bound of its own), so one hung connection
// does not eat the whole budget.
func (r Retry) do(ctx context.Context, budget, attempt time.Duration, call func(ctx context.Context) error) error {
	r = r.withDefaults()
	attempts := 0
	if budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, budget, callTimeout{budget, &attempts})
		defer cancel()
	}
	backoff := r.Initial
	for {
		attempts++
		actx, cancel := ctx, context.CancelFunc(func() {})
		if attempt > 0 {
			actx, cancel = context.WithTimeout(ctx, attempt)
		}
		err := call(actx)
		if err != nil && actx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w (%w)", err, attemptTimeout(attempt))
		}
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return lastError(ctx, err)
		}
		if attempts >= r.Attempts || !retryable(err) {
			return err
		}
		wait := jitter(backoff)
		ra := retryAfter(err)
		wait = max(wait, ra)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting would outlast the call: the last answer is the
			// call's.
			var at attemptTimeout
			switch {
			case ra > 0:
				return noted{err, fmt.Sprintf("BigQuery asked to retry after %s, past the call's time limit", ra)}
			case errors.As(err, &at) && budget > 0:
				return fmt.Errorf("%w; %w", err, callTimeout{budget, &attempts})
			}
			return err
		}
		if serr := r.Sleep(ctx, wait); serr != nil {
			return lastError(ctx, err)
		}
		backoff = min(2*backoff, r.Max)
	}
}

// lastError is what a retry loop ended by the caller's context returns: the
// context's error (so it classifies as CANCELLED or DEADLINE_EXCEEDED) and,
// when it says more, the last attempt's error.
func lastError(ctx context.Context, err error) error {
	why := ctx.Err()
	if c := context.Cause(ctx); c != nil && c != why {
		// The call's own budget (callTimeout), or an outage: say which.
		why = fmt.Errorf("%w: %w", why, c)
	}
	if errors.Is(err, ctx.Err()) {
		if why == ctx.Err() {
			return err
		}
		return why
	}
	return fmt.Errorf("%w (last error: %v)", why, err)
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
