package workspace

import (
	"time"

	"github.com/dfdtools/dfd/source"
)

// The neutral model of a compiled project: what the LSP handlers show and
// the backend produces. No protobufs, no engine, no BigQuery types.

// ProjectInfo describes an opened project.
type ProjectInfo struct {
	CoreVersion string `json:"coreVersion"`
	// CoreInstalled: dfd installed the core into its cache while opening.
	CoreInstalled bool `json:"coreInstalled,omitempty"`
	// Warnings are shown to the user (window/showMessage), e.g. a
	// metadata source that cannot be used.
	Warnings []string `json:"warnings,omitempty"`
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
	// Fixes are edits that resolve the problem (quick fixes; see
	// fixes.go). Unresolved is the action a reference names that does not
	// exist, for fixes computed on request (a declaration of a table the
	// metadata source knows).
	Fixes      []Fix
	Unresolved *Target
	// Replaces is the code of a compile-phase diagnostic that this
	// later-phase one confirms (a JiT run failing as a warning foresaw):
	// such a diagnostic on the same path and start is not published
	// beside it.
	Replaces string
}

// Range is where d is in the text m maps, as editors count: 0-based
// lines, columns in UTF-16 code units. An EndLine below 0 means the rest
// of the start line. The editor's diagnostics (package lsp) and dfd
// check's findings both place a diagnostic with it.
func (d Diagnostic) Range(m *source.Mapper) (line, col, endLine, endCol int) {
	start := m.OffsetBytes(d.Line, d.Col)
	var end int
	if d.EndLine < 0 {
		end = m.OffsetBytes(d.Line, 1<<30)
	} else {
		end = m.OffsetBytes(d.EndLine, d.EndCol)
	}
	end = max(end, start)
	line, col = m.PositionUTF16(start)
	endLine, endCol = m.PositionUTF16(end)
	return line, col, endLine, endCol
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

// TableInfo is table metadata from the metadata source.
type TableInfo struct {
	Target      Target            `json:"target"`
	Type        string            `json:"type,omitempty"`
	Description string            `json:"description,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Columns     []Column          `json:"columns,omitempty"`
	Source      string            `json:"source"`
}

// ProjectStatus is what a project's backend says about its workers and
// metadata source (StatusReporter); nil fields are left out of dfd/status.
type ProjectStatus struct {
	Workers     *WorkerStatus
	Metadata    *MetadataStatus
	Incremental *IncrementalStatus
}

// States of IncrementalStatus.
const (
	IncrementalOff      = "off"       // the setting dfd.incremental is false
	IncrementalLearning = "learning"  // incremental results are compared, the full ones published
	IncrementalTrusted  = "trusted"   // incremental results are published first, then verified
	IncrementalFellBack = "fell-back" // a verification differed: full compiles only
	IncrementalNone     = "unsupported"
)

// IncrementalStatus is a project's incremental compiles (dfd.incremental).
type IncrementalStatus struct {
	// State is one of the Incremental* constants.
	State string `json:"state"`
	// Matched counts incremental results that equalled their full
	// compile in this daemon; Mismatched those that did not.
	Matched    int `json:"matched"`
	Mismatched int `json:"mismatched"`
	// Incremental and Full count this daemon's compiles of the project by
	// kind (a verification is not counted).
	Incremental int `json:"incremental"`
	Full        int `json:"full"`
	// LastFull is why the last compile was a full one (an include changed,
	// a file was added, …); Detail explains State (why it fell back).
	LastFull string `json:"lastFull,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// VerifyMs is the mean engine time of the background verifications
	// (full compiles) of trusted incremental results.
	VerifyMs float64 `json:"verifyMs,omitempty"`
}

// WorkerStatus counts the worker processes of a project's pool.
type WorkerStatus struct {
	Ready int `json:"ready"` // idle, ready for a request
	Busy  int `json:"busy"`  // serving a request
	Total int `json:"total"` // running or starting
}

// Metadata states of MetadataStatus.
const (
	MetadataOnline  = "online"
	MetadataOffline = "offline"
	MetadataStale   = "stale"
	MetadataError   = "error"
	MetadataNone    = "none"
)

// MetadataStatus describes a project's metadata source.
type MetadataStatus struct {
	// Source is "snapshot", "bigquery" or "none".
	Source string `json:"source"`
	// State is one of the Metadata* constants.
	State string `json:"state"`
	// Detail is for people: the snapshot file, the BigQuery project, the
	// error.
	Detail string `json:"detail,omitempty"`
}

// RefreshResult is what a refresh did.
type RefreshResult struct {
	// Source is the project's metadata source ("snapshot", "bigquery",
	// "none").
	Source string
	// Refreshed counts what was read again: the snapshot's tables, or the
	// BigQuery cache entries fetched.
	Refreshed int
}

// Costs are a snapshot's cost figures: what one run of each action would
// process and cost, from the backend's dry runs. The labels are ready to
// show.
type Costs struct {
	// Available is false when there are no figures; Reason says why (no
	// BigQuery metadata source, a snapshot).
	Available bool
	Reason    string
	// Billing is "on-demand" (bytes and dollars) or "capacity" (bytes
	// only); PricePerTiB the on-demand price used.
	Billing     string
	PricePerTiB float64
	// Actions are the figures by Target.String().
	Actions map[string]*ActionCost
	// Total is the project's run: every incremental table refreshed in
	// full (Bytes, USD) and each run incrementally (IncrementalBytes,
	// IncrementalUSD); WithoutFigure actions are not in it.
	Total         CostFigure
	WithoutFigure int
	// Label is the total as the status bar says it: "≈ 15 GiB · $0.09".
	Label string
	// Diagnostics are BigQuery's verdicts on the SQL (source "BigQuery"),
	// placed on the files.
	Diagnostics []Diagnostic
}

// CostFigure is one figure: BigQuery's totalBytesProcessed of a run and
// its on-demand cost (nil with capacity billing).
type CostFigure struct {
	Bytes            int64
	USD              *float64
	IncrementalBytes int64
	IncrementalUSD   *float64
}

// ActionCost is one action's figure.
type ActionCost struct {
	// Status is "estimated" when BigQuery answered for every statement,
	// else why not: "upstreamNotBuilt", "sqlError", "unavailable",
	// "unknown"; Reason says it in words.
	Status string
	Reason string
	// Figure is the run (an incremental table's full refresh);
	// Incremental, for an incremental table, whether its incremental run
	// has a figure (IncrementalStatus, IncrementalReason).
	Figure            CostFigure
	Incremental       bool
	IncrementalStatus string
	IncrementalReason string
	// InTotal is false for views (creating a view bills nothing) and
	// actions without a figure.
	InTotal bool
	// Label is the code lens' text: "≈ 1.2 GiB · $0.01",
	// "≈ 14 GiB · $0.08 full refresh / 300 MiB · <$0.01 incremental",
	// "upstream not built (p.d.a)".
	Label string
}
