package adapters

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestErrors(t *testing.T) {
	notFound := Errorf(NotFound, "table %s not found", "p.d.t")
	tests := []struct {
		name     string
		err      error
		wantCode Code
		wantText string
	}{
		{"nil", nil, "", ""},
		{"adapter error", notFound, NotFound, "NOT_FOUND: table p.d.t not found"},
		{"literal", &Error{Code: Unavailable, Message: "bigquery down"}, Unavailable, "UNAVAILABLE: bigquery down"},
		{"no message", &Error{Code: Unimplemented}, Unimplemented, "UNIMPLEMENTED"},
		{"no code", &Error{Message: "oops"}, "", "INTERNAL: oops"},
		{"wrapped with context", fmt.Errorf("cache refresh: %w", notFound), NotFound, "NOT_FOUND: cache refresh: table p.d.t not found"},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), DeadlineExceeded, "DEADLINE_EXCEEDED: query: context deadline exceeded"},
		{"canceled", context.Canceled, Canceled, "CANCELLED: context canceled"},
		{"plain error", errors.New("boom"), Internal, "INTERNAL: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CodeOf(tt.err); got != tt.wantCode {
				t.Errorf("CodeOf = %q, want %q", got, tt.wantCode)
			}
			ae := AsError(tt.err)
			if tt.err == nil {
				if ae != nil {
					t.Errorf("AsError(nil) = %v", ae)
				}
				return
			}
			if ae.Error() != tt.wantText {
				t.Errorf("AsError(...).Error() = %q, want %q", ae.Error(), tt.wantText)
			}
		})
	}
}

func TestErrorfWraps(t *testing.T) {
	err := Errorf(Unavailable, "reading cache: %w", fs.ErrNotExist)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("Errorf did not wrap its %w operand")
	}
	if err.Error() != "UNAVAILABLE: reading cache: file does not exist" {
		t.Errorf("text = %q", err)
	}
	if !errors.Is(AsError(fmt.Errorf("outer: %w", err)), fs.ErrNotExist) {
		t.Error("AsError lost the chain")
	}
}
