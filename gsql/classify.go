package gsql

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"unicode"

	googlesql "github.com/goccy/go-googlesql"
)

// MaxStatementBytes bounds the statements Classify parses. GoogleSQL's
// parser cannot be interrupted, takes ≈1 µs per byte and keeps the memory
// the largest statement needed, so the bound is what keeps a hostile or
// merely generated statement from stalling a preview past its deadline.
// JiT code produces statements of a few kilobytes; a longer one is sent as
// a dry run, which still tells the JiT code its schema.
const MaxStatementBytes = 256 << 10

// Kind is what a statement is, as far as previews go.
type Kind int

const (
	// Unknown: the statement could not be classified (the engine failed to
	// start, or the request was cancelled first).
	Unknown Kind = iota
	// Query: exactly one query statement that calls nothing outside
	// BigQuery's own built-in functions. Only these may run in a preview.
	Query
	// QueryWithEffects: one query statement that does more than read:
	// it calls a routine, a model, a connection or another database
	// (EXTERNAL_QUERY, ds.fn(), ML.PREDICT, AI.GENERATE, a user table
	// function, …), or has a pipe operator that writes (|> INSERT,
	// |> EXPORT DATA). Work a lexer cannot judge.
	QueryWithEffects
	// Statement: one statement that is not a query (DML, DDL, EXPORT DATA,
	// CALL, EXECUTE IMMEDIATE, DECLARE, …).
	Statement
	// Script: more than one statement.
	Script
	// Empty: no statement, only whitespace, comments and semicolons.
	Empty
	// Invalid: GoogleSQL rejects the text (syntax errors, unclosed
	// literals and comments, control characters its lexer refuses).
	Invalid
	// TooLarge: longer than MaxStatementBytes, not parsed.
	TooLarge
)

func (k Kind) String() string {
	switch k {
	case Unknown:
		return "unknown"
	case Query:
		return "query"
	case QueryWithEffects:
		return "query with effects"
	case Statement:
		return "statement"
	case Script:
		return "script"
	case Empty:
		return "empty"
	case Invalid:
		return "invalid"
	case TooLarge:
		return "too large"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Verdict is what Classify found.
type Verdict struct {
	Kind Kind
	// Reason says it for people: "read-only query", "DROP TABLE
	// statement", "script of 2 statements (query; DROP TABLE statement)",
	// "query calls EXTERNAL_QUERY (a statement run by another database)".
	Reason string
}

// ReadOnly reports whether the statement may run for real in a preview.
func (v Verdict) ReadOnly() bool { return v.Kind == Query }

// IsReadOnlyQuery reports whether stmt may run for real in a preview
// (Classify(ctx, stmt).ReadOnly()).
func IsReadOnlyQuery(ctx context.Context, stmt string) bool {
	return Classify(ctx, stmt).ReadOnly()
}

var verdicts = newMemo(4096)

// Classify tells what stmt is. Verdicts are remembered by the statement's
// SHA-256, so the policy, the cache and the call record asking about the
// same statement parse it once. ctx is checked before parsing; the parse
// itself is bounded by MaxStatementBytes.
func Classify(ctx context.Context, stmt string) Verdict {
	if len(stmt) > MaxStatementBytes {
		return Verdict{TooLarge, fmt.Sprintf("statement of %s is longer than the %s dfd parses for a preview", kib(len(stmt)), kib(MaxStatementBytes))}
	}
	key := sha256.Sum256([]byte(stmt))
	if v, ok := verdicts.get(key); ok {
		return v
	}
	if err := ctx.Err(); err != nil {
		return Verdict{Unknown, "not classified: " + err.Error()}
	}
	v, err := classify(stmt)
	if err != nil {
		return Verdict{Unknown, "GoogleSQL could not classify it: " + err.Error()}
	}
	verdicts.put(key, v)
	return v
}

func kib(n int) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KiB", (n+1<<10-1)>>10)
}

// classify parses stmt as a script, so that every statement in it counts.
// Errors are failures of the engine, not of the statement.
func classify(stmt string) (Verdict, error) {
	e, err := theEngine()
	if err != nil {
		return Verdict{}, err
	}
	out, err := e.parse(stmt)
	if err != nil {
		return Verdict{Invalid, "GoogleSQL cannot parse it: " + firstLine(err.Error())}, nil
	}
	if out == nil {
		return Verdict{}, fmt.Errorf("the parser returned nothing")
	}
	script, err := out.Script()
	if err != nil || script == nil {
		return Verdict{}, fmt.Errorf("reading the parsed script: %v", err)
	}
	list, err := script.StatementListNode()
	if err != nil || list == nil {
		return Verdict{}, fmt.Errorf("reading the statement list: %v", err)
	}
	n, err := list.NumChildren()
	if err != nil {
		return Verdict{}, err
	}
	switch {
	case n == 0:
		return Verdict{Empty, "empty statement"}, nil
	case n > 1:
		var kinds []string
		for i := int32(0); i < n && i < 4; i++ {
			s, err := list.StatementList(i)
			if err != nil {
				return Verdict{}, err
			}
			kinds = append(kinds, describe(s))
		}
		if n > 4 {
			kinds = append(kinds, "…")
		}
		return Verdict{Script, fmt.Sprintf("script of %d statements (%s)", n, strings.Join(kinds, "; "))}, nil
	}
	s, err := list.StatementList(0)
	if err != nil {
		return Verdict{}, err
	}
	q, ok := s.(*googlesql.ASTQueryStatement)
	if !ok {
		return Verdict{Statement, describe(s)}, nil
	}
	if why, err := callsOut(e, q); err != nil {
		return Verdict{}, err
	} else if why != "" {
		return Verdict{QueryWithEffects, "query " + why}, nil
	}
	return Verdict{Query, "read-only query"}, nil
}

// Node kinds that make a query more than a read. Nested statements cannot
// occur in a query's grammar today; they are listed so that a future
// GoogleSQL that allows them (DML in a WITH clause, say) is still caught.
var refusedKinds = map[googlesql.ASTNodeKind]string{
	googlesql.ASTNodeKindAstPipeExportData:            "exports data (|> EXPORT DATA)",
	googlesql.ASTNodeKindAstPipeCreateTable:           "creates a table (|> CREATE TABLE)",
	googlesql.ASTNodeKindAstPipeInsert:                "inserts rows (|> INSERT)",
	googlesql.ASTNodeKindAstPipeTee:                   "uses |> TEE",
	googlesql.ASTNodeKindAstPipeFork:                  "uses |> FORK",
	googlesql.ASTNodeKindAstPipeLog:                   "uses |> LOG",
	googlesql.ASTNodeKindAstModelClause:               "uses a model (MODEL …)",
	googlesql.ASTNodeKindAstConnectionClause:          "uses a connection (CONNECTION …)",
	googlesql.ASTNodeKindAstWithConnectionClause:      "uses a connection (WITH CONNECTION …)",
	googlesql.ASTNodeKindAstSequenceArg:               "uses a sequence (SEQUENCE …)",
	googlesql.ASTNodeKindAstLockMode:                  "locks rows (FOR UPDATE)",
	googlesql.ASTNodeKindAstInsertStatement:           "contains an INSERT",
	googlesql.ASTNodeKindAstUpdateStatement:           "contains an UPDATE",
	googlesql.ASTNodeKindAstDeleteStatement:           "contains a DELETE",
	googlesql.ASTNodeKindAstMergeStatement:            "contains a MERGE",
	googlesql.ASTNodeKindAstTruncateStatement:         "contains a TRUNCATE",
	googlesql.ASTNodeKindAstExportDataStatement:       "contains an EXPORT DATA",
	googlesql.ASTNodeKindAstCreateTableStatement:      "contains a CREATE TABLE",
	googlesql.ASTNodeKindAstCallStatement:             "contains a CALL",
	googlesql.ASTNodeKindAstExecuteImmediateStatement: "contains an EXECUTE IMMEDIATE",
}

// scanKinds are the node kinds callsOut looks at.
func scanKinds() []googlesql.ASTNodeKind {
	out := []googlesql.ASTNodeKind{googlesql.ASTNodeKindAstFunctionCall, googlesql.ASTNodeKindAstTvf}
	for k := range refusedKinds {
		out = append(out, k)
	}
	return out
}

// callsOut says why query q does more than read BigQuery tables with
// built-in functions, or "" when it does not.
func callsOut(e *engine, q *googlesql.ASTQueryStatement) (string, error) {
	var kinds []int32
	for _, k := range scanKinds() {
		kinds = append(kinds, int32(k)+e.kindShift)
	}
	nodes, err := q.GetDescendantsWithKinds(kinds)
	if err != nil {
		return "", fmt.Errorf("scanning the query: %w", err)
	}
	for _, n := range nodes {
		kind, err := n.NodeKind()
		if err != nil {
			return "", err
		}
		var path *googlesql.ASTPathExpression
		tvf := false
		switch n := n.(type) {
		case *googlesql.ASTFunctionCall:
			path, err = n.Function()
		case *googlesql.ASTTVF:
			path, err = n.Name()
			tvf = true
		default:
			why, ok := refusedKinds[kind]
			if !ok {
				// The search answered with a kind it was not asked
				// for: its numbering changed under us.
				return "", fmt.Errorf("the query scan found a %v node it did not ask for", kind)
			}
			return why, nil
		}
		if err != nil {
			return "", err
		}
		if path == nil {
			return "calls a function dfd cannot name", nil
		}
		names, err := path.ToIdentifierVector()
		if err != nil {
			return "", err
		}
		if why := judgeCall(names, tvf); why != "" {
			return why, nil
		}
	}
	return "", nil
}

// builtinNamespaces are the prefixes of BigQuery's own multi-part function
// names whose functions compute a value from their arguments and nothing
// else. ML., AI., OBJ. and KEYS. (which may call Cloud KMS) are not among
// them; neither is any dataset.
var builtinNamespaces = map[string]bool{"NET": true, "HLL_COUNT": true, "KLL_QUANTILES": true}

// judgeCall says why calling the function or table function named by names
// is more than a read, or "" when it is a built-in. BigQuery resolves an
// unqualified name to a built-in (user functions need their dataset, and
// temporary ones a CREATE TEMP FUNCTION, which makes a script), so only
// EXTERNAL_QUERY among single names is refused.
func judgeCall(names []string, tvf bool) string {
	var parts []string
	for _, n := range names {
		// A backquoted `ds.fn` is one identifier holding a dotted path.
		parts = append(parts, strings.Split(n, ".")...)
	}
	shown := strings.Join(parts, ".")
	up := make([]string, len(parts))
	for i, p := range parts {
		up[i] = strings.ToUpper(p)
	}
	if len(up) > 1 && up[0] == "SAFE" {
		up = up[1:]
	}
	switch {
	case len(up) == 0:
		return "calls a function dfd cannot name"
	case len(up) == 1 && up[0] == "EXTERNAL_QUERY":
		return "calls EXTERNAL_QUERY (a statement run by another database)"
	case len(up) == 1:
		return ""
	case len(up) == 2 && builtinNamespaces[up[0]]:
		return ""
	case up[0] == "ML" || up[0] == "AI":
		return "calls " + shown + " (a model BigQuery runs for you)"
	case tvf:
		return "calls the table function " + shown
	}
	return "calls the routine " + shown
}

// describe names a statement for people: "DROP TABLE statement", "query".
func describe(s googlesql.ASTStatementNode) string {
	if _, ok := s.(*googlesql.ASTQueryStatement); ok {
		return "query"
	}
	text, err := s.SingleNodeDebugString()
	if err != nil || text == "" {
		return "statement"
	}
	return describeDebug(text)
}

// describeDebug turns the parser's one-node debug text ("DropStatement
// TABLE [14-30]", "CreateFunctionStatement(is_temp) [0-31]") into words.
func describeDebug(text string) string {
	text = firstLine(text)
	if i := strings.Index(text, " ["); i >= 0 {
		text = text[:i]
	}
	name, rest, _ := strings.Cut(text, " ")
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = name[:i]
	}
	if words, ok := statementWords[name]; ok {
		return words
	}
	base, isStmt := strings.CutSuffix(name, "Statement")
	var words []string
	start := 0
	for i, r := range base {
		if i > 0 && unicode.IsUpper(r) {
			words = append(words, strings.ToUpper(base[start:i]))
			start = i
		}
	}
	words = append(words, strings.ToUpper(base[start:]))
	if rest != "" && isStmt && strings.ToUpper(rest) == rest {
		words = append(words, rest) // DropStatement TABLE → DROP TABLE
	}
	out := strings.Join(words, " ")
	if isStmt {
		return out + " statement"
	}
	return out
}

// statementWords names the statements whose node kind is not their syntax.
var statementWords = map[string]string{
	"VariableDeclaration":      "DECLARE statement",
	"SingleAssignment":         "SET statement",
	"ParameterAssignment":      "SET statement",
	"SystemVariableAssignment": "SET statement",
	"AssignmentFromStruct":     "SET statement",
	"BeginEndBlock":            "BEGIN … END block",
	"AuxLoadDataStatement":     "LOAD DATA statement",
	"HintedStatement":          "statement with hints",
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
