package adapters

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Code classifies an adapter error. The names are gRPC's canonical codes so
// they read the same in BigQuery's errors, dfd's logs and the JiT code.
type Code string

// The codes adapters use. The empty Code means "no error".
const (
	NotFound           Code = "NOT_FOUND"           // table (or snapshot entry) does not exist
	PermissionDenied   Code = "PERMISSION_DENIED"   // not allowed, e.g. DeleteTable in a preview
	Unauthenticated    Code = "UNAUTHENTICATED"     // the backend refused the credentials (expired, revoked, none)
	InvalidArgument    Code = "INVALID_ARGUMENT"    // malformed request
	FailedPrecondition Code = "FAILED_PRECONDITION" // the backend cannot answer this request in its state (e.g. statement not in snapshot)
	Unavailable        Code = "UNAVAILABLE"         // backend unreachable; retrying may help
	DeadlineExceeded   Code = "DEADLINE_EXCEEDED"   // the request's deadline passed
	ResourceExhausted  Code = "RESOURCE_EXHAUSTED"  // quota, byte cap or rate limit
	Unimplemented      Code = "UNIMPLEMENTED"       // unknown method or unsupported by the backend
	Internal           Code = "INTERNAL"            // a bug, a panic, or an unclassified error
	Canceled           Code = "CANCELLED"           // the request was cancelled (editor moved on, worker shut down)
)

// Error is an adapter error with a code. Its text, "CODE: message", is what
// the JiT code sees as the rejected promise's message.
type Error struct {
	Code    Code
	Message string

	cause error // what Errorf's %w wrapped, for errors.Is/As
}

func (e *Error) Error() string {
	code := e.Code
	if code == "" {
		code = Internal
	}
	if e.Message == "" {
		return string(code)
	}
	return string(code) + ": " + e.Message
}

// Unwrap returns the error wrapped with %w in Errorf, if any.
func (e *Error) Unwrap() error { return e.cause }

// Errorf returns an *Error with the given code and a fmt-formatted message.
// A %w verb wraps its operand as with fmt.Errorf.
func Errorf(code Code, format string, args ...any) error {
	wrapped := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: wrapped.Error(), cause: errors.Unwrap(wrapped)}
}

// AsError returns err as an *Error (nil for nil):
//   - an *Error is returned as is;
//   - an *Error wrapped by fmt.Errorf("context: %w", …) keeps its code, and the
//     message keeps the added context ("NOT_FOUND: context: table … not found");
//   - context.DeadlineExceeded and context.Canceled become DEADLINE_EXCEEDED
//     and CANCELLED;
//   - anything else is INTERNAL.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var ae *Error
	if errors.As(err, &ae) {
		if ae == err {
			return ae
		}
		// Drop the inner "CODE: " prefix so the code is not printed twice.
		msg := strings.Replace(err.Error(), ae.Error(), ae.Message, 1)
		return &Error{Code: ae.Code, Message: msg, cause: err}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: DeadlineExceeded, Message: err.Error(), cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: Canceled, Message: err.Error(), cause: err}
	}
	return &Error{Code: Internal, Message: err.Error(), cause: err}
}

// CodeOf returns the code of err as AsError classifies it; "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return AsError(err).Code
}
