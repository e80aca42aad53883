package workspace

import (
	"context"
	"time"

	"github.com/dfdtools/dfd/settings"
)

// Backend is what the workspace needs from the rest of dfd to open a
// project: package daemon implements it on the compiler, the worker pools
// and the metadata sources; tests implement it with fakes. The workspace
// never sees the engine, the compiled protobuf graph or BigQuery: only the
// types of this package.
//
// Implementations must be safe for concurrent use: projects open, compile
// and close concurrently.
type Backend interface {
	// OpenProject gets the project at root (absolute, symbolic links
	// resolved) ready to compile: reads its settings and finds or
	// installs its @dataform/core, which can take a while. progress
	// receives human-readable steps. Errors wrapping
	// *project.SettingsError are shown on the settings file; others
	// (project.ErrNoCore, …) on the settings file's first line. The
	// returned ProjectBackend belongs to the workspace's project, which
	// closes it when the project is reopened or removed: it is the one
	// place a project's backend state (its workers, its metadata source,
	// its BigQuery connection) lives.
	OpenProject(ctx context.Context, root string, progress func(msg string)) (ProjectBackend, ProjectInfo, error)
	// Configure applies the client's settings (initializationOptions and
	// workspace/didChangeConfiguration). Its error is shown to the user.
	Configure(s settings.Settings) error
}

// ProjectBackend is an opened project on the backend's side.
//
// Compile and Check of one project never overlap; JitPreview,
// TableMetadata and the optional interfaces may run beside them.
type ProjectBackend interface {
	// Compile compiles the project. Errors are for failures of the
	// compiler itself (timeouts, crashes, a broken settings file);
	// compilation errors of user code are in the result's Diagnostics.
	// It must return quickly after the compile: slower checks belong in
	// Check.
	Compile(ctx context.Context, req CompileRequest) (*CompileResult, error)
	// Check is the later phase of a compile's diagnostics: everything
	// that needs more than the compiler (metadata lookups, running JiT
	// code, SQL analysis). It runs after the compile's errors are
	// published and is cancelled by the next change.
	Check(ctx context.Context, req CheckRequest) []Diagnostic
	// JitPreview runs the JiT code of one action of a compiled graph under
	// the preview policy.
	JitPreview(ctx context.Context, req JitRequest) (*JitResult, error)
	// TableMetadata is what the configured metadata source knows about a
	// table; ok is false when there is no source or no such table. It
	// answers quickly, from what it has (hovers, completion).
	TableMetadata(ctx context.Context, t Target) (info *TableInfo, ok bool)
	// Close releases what OpenProject acquired.
	Close() error
}

// StatusReporter is implemented by project backends that can describe
// their workers and metadata source (dfd/status). It answers quickly, with
// no network.
type StatusReporter interface {
	Status(ctx context.Context) ProjectStatus
}

// RecompileNotifier is implemented by project backends that may learn,
// after a compile was published, that it should be compiled again: an
// incremental result that its background verification found different
// from the full compile's. The workspace hands them a function that
// schedules a compile at once (safe to call from any goroutine).
type RecompileNotifier interface {
	SetRecompile(recompile func())
}

// Reconfigurer is implemented by project backends whose state follows
// the settings (a metadata source, a BigQuery connection): after
// Backend.Configure, each project's is asked to apply them at once, and
// its error is shown to the user with Configure's.
type Reconfigurer interface {
	Reconfigure(ctx context.Context) error
}

// MetadataRefresher is implemented by project backends that can re-read
// their metadata source (dfd/refreshMetadata). graph is the latest
// compile's CompileResult.Graph (nil before the first).
type MetadataRefresher interface {
	RefreshMetadata(ctx context.Context, graph any) (RefreshResult, error)
}

// CompileRequest asks for a compilation of a project.
type CompileRequest struct {
	// Overlays are unsaved editor buffers by root-relative slash path;
	// they are compiled instead of the files on disk (and compiled even
	// when no such file exists on disk).
	Overlays map[string][]byte
}

// CompileResult is a compiled project. It is never modified after Compile
// returns.
type CompileResult struct {
	CoreVersion string
	Actions     []*Action
	// Diagnostics are the compilation errors, mapped to files.
	Diagnostics []Diagnostic
	// Graph is the backend's own compiled graph, handed back to Check,
	// JitPreview and RefreshMetadata. The workspace never looks inside.
	Graph   any
	Elapsed time.Duration
}

// CheckRequest asks for the later-phase diagnostics of a compile.
type CheckRequest struct {
	// Result is the compile's (its Graph, and whether it had errors).
	Result *CompileResult
	// Overlays are the unsaved buffers that compile used.
	Overlays map[string][]byte
}

// JitRequest asks for the JiT preview of one action.
type JitRequest struct {
	Graph  any // CompileResult.Graph
	Target Target
}

// CostEstimator is implemented by project backends that can say what one
// run of each action would process and cost (BigQuery's dry runs). It
// runs after the later phase (Check) of a compile is published, so that
// it never delays diagnostics, and the next change cancels it.
type CostEstimator interface {
	// Costs are the figures of req's compile; nil: none to show (turned
	// off). Diagnostics it returns (BigQuery's verdict on the SQL) join
	// the later phase's.
	Costs(ctx context.Context, req CheckRequest) *Costs
	// CostsUnavailable is, without waiting, the Costs of every compile
	// when it is known there will be no figure (no BigQuery to ask); nil
	// otherwise. A snapshot carries it from its publication, so that no
	// one is told figures may still come.
	CostsUnavailable() *Costs
}

// CostListener is implemented by Events that show cost figures: a
// snapshot's arrived (Snapshot.Costs).
type CostListener interface {
	CostsEstimated(snap *Snapshot)
}
