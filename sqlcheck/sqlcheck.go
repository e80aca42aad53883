// Package sqlcheck analyses the SQL of a compiled Dataform graph with
// GoogleSQL, BigQuery's own analyzer (package gsql), against the tables the
// metadata source knows and the schemas the project's own actions produce:
// actions are analysed in dependency order, and each table's, view's and
// incremental table's output schema is added to the catalog under its
// target, so that downstream SQL is checked against tables that do not
// exist yet. Findings are placed on the .sqlx / .js source where the text
// came from (positions.go).
//
// No false alarms: a statement GoogleSQL's parser rejects is a syntax
// error (BigQuery's parser is GoogleSQL's), unless it is of a kind BigQuery
// runs and GoogleSQL lacks (gsql's list: a hint); a statement is analysed
// only when every table it reads has a schema (else it is skipped, with a
// hint naming the tables), and only the analyzer's certain findings are
// errors — unknown columns, tables, functions and type mismatches; rules
// BigQuery shares (ambiguous or ungrouped columns) are warnings; anything
// else it rejects is a hint. A statement after a
// pre-operation dfd could not analyse is not analysed either: it may use
// what that pre-operation declared.
//
// It imports gsql, source, adapters and protos/dataformpb.
package sqlcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/internal/lastuse"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Severity of a finding.
type Severity int

const (
	Error Severity = iota + 1
	Warning
	Info
	Hint
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Info:
		return "info"
	}
	return "hint"
}

// Finding is one thing the analysis found, placed in the source.
type Finding struct {
	// File is project-relative (slash-separated); Line and Col are
	// 0-based, Col in UTF-16 code units (LSP's, and editors' columns);
	// End* is the end of the span. Offset and EndOffset are the same span
	// in bytes of the file.
	File              string
	Line, Col         int
	EndLine, EndCol   int
	Offset, EndOffset int
	Severity          Severity
	Message           string
	Detail            string // the analyzer's further lines (candidate signatures)
	Code              string // gsql.ErrorKind, or CodeSkipped
	Action            string // database.schema.name
	Statement         string // which: "query", "incremental query", "pre_operations[0]", "queries[1]"
	StatementLine     int    // 1-based, in the compiled statement (for people reading the SQL)
	StatementColumn   int
	MappedToPlacement bool // the position is where a ${…} or ref() put the text, not the text itself
}

// Headline is the finding's message as dfd check and the editor show it:
// the statement named after it when it is not the action's query
// ("(pre_operations[0])", "(incremental query)", "(queries[1])"). Detail
// follows it, on lines of its own.
func (f Finding) Headline() string {
	if f.Action != "" && f.Statement != "" && f.Statement != "query" {
		return f.Message + " (" + f.Statement + ")"
	}
	return f.Message
}

// CodeSkipped is the Code of a Hint saying a statement was not analysed,
// and why.
const CodeSkipped = "sql-skipped"

// Options configure a check.
type Options struct {
	// Metadata answers GetTable and ListTables for warehouse tables (an
	// offline snapshot, or BigQuery through the cache). Nil: only the
	// project's own actions have schemas.
	Metadata adapters.DbAdapter
	// Read returns a project file (root-relative slash path) as the
	// compile saw it.
	Read func(rel string) ([]byte, bool)
	// MetadataTimeout bounds all metadata lookups of one check (default
	// 5s): a lookup that does not answer in time leaves its table unknown.
	MetadataTimeout time.Duration
	// MissingIsCertain says the metadata source is the warehouse itself
	// (BigQuery, through the cache), so its NOT_FOUND means the table does
	// not exist: a statement reading it is an error. A snapshot may be
	// partial, so its NOT_FOUND only leaves the table unknown.
	MissingIsCertain bool
	// MetadataID names the metadata source (its kind and file or
	// project): a Checker forgets the warehouse schemas it fetched when
	// it changes.
	MetadataID string
	// Jit holds JiT actions' SQL, by target (database.schema.name, any
	// case): the responses of their JiT code, run by the caller under the
	// check policy. Only responses whose database calls were all answered
	// (none failed, none was a dry run standing in for rows) belong here:
	// SQL built from made-up answers may not be the SQL the action runs. A
	// JiT action without a response is not analysed.
	Jit map[string]*dataformpb.JitCompilationResponse
	// Lineage: also read each action's column lineage (Result.Lineage;
	// lineage.go), a walk of every query's resolved tree.
	Lineage bool
}

// Result is a check of a whole graph.
type Result struct {
	Findings []Finding
	// Schemas are the output schemas dfd inferred, by target
	// (database.schema.name): what hovers and completion show for actions
	// not in the warehouse yet.
	Schemas map[string][]gsql.Column
	// Lineage is, with Options.Lineage, where each column of Schemas
	// comes from, by the same targets (lineage.go).
	Lineage map[string][]gsql.ColumnLineage
	// Analysed and Skipped count statements; Remembered are those of
	// them whose analysis a Checker remembered from an earlier check, Ran
	// those GoogleSQL analysed in this one.
	Analysed, Skipped, Remembered, Ran int
	// Unknown are the tables read without a schema, with the actions
	// reading them.
	Unknown map[string][]string
	// NotAnalysed says why the Skipped statements were not analysed, by
	// root cause (blocked.go): a statement skipped because it reads an
	// action of the project that was itself not analysed counts under
	// that action's cause, so a metadata source that could not answer is
	// charged with every statement it left unchecked.
	NotAnalysed []Blocked
}

// Check analyses every statement of g, remembering nothing.
func Check(ctx context.Context, g *dataformpb.CompiledGraph, opts Options) (*Result, error) {
	return NewChecker().Check(ctx, g, opts)
}

// Checker analyses one project's graph again and again (an editor's
// edits): it remembers the warehouse schemas it fetched and each
// statement's analysis under a key of everything the analysis depends on
// (the statement's text, the schemas of the tables it may read, what
// earlier statements declared), so that a check after an edit analyses
// only the statements the edit changed and, when their output schema
// changed, their dependents. One check at a time.
type Checker struct {
	metadataID string
	warehouse  map[string]*warehouseTable // by lower-case path
	// What a check worked out, kept while checks use it (each check is a
	// run): analyses, gsql.Classify's verdicts on the queries, and the
	// source files as they were read.
	memo     lastuse.Memo[memoKey, gsql.Analysis]
	verdicts lastuse.Memo[[sha256.Size]byte, gsql.Verdict]
	sources  lastuse.Memo[string, *sourceFile] // by path
	prev     *gsql.Catalog                     // the last check's: its temporary functions are carried
}

// warehouseTable is what the metadata source said about a table.
type warehouseTable struct {
	state   int   // found, absent (not found, or a type dfd cannot model), failed (retried next check)
	err     error // failed: what the source said, or that the time allowed ran out
	table   gsql.Table
	hash    string
	certain bool // absent, and the source is the warehouse itself
	missing bool // absent because the source said the table does not exist
}

const (
	tableFound = iota
	tableAbsent
	tableFailed
)

type memoKey [sha256.Size]byte

// NewChecker makes a Checker that remembers nothing yet.
func NewChecker() *Checker {
	return &Checker{warehouse: map[string]*warehouseTable{}}
}

// Forget drops the warehouse schemas the checker fetched (after the
// metadata was refreshed): the next check asks the source again.
func (k *Checker) Forget() {
	k.warehouse = map[string]*warehouseTable{}
}

// Stats are a Checker's counts, for status and benchmarks.
type Stats struct{ Remembered, WarehouseTables int }

// Stats counts what the checker remembers.
func (k *Checker) Stats() Stats {
	return Stats{Remembered: k.memo.Len(), WarehouseTables: len(k.warehouse)}
}

// Check analyses every statement of g.
func (k *Checker) Check(ctx context.Context, g *dataformpb.CompiledGraph, opts Options) (*Result, error) {
	return k.check(ctx, g, opts, nil)
}

// check is Check, with a column rename's look at each statement
// (rename.go) when rename is set.
func (k *Checker) check(ctx context.Context, g *dataformpb.CompiledGraph, opts Options, rename *renameRun) (*Result, error) {
	if opts.MetadataTimeout <= 0 {
		opts.MetadataTimeout = 5 * time.Second
	}
	if opts.Read == nil {
		opts.Read = func(string) ([]byte, bool) { return nil, false }
	}
	if opts.MetadataID != k.metadataID || opts.Metadata == nil {
		k.Forget()
		k.metadataID = opts.MetadataID
	}
	defaultProject := g.GetProjectConfig().GetDefaultDatabase()
	cat, err := gsql.NewCatalog(defaultProject)
	if err != nil {
		return nil, err
	}
	cat.Carry(k.prev)
	cat.SetLineage(opts.Lineage)
	k.prev = cat
	c := &checker{
		k: k, ctx: ctx, opts: opts, g: g, cat: cat, defaultProject: defaultProject, rename: rename,
		res:       &Result{Schemas: map[string][]gsql.Column{}, Lineage: map[string][]gsql.ColumnLineage{}, Unknown: map[string][]string{}},
		fetched:   map[string]bool{},
		own:       map[string]bool{},
		ownHash:   map[string]string{},
		ownCols:   map[string][]gsql.Column{},
		hinted:    map[string]bool{},
		ownWhy:    map[string]*blocker{},
		blocked:   map[blocker]*Blocked{},
		depsAdded: map[*action]bool{},
		index:     map[string][]string{},
		sources:   map[string]*sourceFile{},
		deadline:  time.Now().Add(opts.MetadataTimeout),
	}
	for path, w := range k.warehouse {
		if w.state == tableFound {
			c.indexTable(path)
		}
	}
	actions := order(g)
	for _, a := range actions {
		c.own[strings.ToLower(a.name)] = true
	}
	if err := c.declarations(); err != nil {
		return nil, err
	}
	for _, a := range actions {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.action(a); err != nil {
			return nil, err
		}
	}
	k.memo.EndRun()
	k.verdicts.EndRun()
	k.sources.EndRun()
	c.res.NotAnalysed = c.blockedList()
	sort.SliceStable(c.res.Findings, func(i, j int) bool {
		a, b := c.res.Findings[i], c.res.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return c.res, nil
}

// checker is one check.
type checker struct {
	k              *Checker
	ctx            context.Context
	opts           Options
	g              *dataformpb.CompiledGraph
	cat            *gsql.Catalog
	defaultProject string
	res            *Result
	fetched        map[string]bool          // warehouse lookups done in this check, by lower-case path
	own            map[string]bool          // the project's actions' targets
	ownHash        map[string]string        // hashes of the inferred schemas so far, by lower-case target
	ownCols        map[string][]gsql.Column // the inferred schemas so far, by lower-case target
	index          map[string][]string      // word of a table name → the known tables' lower-case paths (memo keys)
	hinted         map[string]bool          // actions with a skip hint
	ownWhy         map[string]*blocker      // why an own action has no inferred schema, by lower-case target (blocked.go)
	blocked        map[blocker]*Blocked     // statements not analysed, by root cause
	current        *action                  // whose statements are being analysed
	depsAdded      map[*action]bool
	sources        map[string]*sourceFile
	deadline       time.Time
	rename         *renameRun // a column rename's planning (rename.go), or nil
}

func targetPath(t *dataformpb.Target, defaultProject string) string {
	db := t.GetDatabase()
	if db == "" {
		db = defaultProject
	}
	return db + "." + t.GetSchema() + "." + t.GetName()
}

// declarations adds the declared tables' warehouse schemas.
func (c *checker) declarations() error {
	for _, d := range c.g.GetDeclarations() {
		if err := c.fetch(targetPath(d.GetTarget(), c.defaultProject)); err != nil {
			return err
		}
	}
	return nil
}

// fetch asks the metadata source for a table (a wildcard path: the union
// of its dataset's matching tables) unless the checker knows its answer;
// a table the source does not know, or cannot model, stays unknown.
func (c *checker) fetch(path string) error {
	key := strings.ToLower(path)
	if c.fetched[key] || c.opts.Metadata == nil || c.own[key] {
		// The project's own action: what it will produce is its SQL's
		// schema, not whatever an earlier run left in the warehouse.
		return nil
	}
	c.fetched[key] = true
	if w := c.k.warehouse[key]; w != nil && w.state != tableFailed {
		return nil
	}
	w := c.lookup(path)
	c.k.warehouse[key] = w
	if w.state == tableFound {
		w.hash = schemaHash(w.table.Columns)
		c.indexTable(key)
	}
	return nil
}

// lookup is the metadata source's answer about a table.
func (c *checker) lookup(path string) *warehouseTable {
	parts := strings.Split(path, ".")
	if len(parts) != 3 {
		return &warehouseTable{state: tableAbsent}
	}
	failed := func(err error) *warehouseTable {
		if adapters.CodeOf(err) == adapters.NotFound {
			return &warehouseTable{state: tableAbsent, certain: c.opts.MissingIsCertain, missing: true}
		}
		return &warehouseTable{state: tableFailed, err: err}
	}
	if time.Now().After(c.deadline) {
		// The time allowed for metadata is spent (a source that does not
		// answer): what a cache holds, of any age, still serves.
		err := adapters.Errorf(adapters.DeadlineExceeded, "no answer from the metadata source within the %s allowed for metadata", c.opts.MetadataTimeout)
		cached, ok := c.opts.Metadata.(CachedSource)
		if !ok || strings.HasSuffix(parts[2], "*") {
			return failed(err)
		}
		md, known, cerr := cached.CachedTable(c.ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: parts[0], Schema: parts[1], Name: parts[2]}})
		switch {
		case !known:
			return failed(err)
		case cerr != nil:
			return failed(cerr)
		}
		return c.found(path, md)
	}
	ctx, cancel := context.WithDeadline(c.ctx, c.deadline)
	defer cancel()
	if prefix, ok := strings.CutSuffix(parts[2], "*"); ok {
		list, err := c.opts.Metadata.ListTables(ctx, &dataformpb.ListTablesRequest{Database: parts[0], Schema: parts[1]})
		if err != nil {
			w := failed(err)
			w.certain = false // a missing dataset is not a missing wildcard table's whole story
			return w
		}
		var cols []gsql.Column
		seen := map[string]bool{}
		matched := 0
		for _, t := range list.GetTables() {
			if !strings.HasPrefix(t.GetTarget().GetName(), prefix) {
				continue
			}
			matched++
			tc, ok := columnsOf(t.GetFields())
			if !ok {
				return &warehouseTable{state: tableAbsent}
			}
			for _, col := range tc {
				if !seen[strings.ToLower(col.Name)] {
					seen[strings.ToLower(col.Name)] = true
					cols = append(cols, col)
				}
			}
		}
		if matched == 0 {
			return &warehouseTable{state: tableAbsent, missing: true}
		}
		return &warehouseTable{state: tableFound, table: gsql.Table{Path: path, Columns: cols,
			Pseudo: append(partitionPseudo(), gsql.Column{Name: "_TABLE_SUFFIX", Type: gsql.Type{Kind: "STRING"}})}}
	}
	md, err := c.opts.Metadata.GetTable(ctx, &dataformpb.GetTableRequest{Target: &dataformpb.Target{Database: parts[0], Schema: parts[1], Name: parts[2]}})
	if err != nil {
		return failed(err)
	}
	return c.found(path, md)
}

// found is a table the metadata source described (nil: it does not exist).
func (c *checker) found(path string, md *dataformpb.TableMetadata) *warehouseTable {
	if md == nil {
		return &warehouseTable{state: tableAbsent, missing: true}
	}
	cols, ok := columnsOf(md.GetFields())
	if !ok {
		return &warehouseTable{state: tableAbsent}
	}
	return &warehouseTable{state: tableFound, table: gsql.Table{Path: path, Columns: cols, Pseudo: partitionPseudo()}}
}

// known is the schema of a table, if this check knows one: the project's
// own action's inferred schema, else the warehouse's (never both: an own
// action's target is never fetched).
func (c *checker) known(path string) (gsql.Table, bool) {
	key := strings.ToLower(path)
	if cols, ok := c.ownCols[key]; ok {
		return gsql.Table{Path: path, Columns: cols, Pseudo: partitionPseudo()}, true
	}
	if w := c.k.warehouse[key]; w != nil && w.state == tableFound {
		return w.table, true
	}
	return gsql.Table{}, false
}

// indexTable makes a known table's schema part of the memo key of every
// statement that mentions a word of its name.
func (c *checker) indexTable(lowerPath string) {
	name := lowerPath[strings.LastIndexByte(lowerPath, '.')+1:]
	for _, w := range words(name) {
		if !slices.Contains(c.index[w], lowerPath) {
			c.index[w] = append(c.index[w], lowerPath)
		}
	}
}

// words are the lower-case identifier words of s: runs of letters,
// digits, underscores (and any non-ASCII).
func words(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		word := i < len(s) && (s[i] == '_' || s[i] >= 0x80 || ('0' <= s[i] && s[i] <= '9') || ('a' <= s[i] && s[i] <= 'z') || ('A' <= s[i] && s[i] <= 'Z'))
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	return out
}

// schemaHash identifies a schema's names and types.
func schemaHash(cols []gsql.Column) string {
	h := sha256.New()
	var write func(cols []gsql.Column)
	write = func(cols []gsql.Column) {
		for _, col := range cols {
			fmt.Fprintf(h, "%s %s,", col.Name, col.Type.String())
		}
	}
	write(cols)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// memoKey is the key of stmt's analysis: its text, what earlier
// statements declared, and the schemas of the known tables whose names
// share a word with it (a table it may read).
func (c *checker) memoKey(stmt, state string) memoKey {
	h := sha256.New()
	h.Write([]byte(stmt))
	h.Write([]byte{0})
	h.Write([]byte(state))
	h.Write([]byte{0})
	var tables []string
	seen := map[string]bool{}
	for _, w := range words(stmt) {
		for _, p := range c.index[w] {
			if !seen[p] {
				seen[p] = true
				tables = append(tables, p)
			}
		}
	}
	slices.Sort(tables)
	for _, p := range tables {
		hash := c.ownHash[p]
		if hash == "" {
			if w := c.k.warehouse[p]; w != nil && w.state == tableFound {
				hash = w.hash
			}
		}
		fmt.Fprintf(h, "%s=%s;", p, hash)
	}
	var k memoKey
	h.Sum(k[:0])
	return k
}

// partitionPseudo are the ingestion-time partition columns. Every table
// gets them: a query naming them on a table without them is an error dfd
// then misses, never one it invents.
func partitionPseudo() []gsql.Column {
	return []gsql.Column{{Name: "_PARTITIONTIME", Type: gsql.Type{Kind: "TIMESTAMP"}}, {Name: "_PARTITIONDATE", Type: gsql.Type{Kind: "DATE"}}}
}

// columnsOf converts metadata fields; ok is false when a type cannot be
// modelled (the table then stays unknown, rather than half known).
func columnsOf(fields []*dataformpb.Field) ([]gsql.Column, bool) {
	var out []gsql.Column
	for _, f := range fields {
		t, ok := typeOf(f)
		if !ok {
			return nil, false
		}
		out = append(out, gsql.Column{Name: f.GetName(), Type: t, Description: f.GetDescription()})
	}
	return out, true
}

func typeOf(f *dataformpb.Field) (gsql.Type, bool) {
	var t gsql.Type
	if s := f.GetStruct(); s != nil {
		cols, ok := columnsOf(s.GetFields())
		if !ok {
			return t, false
		}
		t = gsql.Type{Kind: "STRUCT", Fields: cols}
	} else {
		k, ok := primitives[f.GetPrimitive()]
		if !ok {
			return t, false
		}
		t = gsql.Type{Kind: k}
	}
	for _, fl := range f.GetFlags() {
		if fl == dataformpb.Field_REPEATED {
			elem := t
			t = gsql.Type{Kind: "ARRAY", Elem: &elem}
		}
	}
	return t, true
}

var primitives = map[dataformpb.Field_Primitive]string{
	dataformpb.Field_INTEGER: "INT64", dataformpb.Field_FLOAT: "FLOAT64", dataformpb.Field_NUMERIC: "NUMERIC",
	dataformpb.Field_BOOLEAN: "BOOL", dataformpb.Field_STRING: "STRING", dataformpb.Field_DATE: "DATE",
	dataformpb.Field_DATETIME: "DATETIME", dataformpb.Field_TIMESTAMP: "TIMESTAMP", dataformpb.Field_TIME: "TIME",
	dataformpb.Field_BYTES: "BYTES", dataformpb.Field_GEOGRAPHY: "GEOGRAPHY", dataformpb.Field_BIGNUMERIC: "BIGNUMERIC",
	dataformpb.Field_JSON: "JSON", dataformpb.Field_INTERVAL: "INTERVAL",
}

// action is one action of the graph, in the order analysis needs.
type action struct {
	target     *dataformpb.Target
	file       string
	name       string // database.schema.name
	kind       string // table, view, incremental, operation, assertion
	jit        bool
	query      string
	incQuery   string
	preOps     []string
	postOps    []string
	incPreOps  []string
	incPostOps []string
	queries    []string
	deps       []*dataformpb.Target
	hasOutput  bool
	parent     string // an assertion's parent action (database.schema.name): built from its config
}

// order is the graph's actions, every action after the actions it depends
// on (cycles, which core reports, are broken where found).
func order(g *dataformpb.CompiledGraph) []*action {
	dp := g.GetProjectConfig().GetDefaultDatabase()
	var all []*action
	byName := map[string]*action{}
	add := func(a *action) {
		a.name = targetPath(a.target, dp)
		all = append(all, a)
		byName[strings.ToLower(a.name)] = a
	}
	for _, t := range g.GetTables() {
		kind := "table"
		switch t.GetEnumType() {
		case dataformpb.TableType_VIEW:
			kind = "view"
		case dataformpb.TableType_INCREMENTAL:
			kind = "incremental"
		}
		add(&action{target: t.GetTarget(), file: t.GetFileName(), kind: kind, jit: t.GetJitCode() != "", query: t.GetQuery(),
			incQuery: t.GetIncrementalQuery(), preOps: t.GetPreOps(), postOps: t.GetPostOps(),
			incPreOps: t.GetIncrementalPreOps(), incPostOps: t.GetIncrementalPostOps(), deps: t.GetDependencyTargets()})
	}
	for _, o := range g.GetOperations() {
		add(&action{target: o.GetTarget(), file: o.GetFileName(), kind: "operation", jit: o.GetJitCode() != "",
			queries: o.GetQueries(), deps: o.GetDependencyTargets(), hasOutput: o.GetHasOutput()})
	}
	for _, a := range g.GetAssertions() {
		as := &action{target: a.GetTarget(), file: a.GetFileName(), kind: "assertion", jit: a.GetJitCode() != "",
			query: a.GetQuery(), deps: a.GetDependencyTargets()}
		if p := a.GetParentAction(); p != nil {
			as.parent = targetPath(p, dp)
		}
		add(as)
	}
	var out []*action
	state := map[*action]int{} // 1 visiting, 2 done
	var visit func(a *action)
	visit = func(a *action) {
		if state[a] != 0 {
			return
		}
		state[a] = 1
		for _, d := range a.deps {
			if up := byName[strings.ToLower(targetPath(d, dp))]; up != nil {
				visit(up)
			}
		}
		state[a] = 2
		out = append(out, a)
	}
	for _, a := range all {
		visit(a)
	}
	return out
}

// action analyses one action's statements and records its output schema.
// The statements run in order as one script (pre-operations, the query,
// post-operations), so a statement after one dfd could not analyse is not
// analysed either: that one may DECLARE a variable or a function the rest
// uses. An incremental table's incremental variant is its own script,
// analysed after the table's schema is known (it reads the table, self()).
func (c *checker) action(a *action) error {
	key := strings.ToLower(a.name)
	if a.jit && !c.jitSQL(a) {
		// Its SQL exists only when its JiT code runs: not analysed, and
		// counted as one statement (how many it makes is unknown).
		root := blocker{cause: CauseJit, table: a.name, what: "a JiT action whose SQL dfd did not get (its code runs only against warehouse metadata, every database call answered)"}
		c.ownWhy[key] = &root
		c.res.Skipped++
		c.block(root)
		return nil
	}
	if a.kind == "operation" {
		c.ownWhy[key] = &blocker{cause: CauseOther, table: a.name, what: "an operation, whose output schema dfd does not infer"}
	}
	// quiet: a statement the incremental variant shares with the full
	// one, analysed again for what it declares but reported once.
	type stmt struct {
		label, sql string
		quiet      bool
	}
	script := func(prefix string, pre []string, query string, queries, post []string) []stmt {
		var out []stmt
		for i, s := range pre {
			out = append(out, stmt{label: fmt.Sprintf("%spre_operations[%d]", prefix, i), sql: s})
		}
		if query != "" {
			out = append(out, stmt{label: prefix + "query", sql: query})
		}
		for i, s := range queries {
			out = append(out, stmt{label: fmt.Sprintf("queries[%d]", i), sql: s})
		}
		for i, s := range post {
			out = append(out, stmt{label: fmt.Sprintf("%spost_operations[%d]", prefix, i), sql: s})
		}
		return out
	}
	run := func(stmts []stmt) error {
		c.cat.EndScript() // each script declares its own variables
		blind := ""
		var blindRoot blocker // the root cause of the statement that blinded the rest
		for _, s := range stmts {
			if blind != "" {
				if s.quiet {
					continue
				}
				c.res.Skipped++ // the hint on the statement that blinded it says enough
				c.block(blindRoot)
				if s.label == "query" {
					root := blindRoot
					c.ownWhy[key] = &root
				}
				if c.rename != nil {
					c.rename.blinded(c, a, s.label, s.sql, blind)
				}
				continue
			}
			ran, remembered := c.res.Ran, c.res.Remembered
			an, err := c.analyze(s.sql)
			if err != nil {
				return err
			}
			if s.quiet {
				c.res.Ran, c.res.Remembered = ran, remembered // counted with the full variant
				if an.Skipped != "" || syntaxError(an) {
					blind = "it runs after " + s.label + ", which dfd does not analyse (it may declare what this uses)"
					blindRoot = c.rootOf(an)
				}
				continue
			}
			if c.rename != nil {
				if err := c.rename.statement(c, a, s.label, s.sql, an); err != nil {
					return err
				}
			}
			if an.Empty {
				continue // a blank pre-operation, say
			}
			c.report(a, s.label, s.sql, an)
			if an.Skipped != "" || syntaxError(an) {
				// A statement that does not parse may have declared what
				// the rest uses: its error says enough.
				blind = "it runs after " + s.label + ", which dfd does not analyse (it may declare what this uses)"
				blindRoot = c.rootOf(an)
				if s.label == "query" {
					root := blindRoot
					c.ownWhy[key] = &root
				}
			}
			if s.label == "query" && an.Problem != nil {
				c.ownWhy[key] = &blocker{cause: CauseOther, table: a.name, what: "an action whose own SQL has a problem"}
			}
			if s.label == "query" && an.Problem == nil && an.Skipped == "" && len(an.Columns) > 0 && a.kind != "assertion" {
				c.res.Schemas[a.name] = an.Columns
				c.recordLineage(a, an)
				c.ownCols[strings.ToLower(a.name)] = an.Columns
				c.ownHash[strings.ToLower(a.name)] = schemaHash(an.Columns)
				c.indexTable(strings.ToLower(a.name))
			}
		}
		return nil
	}
	c.current = a
	c.mustBeQuery(a, "query", a.query)
	c.mustBeQuery(a, "incremental query", a.incQuery)
	if err := run(script("", a.preOps, a.query, a.queries, a.postOps)); err != nil {
		return err
	}
	if a.kind != "incremental" || a.incQuery == "" {
		return nil
	}
	// Statements the incremental variant shares with the full one were
	// reported above: they run again quietly, for what they declare.
	inc := script("incremental ", a.incPreOps, a.incQuery, nil, a.incPostOps)
	own := false
	for i, s := range inc {
		inc[i].quiet = slices.Contains(a.preOps, s.sql) || slices.Contains(a.postOps, s.sql) || s.sql == a.query
		own = own || !inc[i].quiet
	}
	if !own {
		return nil
	}
	return run(inc)
}

// compileFailed reports whether the compilation of g has an error in file.
func compileFailed(g *dataformpb.CompiledGraph, file string) bool {
	for _, e := range g.GetGraphErrors().GetCompilationErrors() {
		if e.GetFileName() == file {
			return true
		}
	}
	return false
}

// syntaxError reports whether an analysis is a syntax error.
func syntaxError(an gsql.Analysis) bool {
	return an.Problem != nil && an.Problem.Kind == gsql.SyntaxError
}

// mustBeQuery reports, as an error, the query of a table, view,
// incremental table or assertion that is one statement of another kind
// (DML, DDL, …): Dataform puts it in CREATE … AS, INSERT … SELECT or a
// SELECT … FROM ( … ), which take a query only, so BigQuery rejects it.
// It needs no schema: it holds offline too. Scripts are left alone (a
// trailing statement may be what the user meant as a post-operation;
// the analysis says what it can).
func (c *checker) mustBeQuery(a *action, label, sql string) {
	if a.kind == "operation" || strings.TrimSpace(sql) == "" || (label == "incremental query" && sql == a.query) {
		return
	}
	v := c.classify(sql)
	if v.Kind != gsql.Statement {
		return
	}
	f := c.place(a, label, sql, 0, 0)
	f.Severity, f.Code = Error, CodeNotAQuery
	what := map[string]string{"table": "a table", "view": "a view", "incremental": "an incremental table", "assertion": "an assertion"}[a.kind]
	f.Message = fmt.Sprintf("the SQL of %s must be a query (SELECT or WITH), which Dataform wraps in the statement that builds it: this is a %s (an operation runs any statement)", what, v.Reason)
	c.res.Findings = append(c.res.Findings, f)
}

// classify is gsql.Classify, remembered from one check to the next. gsql
// remembers 4,096 verdicts, the least recently used going first: fewer
// than the queries of a large project, which each check reads in the same
// order, so that every one of them missed.
func (c *checker) classify(sql string) gsql.Verdict {
	key := sha256.Sum256([]byte(sql))
	if v, ok := c.k.verdicts.Get(key); ok {
		return v
	}
	v := gsql.Classify(c.ctx, sql)
	if c.ctx.Err() == nil { // (a cancelled check's verdict is not one)
		c.k.verdicts.Put(key, v)
	}
	return v
}

// CodeNotAQuery is the Code of the error on a table's, view's or
// assertion's SQL that is not a query.
const CodeNotAQuery = "not-a-query"

// jitSQL fills a JiT action's statements from its JiT response, if the
// caller has one.
func (c *checker) jitSQL(a *action) bool {
	var resp *dataformpb.JitCompilationResponse
	for k, r := range c.opts.Jit {
		if strings.EqualFold(k, a.name) {
			resp = r
		}
	}
	if resp == nil {
		return false
	}
	table := func(t *dataformpb.JitTableResult) {
		a.query, a.preOps, a.postOps = t.GetQuery(), t.GetPreOps(), t.GetPostOps()
	}
	switch {
	case resp.GetTable() != nil:
		table(resp.GetTable())
	case resp.GetIncrementalTable() != nil:
		table(resp.GetIncrementalTable().GetRegular())
		inc := resp.GetIncrementalTable().GetIncremental()
		a.incQuery, a.incPreOps, a.incPostOps = inc.GetQuery(), inc.GetPreOps(), inc.GetPostOps()
	case resp.GetOperation() != nil:
		a.queries = resp.GetOperation().GetQueries()
	case resp.GetAssertion() != nil:
		a.query = resp.GetAssertion().GetQuery()
	default:
		return false
	}
	return true
}

// analyze analyses stmt, or remembers its analysis. The catalog is filled
// lazily: a table a statement reads is added when the statement needs it
// (an own action's inferred schema, or the warehouse's, fetched then).
func (c *checker) analyze(sql string) (gsql.Analysis, error) {
	if an, ok := c.k.memo.Get(c.memoKey(sql, c.cat.StateKey())); ok && c.stillValid(an) && c.hasLineage(an) {
		// A DECLARE's variables are declared again, as its analysis did.
		redeclared := true
		if len(an.Declared) > 0 {
			ok, err := c.cat.Redeclare(an.Declared)
			if err != nil {
				return gsql.Analysis{}, err
			}
			redeclared = ok
		}
		if redeclared {
			c.res.Remembered++
			return an, nil
		}
	}
	state := c.cat.StateKey()
	c.res.Ran++
	if err := c.addDeps(c.current); err != nil {
		return gsql.Analysis{}, err
	}
	var an gsql.Analysis
	for round := 0; ; round++ {
		var err error
		if an, err = c.cat.Analyze(c.ctx, sql); err != nil {
			return an, err
		}
		if len(an.Unknown) == 0 || round == 3 {
			break
		}
		added := false
		for _, u := range an.Unknown {
			path := c.qualify(u)
			if !c.cat.Has(path) {
				if _, ok := c.known(path); !ok {
					if err := c.fetch(path); err != nil {
						return an, err
					}
				}
				if t, ok := c.known(path); ok {
					if err := c.cat.Add(t); err != nil {
						return an, err
					}
					added = true
				}
			}
		}
		if !added {
			break
		}
	}
	for _, u := range an.Unknown {
		if w := c.k.warehouse[strings.ToLower(c.qualify(u))]; w != nil && w.certain {
			line, col := positionOf(sql, u)
			an = gsql.Analysis{Problem: &gsql.Problem{Kind: gsql.UnknownTable, Line: line, Column: col,
				Message: "Table not found: " + c.qualify(u) + " (BigQuery has no such table)"}}
			break
		}
	}
	// The same analysis next time, if it declared nothing, or only
	// variables, which Redeclare declares again: at 3,000 actions the
	// DECLAREs of incremental tables' pre_operations were a quarter of a
	// check after every edit.
	// (The key is taken again: the analysis may have fetched the schemas
	// of tables it reads.)
	if c.cat.StateKey() == state || len(an.Declared) > 0 {
		c.k.memo.Put(c.memoKey(sql, state), an)
	}
	return an, nil
}

// addDeps adds to the catalog the known schemas of the tables action a
// depends on, before one of its statements is analysed: that spares the
// analysis a second parse (the first would find them missing).
func (c *checker) addDeps(a *action) error {
	if a == nil || c.depsAdded[a] {
		return nil
	}
	c.depsAdded[a] = true
	for _, d := range a.deps {
		path := targetPath(d, c.defaultProject)
		if c.cat.Has(path) {
			continue
		}
		if t, ok := c.known(path); ok {
			if err := c.cat.Add(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// stillValid reports whether a remembered analysis still holds: the
// tables it did not know are still unknown for good (the memo key covers
// the known ones), none of them was a lookup that failed and is due again.
func (c *checker) stillValid(an gsql.Analysis) bool {
	for _, u := range an.Unknown {
		path := strings.ToLower(c.qualify(u))
		if c.own[path] {
			continue // an own action without a schema: its key changes when it gets one
		}
		if c.opts.Metadata == nil {
			continue
		}
		w := c.k.warehouse[path]
		if w == nil || w.state == tableFailed {
			return false
		}
	}
	return true
}

func (c *checker) qualify(name string) string {
	if strings.Count(name, ".") == 1 {
		return c.defaultProject + "." + name
	}
	return name
}

// positionOf is where table name (as gsql reports it: parts joined with
// dots, unquoted) is written in sql: 1-based line and byte column, or 0, 0.
func positionOf(sql, name string) (int, int) {
	off := -1
	lower := strings.ToLower(sql)
	for _, written := range []string{"`" + name + "`", name, "`" + strings.ReplaceAll(name, ".", "`.`") + "`"} {
		if i := strings.Index(lower, strings.ToLower(written)); i >= 0 {
			off = i
			break
		}
	}
	if off < 0 {
		return 0, 0
	}
	line := 1 + strings.Count(sql[:off], "\n")
	ls := strings.LastIndexByte(sql[:off], '\n') + 1
	return line, gsql.ColumnOf(sql[ls:], off-ls)
}

// why says why a statement was skipped; for unknown tables, the project's
// own actions (whose SQL dfd could not analyse or cannot see: JiT) apart
// from warehouse tables (whose metadata the user can give).
func (c *checker) why(an gsql.Analysis) string {
	if len(an.Unknown) == 0 {
		return an.Skipped
	}
	var foreign, absent, unanswered, unmodelled []string
	var own []string // each with its reason
	var failure error
	for _, u := range an.Unknown {
		key := strings.ToLower(c.qualify(u))
		switch w := c.k.warehouse[key]; {
		case c.own[key]:
			up := c.ownWhy[key]
			switch {
			case up == nil:
				own = append(own, u+", whose output schema dfd did not infer")
			case strings.EqualFold(up.table, c.qualify(u)) || strings.EqualFold(up.table, u):
				own = append(own, u+", "+up.what)
			default:
				own = append(own, u+", which dfd did not analyse either: "+up.describe())
			}
		case w != nil && w.missing:
			absent = append(absent, u)
		case w != nil && w.state == tableFailed:
			unanswered = append(unanswered, u)
			if failure == nil {
				failure = w.err
			}
		case w != nil && c.opts.Metadata != nil:
			unmodelled = append(unmodelled, u)
		default:
			foreign = append(foreign, u)
		}
	}
	var parts []string
	if len(absent) > 0 {
		parts = append(parts, "it reads "+strings.Join(absent, ", ")+", which the metadata source says does not exist")
	}
	if len(unanswered) > 0 {
		why := "the metadata source could not answer"
		if failure != nil {
			why += ": " + firstLine(failure.Error())
		}
		parts = append(parts, "it reads "+strings.Join(unanswered, ", ")+", whose schema dfd could not get ("+why+")")
	}
	if len(unmodelled) > 0 {
		parts = append(parts, "it reads "+strings.Join(unmodelled, ", ")+", whose column types dfd cannot model")
	}
	if len(foreign) > 0 {
		if c.opts.Metadata == nil {
			parts = append(parts, "it reads "+strings.Join(foreign, ", ")+", whose schema dfd does not know (give dfd the warehouse's metadata: the dfd.metadata.source setting, or --metadata FILE)")
		} else {
			parts = append(parts, "it reads "+strings.Join(foreign, ", ")+", whose schema dfd does not know")
		}
	}
	if len(own) > 0 {
		parts = append(parts, "it reads "+strings.Join(own, "; it reads "))
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// absentTables warns at its name of each table statement sql reads that
// the metadata source says does not exist and that no action of the
// project creates (a project's own table is known, or its reason is). A
// snapshot may be partial: it is believed for a table the project
// declares (the editor's missing-table warning on its ref() gives way to
// this one) and for a table of a dataset it lists in full
// (ListingSource); any other table it lacks keeps the hint. BigQuery's
// word is an error, which the analysis said already. It reports whether
// every table the statement could not see is said so.
func (c *checker) absentTables(a *action, label, sql string, an gsql.Analysis) bool {
	said := 0
	for _, u := range an.Unknown {
		key := strings.ToLower(c.qualify(u))
		w := c.k.warehouse[key]
		if c.own[key] || w == nil || !w.missing || !(c.declared(key) || c.listed(c.qualify(u))) {
			continue
		}
		said++
		line, col := positionOf(sql, u)
		f := c.place(a, label, sql, line, col)
		c.spanName(&f, a, u)
		f.Severity, f.Code = Warning, string(gsql.UnknownTable)
		f.Message = "Table not found: " + c.qualify(u) + " (the metadata source says it does not exist; a snapshot may be partial)"
		dup := slices.ContainsFunc(c.res.Findings, func(g Finding) bool {
			return g.File == f.File && g.Offset == f.Offset && g.Message == f.Message
		})
		if !dup {
			c.res.Findings = append(c.res.Findings, f)
		}
	}
	return said > 0 && said == len(an.Unknown)
}

// declared reports whether the project declares table key (lower case).
func (c *checker) declared(key string) bool {
	for _, d := range c.g.GetDeclarations() {
		if strings.EqualFold(targetPath(d.GetTarget(), c.defaultProject), key) {
			return true
		}
	}
	return false
}

// listed reports whether the metadata source lists every table of the
// dataset of table path (as the SQL writes it, qualified), so that its
// lacking the table means it does not exist.
func (c *checker) listed(path string) bool {
	l, ok := c.opts.Metadata.(ListingSource)
	parts := strings.Split(path, ".")
	return ok && len(parts) == 3 && l.Lists(parts[0], parts[1])
}

// spanName stretches f, placed at the start of table name u as the source
// writes it, over the whole name (place stops at a '-' of a project id).
func (c *checker) spanName(f *Finding, a *action, u string) {
	src := c.file(a.file)
	if src == nil || f.MappedToPlacement || f.Offset >= len(src.text) {
		return
	}
	rest := strings.ToLower(string(src.text[f.Offset:]))
	for _, written := range []string{"`" + u + "`", "`" + strings.ReplaceAll(u, ".", "`.`") + "`", u} {
		if strings.HasPrefix(rest, strings.ToLower(written)) {
			f.EndOffset = f.Offset + len(written)
			f.EndLine, f.EndCol = src.m.PositionUTF16(f.EndOffset)
			return
		}
	}
}

// report turns an analysis into findings.
func (c *checker) report(a *action, label, sql string, an gsql.Analysis) {
	if syntaxError(an) && compileFailed(c.g, a.file) {
		// Core compiled what it could of a file with a compilation error
		// (a ref() to a missing action became nothing): that error says
		// what is wrong, a syntax error in its wake would mislead.
		an = gsql.Analysis{Skipped: "its file has a compilation error, and GoogleSQL cannot parse what core made of it (" + an.Problem.Message + ")"}
	}
	switch {
	case an.Skipped != "":
		c.res.Skipped++
		c.block(c.rootOf(an))
		for _, u := range an.Unknown {
			c.res.Unknown[u] = append(c.res.Unknown[u], a.name)
		}
		if c.absentTables(a, label, sql, an) {
			return // each table it reads is said at its name
		}
		if c.hinted[a.name] {
			return // one hint per action says enough
		}
		c.hinted[a.name] = true
		f := c.place(a, label, sql, 0, 0)
		f.Severity, f.Code = Hint, CodeSkipped
		f.Message = "SQL not checked: " + c.why(an)
		c.res.Findings = append(c.res.Findings, f)
	case an.Problem != nil:
		c.res.Analysed++
		p := an.Problem
		f := c.place(a, label, sql, p.Line, p.Column)
		f.Message, f.Detail, f.Code = p.Message, p.Detail, string(p.Kind)
		switch {
		case p.Kind.Certain():
			f.Severity = Error
		case p.Kind == gsql.OtherError:
			f.Severity = Warning
		default:
			f.Severity = Hint
			f.Message = "GoogleSQL's analyzer reports: " + p.Message + " (BigQuery's may not)"
		}
		for _, g := range c.res.Findings {
			if g.Action == f.Action && g.Offset == f.Offset && g.Message == f.Message && g.File == f.File {
				// The incremental variant of a query, where they differ only
				// in a ${when(incremental(), …)}: one mistake, one finding.
				return
			}
		}
		c.res.Findings = append(c.res.Findings, f)
	default:
		c.res.Analysed++
	}
}
