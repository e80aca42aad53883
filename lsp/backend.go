package lsp

import (
	"context"
	"time"
)

// Backend is everything the LSP server needs from the rest of dfd: getting
// a project ready to compile, compiling it with unsaved buffers, running
// one action's JiT code for a preview, and table metadata for hovers.
// package daemon implements it on the engine (and, later, on jit's worker
// pool); tests implement it with fakes. The LSP side never sees the
// engine, the compiled protobuf graph or BigQuery: only the types below.
//
// Implementations must be safe for concurrent use; calls for different
// projects run concurrently, calls for one project do not overlap except
// JitPreview and TableMetadata, which may run beside a Compile.
type Backend interface {
	// OpenProject gets the project at root (absolute, symbolic links
	// resolved) ready to compile: reads its settings and finds or
	// installs its @dataform/core, which can take a while. progress
	// receives human-readable steps. Errors wrapping
	// *project.SettingsError are shown on the settings file; others
	// (project.ErrNoCore, …) on the settings file's first line.
	OpenProject(ctx context.Context, root string, progress func(msg string)) (ProjectInfo, error)
	// CloseProject releases what OpenProject acquired.
	CloseProject(root string)
	// Compile compiles an opened project. Errors are for failures of the
	// compiler itself (timeouts, crashes, a broken settings file);
	// compilation errors of user code are in the result's Diagnostics.
	Compile(ctx context.Context, req CompileRequest) (*CompileResult, error)
	// JitPreview runs the JiT code of one action of a compiled graph under
	// the preview policy.
	JitPreview(ctx context.Context, req JitRequest) (*JitResult, error)
	// TableMetadata is what the configured metadata source (snapshot or
	// BigQuery) knows about a table; ok is false when there is no source
	// or no such table. It should answer quickly (hovers, completion).
	TableMetadata(ctx context.Context, root string, t Target) (info *TableInfo, ok bool)
	// Configure applies the client's settings (initializationOptions and
	// workspace/didChangeConfiguration).
	Configure(s Settings) error
}

// ProjectInfo describes an opened project.
type ProjectInfo struct {
	CoreVersion string `json:"coreVersion"`
	// CoreInstalled: dfd installed the core into its cache while opening.
	CoreInstalled bool `json:"coreInstalled,omitempty"`
	// Warnings are shown to the user (window/showMessage), e.g. a
	// metadata source that cannot be used.
	Warnings []string `json:"warnings,omitempty"`
}

// Settings are the client's dfd settings.
type Settings struct {
	// MetadataSnapshot is the path of an offline metadata snapshot
	// (dfd.metadata.snapshot); JiT previews and hovers read table metadata
	// from it. Empty: none.
	MetadataSnapshot string
	// MetadataSource is dfd.metadata.source: "snapshot", "bigquery" or
	// "none"; empty means "snapshot" when MetadataSnapshot is set, else
	// none.
	MetadataSource string
	// BigQueryEndpoint (dfd.bigquery.endpoint) and BigQueryCredentials
	// (dfd.bigquery.credentials) configure the "bigquery" source.
	BigQueryEndpoint, BigQueryCredentials string
	// Debounce overrides the as-you-type compile delay (dfd.debounceMs).
	Debounce time.Duration
	// JitTimeout bounds one JiT preview, and one action's JiT check after
	// a compile (dfd.jit.timeoutMs); 0: the backend's defaults.
	JitTimeout time.Duration
	// PreviewMaxBytesBilled caps the bytes a query of a JiT preview may
	// bill (dfd.preview.maxBytesBilled, the preview policy's
	// MaxBytesBilled); 0: the policy's default (10 GiB).
	PreviewMaxBytesBilled int64
	// PreviewUnlimitedBytesBilled (dfd.preview.unlimitedBytesBilled)
	// lifts that cap altogether: a separate switch, so that no number
	// turns the cap off by accident.
	PreviewUnlimitedBytesBilled bool
	// ManualCompile is dfd.compileAsYouType set to false: an edit only
	// records the buffer; projects compile on save, on changes of files on
	// disk, and when dfd/preview or dfd/graph asks for the newest compile.
	ManualCompile bool
	// LogLevel is dfd.logLevel: "error", "warn", "info" or "debug"; empty:
	// the daemon's own (stderr) and info for window/logMessage.
	LogLevel string
}

// CompileRequest asks for a compilation of a project.
type CompileRequest struct {
	Root string
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
	// Graph is the backend's own compiled graph, handed back to
	// JitPreview. The LSP side never looks inside.
	Graph   any
	Elapsed time.Duration
}

// Target names a table, view or other action output.
type Target struct {
	Database string `json:"database,omitempty"`
	Schema   string `json:"schema,omitempty"`
	Name     string `json:"name"`
}

// String is database.schema.name, without empty parts.
func (t Target) String() string {
	s := t.Name
	if t.Schema != "" {
		s = t.Schema + "." + s
	}
	if t.Database != "" {
		s = t.Database + "." + s
	}
	return s
}

// Matches reports whether t is what a ref with these parts names: name
// alone, schema + name, or all three.
func (t Target) Matches(database, schema, name string) bool {
	if t.Name != name {
		return false
	}
	if schema != "" && t.Schema != schema {
		return false
	}
	if database != "" && t.Database != database {
		return false
	}
	return true
}

// Action kinds.
const (
	KindTable       = "table"
	KindView        = "view"
	KindIncremental = "incremental"
	KindOperation   = "operation"
	KindAssertion   = "assertion"
	KindDeclaration = "declaration"
	KindTest        = "test"
)

// Action is one action of a compiled project.
type Action struct {
	Target          Target   `json:"target"`
	CanonicalTarget Target   `json:"canonicalTarget"`
	Kind            string   `json:"type"`
	File            string   `json:"file"` // root-relative, slash-separated
	Tags            []string `json:"tags"`
	Description     string   `json:"description,omitempty"`
	Dependencies    []Target `json:"dependencies"`
	Disabled        bool     `json:"disabled,omitempty"`
	// Jit is set for actions whose SQL is produced at run time by JiT code.
	Jit     bool     `json:"jit,omitempty"`
	Columns []Column `json:"columns,omitempty"`
	SQL     SQL      `json:"sql"`
}

// Column is a column of an action's output (as described in the project)
// or of a table (from metadata).
type Column struct {
	Name        string `json:"name"` // dotted path for nested fields
	Type        string `json:"type,omitempty"`
	Mode        string `json:"mode,omitempty"` // "REPEATED", …
	Description string `json:"description,omitempty"`
}

// SQL is the compiled SQL of an action. Which fields are set depends on the
// kind: tables and views use Query with PreOps and PostOps; incremental
// tables also the Incremental* variants; operations use Queries; assertions
// and tests use Query.
type SQL struct {
	Query              string   `json:"query,omitempty"`
	PreOps             []string `json:"preOps,omitempty"`
	PostOps            []string `json:"postOps,omitempty"`
	IncrementalQuery   string   `json:"incrementalQuery,omitempty"`
	IncrementalPreOps  []string `json:"incrementalPreOps,omitempty"`
	IncrementalPostOps []string `json:"incrementalPostOps,omitempty"`
	Queries            []string `json:"queries,omitempty"`
}

// Severity of a diagnostic.
type Severity int

const (
	SeverityError Severity = iota + 1
	SeverityWarning
	SeverityInfo
	SeverityHint
)

// Diagnostic is a problem at a place in a file. Lines are 0-based; columns
// are 0-based byte offsets into the line (UTF-8), converted to UTF-16 by the
// LSP server, which has the text. EndLine < 0 means "the rest of the line".
type Diagnostic struct {
	Path               string // absolute
	Line, Col          int
	EndLine, EndCol    int
	Severity           Severity
	Message            string
	Source             string // "dataform", "dfd"
	Code               string
	RelatedPath        string
	RelatedLine        int
	RelatedDescription string
}

// JitRequest asks for the JiT preview of one action.
type JitRequest struct {
	Root   string
	Graph  any // CompileResult.Graph
	Target Target
}

// JitResult is the SQL that running an action's JiT code produced.
type JitResult struct {
	SQL SQL `json:"sql"`
	// Elapsed is how long the JiT code ran.
	Elapsed time.Duration `json:"-"`
	// Calls are the database calls the code made, in order.
	Calls []AdapterCall `json:"adapterCalls"`
	// Adapter describes what answered the calls ("offline snapshot
	// <path>", or a note that none is configured).
	Adapter string `json:"adapter"`
	// Warnings are for the user (no snapshot configured, …).
	Warnings []string `json:"warnings,omitempty"`
}

// AdapterCall is one database call of JiT code, as recorded.
type AdapterCall struct {
	Method  string `json:"method"`
	Summary string `json:"summary"`
	// Statement is an Execute's whole statement, with invisible characters
	// shown (a carriage return as ␍, NUL as ␀, others as ⟨U+202E⟩).
	Statement  string   `json:"statement,omitempty"`
	DurationMs float64  `json:"durationMs"`
	Cached     bool     `json:"cached,omitempty"`
	DryRun     bool     `json:"dryRun,omitempty"`
	Error      string   `json:"error,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// TableInfo is table metadata from the metadata snapshot.
type TableInfo struct {
	Target      Target            `json:"target"`
	Type        string            `json:"type,omitempty"`
	Description string            `json:"description,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Columns     []Column          `json:"columns,omitempty"`
	Source      string            `json:"source"`
}
