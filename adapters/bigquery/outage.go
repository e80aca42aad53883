package bigquery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
)

// outage remembers that BigQuery proved unresponsive, so that the calls
// after the first that found it out do not each wait their own timeout:
// a command that makes hundreds of calls would otherwise wait hundreds of
// timeouts. While it holds, calls fail at once with the first finding, and
// the calls in flight when it was found are cancelled with it.
type outage struct {
	hold time.Duration // 0: for the Adapter's life
	now  func() time.Time

	mu   sync.Mutex
	err  error     // the finding; nil: none
	at   time.Time // when it was found
	down context.Context
	fall context.CancelCauseFunc // ends down, with the finding
}

func newOutage(hold time.Duration) *outage {
	o := &outage{hold: hold, now: time.Now}
	o.down, o.fall = context.WithCancelCause(context.Background())
	return o
}

// errOutage is the error of a call that was not made, or was cut short,
// because BigQuery was found unresponsive.
type errOutage struct{ finding error }

func (e errOutage) Error() string {
	// The finding as every other call's error says it (what BigQuery
	// answered, its HTTP status), not the client library's wording.
	said := e.finding.Error()
	var ae *adapters.Error
	if errors.As(classify(e.finding, "first call"), &ae) {
		said = ae.Message
	}
	return fmt.Sprintf("BigQuery is not answering, so it is not asked again for now (%s)", said)
}

// current is the finding that still holds, or nil.
func (o *outage) current() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		return nil
	}
	if o.hold > 0 && o.now().Sub(o.at) >= o.hold {
		o.err = nil // held long enough: the next calls try again
		return nil
	}
	return errOutage{o.err}
}

// watch returns ctx, cancelled (with an errOutage cause) when an outage is
// declared while the call runs.
func (o *outage) watch(ctx context.Context) (context.Context, func()) {
	o.mu.Lock()
	down := o.down
	o.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(down, func() { cancel(context.Cause(down)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// declare records err, a call's finding that BigQuery is unresponsive,
// unless an outage holds already, and cuts the calls in flight short.
func (o *outage) declare(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return
	}
	o.err, o.at = err, o.now()
	o.fall(errOutage{err})
	o.down, o.fall = context.WithCancelCause(context.Background())
}

// unresponsive reports whether err, a call's error after its retries,
// means BigQuery itself cannot be used now: no answer within the call's
// time limit, no connection, answers that cannot be read, or 5xx on every
// attempt. Not: the caller's own deadline or cancellation, and not an
// answer BigQuery gave about the request (4xx: refused credentials, a
// missing table, a rate limit).
func unresponsive(err error) bool {
	var (
		ct callTimeout
		at attemptTimeout
	)
	if errors.As(err, &ct) || errors.As(err, &at) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's: nothing is known of BigQuery
	}
	return adapters.CodeOf(classify(err, "")) == adapters.Unavailable
}
