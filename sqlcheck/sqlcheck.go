// Package sqlcheck analyses the SQL of a compiled Dataform graph with
// GoogleSQL, BigQuery's own analyzer (package gsql), against the tables the
// metadata source knows and the schemas the project's own actions produce:
// actions are analysed in dependency order, and each table's, view's and
// incremental table's output schema is added to the catalog under its
// target, so that downstream SQL is checked against tables that do not
// exist yet. Findings are placed on the .sqlx / .js source where the text
// came from (positions.go).
//
// No false alarms: a statement is analysed only when every table it reads
// has a schema (else it is skipped, with a hint naming the tables), when
// GoogleSQL parses it as one statement (BigQuery may accept syntax GoogleSQL
// lacks: a parse failure is never reported), and only the analyzer's
// certain findings are errors — unknown columns, tables, functions and type
// mismatches; rules BigQuery shares (ambiguous or ungrouped columns) are
// warnings; anything else it rejects is a hint. A statement after a
// pre-operation dfd could not analyse is not analysed either: it may use
// what that pre-operation declared.
//
// It imports gsql, source, adapters and protos/dataformpb.
package sqlcheck

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/gsql"
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
	Code              string // gsql.ErrorKind, or "sql-skipped"
	Action            string // database.schema.name
	Statement         string // which: "query", "incremental query", "pre_operations[0]", "queries[1]"
	StatementLine     int    // 1-based, in the compiled statement (for people reading the SQL)
	StatementColumn   int
	MappedToPlacement bool // the position is where a ${…} or ref() put the text, not the text itself
}

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
	// Jit holds JiT actions' SQL, by target (database.schema.name, any
	// case): the responses of their JiT code, run by the caller under the
	// check policy. Only responses whose database calls were all answered
	// (none failed, none was a dry run standing in for rows) belong here:
	// SQL built from made-up answers may not be the SQL the action runs. A
	// JiT action without a response is not analysed.
	Jit map[string]*dataformpb.JitCompilationResponse
}

// Result is a check of a whole graph.
type Result struct {
	Findings []Finding
	// Schemas are the output schemas dfd inferred, by target
	// (database.schema.name): what hovers and completion show for actions
	// not in the warehouse yet.
	Schemas map[string][]gsql.Column
	// Analysed and Skipped count statements.
	Analysed, Skipped int
	// Unknown are the tables read without a schema, with the actions
	// reading them.
	Unknown map[string][]string
}

// Check analyses every statement of g.
func Check(ctx context.Context, g *dataformpb.CompiledGraph, opts Options) (*Result, error) {
	if opts.MetadataTimeout <= 0 {
		opts.MetadataTimeout = 5 * time.Second
	}
	if opts.Read == nil {
		opts.Read = func(string) ([]byte, bool) { return nil, false }
	}
	defaultProject := g.GetProjectConfig().GetDefaultDatabase()
	cat, err := gsql.NewCatalog(defaultProject)
	if err != nil {
		return nil, err
	}
	c := &checker{
		ctx: ctx, opts: opts, g: g, cat: cat, defaultProject: defaultProject,
		res:      &Result{Schemas: map[string][]gsql.Column{}, Unknown: map[string][]string{}},
		fetched:  map[string]bool{},
		missing:  map[string]bool{},
		own:      map[string]bool{},
		hinted:   map[string]bool{},
		sources:  map[string]*sourceFile{},
		deadline: time.Now().Add(opts.MetadataTimeout),
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

type checker struct {
	ctx            context.Context
	opts           Options
	g              *dataformpb.CompiledGraph
	cat            *gsql.Catalog
	defaultProject string
	res            *Result
	fetched        map[string]bool // warehouse lookups done, by lower-case path
	missing        map[string]bool // tables the warehouse says do not exist
	own            map[string]bool // the project's actions' targets
	hinted         map[string]bool // actions with a skip hint
	sources        map[string]*sourceFile
	deadline       time.Time
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
// of its dataset's matching tables) and adds it; a table the source does
// not know, or cannot model, stays unknown.
func (c *checker) fetch(path string) error {
	key := strings.ToLower(path)
	if c.fetched[key] || c.cat.Has(path) || c.opts.Metadata == nil {
		return nil
	}
	if c.own[key] {
		// The project's own action: what it will produce is its SQL's
		// schema, not whatever an earlier run left in the warehouse.
		return nil
	}
	c.fetched[key] = true
	parts := strings.Split(path, ".")
	if len(parts) != 3 || time.Now().After(c.deadline) {
		return nil
	}
	ctx, cancel := context.WithDeadline(c.ctx, c.deadline)
	defer cancel()
	target := &dataformpb.Target{Database: parts[0], Schema: parts[1], Name: parts[2]}
	if prefix, ok := strings.CutSuffix(parts[2], "*"); ok {
		list, err := c.opts.Metadata.ListTables(ctx, &dataformpb.ListTablesRequest{Database: parts[0], Schema: parts[1]})
		if err != nil {
			return nil
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
				return nil
			}
			for _, col := range tc {
				if !seen[strings.ToLower(col.Name)] {
					seen[strings.ToLower(col.Name)] = true
					cols = append(cols, col)
				}
			}
		}
		if matched == 0 {
			return nil
		}
		return c.cat.Add(gsql.Table{Path: path, Columns: cols, Pseudo: append(partitionPseudo(), gsql.Column{Name: "_TABLE_SUFFIX", Type: gsql.Type{Kind: "STRING"}})})
	}
	md, err := c.opts.Metadata.GetTable(ctx, &dataformpb.GetTableRequest{Target: target})
	if adapters.CodeOf(err) == adapters.NotFound && c.opts.MissingIsCertain {
		c.missing[key] = true
	}
	if err != nil || md == nil {
		return nil
	}
	cols, ok := columnsOf(md.GetFields())
	if !ok {
		return nil
	}
	return c.cat.Add(gsql.Table{Path: path, Columns: cols, Pseudo: partitionPseudo()})
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
		add(&action{target: a.GetTarget(), file: a.GetFileName(), kind: "assertion", jit: a.GetJitCode() != "",
			query: a.GetQuery(), deps: a.GetDependencyTargets()})
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
	if a.jit && !c.jitSQL(a) {
		return nil // its SQL exists only when its JiT code runs
	}
	type stmt struct{ label, sql string }
	script := func(prefix string, pre []string, query string, queries, post []string) []stmt {
		var out []stmt
		for i, s := range pre {
			out = append(out, stmt{fmt.Sprintf("%spre_operations[%d]", prefix, i), s})
		}
		if query != "" {
			out = append(out, stmt{prefix + "query", query})
		}
		for i, s := range queries {
			out = append(out, stmt{fmt.Sprintf("queries[%d]", i), s})
		}
		for i, s := range post {
			out = append(out, stmt{fmt.Sprintf("%spost_operations[%d]", prefix, i), s})
		}
		return out
	}
	run := func(stmts []stmt) error {
		blind := ""
		for _, s := range stmts {
			if blind != "" {
				c.res.Skipped++ // the hint on the statement that blinded it says enough
				continue
			}
			an, err := c.analyze(s.sql)
			if err != nil {
				return err
			}
			if an.Empty {
				continue // a blank pre-operation, say
			}
			c.report(a, s.label, s.sql, an)
			if an.Skipped != "" {
				blind = "it runs after " + s.label + ", which dfd does not analyse (it may declare what this uses)"
			}
			if s.label == "query" && an.Problem == nil && an.Skipped == "" && len(an.Columns) > 0 && a.kind != "assertion" {
				if err := c.cat.Add(gsql.Table{Path: a.name, Columns: an.Columns, Pseudo: partitionPseudo()}); err != nil {
					return err
				}
				c.res.Schemas[a.name] = an.Columns
			}
		}
		return nil
	}
	if err := run(script("", a.preOps, a.query, a.queries, a.postOps)); err != nil {
		return err
	}
	if a.kind != "incremental" || a.incQuery == "" {
		return nil
	}
	// Statements the incremental variant shares with the full one were
	// analysed (and reported) above.
	var inc []stmt
	for _, s := range script("incremental ", a.incPreOps, a.incQuery, nil, a.incPostOps) {
		if !slices.Contains(a.preOps, s.sql) && !slices.Contains(a.postOps, s.sql) && s.sql != a.query {
			inc = append(inc, s)
		}
	}
	if len(inc) == 0 {
		return nil
	}
	return run(inc)
}

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

// analyze analyses stmt; when it reads warehouse tables the catalog lacks,
// it asks the metadata source for them and analyses again.
func (c *checker) analyze(sql string) (gsql.Analysis, error) {
	an, err := c.cat.Analyze(c.ctx, sql)
	if err != nil {
		return an, err
	}
	if len(an.Unknown) > 0 && c.opts.Metadata != nil {
		fetchedAny := false
		for _, u := range an.Unknown {
			path := c.qualify(u)
			if !c.fetched[strings.ToLower(path)] {
				if err := c.fetch(path); err != nil {
					return an, err
				}
				fetchedAny = fetchedAny || c.cat.Has(path)
			}
		}
		if fetchedAny {
			if an, err = c.cat.Analyze(c.ctx, sql); err != nil {
				return an, err
			}
		}
	}
	for _, u := range an.Unknown {
		if c.missing[strings.ToLower(c.qualify(u))] {
			line, col := positionOf(sql, u)
			return gsql.Analysis{Problem: &gsql.Problem{Kind: gsql.UnknownTable, Line: line, Column: col,
				Message: "Table not found: " + c.qualify(u) + " (BigQuery has no such table)"}}, nil
		}
	}
	return an, nil
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
	return line, columnOf(sql[ls:], off-ls)
}

// why says why a statement was skipped; for unknown tables, the project's
// own actions (whose SQL dfd could not analyse or cannot see: JiT) apart
// from warehouse tables (whose metadata the user can give).
func (c *checker) why(an gsql.Analysis) string {
	if len(an.Unknown) == 0 {
		return an.Skipped
	}
	var own, foreign []string
	for _, u := range an.Unknown {
		if c.own[strings.ToLower(c.qualify(u))] {
			own = append(own, u)
		} else {
			foreign = append(foreign, u)
		}
	}
	var parts []string
	if len(foreign) > 0 {
		parts = append(parts, "it reads "+strings.Join(foreign, ", ")+", whose schema dfd does not know (give dfd the warehouse's metadata: the dfd.metadata.source setting, or --metadata FILE)")
	}
	if len(own) > 0 {
		parts = append(parts, "it reads "+strings.Join(own, ", ")+", whose own SQL dfd could not analyse (a JiT action, or one with a problem of its own)")
	}
	return strings.Join(parts, "; ")
}

// report turns an analysis into findings.
func (c *checker) report(a *action, label, sql string, an gsql.Analysis) {
	switch {
	case an.Skipped != "":
		c.res.Skipped++
		for _, u := range an.Unknown {
			c.res.Unknown[u] = append(c.res.Unknown[u], a.name)
		}
		if c.hinted[a.name] {
			return // one hint per action says enough
		}
		c.hinted[a.name] = true
		f := c.place(a, label, sql, 0, 0)
		f.Severity, f.Code = Hint, "sql-skipped"
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
		c.res.Findings = append(c.res.Findings, f)
	default:
		c.res.Analysed++
	}
}
