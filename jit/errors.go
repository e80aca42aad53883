package jit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dfdtools/dfd/engine"
	"github.com/dfdtools/dfd/jit/wirepb"
)

// Code classifies an error a worker answered a request with.
type Code = wirepb.Code

// Error codes of WorkerError.
const (
	CodeScript            = wirepb.Code_SCRIPT_ERROR
	CodeDeadlineExceeded  = wirepb.Code_DEADLINE_EXCEEDED
	CodeCanceled          = wirepb.Code_CANCELED
	CodeResourceExhausted = wirepb.Code_RESOURCE_EXHAUSTED
	CodeInvalidArgument   = wirepb.Code_INVALID_ARGUMENT
	CodeInternal          = wirepb.Code_INTERNAL
)

// ErrMemoryLimit is wrapped by errors of requests that pushed a worker's
// heap over its ceiling.
var ErrMemoryLimit = errors.New("worker memory limit exceeded")

// ErrClosed is returned by requests to a closed pool.
var ErrClosed = errors.New("jit: pool closed")

// WorkerError is a request's failure as the worker reported it. For
// CodeScript, Message and Stack are JavaScript's ("TypeError: x is not a
// function"), ready to show to the user. errors.Is matches
// engine.ErrTimeout for CodeDeadlineExceeded, engine.ErrCanceled for
// CodeCanceled and ErrMemoryLimit for CodeResourceExhausted.
type WorkerError struct {
	Code    Code
	Message string
	Stack   string

	cause error // the caller's context error, when it caused the failure
}

func (e *WorkerError) Error() string {
	switch e.Code {
	case CodeScript:
		return e.Message
	case CodeDeadlineExceeded, CodeCanceled, CodeResourceExhausted:
		return e.Message
	}
	return fmt.Sprintf("worker error (%s): %s", e.Code, e.Message)
}

func (e *WorkerError) Unwrap() []error {
	var errs []error
	switch e.Code {
	case CodeDeadlineExceeded:
		errs = append(errs, engine.ErrTimeout)
	case CodeCanceled:
		errs = append(errs, engine.ErrCanceled)
	case CodeResourceExhausted:
		errs = append(errs, ErrMemoryLimit)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// CrashError is the failure of a request whose worker died, was killed or
// broke the protocol. The pool has replaced the worker.
type CrashError struct {
	PID int
	// Reason says what the host saw: "exited during the request",
	// "protocol error: …", "killed: no answer 2s after the deadline".
	Reason string
	// ExitCode is the worker's exit status, -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended the worker ("killed"), if any.
	Signal string
	// LastStderr holds the worker's last lines of stderr, oldest first.
	LastStderr []string

	cause error
}

func (e *CrashError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jit worker %d %s", e.PID, e.Reason)
	switch {
	case e.Signal != "":
		fmt.Fprintf(&b, " (signal: %s)", e.Signal)
	case e.ExitCode >= 0:
		fmt.Fprintf(&b, " (exit status %d)", e.ExitCode)
	}
	if len(e.LastStderr) > 0 {
		b.WriteString("; last stderr:\n")
		for _, l := range e.LastStderr {
			b.WriteString("  ")
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Unwrap gives the cause when the host killed the worker for a reason the
// caller knows (engine.ErrTimeout, engine.ErrCanceled, ErrClosed).
func (e *CrashError) Unwrap() error { return e.cause }

// errHostProtocol is the worker-side reason to exit when the host breaks
// the protocol.
var errHostProtocol = errors.New("host broke the protocol")
