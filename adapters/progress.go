package adapters

import (
	"context"
	"sync"
)

// ListProgress is how far a ListTables has got: the adapter lists the
// tables of a dataset (pages of names), then fetches each one's metadata.
// Long listings (thousands of tables) take minutes; `dfd metadata refresh`
// shows this on a terminal.
type ListProgress struct {
	// Database and Schema name the dataset being listed.
	Database, Schema string
	// Listed counts the tables listed so far by this ListTables, Fetched
	// those whose metadata it has fetched.
	Listed, Fetched int
}

type progressKey struct{}

// progressSink serialises the reports of one ListTables's goroutines.
type progressSink struct {
	mu sync.Mutex
	fn func(ListProgress)
}

// WithListProgress returns ctx with fn as the receiver of the ListProgress
// reports of the ListTables calls made with it (and with contexts derived
// from it, which keep its values even when detached from its
// cancellation, as the metadata cache's fetches are). fn is called from
// one goroutine at a time.
func WithListProgress(ctx context.Context, fn func(ListProgress)) context.Context {
	return context.WithValue(ctx, progressKey{}, &progressSink{fn: fn})
}

// ReportListProgress tells ctx's receiver, if any, how far a ListTables
// has got.
func ReportListProgress(ctx context.Context, p ListProgress) {
	s, _ := ctx.Value(progressKey{}).(*progressSink)
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fn(p)
}
