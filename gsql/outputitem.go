package gsql

import (
	"context"
	"strings"

	googlesql "github.com/goccy/go-googlesql"
)

// Where a query defines one of its output columns, for a column rename of
// the action the query is (workspace's): the item of the query's final
// select whose name is the column's — its alias, or the last name of a
// bare path (`customer_id`, `o.customer_id`), which names the output
// column implicitly. Found by name among the items the parser gives, so a
// select list with * still has its named items; a column that only *, an
// expression without alias or a set operation produces has no item a
// rename could change, and is refused with the reason.

// OutputItem is the select item that names an output column.
type OutputItem struct {
	// Start, End are the name's bytes in the statement: the alias's, or
	// the bare path's last name (with back quotes, if quoted).
	Start, End int
	// Alias: the item has `AS name`; else it is a bare path, and renaming
	// its output means adding ` AS new` at End.
	Alias bool
	// Why, when set, says why no item can be renamed (Start, End unset).
	Why string
}

// OutputItem analyses stmt as Analyze does, recording parse locations, and
// finds the select item naming its output column column. The item is nil
// when the statement was not analysed (a Problem, Skipped).
func (c *Catalog) OutputItem(ctx context.Context, stmt, column string) (Analysis, *OutputItem, error) {
	an, err := c.analyzeLocating(ctx, stmt, &usesRequest{column: column, output: true})
	if err != nil {
		return an, nil, err
	}
	it := c.outputOut
	c.outputOut = nil
	return an, it, nil
}

// outputItem is what OutputItem returns for a resolved statement.
func (c *Catalog) outputItem(st parsedStatement, stmt string, res googlesql.ResolvedStatementNode) (*OutputItem, error) {
	column := c.uses.column
	q, ok := res.(*googlesql.ResolvedQueryStmt)
	if !ok {
		return &OutputItem{Why: "its SQL is not a query"}, nil
	}
	n, err := q.OutputColumnListSize()
	if err != nil {
		return nil, err
	}
	named := 0
	for i := int32(0); i < n; i++ {
		oc, err := q.OutputColumnList2(i)
		if err != nil {
			return nil, err
		}
		name, err := oc.Name()
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(name, column) {
			named++
		}
	}
	switch {
	case named == 0:
		return &OutputItem{Why: "its query has no output column " + column}, nil
	case named > 1:
		return &OutputItem{Why: "its query outputs several columns named " + column}, nil
	}
	qs, ok := st.node.(*googlesql.ASTQueryStatement)
	if !ok {
		return &OutputItem{Why: "dfd cannot find the query's select list"}, nil
	}
	query, err := qs.Query()
	if err != nil || query == nil {
		return &OutputItem{Why: "dfd cannot find the query's select list"}, err
	}
	sel, why, err := finalSelect(query)
	if err != nil || why != "" {
		return &OutputItem{Why: why}, err
	}
	as, err := sel.SelectAs()
	if err != nil {
		return nil, err
	}
	if as != nil {
		return &OutputItem{Why: "its query is a SELECT AS STRUCT / AS VALUE, whose columns are not its items' names"}, nil
	}
	list, err := sel.SelectList()
	if err != nil || list == nil {
		return nil, err
	}
	k, err := list.NumChildren()
	if err != nil {
		return nil, err
	}
	var found []OutputItem
	for i := int32(0); i < k; i++ {
		col, err := list.Columns(i)
		if err != nil {
			return nil, err
		}
		it, err := itemOf(col)
		if err != nil {
			return nil, err
		}
		if (it.alias || it.path) && it.nameStart >= 0 && strings.EqualFold(unquote(stmt[it.nameStart:it.nameEnd]), column) {
			found = append(found, OutputItem{Start: it.nameStart, End: it.nameEnd, Alias: it.alias})
		}
	}
	if len(found) != 1 {
		// Only one output column has the name: none of the items
		// writes it (it comes through * or from a nested select).
		return &OutputItem{Why: "no item of its select list names " + column + " (it comes through *, or the query is not one select)"}, nil
	}
	return &found[0], nil
}

// finalSelect is the select whose items are a query's output: the query
// expression itself, or the one inside parentheses; a set operation has
// none.
func finalSelect(q *googlesql.ASTQuery) (*googlesql.ASTSelect, string, error) {
	for depth := 0; depth < 16; depth++ {
		x, err := q.QueryExpr()
		if err != nil {
			return nil, "", err
		}
		switch x := x.(type) {
		case *googlesql.ASTSelect:
			return x, "", nil
		case *googlesql.ASTQuery:
			q = x
		default:
			return nil, "its query is a set operation (UNION, INTERSECT, EXCEPT) or a form dfd does not rename in", nil
		}
	}
	return nil, "its query is nested too deeply", nil
}

// reservedWords are BigQuery's reserved keywords: a column named one must
// be quoted, which a rename does not do.
var reservedWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`ALL AND ANY ARRAY AS ASC ASSERT_ROWS_MODIFIED AT BETWEEN BY CASE CAST
COLLATE CONTAINS CREATE CROSS CUBE CURRENT DEFAULT DEFINE DESC DISTINCT ELSE END ENUM ESCAPE EXCEPT
EXCLUDE EXISTS EXTRACT FALSE FETCH FOLLOWING FOR FROM FULL GROUP GROUPING GROUPS HASH HAVING IF
IGNORE IN INNER INTERSECT INTERVAL INTO IS JOIN LATERAL LEFT LIKE LIMIT LOOKUP MERGE NATURAL NEW
NO NOT NULL NULLS OF ON OR ORDER OUTER OVER PARTITION PRECEDING PROTO QUALIFY RANGE RECURSIVE
RESPECT RIGHT ROLLUP ROWS SELECT SET SOME STRUCT TABLESAMPLE THEN TO TREAT TRUE UNBOUNDED UNION
UNNEST USING WHEN WHERE WINDOW WITH WITHIN`) {
		m[w] = true
	}
	return m
}()

// IsReserved reports whether word is a reserved keyword of BigQuery's
// SQL, which an identifier must quote.
func IsReserved(word string) bool { return reservedWords[strings.ToUpper(word)] }
