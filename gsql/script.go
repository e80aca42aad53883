package gsql

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goccy/go-googlesql"
)

// BigQuery scripts: an action's statements run as one script, and its
// pre_operations often DECLARE variables that the query then uses
// (DECLARE cutoff DEFAULT (SELECT MAX(ts) FROM ${self()})), or hold
// several statements in one string. GoogleSQL's analyzer takes neither: it
// resolves one statement at a time and has no script variables. dfd
// analyses a script's statements one by one, and declares each variable as
// a constant of its type in a catalog of the script's own, consulted
// before the project's (a MultiCatalog): a bare name then resolves to a
// column of the query first and to the variable otherwise, which is
// BigQuery's rule ("a column takes precedence over a variable of the same
// name").

// scriptScope holds the variables of the script being analysed.
type scriptScope struct {
	cat   *googlesql.SimpleCatalog
	multi *googlesql.MultiCatalog
	// consts own what the catalogs above only point at (they are added
	// unowned, so that whichever finalizer runs first frees nothing the
	// other still uses).
	consts []*googlesql.SimpleConstant
	vars   map[string]scriptVar // by lower-case name
}

// scriptVar is a declared variable.
type scriptVar struct {
	name string
	typ  Type
}

// saveScope is the variables declared so far, for restoreScope at the end
// of a BEGIN … END block, whose own variables end with it.
func (c *Catalog) saveScope() map[string]scriptVar {
	if c.script == nil {
		return nil
	}
	return maps.Clone(c.script.vars)
}

// restoreScope makes saved the script's variables again. The catalog of
// constants cannot drop one, so it is made anew.
func (c *Catalog) restoreScope(saved map[string]scriptVar) error {
	if c.script != nil && len(c.script.vars) == len(saved) {
		return nil // the block declared nothing
	}
	c.script = nil
	for _, v := range saved {
		gt, err := c.gsqlType(v.typ)
		if err != nil {
			return err
		}
		if err := c.addVariable(v.name, v.typ, gt); err != nil {
			return err
		}
	}
	c.stateKey = c.computeStateKey()
	return nil
}

// EndScript forgets the variables the statements analysed so far
// declared: the next statement starts a script of its own (another
// action's, or an incremental table's other variant).
func (c *Catalog) EndScript() {
	if c.script == nil {
		return
	}
	c.script = nil
	c.stateKey = c.computeStateKey()
}

// HasVariable reports whether the current script declared a variable of
// this name (case-insensitive, as BigQuery's variables are).
func (c *Catalog) HasVariable(name string) bool {
	if c.script == nil {
		return false
	}
	_, ok := c.script.vars[strings.ToLower(name)]
	return ok
}

// catalog is what a statement is resolved against: the project's tables
// and functions, and the script's variables once it declared some.
func (c *Catalog) catalog() googlesql.CatalogNode {
	if c.script != nil {
		return c.script.multi
	}
	return c.cat
}

// declaration is a DECLARE statement as parsed: its names, and the text
// (with its offset in the statement) of its type and of its default.
type declaration struct {
	names                 []string
	typeText, defaultText string
	defaultAt             int
}

func declarationOf(stmt string, d *googlesql.ASTVariableDeclaration) (declaration, bool) {
	var out declaration
	list, err := d.VariableList()
	if err != nil || list == nil {
		return out, false
	}
	n, err := list.NumChildren()
	if err != nil || n == 0 {
		return out, false
	}
	for i := int32(0); i < n; i++ {
		id, err := list.IdentifierList(i)
		if err != nil || id == nil {
			return out, false
		}
		name, err := id.GetAsString()
		if err != nil || name == "" {
			return out, false
		}
		out.names = append(out.names, name)
	}
	if t, err := d.Type(); err == nil && t != nil {
		s, e, ok := astSpan(t)
		if !ok || e > len(stmt) {
			return out, false
		}
		out.typeText = stmt[s:e]
	}
	if v, err := d.DefaultValue(); err == nil && v != nil {
		s, e, ok := astSpan(v)
		if !ok || e > len(stmt) {
			return out, false
		}
		out.defaultText, out.defaultAt = stmt[s:e], s
	}
	return out, out.typeText != "" || out.defaultText != ""
}

// assignment is a SET of one variable the script declared: its name, and
// the text of its value with its offset in the statement.
type assignment struct {
	name, valueText string
	valueAt         int
}

func assignmentOf(stmt string, a *googlesql.ASTSingleAssignment) (assignment, bool) {
	id, err := a.Variable()
	if err != nil || id == nil {
		return assignment{}, false
	}
	name, err := id.GetAsString()
	if err != nil || name == "" {
		return assignment{}, false
	}
	v, err := a.Expression()
	if err != nil || v == nil {
		return assignment{}, false
	}
	s, e, ok := astSpan(v)
	if !ok || e > len(stmt) {
		return assignment{}, false
	}
	return assignment{name: name, valueText: stmt[s:e], valueAt: s}, true
}

// assign analyses a SET of a declared variable: its value must be a valid
// expression (analysed as SELECT (value)). Whether the value's type may be
// assigned to the variable's is BigQuery's rule, which dfd leaves to it.
func (c *Catalog) assign(ctx context.Context, stmt string, a assignment) (Analysis, error) {
	if !c.HasVariable(a.name) {
		return Analysis{Skipped: "it sets " + a.name + ", which its script did not declare before it"}, nil
	}
	an, err := c.analyzeExpression(ctx, stmt, a.valueText, a.valueAt)
	if err != nil || an.Skipped != "" || an.Problem != nil {
		return an, err
	}
	return Analysis{}, nil
}

// analyzeExpression analyses the expression text, written at byte offset
// at of stmt, as SELECT (text); a problem is placed in stmt.
func (c *Catalog) analyzeExpression(ctx context.Context, stmt, text string, at int) (Analysis, error) {
	wrapped := asQuery(text)
	an, err := c.Analyze(ctx, wrapped)
	if err == nil && an.Problem != nil {
		an = Analysis{Problem: moved(an.Problem, wrapped, stmt, at-len(exprOpen))}
	}
	return an, err
}

// exprOpen begins the query an expression is analysed as (asQuery).
const exprOpen = "SELECT ("

// asQuery is the query that analyses expression e.
func asQuery(e string) string { return exprOpen + e + ")" }

// declareVariables analyses a DECLARE: its default must be a valid expression
// (analysed as SELECT (default)), its type one GoogleSQL knows (analysed
// as SELECT CAST(NULL AS type)); the variables then get the type, else
// the default's. A problem in either is reported where the statement has
// it; a default dfd cannot analyse skips the statement, and so does
// declaring a name twice in one script.
func (c *Catalog) declareVariables(ctx context.Context, stmt string, d declaration) (Analysis, error) {
	var typ Type
	if d.typeText == "" && strings.EqualFold(strings.TrimSpace(d.defaultText), "NULL") {
		// GoogleSQL types a bare NULL as INT64; whether BigQuery's
		// variable is one, dfd does not know.
		return Analysis{Skipped: "its type is neither given nor told by its default (NULL)"}, nil
	}
	if d.defaultText != "" {
		an, err := c.analyzeExpression(ctx, stmt, d.defaultText, d.defaultAt)
		if err != nil || an.Skipped != "" || an.Problem != nil {
			return an, err
		}
		if len(an.Columns) != 1 {
			return Analysis{Skipped: "dfd could not tell the type of its default"}, nil
		}
		typ = an.Columns[0].Type
	}
	if d.typeText != "" {
		an, err := c.Analyze(ctx, "SELECT CAST(NULL AS "+d.typeText+")")
		if err != nil || an.Skipped != "" {
			return an, err
		}
		if an.Problem != nil || len(an.Columns) != 1 {
			return Analysis{Skipped: "dfd could not read its type (" + d.typeText + ")"}, nil
		}
		typ = an.Columns[0].Type
	}
	for _, name := range d.names {
		if c.HasVariable(name) {
			return Analysis{Skipped: "it declares " + name + " a second time"}, nil
		}
	}
	gt, err := c.gsqlType(typ)
	if err != nil {
		return Analysis{Skipped: "dfd cannot model its type (" + err.Error() + ")"}, nil
	}
	var declared []Variable
	for _, name := range d.names {
		if err := c.addVariable(name, typ, gt); err != nil {
			return Analysis{}, err
		}
		declared = append(declared, Variable{Name: name, Type: typ})
	}
	c.stateKey = c.computeStateKey()
	return Analysis{Declared: declared}, nil
}

// Redeclare declares vars as the DECLARE whose analysis said it declared
// them (Analysis.Declared) did, for a caller that remembered that analysis
// under the same StateKey: the default is not analysed again. It declares
// nothing and reports false when one of them is declared already.
func (c *Catalog) Redeclare(vars []Variable) (bool, error) {
	gts := make([]googlesql.Googlesql_TypeNode, len(vars))
	for i, v := range vars {
		if c.HasVariable(v.Name) {
			return false, nil
		}
		gt, err := c.gsqlType(v.Type)
		if err != nil {
			return false, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		gts[i] = gt
	}
	for i, v := range vars {
		if err := c.addVariable(v.Name, v.Type, gts[i]); err != nil {
			return false, err
		}
	}
	c.stateKey = c.computeStateKey()
	return true, nil
}

// addVariable declares name, of type gt, for the rest of the script.
func (c *Catalog) addVariable(name string, t Type, gt googlesql.Googlesql_TypeNode) error {
	if c.script == nil {
		cat, err := googlesql.NewSimpleCatalog("script", c.tf)
		if err != nil {
			return fmt.Errorf("script catalog: %w", err)
		}
		multi, err := googlesql.NewMultiCatalogCreate("dfd", []googlesql.CatalogNode{cat, c.cat})
		if err != nil {
			return fmt.Errorf("script catalog: %w", err)
		}
		c.script = &scriptScope{cat: cat, multi: multi, vars: map[string]scriptVar{}}
	}
	v, err := googlesql.NewValueNull(gt)
	if err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	k, err := googlesql.NewSimpleConstantCreate([]string{name}, v)
	if err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	if err := c.script.cat.AddConstant(k); err != nil {
		return fmt.Errorf("variable %s: %w", name, err)
	}
	c.script.consts = append(c.script.consts, k)
	c.script.vars[strings.ToLower(name)] = scriptVar{name: name, typ: t}
	return nil
}

// scriptPart is a piece of a script that is analysed on its own: a
// statement, or (expr) an expression (a condition, a CASE's operand, a
// RAISE's message); label says which, in a skip's reason.
type scriptPart struct {
	start, end int
	expr       bool
	label      string
	// open and close mark where a BEGIN … END block starts and ends
	// (no text): what it declares ends with it.
	open, close bool
	// row: the part is the query of FOR row IN (query), which declares
	// row, a STRUCT of the query's columns, for the loop's body.
	row string
}

// statementParts are the statements of list, labelled with what, their
// number and count; ok false when one has no place in the text.
func statementParts(list *googlesql.ASTStatementList, what string, textLen int) ([]scriptPart, bool) {
	if list == nil {
		return nil, true
	}
	n, err := list.NumChildren()
	if err != nil {
		return nil, false
	}
	var out []scriptPart
	for i := int32(0); i < n; i++ {
		s, err := list.StatementList(i)
		if err != nil || s == nil {
			return nil, false
		}
		start, end, ok := astSpan(s)
		if !ok || end > textLen {
			return nil, false
		}
		out = append(out, scriptPart{start: start, end: end, label: fmt.Sprintf("%sstatement %d of %d", what, i+1, n)})
	}
	return out, true
}

// ifParts are the parts of IF … THEN … [ELSEIF …] [ELSE …] END IF in
// the order they are written: each condition, then its branch. Which
// branch runs does not matter to the analysis: IF declares nothing
// (BigQuery allows DECLARE only at the start of a script or block).
func ifParts(st *googlesql.ASTIfStatement, textLen int) ([]scriptPart, bool) {
	var out []scriptPart
	e, err := st.Condition()
	if err != nil {
		return nil, false
	}
	p, ok := exprPart(e, "the IF's condition", textLen)
	if !ok {
		return nil, false
	}
	then, err := st.ThenList()
	if err != nil {
		return nil, false
	}
	body, ok := statementParts(then, "THEN's ", textLen)
	if !ok {
		return nil, false
	}
	out = append(append(out, p), body...)
	if clauses, err := st.ElseifClauses(); err == nil && clauses != nil {
		n, err := clauses.NumChildren()
		if err != nil {
			return nil, false
		}
		for i := int32(0); i < n; i++ {
			c, err := clauses.ElseifClauses(i)
			if err != nil || c == nil {
				return nil, false
			}
			more, ok := clauseParts(c, fmt.Sprintf("ELSEIF %d's ", i+1), textLen)
			if !ok {
				return nil, false
			}
			out = append(out, more...)
		}
	} else if err != nil {
		return nil, false
	}
	els, err := st.ElseList()
	if err != nil {
		return nil, false
	}
	body, ok = statementParts(els, "ELSE's ", textLen)
	if !ok {
		return nil, false
	}
	return append(out, body...), true
}

// blockParts are the parts of BEGIN … [EXCEPTION WHEN ERROR THEN …] END:
// its statements, then its handler's, in the block's scope (whether
// BigQuery lets a handler see the block's variables is not known here;
// letting it can miss an error, never make one up).
func blockParts(b *googlesql.ASTBeginEndBlock, textLen int) ([]scriptPart, bool) {
	list, err := b.StatementListNode()
	if err != nil {
		return nil, false
	}
	body, ok := statementParts(list, "BEGIN's ", textLen)
	if !ok {
		return nil, false
	}
	out := append([]scriptPart{{open: true}}, body...)
	if has, err := b.HasExceptionHandler(); err != nil {
		return nil, false
	} else if has {
		hl, err := b.HandlerList()
		if err != nil || hl == nil {
			return nil, false
		}
		n, err := hl.NumChildren()
		if err != nil {
			return nil, false
		}
		for i := int32(0); i < n; i++ {
			h, err := hl.ExceptionHandlerList(i)
			if err != nil || h == nil {
				return nil, false
			}
			l, err := h.StatementList()
			if err != nil {
				return nil, false
			}
			hs, ok := statementParts(l, "EXCEPTION's ", textLen)
			if !ok {
				return nil, false
			}
			out = append(out, hs...)
		}
	}
	return append(out, scriptPart{close: true}), true
}

// clauseParts are the parts of an ELSEIF or a WHEN: its condition, then
// its statements, labelled with what.
func clauseParts(c interface {
	Condition() (googlesql.ASTExpressionNode, error)
	Body() (*googlesql.ASTStatementList, error)
}, what string, textLen int) ([]scriptPart, bool) {
	e, err := c.Condition()
	if err != nil {
		return nil, false
	}
	p, ok := exprPart(e, what+"condition", textLen)
	if !ok {
		return nil, false
	}
	b, err := c.Body()
	if err != nil {
		return nil, false
	}
	body, ok := statementParts(b, what, textLen)
	if !ok {
		return nil, false
	}
	return append([]scriptPart{p}, body...), true
}

// exprPart is the part of expression e, or ok false.
func exprPart(e googlesql.ASTExpressionNode, label string, textLen int) (scriptPart, bool) {
	if e == nil {
		return scriptPart{}, false
	}
	start, end, ok := astSpan(e)
	return scriptPart{start: start, end: end, expr: true, label: label}, ok && end <= textLen
}

// loopParts are the parts of WHILE / LOOP / REPEAT / FOR … IN: the
// condition where it is evaluated first (WHILE) or last (REPEAT … UNTIL),
// the body once — a second pass would see the same types — and for FOR,
// its row variable in a scope of the loop's own.
func loopParts(s googlesql.ASTStatementNode, textLen int) ([]scriptPart, bool) {
	loop, ok := s.(interface {
		Body() (*googlesql.ASTStatementList, error) // ASTLoopStatement's, which all three embed
	})
	if !ok {
		return nil, false
	}
	body, err := loop.Body()
	if err != nil {
		return nil, false
	}
	var before, after []scriptPart
	switch l := s.(type) {
	case *googlesql.ASTWhileStatement:
		cond, err := l.Condition()
		if err != nil {
			return nil, false
		}
		if cond != nil { // LOOP … END LOOP has none
			p, ok := exprPart(cond, "WHILE's condition", textLen)
			if !ok {
				return nil, false
			}
			before = append(before, p)
		}
	case *googlesql.ASTRepeatStatement:
		u, err := l.UntilClause()
		if err != nil || u == nil {
			return nil, false
		}
		cond, err := u.Condition()
		if err != nil {
			return nil, false
		}
		p, ok := exprPart(cond, "UNTIL's condition", textLen)
		if !ok {
			return nil, false
		}
		after = append(after, p)
	case *googlesql.ASTForInStatement:
		id, err := l.Variable()
		if err != nil || id == nil {
			return nil, false
		}
		name, err := id.GetAsString()
		if err != nil || name == "" {
			return nil, false
		}
		q, err := l.Query()
		if err != nil || q == nil {
			return nil, false
		}
		start, end, ok := astSpan(q)
		if !ok || end > textLen {
			return nil, false
		}
		before = append(before, scriptPart{open: true}, scriptPart{start: start, end: end, row: name, label: "FOR's query"})
		after = append(after, scriptPart{close: true})
	default:
		return nil, false
	}
	parts, ok := statementParts(body, "the loop's ", textLen)
	if !ok {
		return nil, false
	}
	return append(append(before, parts...), after...), true
}

// caseParts are the parts of CASE [expression] WHEN … THEN … [ELSE …]
// END CASE: the expression, then each WHEN's condition (or value) and its
// branch, then ELSE's.
func caseParts(cs *googlesql.ASTCaseStatement, textLen int) ([]scriptPart, bool) {
	var out []scriptPart
	e, err := cs.Expression()
	if err != nil {
		return nil, false
	}
	if e != nil {
		p, ok := exprPart(e, "CASE's expression", textLen)
		if !ok {
			return nil, false
		}
		out = append(out, p)
	}
	list, err := cs.WhenThenClauses()
	if err != nil || list == nil {
		return nil, false
	}
	n, err := list.NumChildren()
	if err != nil {
		return nil, false
	}
	for i := int32(0); i < n; i++ {
		w, err := list.WhenThenClauses(i)
		if err != nil || w == nil {
			return nil, false
		}
		more, ok := clauseParts(w, fmt.Sprintf("WHEN %d's ", i+1), textLen)
		if !ok {
			return nil, false
		}
		out = append(out, more...)
	}
	els, err := cs.ElseList()
	if err != nil {
		return nil, false
	}
	body, ok := statementParts(els, "ELSE's ", textLen)
	if !ok {
		return nil, false
	}
	return append(out, body...), true
}

// scriptTables are the tables the parts of a script read (the parts of
// nested IFs and blocks too) that the catalog does not have.
func (c *Catalog) scriptTables(stmt string, parts []scriptPart, unknown []string) ([]string, error) {
	for _, p := range parts {
		if p.open || p.close {
			continue
		}
		text := stmt[p.start:p.end]
		if p.expr {
			text = asQuery(text)
		}
		st, why, err := c.reads(text)
		if err != nil {
			return nil, err
		}
		if why != "" {
			continue // said in its turn
		}
		if st.script != nil {
			if unknown, err = c.scriptTables(text, st.script, unknown); err != nil {
				return nil, err
			}
			continue
		}
		for _, r := range st.tables {
			if !c.Has(c.qualify(r)) && !slices.Contains(unknown, r) {
				unknown = append(unknown, r)
			}
		}
	}
	return unknown, nil
}

// analyzeScript analyses the parts of a script (stmt: several
// statements, or one control statement — IF, CASE, a loop, a block,
// RAISE — with its expressions and bodies) in order, as the script runs
// them: the first problem or skip ends it, with
// the part's place in stmt.
func (c *Catalog) analyzeScript(ctx context.Context, stmt string, parts []scriptPart) (_ Analysis, err error) {
	text := func(p scriptPart) string {
		if p.expr {
			return asQuery(stmt[p.start:p.end])
		}
		return stmt[p.start:p.end]
	}
	// The tables first: a caller that fetches the unknown ones analyses
	// the script again, and its declarations (variables, temporary
	// functions) must not have been made. It costs each part a second
	// parse.
	unknown, err := c.scriptTables(stmt, parts, nil)
	if err != nil {
		return Analysis{}, err
	}
	if len(unknown) > 0 {
		return Analysis{Skipped: "reads " + strings.Join(unknown, ", ") + ", whose schema dfd does not know", Unknown: unknown}, nil
	}
	var scopes []map[string]scriptVar
	defer func() {
		// A problem or skip inside a block ends the analysis there: what
		// the block declared ends with it all the same.
		if len(scopes) > 0 && err == nil {
			err = c.restoreScope(scopes[0])
		}
	}()
	for _, p := range parts {
		var an Analysis
		switch {
		case p.open:
			scopes = append(scopes, c.saveScope())
			continue
		case p.close:
			saved := scopes[len(scopes)-1]
			scopes = scopes[:len(scopes)-1]
			if err = c.restoreScope(saved); err != nil {
				return Analysis{}, err
			}
			continue
		}
		if p.expr {
			an, err = c.analyzeExpression(ctx, stmt, stmt[p.start:p.end], p.start)
		} else if an, err = c.Analyze(ctx, text(p)); err == nil && an.Problem != nil {
			an = Analysis{Problem: moved(an.Problem, text(p), stmt, p.start)}
		}
		if err != nil || an.Problem != nil {
			return an, err
		}
		if an.Skipped == "" && p.row != "" {
			an, err = c.declareRow(p.row, an.Columns)
			if err != nil {
				return an, err
			}
		}
		if an.Skipped != "" {
			an.Skipped = p.label + ": " + an.Skipped
			return an, nil
		}
	}
	return Analysis{}, nil
}

// declareRow declares FOR's row variable: a STRUCT of the query's
// columns.
func (c *Catalog) declareRow(name string, cols []Column) (Analysis, error) {
	if len(cols) == 0 {
		return Analysis{Skipped: "dfd could not tell the columns of the rows " + name + " takes"}, nil
	}
	if c.HasVariable(name) {
		return Analysis{Skipped: "it declares " + name + " a second time"}, nil
	}
	typ := Type{Kind: "STRUCT", Fields: cols}
	gt, err := c.gsqlType(typ)
	if err != nil {
		return Analysis{Skipped: "dfd cannot model the type of " + name + " (" + err.Error() + ")"}, nil
	}
	if err := c.addVariable(name, typ, gt); err != nil {
		return Analysis{}, err
	}
	c.stateKey = c.computeStateKey()
	return Analysis{}, nil
}

// moved is p, found in text, at its place in stmt, where text is written
// from byte offset at (negative: text starts with that much of its own).
func moved(p *Problem, text, stmt string, at int) *Problem {
	out := *p
	if p.Line == 0 {
		return &out
	}
	off := Offset(text, p.Line, p.Column) + at
	out.Line, out.Column = Position(stmt, min(max(off, 0), len(stmt)))
	return &out
}

// astSpan is the byte range of a parse tree node in the text parsed.
func astSpan(n googlesql.ASTNode) (start, end int, ok bool) {
	r, err := n.GetParseLocationRange()
	if err != nil || r == nil {
		return 0, 0, false
	}
	return rangeOffsets(r)
}

// raiseParts are the parts of RAISE [USING MESSAGE = message]: the
// message, an expression; none for a RAISE that raises the error being
// handled again (a non-nil empty list: nothing to analyse).
func raiseParts(r *googlesql.ASTRaiseStatement, textLen int) ([]scriptPart, bool) {
	m, err := r.Message()
	if err != nil {
		return nil, false
	}
	if m == nil {
		return []scriptPart{}, true
	}
	start, end, ok := astSpan(m)
	if !ok || end > textLen {
		return nil, false
	}
	return []scriptPart{{start: start, end: end, expr: true, label: "RAISE's message"}}, true
}
