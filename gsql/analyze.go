package gsql

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	googlesql "github.com/goccy/go-googlesql"
)

// Type is a column type in BigQuery's words: Kind is "INT64", "STRING",
// "NUMERIC", …, or "ARRAY" (Elem set) or "STRUCT" (Fields set).
type Type struct {
	Kind   string
	Elem   *Type
	Fields []Column
}

func (t Type) String() string {
	switch t.Kind {
	case "ARRAY":
		if t.Elem == nil {
			return "ARRAY<?>"
		}
		return "ARRAY<" + t.Elem.String() + ">"
	case "STRUCT":
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + " " + f.Type.String()
		}
		return "STRUCT<" + strings.Join(parts, ", ") + ">"
	}
	return t.Kind
}

// Column is a named column (or STRUCT field).
type Column struct {
	Name        string
	Type        Type
	Description string
}

// Table is a table the analyzer may read: a warehouse table from the
// metadata source, or an action's inferred output. Path is
// "project.dataset.table" (a wildcard table ends in "*").
type Table struct {
	Path    string
	Columns []Column
	// Pseudo are columns a query may name but SELECT * does not return
	// (_PARTITIONTIME, _PARTITIONDATE, _TABLE_SUFFIX).
	Pseudo []Column
}

// Catalog is the tables one analysis sees: BigQuery's built-in functions
// and types plus Added tables, each findable as `project.dataset.table` (one
// quoted name or three), and as `dataset.table` in the default project.
// A Catalog is used by one goroutine at a time; the engine runs one
// analysis at a time anyway.
type Catalog struct {
	defaultProject string
	cat            *googlesql.SimpleCatalog
	tf             *googlesql.TypeFactory
	opts           *googlesql.AnalyzerOptions
	tables         map[string]Table // by lower-case path
	nested         map[string]*googlesql.SimpleCatalog
	// tempFns are the temporary functions statements declared (CREATE
	// TEMP FUNCTION in pre_operations), by lower-case name: true when
	// registered with its signature, false when dfd could not register it
	// (a templated ANY TYPE argument) or when two actions declare it
	// differently — calls to those are never reported.
	tempFns map[string]bool
	// script holds the variables the current script declared (script.go).
	script *scriptScope
	// tempTables are the tables CREATE TEMP TABLE statements created, by
	// lower-case name: dfd does not keep their schemas (another action
	// may create one of the same name), so statements reading them are
	// skipped, never checked against no table.
	tempTables map[string]bool
	// declared are short hashes of the statements that declared a
	// temporary function or table, in order; stateKey sums them up with
	// the declarations' outcomes (StateKey).
	declared []string
	stateKey string
	// registered are the temporary functions this catalog registered, by
	// short hash of the declaring statement; reuse are a previous
	// catalog's (Carry), registered again without analysing their
	// statements.
	registered, reuse map[string]tempDecl
	keep              []*googlesql.AnalyzerOutput // owners of registered functions' signatures
	lineage           bool                        // SetLineage: Analyze fills Analysis.Lineage (lineage.go)
	// uses is set while ColumnUses runs (columnuses.go); usesOut is what
	// Analyze found for it.
	uses      *usesRequest
	usesOut   *ColumnUses
	outputOut *OutputItem // OutputItem's (outputitem.go)
	// depth counts the Analyze calls under way: more than one when a
	// script's parts are analysed one by one.
	depth int
}

// analyzerBase is what every catalog shares: the language, the analyzer
// options and the type factory (built-in functions are added per catalog).
var (
	analyzerOnce sync.Once
	analyzerLang *googlesql.LanguageOptions
	analyzerErr  error
)

func analyzerLanguage() (*googlesql.LanguageOptions, error) {
	analyzerOnce.Do(func() {
		if _, err := theEngine(); err != nil {
			analyzerErr = err
			return
		}
		analyzerLang, analyzerErr = languageOptions()
	})
	return analyzerLang, analyzerErr
}

// NewCatalog makes an empty catalog; dataset.table names resolve in
// defaultProject.
func NewCatalog(defaultProject string) (*Catalog, error) {
	wasmCollect()
	lang, err := analyzerLanguage()
	if err != nil {
		return nil, err
	}
	tf, err := googlesql.NewTypeFactory()
	if err != nil {
		return nil, fmt.Errorf("type factory: %w", err)
	}
	cat, err := googlesql.NewSimpleCatalog("dfd", tf)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := cat.AddBuiltinFunctionsAndTypes(&googlesql.BuiltinFunctionOptions{LanguageOptions: lang}); err != nil {
		return nil, fmt.Errorf("built-in functions: %w", err)
	}
	// BigQuery's type aliases, which GoogleSQL's external mode lacks
	// ("Type not found: INTEGER" in a CAST, a DDL column, a temporary
	// function's signature).
	for alias, kind := range map[string]string{"INT": "INT64", "SMALLINT": "INT64", "INTEGER": "INT64", "BIGINT": "INT64",
		"TINYINT": "INT64", "BYTEINT": "INT64", "DECIMAL": "NUMERIC", "BIGDECIMAL": "BIGNUMERIC"} {
		typ, err := (&Catalog{tf: tf}).gsqlType(Type{Kind: kind})
		if err != nil {
			return nil, err
		}
		if err := cat.AddType(alias, typ); err != nil {
			return nil, fmt.Errorf("type alias %s: %w", alias, err)
		}
	}
	opts, err := googlesql.NewAnalyzerOptions2()
	if err != nil {
		return nil, fmt.Errorf("analyzer options: %w", err)
	}
	if err := opts.SetLanguage(lang); err != nil {
		return nil, err
	}
	if err := opts.SetErrorMessageMode(googlesql.ErrorMessageModeErrorMessageOneLine); err != nil {
		return nil, err
	}
	// Dataform SQL has no query parameters, but JiT and operations may:
	// their types are BigQuery's business, never an error of dfd's.
	if err := opts.SetAllowUndeclaredParameters(true); err != nil {
		return nil, err
	}
	c := &Catalog{defaultProject: defaultProject, cat: cat, tf: tf, opts: opts,
		tables: map[string]Table{}, nested: map[string]*googlesql.SimpleCatalog{}, tempFns: map[string]bool{},
		tempTables: map[string]bool{}}
	for _, v := range systemVariables {
		typ, err := c.gsqlType(v.Type)
		if err != nil {
			return nil, err
		}
		if err := opts.AddSystemVariable(strings.Split(v.Name, "."), typ); err != nil {
			return nil, fmt.Errorf("system variable @@%s: %w", v.Name, err)
		}
	}
	return c, nil
}

// systemVariables are BigQuery's (docs.cloud.google.com/bigquery/docs/
// reference/system-variables), which GoogleSQL knows only when told. One
// it does not know is never reported (beyondGoogleSQL); setting the
// default dataset skips the statement, so that sqlcheck does not analyse
// the unqualified table names after it against no dataset.
var systemVariables = []Column{
	{Name: "current_job_id", Type: Type{Kind: "STRING"}},
	{Name: "dataset_id", Type: Type{Kind: "STRING"}},
	{Name: "dataset_project_id", Type: Type{Kind: "STRING"}},
	{Name: "error.formatted_stack_trace", Type: Type{Kind: "STRING"}},
	{Name: "error.message", Type: Type{Kind: "STRING"}},
	{Name: "error.statement_text", Type: Type{Kind: "STRING"}},
	{Name: "error.stack_trace", Type: Type{Kind: "ARRAY", Elem: &Type{Kind: "STRUCT", Fields: []Column{
		{Name: "line", Type: Type{Kind: "INT64"}}, {Name: "column", Type: Type{Kind: "INT64"}},
		{Name: "filename", Type: Type{Kind: "STRING"}}, {Name: "location", Type: Type{Kind: "STRING"}}}}}},
	{Name: "last_job_id", Type: Type{Kind: "STRING"}},
	{Name: "location", Type: Type{Kind: "STRING"}},
	{Name: "project_id", Type: Type{Kind: "STRING"}},
	{Name: "query_label", Type: Type{Kind: "STRING"}},
	{Name: "reservation", Type: Type{Kind: "STRING"}},
	{Name: "row_count", Type: Type{Kind: "INT64"}},
	{Name: "script.bytes_billed", Type: Type{Kind: "INT64"}},
	{Name: "script.bytes_processed", Type: Type{Kind: "INT64"}},
	{Name: "script.creation_time", Type: Type{Kind: "TIMESTAMP"}},
	{Name: "script.job_id", Type: Type{Kind: "STRING"}},
	{Name: "script.num_child_jobs", Type: Type{Kind: "INT64"}},
	{Name: "script.slot_ms", Type: Type{Kind: "INT64"}},
	{Name: "session_id", Type: Type{Kind: "STRING"}},
	{Name: "time_zone", Type: Type{Kind: "STRING"}},
}

// Has reports whether the catalog has a table of this path (case
// insensitive, as BigQuery's dataset and table names are not, but dfd
// cannot know a project's collation: a miss is only ever a skipped check).
func (c *Catalog) Has(path string) bool {
	_, ok := c.tables[strings.ToLower(path)]
	return ok
}

// Table is the table of this path, if the catalog has it.
func (c *Catalog) Table(path string) (Table, bool) {
	t, ok := c.tables[strings.ToLower(path)]
	return t, ok
}

// Add makes t findable. Adding a path twice replaces nothing (the first
// schema wins): callers add warehouse tables first, or inferred ones.
func (c *Catalog) Add(t Table) error {
	key := strings.ToLower(t.Path)
	if _, ok := c.tables[key]; ok {
		return nil
	}
	parts := strings.Split(t.Path, ".")
	if len(parts) != 3 {
		return fmt.Errorf("table path %q is not project.dataset.table", t.Path)
	}
	// One quoted name: `p.d.t`.
	if err := c.addAt(c.cat, t.Path, t); err != nil {
		return err
	}
	// Three names: p.d.t, `p`.`d`.`t`.
	dsCat, err := c.sub(c.cat, parts[0], parts[1])
	if err != nil {
		return err
	}
	if err := c.addAt(dsCat, parts[2], t); err != nil {
		return err
	}
	// In the default project: d.t, `d.t`.
	if strings.EqualFold(parts[0], c.defaultProject) {
		dflt, err := c.sub(c.cat, "", parts[1])
		if err != nil {
			return err
		}
		if err := c.addAt(dflt, parts[2], t); err != nil {
			return err
		}
		if err := c.addAt(c.cat, parts[1]+"."+parts[2], t); err != nil {
			return err
		}
	}
	c.tables[key] = t
	return nil
}

// sub is the catalog of dataset ds in project (project "" = the root).
func (c *Catalog) sub(root *googlesql.SimpleCatalog, project, ds string) (*googlesql.SimpleCatalog, error) {
	parent := root
	key := ""
	if project != "" {
		key = strings.ToLower(project)
		p, ok := c.nested[key]
		if !ok {
			var err error
			if p, err = googlesql.NewSimpleCatalog(project, c.tf); err != nil {
				return nil, err
			}
			if err := root.AddCatalog(p); err != nil { // not owned: c.nested keeps it alive and usable
				return nil, fmt.Errorf("catalog %s: %w", project, err)
			}
			c.nested[key] = p
		}
		parent = p
	}
	dkey := key + "\x00" + strings.ToLower(ds)
	d, ok := c.nested[dkey]
	if !ok {
		var err error
		if d, err = googlesql.NewSimpleCatalog(ds, c.tf); err != nil {
			return nil, err
		}
		if err := parent.AddCatalog(d); err != nil {
			return nil, fmt.Errorf("catalog %s.%s: %w", project, ds, err)
		}
		c.nested[dkey] = d
	}
	return d, nil
}

func (c *Catalog) addAt(cat *googlesql.SimpleCatalog, name string, t Table) error {
	st, err := googlesql.NewSimpleTable(name, 0)
	if err != nil {
		return err
	}
	add := func(col Column, pseudo bool) error {
		typ, err := c.gsqlType(col.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Path, col.Name, err)
		}
		sc, err := googlesql.NewSimpleColumn(name, col.Name, typ, pseudo, true)
		if err != nil {
			return err
		}
		return st.AddColumn2(sc, true)
	}
	for _, col := range t.Columns {
		if err := add(col, false); err != nil {
			return err
		}
	}
	for _, col := range t.Pseudo {
		if err := add(col, true); err != nil {
			return err
		}
	}
	return cat.AddOwnedTable(st)
}

// gsqlType is t in the engine's type factory.
func (c *Catalog) gsqlType(t Type) (googlesql.Googlesql_TypeNode, error) {
	tf := c.tf
	switch strings.ToUpper(t.Kind) {
	case "INT64", "INTEGER", "INT", "SMALLINT", "BIGINT", "TINYINT", "BYTEINT":
		return tf.GetInt64()
	case "FLOAT64", "FLOAT", "DOUBLE":
		return tf.GetDouble()
	case "BOOL", "BOOLEAN":
		return tf.GetBool()
	case "STRING":
		return tf.GetString()
	case "BYTES":
		return tf.GetBytes()
	case "DATE":
		return tf.GetDate()
	case "DATETIME":
		return tf.GetDatetime()
	case "TIME":
		return tf.GetTime()
	case "TIMESTAMP":
		return tf.GetTimestamp()
	case "NUMERIC", "DECIMAL":
		return tf.GetNumeric()
	case "BIGNUMERIC", "BIGDECIMAL":
		return tf.GetBignumeric()
	case "GEOGRAPHY":
		return tf.GetGeography()
	case "JSON":
		return tf.GetJson()
	case "INTERVAL":
		return tf.GetInterval()
	case "ARRAY":
		if t.Elem == nil {
			return nil, errors.New("ARRAY without an element type")
		}
		e, err := c.gsqlType(*t.Elem)
		if err != nil {
			return nil, err
		}
		return tf.MakeArrayType2(e)
	case "STRUCT", "RECORD":
		fields := make([]*googlesql.StructField, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := c.gsqlType(f.Type)
			if err != nil {
				return nil, err
			}
			fields[i] = &googlesql.StructField{Name: f.Name, Type_: ft}
		}
		return tf.MakeStructTypeFromVector2(fields)
	}
	return nil, fmt.Errorf("type %s is not known to dfd", t.Kind)
}

// ErrorKind classifies what the analyzer found.
type ErrorKind string

const (
	UnknownColumn   ErrorKind = "unknown-column"
	UnknownTable    ErrorKind = "unknown-table"
	UnknownFunction ErrorKind = "unknown-function"
	TypeMismatch    ErrorKind = "type-mismatch"
	// SyntaxError is a statement GoogleSQL's parser rejects, of no kind
	// BigQuery runs and GoogleSQL lacks (syntax.go): BigQuery's parser is
	// GoogleSQL's, so it rejects it too.
	SyntaxError ErrorKind = "sql-syntax"
	// OtherError is a rule of BigQuery's that GoogleSQL applies the same
	// way (an ambiguous column, a column neither grouped nor aggregated):
	// a warning.
	OtherError ErrorKind = "sql"
	// UnsureError is anything else the analyzer rejects: GoogleSQL's
	// open-source analyzer is not BigQuery, so it is only a hint.
	UnsureError ErrorKind = "sql-unsure"
)

// Certain reports whether a problem of this kind is an error BigQuery
// would report too.
func (k ErrorKind) Certain() bool {
	switch k {
	case UnknownColumn, UnknownTable, UnknownFunction, TypeMismatch, SyntaxError:
		return true
	}
	return false
}

// Problem is what the analyzer found wrong with a statement: the first
// problem only (the analyzer stops there). Line and Column are GoogleSQL's
// "[at L:C]", 1-based in the statement. Measured on go-googlesql v0.3.0
// (TestProblemColumnsAreCodePointsWithTabStops): a line ends at "\n",
// "\r\n" or a lone "\r"; a column counts Unicode code points, not bytes
// ('é' and '🙂' are one column each, not 2 or 4), and a tab advances to
// the next tab stop of 8 (columns 9, 17, 25, …), so a caller mapping a
// position back to source bytes must walk the line the same way.
type Problem struct {
	Kind    ErrorKind
	Message string // the first line of the analyzer's message, without the position
	Detail  string // the rest (candidate signatures of "No matching signature", …)
	Line    int
	Column  int
}

// Analysis is the outcome of analysing one statement.
type Analysis struct {
	// Problem is set when the analyzer rejects the statement.
	Problem *Problem
	// Columns is the output schema of a query.
	Columns []Column
	// Skipped says why the statement was not analysed (no problem is
	// then certain): a table it reads has no schema, it is a kind of
	// statement BigQuery runs and GoogleSQL's parser does not know.
	Skipped string
	// Unknown are the tables the statement reads that have no schema.
	Unknown []string
	// Empty: the text holds no statement (blank, or only comments).
	Empty bool
	// Lineage is, with SetLineage, where each of Columns comes from (lineage.go).
	Lineage []ColumnLineage
	// Declared are the variables the statement declared, when it is one
	// DECLARE: a caller that remembers its analysis declares them again
	// with Redeclare rather than analysing it again.
	Declared []Variable
}

// Variable is a script variable a DECLARE declared.
type Variable struct {
	Name string
	Type Type
}

// noStatement is reads' why for a text without a statement.
const noStatement = "no statement"

var atRE = regexp.MustCompile(`\s*\[at (\d+):(\d+)\]\s*$`)

// scriptingRE recognises the analyzer's answer to a scripting statement,
// which only the script entry points take.
var scriptingRE = regexp.MustCompile(`^(?:Syntax error: Unexpected keyword (DECLARE|SET|IF|BEGIN|LOOP|WHILE|REPEAT|FOR|CALL|EXECUTE|RAISE|RETURN|BREAK|LEAVE|CONTINUE|ITERATE|CASE)\b|Statement not supported: (` + strings.Join(slices.Sorted(maps.Keys(scriptingNodes)), "|") + `)\b)`)

// scriptingNodes are the parser's names of scripting statements (what
// "Statement not supported: …" names) and their keywords.
var scriptingNodes = map[string]string{
	"VariableDeclaration": "DECLARE", "SingleAssignment": "SET", "Assignment": "SET", "AssignmentFromStruct": "SET",
	"IfStatement": "IF", "BeginEndBlock": "BEGIN", "WhileStatement": "WHILE", "LoopStatement": "LOOP",
	"RepeatStatement": "REPEAT", "ForInStatement": "FOR", "CallStatement": "CALL", "ExecuteImmediateStatement": "EXECUTE IMMEDIATE",
	"RaiseStatement": "RAISE", "ReturnStatement": "RETURN", "BreakStatement": "BREAK", "ContinueStatement": "CONTINUE",
	"CaseStatement": "CASE",
}

// Analyze analyses one statement against the catalog. It is not an error
// when the statement is wrong; errors are failures of the engine.
func (c *Catalog) Analyze(ctx context.Context, stmt string) (an Analysis, err error) {
	if err := ctx.Err(); err != nil {
		return Analysis{}, err
	}
	if len(stmt) > MaxStatementBytes {
		return Analysis{Skipped: fmt.Sprintf("statement of %s is longer than the %s dfd analyses", kib(len(stmt)), kib(MaxStatementBytes))}, nil
	}
	if len(c.reuse) > 0 {
		// A temporary function a previous catalog registered from this
		// very statement: registered again as it was, as analysing the
		// statement would.
		sum := sha256.Sum256([]byte(stmt))
		hash := hex.EncodeToString(sum[:8])
		if d, ok := c.reuse[hash]; ok {
			c.declared = append(c.declared, hash)
			defer func() { c.stateKey = c.computeStateKey() }()
			return Analysis{}, c.register(hash, d)
		}
	}
	// Parse first: a statement GoogleSQL cannot parse is a syntax error
	// (syntax.go), unless it is of a kind BigQuery runs and GoogleSQL
	// lacks.
	c.depth++
	defer func() { c.depth-- }()
	st, why, err := c.reads(stmt)
	if err != nil {
		return Analysis{}, err
	}
	if why == noStatement {
		return Analysis{Empty: true}, nil
	}
	if why != "" {
		return Analysis{Skipped: why}, nil
	}
	if st.syntax != nil {
		return Analysis{Problem: st.syntax}, nil
	}
	if st.script != nil {
		return c.analyzeScript(ctx, stmt, st.script)
	}
	if st.tempTable != "" || st.tempFunction != "" {
		sum := sha256.Sum256([]byte(stmt))
		c.declared = append(c.declared, hex.EncodeToString(sum[:8]))
		// Only declaring statements change what StateKey covers.
		defer func() { c.stateKey = c.computeStateKey() }()
	}
	if st.tempTable != "" {
		c.tempTables[strings.ToLower(st.tempTable)] = true
	}
	if name := strings.ToLower(st.tempFunction); name != "" {
		// A CREATE TEMP FUNCTION dfd could not register still declares
		// the function for the statements after it: their calls are
		// skipped, never "Function not found".
		defer func() {
			if err == nil && (an.Problem != nil || an.Skipped != "") {
				c.tempFns[name] = false
			}
		}()
	}
	if st.setsDefaultDataset != "" {
		return Analysis{Skipped: "it sets @@" + st.setsDefaultDataset + ", which decides what the table names after it mean"}, nil
	}
	var unknown []string
	for _, r := range st.tables {
		if !c.Has(c.qualify(r)) {
			unknown = append(unknown, r)
		}
	}
	if len(unknown) > 0 {
		return Analysis{Skipped: "reads " + strings.Join(unknown, ", ") + ", whose schema dfd does not know", Unknown: unknown}, nil
	}
	if st.declares != nil {
		if c.uses != nil {
			// Analysed (and its variables declared) by the check already;
			// its default's column uses are not looked for.
			return Analysis{Skipped: "dfd does not look into DECLARE statements for column uses"}, nil
		}
		return c.declareVariables(ctx, stmt, *st.declares)
	}
	if st.assigns != nil && c.uses == nil {
		return c.assign(ctx, stmt, *st.assigns)
	}
	// The statement parsed above is resolved as it is: parsing is a third
	// of an analysis.
	if c.uses != nil {
		if err := c.recordLocations(true); err != nil {
			return Analysis{}, err
		}
		defer func() {
			if rerr := c.recordLocations(false); err == nil {
				err = rerr
			}
		}()
	}
	wasmGarbage(stmt)
	out, err := googlesql.AnalyzeStatementFromParserAST(st.node, c.opts, stmt, c.catalog(), c.tf)
	runtime.KeepAlive(st.out)
	if err != nil {
		p := problemOf(err.Error())
		if why := c.beyondGoogleSQL(p); why != "" {
			return Analysis{Skipped: why}, nil
		}
		if name := strings.ToUpper(nameAfterColon(p.Message)); p.Kind == UnknownColumn && st.createsTable &&
			(name == "_PARTITIONTIME" || name == "_PARTITIONDATE") {
			// CREATE TABLE … PARTITION BY _PARTITIONDATE (or
			// DATE(_PARTITIONTIME)): ingestion-time partitioning, whose
			// pseudo-columns GoogleSQL's analyzer does not know in DDL.
			return Analysis{Skipped: "it partitions by ingestion time (" + name + "), which GoogleSQL's analyzer does not take"}, nil
		}
		if name := nameAfterColon(p.Message); p.Kind == UnknownTable && c.tempTables[strings.ToLower(name)] {
			return Analysis{Skipped: "it reads the temporary table " + name + ", whose schema dfd does not keep"}, nil
		}
		if p.Kind == UnknownTable {
			// A qualified name the scan above took for a local name:
			// that dfd has no schema for it does not mean BigQuery has
			// no such table.
			if name := nameAfterColon(p.Message); strings.Contains(name, ".") {
				return Analysis{Skipped: "reads " + name + ", whose schema dfd does not know", Unknown: []string{name}}, nil
			}
		}
		return Analysis{Problem: p}, nil
	}
	res, err := out.ResolvedStatement()
	if err != nil {
		return Analysis{}, err
	}
	if c.uses != nil && c.uses.output {
		if c.outputOut, err = c.outputItem(st, stmt, res); err != nil {
			return Analysis{}, fmt.Errorf("the item naming output column %s: %w", c.uses.column, err)
		}
	} else if c.uses != nil {
		e, err := theEngine()
		if err != nil {
			return Analysis{}, err
		}
		if c.usesOut, err = c.columnUses(e, st, stmt, res); err != nil {
			return Analysis{}, fmt.Errorf("references to %s.%s: %w", c.uses.table, c.uses.column, err)
		}
	}
	if fn, ok := res.(*googlesql.ResolvedCreateFunctionStmt); ok {
		sum := sha256.Sum256([]byte(stmt))
		return Analysis{}, c.declare(hex.EncodeToString(sum[:8]), out, fn)
	}
	q, ok := res.(*googlesql.ResolvedQueryStmt)
	if !ok {
		return Analysis{}, nil // DML, DDL: checked, no output schema
	}
	n, err := q.OutputColumnListSize()
	if err != nil {
		return Analysis{}, err
	}
	var cols []Column
	for i := int32(0); i < n; i++ {
		oc, err := q.OutputColumnList2(i)
		if err != nil {
			return Analysis{}, err
		}
		name, err := oc.Name()
		if err != nil {
			return Analysis{}, err
		}
		rc, err := oc.Column()
		if err != nil {
			return Analysis{}, err
		}
		gt, err := rc.Type()
		if err != nil {
			return Analysis{}, err
		}
		t, err := typeOf(gt)
		if err != nil {
			return Analysis{}, err
		}
		cols = append(cols, Column{Name: name, Type: t})
	}
	if c.lineage {
		return Analysis{Columns: cols, Lineage: c.lineageOf(q, st.tables, cols)}, nil
	}
	return Analysis{Columns: cols}, nil
}

// qualify is a table name as read in SQL, as a full path.
func (c *Catalog) qualify(name string) string {
	if strings.Count(name, ".") == 1 {
		return c.defaultProject + "." + name
	}
	return name
}

func problemOf(msg string) *Problem {
	msg = strings.TrimSpace(msg)
	p := &Problem{}
	// The position ends the message, after any detail lines.
	if m := atRE.FindStringSubmatchIndex(msg); m != nil {
		p.Line, _ = strconv.Atoi(msg[m[2]:m[3]])
		p.Column, _ = strconv.Atoi(msg[m[4]:m[5]])
		msg = msg[:m[0]]
	}
	first, rest, _ := strings.Cut(msg, "\n")
	p.Message, p.Detail = strings.TrimSpace(first), strings.TrimSpace(rest)
	switch lower := strings.ToLower(p.Message); {
	case strings.HasPrefix(lower, "unrecognized name"), strings.Contains(lower, "does not have a field named"),
		strings.HasPrefix(lower, "field name ") && strings.Contains(lower, "does not exist in"),
		strings.HasPrefix(lower, "name ") && strings.Contains(lower, "not found inside"),
		strings.HasPrefix(lower, "column ") && strings.Contains(lower, "in using clause not found"):
		p.Kind = UnknownColumn
	case strings.HasPrefix(lower, "table not found"):
		p.Kind = UnknownTable
	case strings.HasPrefix(lower, "function not found"):
		p.Kind = UnknownFunction
	case strings.HasPrefix(lower, "no matching signature"), strings.Contains(lower, "cannot be assigned to"),
		strings.Contains(lower, "has type") && strings.Contains(lower, "expected"):
		p.Kind = TypeMismatch
	case strings.Contains(lower, " is ambiguous"), strings.Contains(lower, "neither grouped nor aggregated"),
		strings.HasPrefix(lower, "aggregate function") && strings.Contains(lower, "not allowed in"),
		strings.Contains(lower, "must be qualified with a dataset"):
		p.Kind = OtherError
	default:
		p.Kind = UnsureError
	}
	return p
}

// beyondGoogleSQL says why a problem the analyzer reports is not one dfd
// may report: what it rejects is BigQuery syntax or a BigQuery function
// the open-source analyzer lacks, a routine or model in the warehouse, or
// a call to a temporary function dfd could not register.
func (c *Catalog) beyondGoogleSQL(p *Problem) string {
	msg := p.Message
	switch {
	case strings.HasPrefix(msg, "Syntax error"), strings.HasPrefix(msg, "Statement not supported"):
		// The parser took it (reads), the analyzer does not: a scripting
		// statement (DECLARE, SET, IF) or a BigQuery form.
		if m := scriptingRE.FindStringSubmatch(msg); m != nil {
			kw := strings.ToUpper(m[1])
			if m[2] != "" {
				kw = scriptingNodes[m[2]]
			}
			return "it is a scripting statement (" + kw + "), which dfd does not analyse"
		}
		return "GoogleSQL's analyzer does not take it (" + msg + "); BigQuery may"
	case p.Kind == TypeMismatch && strings.HasPrefix(msg, "No matching signature for function ") &&
		narrowerSignatures[signatureFunction(msg)] != "" && strings.Contains(argumentTypes(p.Detail), narrowerSignatures[signatureFunction(msg)]):
		name := signatureFunction(msg)
		return "it calls " + name + " on " + narrowerSignatures[name] + ", a BigQuery signature GoogleSQL's analyzer lacks"
	case p.Kind == UnknownColumn && strings.EqualFold(nameAfterColon(msg), "_FILE_NAME"):
		// The pseudo-column of BigQuery's external tables over files,
		// which no table schema dfd is given carries.
		return "it uses _FILE_NAME, the pseudo-column of external tables, which dfd does not model"
	case p.Kind == UnknownColumn && strings.HasPrefix(nameAfterColon(msg), "@@"):
		// A system variable BigQuery documents after systemVariables was
		// written (or a misspelt one, which BigQuery rejects: missed).
		return "it uses the system variable " + nameAfterColon(msg) + ", which dfd does not know"
	case strings.HasPrefix(msg, "Table-valued function not found"), strings.HasPrefix(msg, "Model not found"),
		strings.HasPrefix(msg, "Connection not found"), strings.HasPrefix(msg, "Procedure not found"):
		return "it uses " + nameAfterColon(msg) + ", which dfd does not model"
	case p.Kind == UnknownFunction:
		name := nameAfterColon(msg)
		if strings.Contains(name, ".") {
			// A persistent UDF (dataset.fn) or a BigQuery namespace
			// (ML., AI., OBJ.) GoogleSQL lacks.
			return "it calls " + name + ", a routine dfd does not know"
		}
		if registered, declared := c.tempFns[strings.ToLower(name)]; declared && !registered {
			return "it calls the temporary function " + name + ", whose signature dfd could not register"
		}
		if BigQueryHasFunction(name) {
			return "it calls " + name + ", a BigQuery function GoogleSQL's analyzer lacks"
		}
	}
	// A temporary function declared twice, or whose declaration dfd
	// could not register: its calls may be checked against the other
	// declaration, or against nothing. The name must be a whole word of
	// the message: a function f excuses no error that merely has an f.
	lower := strings.ToLower(msg)
	for name, registered := range c.tempFns {
		if !registered && containsWord(lower, name) {
			return "it calls the temporary function " + name + ", declared differently by another action or not registered"
		}
	}
	return ""
}

// narrowerSignatures are the functions GoogleSQL v0.3.0's analyzer has
// with fewer argument types than BigQuery documents, and the type it
// lacks: "No matching signature" for a call with that type is not
// certain. Any other call's stays a type mismatch.
var narrowerSignatures = map[string]string{
	// BigQuery: "the Levenshtein distance between two STRING or BYTES
	// values"; GoogleSQL v0.3.0: EDIT_DISTANCE(STRING, STRING, …) only.
	"EDIT_DISTANCE": "BYTES",
}

// argumentTypes is the "Argument types: …" line of a "No matching
// signature" message's detail.
func argumentTypes(detail string) string {
	for _, line := range strings.Split(detail, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "Argument types:"); ok {
			return t
		}
	}
	return ""
}

// signatureFunction is F in "No matching signature for function F …",
// upper case, without a SAFE. prefix.
func signatureFunction(msg string) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(msg, "No matching signature for function "), " ")
	return strings.TrimPrefix(strings.ToUpper(name), "SAFE.")
}

// tempDecl is a registered temporary function: what registering it again
// takes. out owns sig.
type tempDecl struct {
	path []string
	mode googlesql.FunctionEnums_Mode
	sig  *googlesql.FunctionSignature
	out  *googlesql.AnalyzerOutput
}

// Carry lets c register the temporary functions prev registered without
// analysing their declarations again, when the same statements declare
// them (a check after an edit analyses the same pre-operations).
func (c *Catalog) Carry(prev *Catalog) {
	if prev == nil {
		return
	}
	c.reuse = prev.registered
}

// register adds a temporary function to the catalog.
func (c *Catalog) register(hash string, d tempDecl) error {
	name := strings.ToLower(strings.Join(d.path, "."))
	if _, twice := c.tempFns[name]; twice {
		c.tempFns[name] = false
		return nil
	}
	c.tempFns[name] = false
	f, err := googlesql.NewFunction(d.path, "temp", d.mode, []*googlesql.FunctionSignature{d.sig}, nil)
	if err != nil {
		return fmt.Errorf("temporary function %s: %w", name, err)
	}
	if err := c.cat.AddOwnedFunction(f); err != nil {
		return fmt.Errorf("temporary function %s: %w", name, err)
	}
	forgetKeepAlive(c.cat, f) // else the catalog is never freed (keepalive.go)
	c.keep = append(c.keep, d.out)
	c.tempFns[name] = true
	if c.registered == nil {
		c.registered = map[string]tempDecl{}
	}
	c.registered[hash] = d
	return nil
}

// declare registers the temporary function a CREATE TEMP FUNCTION
// statement declares, so that the statements after it resolve its calls.
// The catalog is shared by every action and a function cannot be removed
// from it: an action calling a temporary function another action declared
// goes unreported (a missed error, never a false one); a name declared
// twice is not trusted at all.
func (c *Catalog) declare(hash string, out *googlesql.AnalyzerOutput, fn *googlesql.ResolvedCreateFunctionStmt) error {
	scope, err := fn.CreateScope()
	if err != nil || scope != googlesql.ResolvedCreateStatementEnums_CreateScopeCreateTemp {
		return err // a persistent function: created by running it, not known here
	}
	path, err := fn.NamePath()
	if err != nil {
		return err
	}
	name := strings.ToLower(strings.Join(path, "."))
	if _, twice := c.tempFns[name]; twice {
		c.tempFns[name] = false
		return nil
	}
	c.tempFns[name] = false
	sig, err := fn.Signature()
	if err != nil {
		return err
	}
	if templated, err := sig.IsTemplated(); err != nil || templated {
		return err // ANY TYPE arguments: resolved per call from the body, which dfd does not keep
	}
	mode := googlesql.FunctionEnums_ModeScalar
	if agg, err := fn.IsAggregate(); err != nil {
		return err
	} else if agg {
		mode = googlesql.FunctionEnums_ModeAggregate
	}
	delete(c.tempFns, name) // register decides "twice" again
	return c.register(hash, tempDecl{path: path, mode: mode, sig: sig, out: out})
}

// containsWord reports whether word occurs in s with no identifier
// character on either side.
func containsWord(s, word string) bool {
	isIdent := func(b byte) bool {
		return b == '_' || ('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z')
	}
	for i := 0; word != ""; {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !isIdent(s[start-1])) && (end == len(s) || !isIdent(s[end])) {
			return true
		}
		i = start + 1
	}
	return false
}

// nameAfterColon is the name in "Table not found: `p.d.t`", "Function not
// found: f; Did you mean g?".
func nameAfterColon(msg string) string {
	_, name, _ := strings.Cut(msg, ":")
	name = strings.TrimSpace(name)
	if i := strings.IndexAny(name, " ;"); i >= 0 {
		name = name[:i]
	}
	return strings.Trim(name, "`")
}

// typeOf is a resolved type in dfd's words.
func typeOf(t googlesql.Googlesql_TypeNode) (Type, error) {
	if ok, err := t.IsArray(); err != nil {
		return Type{}, err
	} else if ok {
		e, err := t.GetElementType()
		if err != nil {
			return Type{}, err
		}
		et, err := typeOf(e)
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: "ARRAY", Elem: &et}, nil
	}
	if ok, err := t.IsStruct(); err != nil {
		return Type{}, err
	} else if ok {
		st, err := t.AsStruct()
		if err != nil {
			return Type{}, err
		}
		fields, err := st.Fields()
		if err != nil {
			return Type{}, err
		}
		out := Type{Kind: "STRUCT"}
		for _, f := range fields {
			ft, err := typeOf(f.Type_)
			if err != nil {
				return Type{}, err
			}
			out.Fields = append(out.Fields, Column{Name: f.Name, Type: ft})
		}
		return out, nil
	}
	if n, ok := t.(interface {
		TypeName(googlesql.ProductMode) (string, error)
	}); ok {
		name, err := n.TypeName(googlesql.ProductModeProductExternal)
		if err != nil {
			return Type{}, err
		}
		return Type{Kind: name}, nil
	}
	return Type{Kind: "UNKNOWN"}, nil
}

// parsedStatement is what the parse tells Analyze about a statement.
type parsedStatement struct {
	// tables are the tables it reads by name (as written: "d.t",
	// "p.d.t"): the FROM and JOIN tables and TABLE arguments, but not
	// the names of its CTEs or paths into a range variable (FROM t,
	// t.items).
	tables []string
	// setsDefaultDataset is "dataset_id" or "dataset_project_id" when it
	// is SET @@dataset_id = … or SET @@dataset_project_id = ….
	setsDefaultDataset string
	// createsTable is set for CREATE [TEMP] TABLE; tempTable is the name
	// CREATE TEMP TABLE creates, tempFunction the one CREATE TEMP
	// FUNCTION declares.
	createsTable bool
	tempTable    string
	tempFunction string
	// script are the parts of a script of several statements, or of an
	// IF, which Analyze analyses one by one (nil for one statement).
	script []scriptPart
	// declares is set for a DECLARE that declares variables dfd can type,
	// assigns for a SET of one variable.
	declares *declaration
	assigns  *assignment
	// node is the statement as parsed, which the analyzer resolves
	// without parsing it again; out owns it.
	node googlesql.ASTStatementNode
	out  *googlesql.ParserOutput
	// syntax is GoogleSQL's parse error, when it is certain (syntax.go).
	syntax *Problem
}

// reads parses stmt; why is set when stmt is not one statement GoogleSQL
// parses and dfd analyses, st.syntax when it is a syntax error.
func (c *Catalog) reads(stmt string) (st parsedStatement, why string, err error) {
	e, err := theEngine()
	if err != nil {
		return st, "", err
	}
	out, perr := e.parse(stmt)
	if perr != nil {
		p, why := syntaxProblem(stmt, perr)
		if why != "" {
			return st, why, nil
		}
		if c.depth > 1 {
			// A part of a script that GoogleSQL parsed whole, which dfd
			// cut out (a body, a condition): a parse error of the part
			// is dfd's doing, not the SQL's.
			return st, "GoogleSQL cannot parse a part of it on its own (" + p.Message + ")", nil
		}
		st.syntax = p
		return st, "", nil
	}
	script, err := out.Script()
	if err != nil {
		return st, "", err
	}
	list, err := script.StatementListNode()
	if err != nil {
		return st, "", err
	}
	n, err := list.NumChildren()
	if err != nil {
		return st, "", err
	}
	if n == 0 {
		return st, noStatement, nil
	}
	if n != 1 {
		why := fmt.Sprintf("a script of %d statements is not analysed", n)
		if c.uses != nil {
			return st, why, nil // column uses are looked for one statement at a time
		}
		parts, ok := statementParts(list, "", len(stmt))
		if !ok {
			return parsedStatement{}, why, nil
		}
		st.script = parts
		return st, "", nil
	}
	s, err := list.StatementList(0)
	if err != nil {
		return st, "", err
	}
	st.node, st.out = s, out
	if d, ok := s.(*googlesql.ASTVariableDeclaration); ok {
		if decl, ok := declarationOf(stmt, d); ok {
			st.declares = &decl
		}
	}
	if a, ok := s.(*googlesql.ASTSingleAssignment); ok {
		if as, ok := assignmentOf(stmt, a); ok {
			st.assigns = &as
		}
	}
	if is, ok := s.(*googlesql.ASTIfStatement); ok && c.uses == nil {
		if parts, ok := ifParts(is, len(stmt)); ok {
			st.script = parts
			return st, "", nil
		}
	}
	if c.uses == nil {
		var parts []scriptPart
		ok := false
		switch l := s.(type) {
		case *googlesql.ASTWhileStatement, *googlesql.ASTRepeatStatement, *googlesql.ASTForInStatement:
			parts, ok = loopParts(s, len(stmt))
		case *googlesql.ASTCaseStatement:
			parts, ok = caseParts(l, len(stmt))
		case *googlesql.ASTBreakStatement, *googlesql.ASTContinueStatement:
			parts, ok = []scriptPart{}, true // BREAK / LEAVE, CONTINUE / ITERATE: nothing to analyse
		}
		if ok {
			st.script = parts
			return st, "", nil
		}
	}
	if r, ok := s.(*googlesql.ASTRaiseStatement); ok && c.uses == nil {
		if parts, ok := raiseParts(r, len(stmt)); ok {
			st.script = parts
			return st, "", nil
		}
	}
	if b, ok := s.(*googlesql.ASTBeginEndBlock); ok && c.uses == nil {
		if parts, ok := blockParts(b, len(stmt)); ok {
			st.script = parts
			return st, "", nil
		}
	}
	if ct, ok := s.(*googlesql.ASTCreateTableStatement); ok {
		st.createsTable = true
		if temp, err := ct.IsTemp(); err == nil && temp {
			if p, err := ct.Name(); err == nil && p != nil {
				if names, err := p.ToIdentifierVector(); err == nil {
					st.tempTable = strings.Join(names, ".")
				}
			}
		}
	}
	if cf, ok := s.(*googlesql.ASTCreateFunctionStatement); ok {
		if temp, err := cf.IsTemp(); err == nil && temp {
			if d, err := cf.FunctionDeclaration(); err == nil && d != nil {
				if p, err := d.Name(); err == nil && p != nil {
					if names, err := p.ToIdentifierVector(); err == nil {
						st.tempFunction = strings.Join(names, ".")
					}
				}
			}
		}
	}
	if set, ok := s.(*googlesql.ASTSystemVariableAssignment); ok {
		if v, err := set.SystemVariable(); err == nil && v != nil {
			if p, err := v.Path(); err == nil && p != nil {
				if names, err := p.ToIdentifierVector(); err == nil && len(names) == 1 {
					if n := strings.ToLower(names[0]); n == "dataset_id" || n == "dataset_project_id" {
						st.setsDefaultDataset = n
					}
				}
			}
		}
	}
	kinds := []int32{}
	for _, k := range []googlesql.ASTNodeKind{googlesql.ASTNodeKindAstTablePathExpression, googlesql.ASTNodeKindAstAliasedQuery,
		googlesql.ASTNodeKindAstAlias, googlesql.ASTNodeKindAstTableClause} {
		kinds = append(kinds, int32(k)+e.kindShift)
	}
	nodes, err := s.GetDescendantsWithKinds(kinds)
	if err != nil {
		return st, "", err
	}
	local := map[string]bool{} // CTE names and range variables
	var paths [][]string
	pathOf := func(p *googlesql.ASTPathExpression) ([]string, error) {
		if p == nil {
			return nil, nil
		}
		names, err := p.ToIdentifierVector()
		if err != nil {
			return nil, err
		}
		var parts []string
		for _, n := range names {
			parts = append(parts, strings.Split(n, ".")...)
		}
		return parts, nil
	}
	for _, n := range nodes {
		switch n := n.(type) {
		case *googlesql.ASTAliasedQuery:
			id, err := n.Alias()
			if err == nil && id != nil {
				if name, err := id.GetAsString(); err == nil {
					local[strings.ToLower(name)] = true
				}
			}
		case *googlesql.ASTAlias:
			if name, err := n.GetAsString(); err == nil {
				local[strings.ToLower(name)] = true
			}
		case *googlesql.ASTTablePathExpression:
			p, err := n.PathExpr()
			if err != nil {
				return st, "", err
			}
			parts, err := pathOf(p)
			if err != nil {
				return st, "", err
			}
			if len(parts) > 0 {
				paths = append(paths, parts)
			}
		case *googlesql.ASTTableClause:
			p, err := n.TablePath()
			if err != nil {
				return st, "", err
			}
			parts, err := pathOf(p)
			if err != nil {
				return st, "", err
			}
			if len(parts) > 0 {
				paths = append(paths, parts)
			}
		}
	}
	seen := map[string]bool{}
	for _, parts := range paths {
		if local[strings.ToLower(parts[0])] {
			continue // a CTE, or a path into a range variable
		}
		name := strings.Join(parts, ".")
		if len(parts) == 1 {
			// One unqualified name is no BigQuery table without a default
			// dataset, which dfd's queries never have: GoogleSQL reports it.
			continue
		}
		if strings.EqualFold(parts[len(parts)-2], "INFORMATION_SCHEMA") || (len(parts) >= 2 && strings.EqualFold(parts[0], "INFORMATION_SCHEMA")) {
			why = "it reads INFORMATION_SCHEMA, whose views dfd does not model"
			return st, why, nil
		}
		if !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			st.tables = append(st.tables, name)
		}
	}
	return st, "", nil
}

// StateKey identifies what the statements analysed so far declared that
// later analyses see (temporary functions and tables, the script's
// variables): two analyses of one
// statement against the same tables and the same StateKey give the same
// answer, so callers may remember answers under it. A statement after
// which StateKey changed declared something: its analysis must run again
// for the declaration to be made again.
func (c *Catalog) StateKey() string { return c.stateKey }

func (c *Catalog) computeStateKey() string {
	if len(c.declared) == 0 && c.script == nil {
		return ""
	}
	parts := []string{strings.Join(c.declared, ";")}
	for name, ok := range c.tempFns {
		parts = append(parts, fmt.Sprintf("f:%s:%v", name, ok))
	}
	for name := range c.tempTables {
		parts = append(parts, "t:"+name)
	}
	if c.script != nil {
		for name, v := range c.script.vars {
			parts = append(parts, "v:"+name+":"+v.typ.String())
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}
