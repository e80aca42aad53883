package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/lsp"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Default deadlines. A compile in the editor gets the CLI's minute (a big
// project on a slow machine needs it); a JiT preview much less, since its
// database calls are answered from a snapshot.
const (
	DefaultCompileTimeout = compile.DefaultTimeout
	DefaultJitTimeout     = 20 * time.Second
)

// BackendOptions configure a Backend.
type BackendOptions struct {
	Log *slog.Logger
	// NewRunner makes each project's Runner (default NewInProcess). The
	// jit package's worker pool plugs in here.
	NewRunner RunnerFactory
	// Resolver finds and installs cores (default: dfd's cache).
	Resolver *project.CoreResolver
	// CompileTimeout and JitTimeout bound one compile and one JiT run.
	CompileTimeout, JitTimeout time.Duration
	// Getenv reads the environment for BigQuery credentials (default
	// os.Getenv): DFD_BIGQUERY_ENDPOINT, GOOGLE_APPLICATION_CREDENTIALS, ….
	Getenv func(string) string
}

// Backend implements lsp.Backend on dfd's compiler.
type Backend struct {
	log      *slog.Logger
	opts     BackendOptions
	resolver *project.CoreResolver
	meta     metadata

	mu       sync.Mutex // guards projects and settings
	projects map[string]*openProject
	settings lsp.Settings

	bqMu sync.Mutex // guards bq
	bq   map[string]*bqConn

	// jitMem remembers the metadata reads of each action's last JiT
	// preview (prefetch.go).
	jitMem jitMemory

	// Background work (BigQuery prefetches) runs under bgCtx and is
	// waited for by Close.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgMu     sync.Mutex // orders bg.Add with Close
	bg       sync.WaitGroup
}

// openProject is a project ready to compile.
type openProject struct {
	p      *project.Project
	core   *project.Core
	runner Runner
}

// NewBackend makes a Backend.
func NewBackend(opts BackendOptions) *Backend {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.NewRunner == nil {
		opts.NewRunner = NewInProcess
	}
	if opts.CompileTimeout <= 0 {
		opts.CompileTimeout = DefaultCompileTimeout
	}
	if opts.JitTimeout <= 0 {
		opts.JitTimeout = DefaultJitTimeout
	}
	r := opts.Resolver
	if r == nil {
		r = &project.CoreResolver{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &Backend{log: opts.Log, opts: opts, resolver: r, projects: map[string]*openProject{}, bgCtx: ctx, bgCancel: cancel}
	// GoogleSQL (≈150 ms to start) decides what every preview may run;
	// start it now, so that the first preview does not wait for it.
	b.bg.Go(func() {
		if err := gsql.Init(); err != nil {
			b.log.Warn("GoogleSQL did not start: every statement of a preview runs as a dry run", "error", err)
		}
	})
	return b
}

// Close closes every project's runner.
func (b *Backend) Close() error {
	b.mu.Lock()
	ps := b.projects
	b.projects = map[string]*openProject{}
	b.mu.Unlock()
	var errs []error
	for _, op := range ps {
		errs = append(errs, op.runner.Close())
	}
	b.bgMu.Lock()
	b.bgCancel()
	b.bgMu.Unlock()
	b.bg.Wait()
	b.bqMu.Lock()
	conns := b.bq
	b.bq = nil
	b.bqMu.Unlock()
	for _, c := range conns {
		if c.b != nil {
			errs = append(errs, c.b.Close())
		}
	}
	return errors.Join(errs...)
}

// OpenProject implements lsp.Backend.
func (b *Backend) OpenProject(ctx context.Context, root string, progress func(string)) (lsp.ProjectInfo, error) {
	p, err := project.Open(root)
	if err != nil {
		return lsp.ProjectInfo{}, err
	}
	// A resolver per call, so that its progress goes to this project.
	r := *b.resolver
	r.Log = func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	core, err := r.Resolve(ctx, p)
	if err != nil {
		return lsp.ProjectInfo{}, err
	}
	runner, err := b.opts.NewRunner(ctx, p, core, b.log.With("project", p.Root))
	if err != nil {
		return lsp.ProjectInfo{}, fmt.Errorf("starting @dataform/core %s for %s: %w", core.Version, p.Root, err)
	}
	b.mu.Lock()
	old := b.projects[root]
	nop := &openProject{p: p, core: core, runner: runner}
	b.projects[root] = nop
	b.mu.Unlock()
	if old != nil {
		_ = old.runner.Close()
	}
	info := lsp.ProjectInfo{CoreVersion: core.Version, CoreInstalled: core.Installed}
	if ms := b.metadataSource(nop); ms.err != nil {
		info.Warnings = append(info.Warnings, "metadata source "+ms.kind+": "+ms.err.Error())
	}
	return info, nil
}

// CloseProject implements lsp.Backend.
func (b *Backend) CloseProject(root string) {
	b.mu.Lock()
	op := b.projects[root]
	delete(b.projects, root)
	b.mu.Unlock()
	if op != nil {
		_ = op.runner.Close()
	}
	b.dropBigQuery(root)
	b.jitMem.forgetProject(root)
}

func (b *Backend) project(root string) (*openProject, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	op := b.projects[root]
	if op == nil {
		return nil, fmt.Errorf("project %s is not open", root)
	}
	return op, nil
}

// Configure implements lsp.Backend.
func (b *Backend) Configure(s lsp.Settings) error {
	b.mu.Lock()
	uncapped := s.PreviewUnlimitedBytesBilled && !b.settings.PreviewUnlimitedBytesBilled
	b.settings = s
	b.mu.Unlock()
	var loud error
	if uncapped {
		// Loud on purpose: Configure's error becomes a message the user
		// sees.
		b.log.Warn(uncappedWarning)
		loud = errors.New(uncappedWarning)
	}
	if p := s.MetadataSnapshot; p != "" && filepath.IsAbs(p) {
		if _, err := os.Stat(p); err != nil {
			return errors.Join(loud, fmt.Errorf("dfd.metadata.snapshot: %w", err))
		}
	}
	switch k := sourceKind(s); k {
	case SourceNone, SourceSnapshot:
	case SourceBigQuery:
		// Connect every open project now, so that a credentials problem
		// is shown at once (Configure's error becomes a message).
		b.mu.Lock()
		var ops []*openProject
		for _, op := range b.projects {
			ops = append(ops, op)
		}
		b.mu.Unlock()
		var errs []error
		for _, op := range ops {
			if ms := b.metadataSource(op); ms.err != nil {
				errs = append(errs, ms.err)
			}
		}
		return errors.Join(append([]error{loud}, errs...)...)
	default:
		return errors.Join(loud, fmt.Errorf("dfd.metadata.source %q is not one of snapshot, bigquery, none", s.MetadataSource))
	}
	return loud
}

func (b *Backend) currentSettings() lsp.Settings {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.settings
}

// graphHandle is CompileResult.Graph: what a JiT preview needs of the
// compile, opaque to the LSP side.
type graphHandle struct {
	graph    *dataformpb.CompiledGraph
	wire     []byte
	overlays map[string][]byte
}

// Compile implements lsp.Backend.
func (b *Backend) Compile(ctx context.Context, req lsp.CompileRequest) (*lsp.CompileResult, error) {
	op, err := b.project(req.Root)
	if err != nil {
		return nil, err
	}
	paths, err := op.p.FilePaths()
	if err != nil {
		return nil, err
	}
	paths = withOverlayPaths(paths, req.Overlays)
	start := time.Now()
	res, err := op.runner.Compile(ctx, CompileJob{
		Overlays:  req.Overlays,
		FilePaths: paths,
		Timeout:   b.opts.CompileTimeout,
		Log: func(level, msg string) {
			b.log.Debug("console."+level+": "+msg, "project", req.Root)
		},
	})
	if err != nil {
		return nil, err
	}
	read := func(rel string) ([]byte, bool) {
		rel = path.Clean(rel)
		if t, ok := req.Overlays[rel]; ok {
			return t, true
		}
		if rel == "" || rel == "." || strings.HasPrefix(rel, "../") {
			return nil, false
		}
		t, err := os.ReadFile(filepath.Join(req.Root, filepath.FromSlash(rel)))
		return t, err == nil
	}
	diags := mapErrors(req.Root, op.p.SettingsFile, res.Errors(), read)
	if ms := b.metadataSource(op); ms.adapter != nil {
		budget := time.Second
		if ms.kind == SourceBigQuery {
			budget = 3 * time.Second
		}
		diags = append(diags, missingTables(ctx, req.Root, res.Graph, ms, read, budget)...)
		if len(res.Errors()) == 0 {
			b.prefetch(ms.bq, req.Root, res.Graph)
			diags = append(diags, b.jitDiagnostics(ctx, op, ms, req.Root, res.Graph, res.GraphWire, req.Overlays)...)
		}
	}
	return &lsp.CompileResult{
		CoreVersion: op.core.Version,
		Actions:     actionsOf(res.Graph),
		Diagnostics: diags,
		Graph:       &graphHandle{graph: res.Graph, wire: res.GraphWire, overlays: req.Overlays},
		Elapsed:     time.Since(start),
	}, nil
}

// withOverlayPaths adds to the CLI's file list the unsaved buffers that
// do not exist on disk yet (a new file not saved), when the CLI's glob
// would list them.
func withOverlayPaths(paths []string, overlays map[string][]byte) []string {
	if len(overlays) == 0 {
		return paths
	}
	have := make(map[string]bool, len(paths))
	for _, p := range paths {
		have[p] = true
	}
	added := false
	for name := range overlays {
		if !have[name] && cliGlobMatches(name) {
			paths = append(paths, name)
			added = true
		}
	}
	if added {
		sort.Strings(paths)
	}
	return paths
}

// cliGlobMatches is project.FilePaths' rule for one path: at least two
// segments, no dot-names, not under a top-level node_modules, a "." in
// the last segment.
func cliGlobMatches(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 || parts[0] == "node_modules" {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.HasPrefix(p, ".") {
			return false
		}
	}
	return strings.Contains(parts[len(parts)-1], ".")
}

// JitPreview implements lsp.Backend: the action's JiT code runs under the
// preview policy (read-only queries only, DeleteTable refused) against
// the metadata snapshot, every database call recorded.
func (b *Backend) JitPreview(ctx context.Context, req lsp.JitRequest) (*lsp.JitResult, error) {
	op, err := b.project(req.Root)
	if err != nil {
		return nil, err
	}
	h, ok := req.Graph.(*graphHandle)
	if !ok || h == nil {
		return nil, errors.New("no compiled graph to preview")
	}
	action, err := compile.FindAction(h.graph, req.Target.String())
	if err != nil {
		return nil, err
	}
	// Unlike `dataform run`, a preview sends stand-in execution data
	// (execution id "dfd-preview", the action as the only run target):
	// JiT code commonly reads jctx.executionData, and a preview should
	// show what it produces in a run rather than a TypeError.
	jreq, err := compile.JitRequest(h.graph, action, compile.JitOptions{
		AllowDisabled: true,
		ExecutionData: compile.PreviewExecutionData(action, time.Now()),
	})
	if err != nil {
		return nil, err
	}
	enc, err := compile.EncodeJitRequest(jreq, h.wire)
	if err != nil {
		return nil, err
	}

	res := &lsp.JitResult{Calls: []lsp.AdapterCall{}}
	var inner adapters.DbAdapter = noSnapshot{}
	ms := b.metadataSource(op)
	switch {
	case ms.adapter != nil:
		inner = ms.adapter
		res.Adapter = ms.desc
	case ms.err != nil && ms.kind == SourceSnapshot:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, "The metadata snapshot cannot be used, so every database call fails: "+ms.err.Error())
	case ms.err != nil && ms.kind == SourceBigQuery:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, "BigQuery cannot be used as the metadata source, so every database call fails: "+ms.err.Error())
	case ms.err != nil:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, ms.err.Error())
	default:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, "No metadata source is configured: every database call of the JiT code fails. "+
			"Set dfd.metadata.snapshot (initializationOptions or workspace settings) to a snapshot file, or dfd.metadata.source to \"bigquery\", to preview against real tables.")
	}
	settings := b.currentSettings()
	if settings.PreviewUnlimitedBytesBilled {
		res.Warnings = append(res.Warnings, uncappedWarning)
	}
	guarded := previewPolicy(settings).Wrap(inner)
	rec := adapters.NewRecorder(guarded)
	memKey := jitMemoryKey(req.Root, req.Target)
	pre, preRecs := prefetch(ctx, guarded, b.jitMem.get(memKey))
	var reads callLog
	start := time.Now()
	resp, err := op.runner.Jit(ctx, JitJob{
		Request:  enc,
		Overlays: h.overlays,
		RPC: func(ctx context.Context, method string, req []byte) ([]byte, error) {
			resp, err := adapters.Dispatch(ctx, rec, method, req)
			if err == nil {
				reads.add(method, req)
			}
			return resp, err
		},
		Prefetched: pre,
		OnPrefetched: func(i int) {
			rec.Add(preRecs[i])
			reads.add(pre[i].Method, pre[i].Request)
		},
		Timeout: b.jitTimeout(settings),
		Log: func(level, msg string) {
			b.log.Debug("jit console."+level+": "+msg, "action", req.Target.String())
		},
	})
	res.Elapsed = time.Since(start)
	b.jitMem.set(memKey, reads.list())
	for _, c := range rec.Calls() {
		res.Calls = append(res.Calls, lsp.AdapterCall{
			Method: c.Method, Summary: c.Summary, Statement: c.Statement, DurationMs: float64(c.Duration.Microseconds()) / 1000,
			Cached: c.Cached, DryRun: c.DryRun, Error: c.Error, Notes: c.Notes,
		})
	}
	if ms.kind == SourceBigQuery {
		if w := connectionTrouble(res.Calls); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
		ms.bq.noteCalls(res.Calls)
	}
	if err != nil {
		return res, fmt.Errorf("JiT code of %s failed: %w", req.Target.String(), err)
	}
	out := &dataformpb.JitCompilationResponse{}
	if err := proto.Unmarshal(resp, out); err != nil {
		return res, fmt.Errorf("decoding the JiT response of %s: %w", req.Target.String(), err)
	}
	switch r := out.GetResponse().(type) {
	case *dataformpb.JitCompilationResponse_Table:
		res.SQL = lsp.SQL{Query: r.Table.GetQuery(), PreOps: r.Table.GetPreOps(), PostOps: r.Table.GetPostOps()}
	case *dataformpb.JitCompilationResponse_IncrementalTable:
		reg, inc := r.IncrementalTable.GetRegular(), r.IncrementalTable.GetIncremental()
		res.SQL = lsp.SQL{Query: reg.GetQuery(), PreOps: reg.GetPreOps(), PostOps: reg.GetPostOps(),
			IncrementalQuery: inc.GetQuery(), IncrementalPreOps: inc.GetPreOps(), IncrementalPostOps: inc.GetPostOps()}
	case *dataformpb.JitCompilationResponse_Operation:
		res.SQL = lsp.SQL{Queries: r.Operation.GetQueries()}
	case *dataformpb.JitCompilationResponse_Assertion:
		res.SQL = lsp.SQL{Query: r.Assertion.GetQuery()}
	default:
		return res, fmt.Errorf("the JiT response of %s is empty", req.Target.String())
	}
	return res, nil
}

// TableMetadata implements lsp.Backend.
func (b *Backend) TableMetadata(ctx context.Context, root string, t lsp.Target) (*lsp.TableInfo, bool) {
	op, err := b.project(root)
	if err != nil {
		return nil, false
	}
	ms := b.metadataSource(op)
	if ms.adapter == nil {
		return nil, false
	}
	if ms.kind == SourceBigQuery {
		// A hover must not wait long for BigQuery: the cache answers at
		// once for prefetched datasets.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
	}
	tm, err := ms.adapter.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: t.Database, Schema: t.Schema, Name: t.Name}})
	if err != nil || tm == nil {
		return nil, false
	}
	src := "BigQuery"
	if ms.kind == SourceSnapshot {
		src = "snapshot " + filepath.Base(resolveSnapshotPath(b.currentSettings().MetadataSnapshot, root))
	}
	return tableInfo(tm, src), true
}
