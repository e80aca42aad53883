package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/workspace"
)

// poolStatser is implemented by runners on a worker pool (NewPooled):
// dfd/status shows their workers.
type poolStatser interface {
	poolStats() jit.PoolStats
}

// Status implements workspace.StatusReporter: the project's workers (for
// pooled runners) and the state of its metadata source. It does not reach
// BigQuery.
func (op *openProject) Status(ctx context.Context) workspace.ProjectStatus {
	var out workspace.ProjectStatus
	if ps, ok := op.runner.(poolStatser); ok {
		st := ps.poolStats()
		out.Workers = &workspace.WorkerStatus{Ready: st.Idle, Busy: st.Busy, Total: st.Live}
	}
	out.Metadata = op.metadataStatus()
	out.Incremental = op.incr.status()
	return out
}

func (op *openProject) metadataStatus() *workspace.MetadataStatus {
	b := op.b
	root := op.p.Root
	s := b.currentSettings()
	kind := sourceKind(s)
	st := &workspace.MetadataStatus{Source: kind}
	switch kind {
	case SourceNone:
		st.State, st.Detail = workspace.MetadataNone, "no metadata source (dfd.metadata.source)"
	case SourceSnapshot:
		if s.MetadataSnapshot == "" {
			st.State, st.Detail = workspace.MetadataError, `dfd.metadata.source is "snapshot" but dfd.metadata.snapshot is not set`
			return st
		}
		file := resolveSnapshotPath(s.MetadataSnapshot, root)
		e, err := b.meta.entry(file, op.p.Settings.DefaultProject)
		switch {
		case err != nil:
			st.State, st.Detail = workspace.MetadataError, err.Error()
		case e.err != nil:
			st.State, st.Detail = workspace.MetadataError, e.err.Error()
		default:
			st.State = workspace.MetadataOffline
			st.Detail = fmt.Sprintf("snapshot %s, %d tables, saved %s (%s ago)", file, e.tables,
				e.modTime.Format("2006-01-02 15:04:05"), connect.Age(time.Since(e.modTime)))
		}
	case SourceBigQuery:
		c := op.connected()
		if c == nil {
			st.State, st.Detail = workspace.MetadataOffline, "BigQuery: not connected yet"
			return st
		}
		c.status(st)
	default:
		st.State, st.Detail = workspace.MetadataError, fmt.Sprintf("dfd.metadata.source %q is not one of snapshot, bigquery, none", s.MetadataSource)
	}
	return st
}

// status describes the connection: error (it could not be opened, or
// BigQuery refused the credentials), stale (the last fetch found BigQuery
// unreachable, or the cache served stale entries since the last success)
// or online.
func (c *bqConn) status(st *workspace.MetadataStatus) {
	if c.err != nil {
		st.State, st.Detail = workspace.MetadataError, c.err.Error()
		return
	}
	desc := "BigQuery project " + c.b.Credentials.Project
	if c.b.Credentials.Endpoint != "" {
		desc += ", endpoint " + c.b.Credentials.Endpoint
	}
	stats := c.b.Cache.Stats()
	c.mu.Lock()
	lastErr, staleBase := c.lastErr, c.staleBase
	c.mu.Unlock()
	cached := fmt.Sprintf("cache: %d tables, %d datasets", stats.Tables, stats.Lists)
	if !stats.Newest.IsZero() {
		cached += ", newest fetched " + connect.Age(time.Since(stats.Newest)) + " ago"
	}
	switch {
	case lastErr != nil && credentialsRefused(lastErr):
		// What dfd check says too (connect.Describe), and the fix.
		st.State, st.Detail = workspace.MetadataError, connect.Describe(firstError(lastErr), c.b.Credentials)+"; "+credentialsFix(c.b.Credentials)+" ("+cached+")"
	case lastErr != nil && accessDenied(lastErr):
		st.State, st.Detail = workspace.MetadataError, connect.Describe(firstError(lastErr), c.b.Credentials)+"; fix: grant that identity BigQuery metadata access (roles/bigquery.metadataViewer) on the datasets, or set dfd.bigquery.credentials to other credentials ("+cached+")"
	case lastErr != nil && unreachable(lastErr):
		st.State, st.Detail = workspace.MetadataStale, connect.Describe(firstError(lastErr), c.b.Credentials)+"; serving cached metadata ("+cached+")"
	case stats.Stale > staleBase:
		st.State, st.Detail = workspace.MetadataStale, fmt.Sprintf("%s: %d stale answers since the last successful fetch (%s)", desc, stats.Stale-staleBase, cached)
	case lastErr != nil:
		st.State, st.Detail = workspace.MetadataOnline, desc+"; the last fetch failed: "+firstLine(lastErr.Error())+" ("+cached+")"
	default:
		st.State, st.Detail = workspace.MetadataOnline, desc+" ("+cached+")"
	}
}

// noteFetch records the outcome of a fetch from BigQuery (nil: success).
func (c *bqConn) noteFetch(err error) {
	if c == nil || c.b == nil {
		return
	}
	var stale uint64
	if err == nil {
		stale = c.b.Cache.Stats().Stale
	}
	c.mu.Lock()
	c.lastErr = err
	if err == nil {
		c.staleBase = stale
	}
	c.mu.Unlock()
}

// noteCalls records what a preview's database calls say about the
// connection: a call that BigQuery could not answer, or one it answered.
func (c *bqConn) noteCalls(calls []workspace.AdapterCall) {
	if c == nil || c.b == nil {
		return
	}
	answered := false
	for _, call := range calls {
		if call.Error != "" && callerGaveUp(call.Error) {
			// The preview's own deadline or a newer edit ended the call:
			// nothing is known of BigQuery (its job was cancelled).
			continue
		}
		if call.Error != "" && (codePrefix(call.Error, adapters.Unavailable, adapters.DeadlineExceeded, adapters.ResourceExhausted, adapters.PermissionDenied, "UNAUTHENTICATED")) {
			c.noteFetch(callError(call.Error))
			return
		}
		if call.Error == "" && !call.Cached {
			answered = true
		}
	}
	if answered {
		c.noteFetch(nil)
	}
}

// callError is a JiT call's error text as the *adapters.Error it was
// ("CODE: message"), so that the status classifies and words it as dfd
// check does ("refused the credentials: …"), not as INTERNAL.
func callError(msg string) error {
	code, rest, ok := strings.Cut(msg, ": ")
	switch c := adapters.Code(code); {
	case ok && (c == adapters.Unauthenticated || c == adapters.PermissionDenied || c == adapters.Unavailable ||
		c == adapters.DeadlineExceeded || c == adapters.ResourceExhausted):
		return &adapters.Error{Code: c, Message: rest}
	}
	return errors.New(msg)
}

// callerGaveUp: a call's error is the caller's own deadline or
// cancellation, not an answer of BigQuery's (as outage.go's unresponsive
// tells them apart).
func callerGaveUp(msg string) bool {
	// BigQuery's own time limit is a context deadline too, and says "no
	// answer within"; the caller's cancellation says neither.
	return strings.Contains(msg, context.Canceled.Error()) && !strings.Contains(msg, "no answer within")
}

// accessDenied: err (possibly joined) is BigQuery denying the identity
// access (403): the user must act, as for refused credentials.
func accessDenied(err error) bool {
	return anyError(err, func(e error) bool {
		return adapters.CodeOf(e) == adapters.PermissionDenied || codePrefix(e.Error(), adapters.PermissionDenied)
	})
}

func codePrefix(msg string, codes ...adapters.Code) bool {
	for _, code := range codes {
		if strings.HasPrefix(msg, string(code)) {
			return true
		}
	}
	return false
}

// unreachable: err (possibly joined) is BigQuery not answering.
func unreachable(err error) bool {
	return anyError(err, func(e error) bool {
		switch adapters.CodeOf(e) {
		case adapters.Unavailable, adapters.DeadlineExceeded, adapters.ResourceExhausted:
			return true
		}
		return codePrefix(e.Error(), adapters.Unavailable, adapters.DeadlineExceeded, adapters.ResourceExhausted)
	})
}

// credentialsRefused: err (possibly joined) is BigQuery refusing who we are.
func credentialsRefused(err error) bool {
	return anyError(err, func(e error) bool {
		return adapters.CodeOf(e) == adapters.Unauthenticated || strings.Contains(e.Error(), string(adapters.Unauthenticated)) ||
			strings.Contains(e.Error(), "invalid_grant")
	})
}

// credentialsFix says how to mend refused credentials, for the source
// the user has: never "configure a source" to one who configured it.
func credentialsFix(creds *credentials.Resolved) string {
	if creds != nil && creds.Endpoint != "" {
		return "fix: dfd.bigquery.endpoint is reached without authentication, and it asks for some; point it at one that does not, or unset it to use credentials"
	}
	if creds != nil && creds.Source != "" && !strings.HasPrefix(creds.Source, "application default credentials") && !strings.HasSuffix(creds.Source, "(application default credentials)") {
		return "fix: renew or replace the key (" + creds.Source + "), then refresh the metadata"
	}
	return "fix: run `gcloud auth application-default login` (or set dfd.bigquery.credentials to a key file), then refresh the metadata"
}

// firstError is the first of a joined error that says something, for
// a one-line status: the refused credentials or the outage, not a
// dataset that does not exist yet.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var first error
		for _, e := range j.Unwrap() {
			switch {
			case e == nil:
			case adapters.CodeOf(e) == adapters.Unauthenticated, adapters.CodeOf(e) == adapters.Unavailable, adapters.CodeOf(e) == adapters.DeadlineExceeded:
				return firstError(e)
			case first == nil:
				first = e
			}
		}
		if first != nil {
			return firstError(first)
		}
	}
	return err
}

func anyError(err error, f func(error) bool) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if anyError(e, f) {
				return true
			}
		}
		return false
	}
	return err != nil && f(err)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// RefreshMetadata implements workspace.MetadataRefresher. A snapshot is read
// again (Refreshed: its tables). With BigQuery, the cache entries of the
// datasets the project's graph references are fetched again (listings,
// even when not cached yet; without a graph, everything cached of the
// default project), and a connection that failed is opened again
// (credentials may have been fixed).
func (op *openProject) RefreshMetadata(ctx context.Context, graph any) (workspace.RefreshResult, error) {
	b := op.b
	op.sql.forgetWarehouse()
	s := b.currentSettings()
	kind := sourceKind(s)
	res := workspace.RefreshResult{Source: kind}
	switch kind {
	case SourceNone:
		return res, nil
	case SourceSnapshot:
		if s.MetadataSnapshot == "" {
			return res, errors.New(`dfd.metadata.source is "snapshot" but dfd.metadata.snapshot is not set`)
		}
		file := resolveSnapshotPath(s.MetadataSnapshot, op.p.Root)
		b.meta.forget(file)
		e, err := b.meta.entry(file, op.p.Settings.DefaultProject)
		if err != nil {
			return res, err
		}
		if e.err != nil {
			return res, e.err
		}
		res.Refreshed = e.tables
		return res, nil
	case SourceBigQuery:
		c := op.bigquery(s)
		if c.err != nil {
			op.dropBigQuery()
			if c = op.bigquery(s); c.err != nil {
				return res, c.err
			}
		}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		var ds []cache.Dataset
		if h, ok := graph.(*graphHandle); ok && h != nil {
			ds = connect.GraphDatasets(h.graph, c.b.Credentials.DefaultDatabase)
		}
		var errs []error
		if len(ds) == 0 {
			n, err := c.b.Cache.Refresh(ctx, cache.Scope{Database: c.b.Credentials.DefaultDatabase})
			res.Refreshed += n
			if err != nil && !onlyNotFound(err) {
				errs = append(errs, err)
			}
		}
		for _, d := range ds {
			n, err := c.b.Cache.Refresh(ctx, cache.Scope{Database: d.Database, Schema: d.Schema})
			res.Refreshed += n
			if err != nil && !onlyNotFound(err) {
				errs = append(errs, err)
			}
		}
		err := errors.Join(errs...)
		if ctx.Err() == nil {
			c.noteFetch(err)
		}
		return res, err
	default:
		return res, fmt.Errorf("dfd.metadata.source %q is not one of snapshot, bigquery, none", s.MetadataSource)
	}
}
