package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/compile"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/jit"
	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/settings"
	"github.com/dfdtools/dfd/workspace"
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

// Backend implements workspace.Backend on dfd's compiler: it opens
// projects (each an openProject, owned by the workspace's project) and
// holds what they share — the settings, the core resolver, the loaded
// metadata snapshot files and the background work.
type Backend struct {
	log      *slog.Logger
	opts     BackendOptions
	resolver *project.CoreResolver
	meta     metadata

	mu       sync.Mutex // guards settings
	settings settings.Settings

	// Background work (BigQuery prefetches, starting GoogleSQL) runs under
	// bgCtx and is waited for by Close.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bgMu     sync.Mutex // orders bg.Add with Close
	bg       sync.WaitGroup
}

// openProject is an opened project: the workspace.ProjectBackend of one
// workspace project, and the one owner of its backend state — its core's
// runner (workers), its BigQuery connection and what its JiT previews
// read last.
type openProject struct {
	b      *Backend
	p      *project.Project
	core   *project.Core
	runner Runner

	// bqMu guards bq, and is held while connecting: callers of one
	// project wait for its connection (a single flight), never for
	// another project's.
	bqMu sync.Mutex
	bq   *bqConn

	// sql is the project's SQL analysis (sqlcheck.go).
	sql sqlState

	// changeWarn holds the git HEAD bases of edited files (changewarn.go).
	changeWarn changeWarnState

	// jitMem remembers the metadata reads of each action's last JiT
	// preview (prefetch.go).
	jitMem jitMemory

	// bg is the project's background work: the metadata fetches that
	// TableMetadata starts instead of waiting (tablemeta.go). Close stops
	// and waits for it.
	bg projectWork

	// incr is the project's incremental compiles (incremental.go).
	incr incrementalState

	// jitFree remembers the free names of each JiT code (jitfree.go).
	jitFree jitFreeMemo

	// files is the project's file list as the last compile found it
	// (lastListing).
	files lastListing

	closeOnce sync.Once
}

var (
	_ workspace.Backend           = (*Backend)(nil)
	_ workspace.ProjectBackend    = (*openProject)(nil)
	_ workspace.StatusReporter    = (*openProject)(nil)
	_ workspace.MetadataRefresher = (*openProject)(nil)
	_ workspace.Reconfigurer      = (*openProject)(nil)
)

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
	b := &Backend{log: opts.Log, opts: opts, resolver: r, bgCtx: ctx, bgCancel: cancel}
	// GoogleSQL (≈150 ms to start) decides what every preview may run;
	// start it now, so that the first preview does not wait for it.
	b.bg.Go(func() {
		if err := gsql.Init(); err != nil {
			b.log.Warn("GoogleSQL did not start: every statement of a preview runs as a dry run", "error", err)
		}
	})
	return b
}

// Close stops the background work and waits for it. The projects are the
// workspace's: it closes them (openProject.Close) before.
func (b *Backend) Close() error {
	b.bgMu.Lock()
	b.bgCancel()
	b.bgMu.Unlock()
	b.bg.Wait()
	return nil
}

// OpenProject implements workspace.Backend.
func (b *Backend) OpenProject(ctx context.Context, root string, progress func(string)) (workspace.ProjectBackend, workspace.ProjectInfo, error) {
	p, err := project.Open(root)
	if err != nil {
		return nil, workspace.ProjectInfo{}, err
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
		return nil, workspace.ProjectInfo{}, err
	}
	runner, err := b.opts.NewRunner(ctx, p, core, b.log.With("project", p.Root))
	if err != nil {
		return nil, workspace.ProjectInfo{}, fmt.Errorf("starting @dataform/core %s for %s: %w", core.Version, p.Root, err)
	}
	op := &openProject{b: b, p: p, core: core, runner: runner}
	op.bg.init(b.bgCtx)
	op.incr.init(op)
	info := workspace.ProjectInfo{CoreVersion: core.Version, CoreInstalled: core.Installed}
	if ms := op.metadataSource(); ms.err != nil {
		info.Warnings = append(info.Warnings, "metadata source "+ms.kind+": "+ms.err.Error())
	}
	return op, info, nil
}

// Close implements workspace.ProjectBackend: the project's background
// fetches, its workers and its BigQuery connection end.
func (op *openProject) Close() error {
	var err error
	op.closeOnce.Do(func() {
		op.incr.stop()
		op.bg.stop()
		err = op.runner.Close()
		op.dropBigQuery()
	})
	return err
}

// Reconfigure implements workspace.Reconfigurer: after a settings change,
// the project's metadata source is opened at once, so that a problem
// (credentials, a missing snapshot) is shown now, not at the first
// preview.
func (op *openProject) Reconfigure(ctx context.Context) error {
	return op.metadataSource().err
}

// Configure implements workspace.Backend.
func (b *Backend) Configure(s settings.Settings) error {
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
	case SourceNone, SourceSnapshot, SourceBigQuery:
		// Each project opens its source again (Reconfigure).
	default:
		return errors.Join(loud, fmt.Errorf("dfd.metadata.source %q is not one of snapshot, bigquery, none", s.MetadataSource))
	}
	return loud
}

func (b *Backend) currentSettings() settings.Settings {
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
	errors   int // compilation errors
}

// Compile implements workspace.ProjectBackend: the compile and its errors,
// mapped to files. The checks that need metadata or JiT code are Check's.
func (op *openProject) Compile(ctx context.Context, req workspace.CompileRequest) (*workspace.CompileResult, error) {
	b := op.b
	root := op.p.Root
	listed, walk := op.files.start(op.p)
	start := time.Now()
	var (
		job CompileJob
		res *compile.Result
		err error
	)
	for {
		if listed.err != nil {
			return nil, listed.err
		}
		job = CompileJob{
			Overlays:  req.Overlays,
			FilePaths: withOverlayPaths(slices.Clone(listed.paths), req.Overlays),
			Timeout:   b.opts.CompileTimeout,
			Log: func(level, msg string) {
				b.log.Debug("console."+level+": "+msg, "project", root)
			},
			Mode: op.incr.mode(),
		}
		op.incr.cancelVerify()
		res, err = op.runner.Compile(ctx, job)
		if walk == nil {
			break
		}
		// The compile ran on the last list; the walk that ran meanwhile
		// says whether it is still the project's. Seldom it is not (a
		// file added, removed or renamed): the result is for nobody, and
		// the compile runs again on the new list.
		walked := <-walk
		walk = nil
		op.files.set(walked)
		same := walked.err == nil && slices.Equal(walked.paths, listed.paths)
		listed = walked
		if same {
			break
		}
		b.log.Debug("the project's files changed while it compiled; compiling again", "project", root)
	}
	paths, skipped := job.FilePaths, listed.skipped
	if err == nil {
		res, err = op.incr.after(ctx, job, res)
	}
	if err != nil {
		return nil, err
	}
	read := reader(root, req.Overlays)
	actions := actionsOf(res.Graph)
	// (The snapshot's actions place graph errors too: made once, 5 ms at
	// 10,000 actions.)
	diags := mapErrors(root, op.p.SettingsFile, res.Errors(), read, actions)
	diags = append(diags, jitFreeNameDiagnostics(root, res.Graph, paths, read, op.jitFree.names)...)
	op.jitFree.sweep()
	diags = append(diags, skippedDiagnostics(root, skipped)...)
	return &workspace.CompileResult{
		CoreVersion: op.core.Version,
		Actions:     actions,
		Diagnostics: diags,
		Graph:       &graphHandle{graph: res.Graph, wire: res.GraphWire, overlays: req.Overlays, errors: len(res.Errors())},
		Elapsed:     time.Since(start),
	}, nil
}

// listing is a walk of the project's files (project.ListFiles).
type listing struct {
	paths   []string
	skipped []project.SkippedFile
	err     error
}

// lastListing keeps the project's file list between compiles. A compile
// runs on the last list while the walk that checks it runs on another
// CPU: at 10,000 actions the walk of 834 directories was 9 ms on the way
// to every edit's diagnostics, and the list seldom changes between two
// edits.
type lastListing struct {
	mu   sync.Mutex
	last *listing
}

// start returns the list to compile with, and when it is the last one, a
// channel that gets the walk checking it (nil when the walk was done
// here: the first compile, or after a walk that failed; only such a
// listing has an error). The walk's goroutine ends with it; the caller
// receives from the channel.
func (l *lastListing) start(p *project.Project) (listing, chan listing) {
	l.mu.Lock()
	last := l.last
	l.mu.Unlock()
	walk := func() listing {
		paths, skipped, err := p.ListFiles()
		return listing{paths, skipped, err}
	}
	if last == nil {
		now := walk()
		l.set(now)
		return now, nil
	}
	ch := make(chan listing, 1)
	go func() { ch <- walk() }()
	return *last, ch
}

// set keeps a walk's list for the next compile (none after a failed walk).
func (l *lastListing) set(w listing) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.err != nil {
		l.last = nil
		return
	}
	l.last = &w
}

// skippedDiagnostics: a warning on each project file the compile left out
// because it is not a regular file (a named pipe, a socket, a device:
// project.ListFiles). The editor lists it under the file's name in its
// problems view; the file itself cannot be opened in an editor anyway.
func skippedDiagnostics(root string, skipped []project.SkippedFile) []workspace.Diagnostic {
	var out []workspace.Diagnostic
	for _, f := range skipped {
		out = append(out, workspace.Diagnostic{
			Path:     filepath.Join(root, filepath.FromSlash(f.Path)),
			Severity: workspace.SeverityWarning,
			Message:  f.Reason() + "; not compiled",
			Source:   "dfd",
			Code:     "not-regular-file",
		})
	}
	return out
}

// reader reads project files as the compile saw them: an open buffer,
// else the disk.
func reader(root string, overlays map[string][]byte) fileReader {
	return func(rel string) ([]byte, bool) {
		rel = path.Clean(rel)
		if t, ok := overlays[rel]; ok {
			return t, true
		}
		if rel == "" || rel == "." || strings.HasPrefix(rel, "../") {
			return nil, false
		}
		t, err := regfile.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		return t, err == nil
	}
}

// Check implements workspace.ProjectBackend: with a metadata source, refs
// to declared tables the source says do not exist (warnings), and — after
// a compile without errors — the BigQuery prefetch of the datasets the
// graph references and the JiT checks of the actions of open .js files.
func (op *openProject) Check(ctx context.Context, req workspace.CheckRequest) []workspace.Diagnostic {
	h, ok := req.Result.Graph.(*graphHandle)
	if !ok || h == nil {
		return nil
	}
	ms := op.metadataSource()
	root := op.p.Root
	var diags []workspace.Diagnostic
	var jitSQL map[string]*dataformpb.JitCompilationResponse
	if ms.adapter != nil {
		if h.errors == 0 {
			op.b.prefetch(ms.bq, root, h.graph)
		}
		diags = missingTables(ctx, root, h.graph, ms, reader(root, req.Overlays), checkMetadataBudget(ms))
		if h.errors == 0 {
			var jd []workspace.Diagnostic
			jd, jitSQL = op.jitDiagnostics(ctx, ms, h.graph, h.wire, req.Overlays)
			diags = append(diags, jd...)
		}
	}
	// The SQL is analysed only in a graph without compile errors: core
	// leaves broken actions out, and their readers would be checked
	// against tables that are missing only for now.
	if h.errors == 0 && ctx.Err() == nil && op.b.currentSettings().SQLCheck {
		// A buffer that differs from git's HEAD gets the change warnings
		// (changewarn.go), which need the check's lineage: a renamed
		// column is told from a removed one by what it reads.
		edited := op.editedFiles(ctx, req.Overlays)
		if edited != nil {
			op.sql.lineage.Store(true)
		}
		diags = dropRestated(append(diags, op.sqlDiagnostics(ctx, ms, h, req.Overlays, jitSQL)...))
		if last := op.sql.last.Load(); edited != nil && last != nil && last.g == h.graph && ctx.Err() == nil {
			diags = append(diags, op.changeWarnings(ctx, ms, h, req.Overlays, edited, last.res)...)
		}
	}
	return diags
}

// dropRestated leaves out a missing-table warning on a ref where the SQL
// analysis says the same table is not found (an error with BigQuery as the
// source, a warning with a snapshot), as dfd check says it: one place, one
// diagnostic.
func dropRestated(diags []workspace.Diagnostic) []workspace.Diagnostic {
	var notFound []workspace.Diagnostic
	for _, d := range diags {
		if d.Code == string(gsql.UnknownTable) {
			notFound = append(notFound, d)
		}
	}
	if len(notFound) == 0 {
		return diags
	}
	return slices.DeleteFunc(diags, func(d workspace.Diagnostic) bool {
		return d.Code == "missing-table" && slices.ContainsFunc(notFound, func(e workspace.Diagnostic) bool {
			return e.Path == d.Path && e.Line == d.Line && e.EndLine == d.EndLine && e.Col < d.EndCol && d.Col < e.EndCol
		})
	})
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

// JitPreview implements workspace.ProjectBackend: the action's JiT code runs under the
// preview policy (read-only queries only, DeleteTable refused) against
// the metadata snapshot, every database call recorded.
func (op *openProject) JitPreview(ctx context.Context, req workspace.JitRequest) (*workspace.JitResult, error) {
	b := op.b
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

	res := &workspace.JitResult{Calls: []workspace.AdapterCall{}}
	var inner adapters.DbAdapter = noSnapshot{}
	ms := op.metadataSource()
	switch {
	case ms.adapter != nil:
		inner = ms.adapter
		res.Adapter = ms.desc
	case ms.err != nil && ms.kind == SourceSnapshot:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, "The metadata snapshot cannot be used, so every database call fails: "+ms.err.Error())
		inner = noSnapshot{msg: "the metadata snapshot cannot be used: " + ms.err.Error()}
	case ms.err != nil && ms.kind == SourceBigQuery:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, "BigQuery cannot be used as the metadata source, so every database call fails: "+ms.err.Error())
		inner = noSnapshot{msg: "BigQuery cannot be used as the metadata source: " + ms.err.Error()}
	case ms.err != nil:
		res.Adapter = "none"
		res.Warnings = append(res.Warnings, ms.err.Error())
		inner = noSnapshot{msg: ms.err.Error()}
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
	memKey := req.Target.String()
	pre, preRecs := prefetch(ctx, guarded, op.jitMem.get(memKey))
	var reads callLog
	start := time.Now()
	rpc := func(ctx context.Context, method string, req []byte) ([]byte, error) {
		resp, err := adapters.Dispatch(ctx, rec, method, req)
		if err == nil {
			reads.add(method, req)
		}
		return resp, err
	}
	resp, err := op.runner.Jit(ctx, rpc, jit.JitJob{
		Request:    enc,
		Overlay:    h.overlays,
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
	op.jitMem.set(memKey, reads.list())
	for _, c := range rec.Calls() {
		res.Calls = append(res.Calls, workspace.AdapterCall{
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
		res.SQL = workspace.SQL{Query: r.Table.GetQuery(), PreOps: r.Table.GetPreOps(), PostOps: r.Table.GetPostOps()}
	case *dataformpb.JitCompilationResponse_IncrementalTable:
		reg, inc := r.IncrementalTable.GetRegular(), r.IncrementalTable.GetIncremental()
		res.SQL = workspace.SQL{Query: reg.GetQuery(), PreOps: reg.GetPreOps(), PostOps: reg.GetPostOps(),
			IncrementalQuery: inc.GetQuery(), IncrementalPreOps: inc.GetPreOps(), IncrementalPostOps: inc.GetPostOps()}
	case *dataformpb.JitCompilationResponse_Operation:
		res.SQL = workspace.SQL{Queries: r.Operation.GetQueries()}
	case *dataformpb.JitCompilationResponse_Assertion:
		res.SQL = workspace.SQL{Query: r.Assertion.GetQuery()}
	default:
		return res, fmt.Errorf("the JiT response of %s is empty", req.Target.String())
	}
	return res, nil
}
