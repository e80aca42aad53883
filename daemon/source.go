package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/adapters/bigquery"
	"github.com/dfdtools/dfd/adapters/cache"
	"github.com/dfdtools/dfd/adapters/connect"
	"github.com/dfdtools/dfd/adapters/credentials"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/settings"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// Metadata sources (dfd.metadata.source).
const (
	SourceSnapshot = "snapshot"
	SourceBigQuery = "bigquery"
	SourceNone     = "none"
)

// sourceKind is the effective metadata source of settings: the explicit
// dfd.metadata.source, else "snapshot" when a snapshot is set, else none.
func sourceKind(s settings.Settings) string {
	switch k := strings.ToLower(strings.TrimSpace(s.MetadataSource)); k {
	case "":
		if s.MetadataSnapshot != "" {
			return SourceSnapshot
		}
		return SourceNone
	default:
		return k
	}
}

// metaSource is what answers a project's metadata calls.
type metaSource struct {
	kind    string
	adapter adapters.DbAdapter // nil: none usable
	desc    string             // "offline snapshot /p/x.json", "BigQuery (project p, endpoint e)"
	err     error              // why adapter is nil although a source is configured
	bq      *bqConn
}

// bqConn is a project's BigQuery connection (connect.Open), kept while
// the settings and the project's defaults stay the same.
type bqConn struct {
	key bqKey
	b   *connect.Backend
	err error

	mu          sync.Mutex // guards prefetching and the fields below
	prefetching bool
	// lastErr is the failure of the last fetch from BigQuery (prefetch,
	// refresh, or a preview's calls), nil after a success; staleBase is
	// the cache's count of stale answers at the last success (dfd/status).
	lastErr   error
	staleBase uint64

	// cost is the connection's dry-run service (cost.go).
	cost costState
}

type bqKey struct {
	endpoint, creds, defProject, defLocation string
	timeout                                  time.Duration
}

// metadataSource resolves the metadata source of the project.
func (op *openProject) metadataSource() metaSource {
	b := op.b
	s := b.currentSettings()
	kind := sourceKind(s)
	switch kind {
	case SourceNone:
		return metaSource{kind: kind}
	case SourceSnapshot:
		if s.MetadataSnapshot == "" {
			return metaSource{kind: kind, err: errors.New("dfd.metadata.source is \"snapshot\" but dfd.metadata.snapshot is not set")}
		}
		file := resolveSnapshotPath(s.MetadataSnapshot, op.p.Root)
		a, err := b.meta.adapter(file, op.p.Settings.DefaultProject)
		if err != nil {
			return metaSource{kind: kind, err: err}
		}
		return metaSource{kind: kind, adapter: a, desc: "offline snapshot " + file}
	case SourceBigQuery:
		c := op.bigquery(s)
		if c.err != nil {
			return metaSource{kind: kind, err: c.err, bq: c}
		}
		desc := "BigQuery (project " + c.b.Credentials.Project
		if c.b.Credentials.Endpoint != "" {
			desc += ", endpoint " + c.b.Credentials.Endpoint
		}
		return metaSource{kind: kind, adapter: c.b.Cache, desc: desc + ")", bq: c}
	default:
		return metaSource{kind: kind, err: fmt.Errorf("dfd.metadata.source %q is not one of snapshot, bigquery, none", s.MetadataSource)}
	}
}

// bigquery returns the project's BigQuery connection, opening it (again)
// when the settings changed. Failures are kept in the connection. Callers
// of one project share one connect (it holds op.bqMu); other projects do
// not wait for it.
func (op *openProject) bigquery(s settings.Settings) *bqConn {
	b := op.b
	key := bqKey{s.BigQueryEndpoint, s.BigQueryCredentials, op.p.Settings.DefaultProject, op.p.Settings.DefaultLocation, s.BigQueryTimeout}
	op.bqMu.Lock()
	defer op.bqMu.Unlock()
	if c := op.bq; c != nil && c.key == key {
		return c
	}
	if old := op.bq; old != nil && old.b != nil {
		old.closeCost()
		_ = old.b.Close()
	}
	ctx, cancel := context.WithTimeout(b.bgCtx, 30*time.Second)
	defer cancel()
	c := &bqConn{key: key}
	cb, err := connect.Open(ctx, connect.Config{
		Config: credentials.Config{
			Endpoint:        s.BigQueryEndpoint,
			CredentialsFile: s.BigQueryCredentials,
			ProjectDir:      op.p.Root,
			DefaultProject:  op.p.Settings.DefaultProject,
			DefaultLocation: op.p.Settings.DefaultLocation,
			Getenv:          b.opts.Getenv,
		},
		// The daemon outlives an outage: once BigQuery was found
		// unresponsive, calls fail at once (the cache serves what it has)
		// for as long as the cache waits before refreshing a failed entry
		// again, then BigQuery is asked again.
		// dfd.bigquery.timeoutMs bounds each call ($DFD_BIGQUERY_TIMEOUT
		// when unset, see connect).
		BigQuery: bigquery.Options{OutageHold: 30 * time.Second, CallTimeout: s.BigQueryTimeout},
		Log: func(format string, args ...any) {
			b.log.Warn("BigQuery metadata cache: "+fmt.Sprintf(format, args...), "project", op.p.Root)
		},
	})
	if err != nil {
		c.err = fmt.Errorf("cannot connect to BigQuery for %s: %w", filepath.Base(op.p.Root), err)
		b.log.Warn("BigQuery metadata source", "project", op.p.Root, "error", err)
	} else {
		c.b = cb
		b.log.Info("BigQuery metadata source", "project", op.p.Root, "billing project", cb.Credentials.Project,
			"endpoint", cb.Credentials.Endpoint, "cache", cb.Cache.Path())
	}
	op.bq = c
	return c
}

// dropBigQuery closes the project's BigQuery connection.
func (op *openProject) dropBigQuery() {
	op.bqMu.Lock()
	c := op.bq
	op.bq = nil
	op.bqMu.Unlock()
	if c != nil && c.b != nil {
		c.closeCost()
		_ = c.b.Close()
	}
}

// connected is the project's BigQuery connection if one was opened (nil
// otherwise); it never connects.
func (op *openProject) connected() *bqConn {
	if !op.bqMu.TryLock() {
		return nil // connecting now: not connected yet
	}
	defer op.bqMu.Unlock()
	return op.bq
}

// prefetch warms the BigQuery cache with the datasets graph references,
// in a goroutine the Backend owns (at most one per project at a time).
func (b *Backend) prefetch(c *bqConn, root string, g *dataformpb.CompiledGraph) {
	if c == nil || c.b == nil || g == nil {
		return
	}
	ds := connect.GraphDatasets(g, c.b.Credentials.DefaultDatabase)
	if len(ds) == 0 {
		return
	}
	c.mu.Lock()
	if c.prefetching {
		c.mu.Unlock()
		return
	}
	c.prefetching = true
	c.mu.Unlock()
	b.bgMu.Lock()
	if b.bgCtx.Err() != nil {
		b.bgMu.Unlock()
		return
	}
	b.bg.Add(1)
	b.bgMu.Unlock()
	go func() {
		defer b.bg.Done()
		defer func() { c.mu.Lock(); c.prefetching = false; c.mu.Unlock() }()
		ctx, cancel := context.WithTimeout(b.bgCtx, 2*time.Minute)
		defer cancel()
		start := time.Now()
		if err := c.b.Cache.Prefetch(ctx, ds); err != nil && !onlyNotFound(err) {
			if b.bgCtx.Err() == nil {
				c.noteFetch(err)
				b.log.Warn("prefetching BigQuery metadata failed; previews and hovers use what is cached", "project", root, "error", err)
			}
			return
		}
		c.noteFetch(nil)
		b.log.Debug("prefetched BigQuery metadata", "project", root, "datasets", datasetNames(ds), "elapsed", time.Since(start))
	}()
}

// onlyNotFound: every error of a (joined) prefetch error is NOT_FOUND —
// datasets the project will create but that do not exist yet.
func onlyNotFound(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyNotFound(e) {
				return false
			}
		}
		return true
	}
	return adapters.CodeOf(err) == adapters.NotFound
}

func datasetNames(ds []cache.Dataset) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Database+"."+d.Schema)
	}
	return strings.Join(out, ",")
}

// connectionTrouble is a preview warning when calls failed because the
// backend could not be reached or refused the credentials.
func connectionTrouble(calls []workspace.AdapterCall) string {
	for _, c := range calls {
		for _, code := range []adapters.Code{adapters.Unavailable, adapters.DeadlineExceeded, "UNAUTHENTICATED"} {
			if strings.HasPrefix(c.Error, string(code)) {
				return "BigQuery could not answer a database call (" + c.Error + "): the preview is based on cached metadata only, or none."
			}
		}
	}
	return ""
}

// missingTables is a Warning on each ref to a declared table the metadata
// source says does not exist. It spends at most budget on metadata calls
// (the BigQuery source answers from its cache once prefetched).
func missingTables(ctx context.Context, root string, g *dataformpb.CompiledGraph, ms metaSource, read func(string) ([]byte, bool), budget time.Duration) []workspace.Diagnostic {
	if ms.adapter == nil || len(g.GetDeclarations()) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	missing := map[string]*dataformpb.Target{}
	for _, d := range g.GetDeclarations() {
		t := d.GetTarget()
		if t == nil {
			continue
		}
		_, err := ms.adapter.GetTable(ctx, &dataformpb.GetTableRequest{Target: t})
		if adapters.CodeOf(err) == adapters.NotFound {
			missing[adapters.TargetString(t)] = t
		}
	}
	if len(missing) == 0 {
		return nil
	}
	src := "from " + ms.desc
	if ms.kind == SourceSnapshot {
		src = ms.desc
	}
	type fileDep struct {
		file string
		deps []*dataformpb.Target
	}
	var users []fileDep
	for _, t := range g.GetTables() {
		users = append(users, fileDep{t.GetFileName(), t.GetDependencyTargets()})
	}
	for _, o := range g.GetOperations() {
		users = append(users, fileDep{o.GetFileName(), o.GetDependencyTargets()})
	}
	for _, a := range g.GetAssertions() {
		users = append(users, fileDep{a.GetFileName(), a.GetDependencyTargets()})
	}
	var out []workspace.Diagnostic
	seen := map[string]bool{}
	for _, u := range users {
		if u.file == "" {
			continue
		}
		for _, dep := range u.deps {
			mt := missing[adapters.TargetString(dep)]
			if mt == nil {
				continue
			}
			msg := fmt.Sprintf("table %s does not exist in BigQuery (per metadata %s)", adapters.TargetString(mt), src)
			text, ok := read(u.file)
			placed := false
			if ok {
				m := source.NewMapper(text)
				for _, r := range source.FindRefs(text) {
					if !target(mt).Matches(r.Database.Value, r.Schema.Value, r.Name.Value) {
						continue
					}
					k := u.file + fmt.Sprint(r.Span)
					if seen[k] {
						continue
					}
					seen[k] = true
					placed = true
					sl, el := m.LineOf(r.Span.Start), m.LineOf(r.Span.End)
					out = append(out, workspace.Diagnostic{
						Path: filepath.Join(root, filepath.FromSlash(u.file)),
						Line: sl, Col: r.Span.Start - m.OffsetBytes(sl, 0),
						EndLine: el, EndCol: r.Span.End - m.OffsetBytes(el, 0),
						Severity: workspace.SeverityWarning, Message: msg, Source: "dfd", Code: "missing-table",
					})
				}
			}
			if !placed && !seen[u.file+msg] {
				seen[u.file+msg] = true
				out = append(out, workspace.Diagnostic{
					Path: filepath.Join(root, filepath.FromSlash(u.file)), EndLine: -1,
					Severity: workspace.SeverityWarning, Message: msg, Source: "dfd", Code: "missing-table",
				})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out
}
