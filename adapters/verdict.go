package adapters

import (
	"context"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Verdict is the backend's own judgement of a statement, from a dry run:
// what BigQuery would do with it, before it does anything.
type Verdict struct {
	// StatementType is BigQuery's statistics.query.statementType:
	// "SELECT", "INSERT", "SCRIPT", "CREATE_TABLE_AS_SELECT", ….
	StatementType string
	// Routines are the routines the statement references
	// (statistics.query.referencedRoutines: user and remote functions,
	// table functions, procedures), as "project.dataset.routine".
	Routines []string
	// Bytes is what the statement would process
	// (statistics.query.totalBytesProcessed).
	Bytes int64
	// Tables are the tables the statement reads
	// (statistics.query.referencedTables), as "project.dataset.table":
	// what a kept verdict depends on (see package drycost).
	Tables []string
	// Response is the dry run's answer (schema and bytes, no rows): what
	// the JiT code gets when the statement is not run for real.
	Response *dataformpb.ExecuteResponse
}

// Verifier is implemented by adapters whose backend can judge a statement
// without running it (BigQuery, through a free dry run). The preview
// policy asks before anything runs for real. req must be a dry run; the
// returned Verdict belongs to the caller.
type Verifier interface {
	Verify(ctx context.Context, req *dataformpb.ExecuteRequest) (*Verdict, error)
}

// QueryCache is implemented by adapters that keep the answers of queries.
// CachedExecute answers req only from what is kept, never from the
// backend; ok is false when nothing is kept for it.
type QueryCache interface {
	CachedExecute(ctx context.Context, req *dataformpb.ExecuteRequest) (resp *dataformpb.ExecuteResponse, ok bool)
}

// ReadOnlyFunc reports whether a statement only reads, so that its result
// may be kept and shared (see package gsql, which decides it for dfd).
type ReadOnlyFunc func(ctx context.Context, stmt string) bool

// Unbilled is implemented by adapters whose Execute costs nothing and
// changes nothing (offline snapshots): check mode lets their queries run,
// since the check then sees what a preview would.
type Unbilled interface {
	Unbilled()
}
