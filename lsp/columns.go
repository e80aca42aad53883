package lsp

import (
	"context"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// Column completion in the SQL of a .sqlx file: after "alias." the
// columns of the table the alias names (an explicit alias after the ref's
// placeholder, or the table's own name); after "alias.col." (or "col." of
// a ref'd table) the fields of that STRUCT column, and after the alias of
// an UNNEST of such a column the fields of its elements; and in the clauses
// that name columns (SELECT, WHERE, GROUP BY, HAVING, QUALIFY, ORDER BY,
// JOIN … ON; not FROM or LIMIT) the columns of every table the file refs
// and the variables its pre_operations DECLARE. Columns come from the project (declarations' and actions'
// `columns`) and from the metadata source, whose nested fields are dotted
// paths ("page.url").

// refTable is a table the file refs, with the names it goes by.
type refTable struct {
	action *workspace.Action
	names  []string // alias, and the table name
}

func (s *Server) completeColumns(ctx context.Context, f *fileCtx, off int) []protocol.CompletionItem {
	if !f.sqlx || f.snap == nil || f.p == nil || off > len(f.text) {
		return nil
	}
	x := f.scan()
	if x.InJavaScript(off) {
		return nil
	}
	line := string(f.text[max(0, off-200):off])
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if strings.HasPrefix(strings.TrimSpace(line), "--") {
		return nil
	}
	tables := s.fileTables(f)
	var chosen []refTable
	var vars []source.Variable // in a column clause: the pre_operations' variables
	var partial, prefix string // prefix: the struct path whose fields are offered ("page.")
	if path, p, ok := source.MemberPath(f.text, off); ok {
		partial = p
		// `i.` after `UNNEST(r.items) AS i`: the fields of r.items' elements.
		path, _ = source.UnnestPath(path, source.UnnestAliases(f.text))
		for _, t := range tables {
			for _, n := range t.names {
				if strings.EqualFold(n, path[0]) {
					chosen = append(chosen, t)
					break
				}
			}
		}
		if len(chosen) > 0 {
			path = path[1:] // alias.col.…: the table, then its columns
		} else {
			chosen = tables // col.field: a column of any ref'd table
		}
		if len(path) > 0 {
			prefix = strings.Join(path, ".") + "."
		}
	} else if x.InColumnClause(f.text, off) {
		partial = wordBefore(line)
		chosen = tables
		vars = source.DeclaredVariables(x, f.text)
	}
	if len(chosen) == 0 && len(vars) == 0 {
		return nil
	}
	replace := source.Span{Start: off - len(partial), End: off}
	var items []protocol.CompletionItem
	seen := map[string]bool{}
	for _, t := range chosen {
		for _, c := range s.columnsOf(ctx, f, t.action) {
			if len(c.Name) <= len(prefix) || !strings.EqualFold(c.Name[:len(prefix)], prefix) {
				continue
			}
			name := c.Name[len(prefix):]
			if strings.Contains(name, ".") || seen[name] {
				continue
			}
			seen[name] = true
			detail := "column · " + t.action.Target.String()
			if prefix != "" {
				detail = "field of " + strings.TrimSuffix(c.Name[:len(prefix)], ".") + " · " + t.action.Target.String()
			}
			if c.Type != "" {
				detail += " · " + c.Type
			}
			item := protocol.CompletionItem{
				Label: name, Kind: protocol.CompletionItemKindField,
				Detail:   protocol.NewOptional(detail),
				TextEdit: &protocol.TextEdit{Range: f.rangeOf(replace), NewText: name},
			}
			if c.Description != "" {
				item.Documentation = protocol.String(c.Description)
			}
			items = append(items, item)
		}
	}
	// A column of the same name wins over a variable, as in BigQuery.
	taken := map[string]bool{}
	for _, it := range items {
		taken[strings.ToLower(it.Label)] = true
	}
	for _, v := range vars {
		key := strings.ToLower(v.Name)
		if taken[key] {
			continue
		}
		taken[key] = true
		detail := "variable · DECLAREd in pre_operations"
		if v.Type != "" {
			detail += " · " + v.Type
		}
		items = append(items, protocol.CompletionItem{
			Label: v.Name, Kind: protocol.CompletionItemKindVariable,
			Detail:   protocol.NewOptional(detail),
			TextEdit: &protocol.TextEdit{Range: f.rangeOf(replace), NewText: v.Name},
		})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Label < items[j].Label })
	return items
}

// wordBefore is the identifier the line ends with (what is typed of a
// column name), "" when it ends otherwise.
func wordBefore(line string) string {
	i := len(line)
	for i > 0 {
		c := line[i-1]
		if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			i--
			continue
		}
		break
	}
	return line[i:]
}

// fileTables are the actions the file's refs name, with their aliases.
func (s *Server) fileTables(f *fileCtx) []refTable {
	var out []refTable
	seen := map[*workspace.Action]int{}
	for _, r := range f.refs() {
		if r.Func != "ref" && r.Func != "resolve" {
			continue
		}
		for _, a := range f.snap.Lookup(r.Database.Value, r.Schema.Value, r.Name.Value) {
			i, ok := seen[a]
			if !ok {
				i = len(out)
				seen[a] = i
				out = append(out, refTable{action: a, names: []string{a.Target.Name}})
			}
			if alias := source.RefAlias(f.text, r.Span.End); alias != "" && !contains(out[i].names, alias) {
				out[i].names = append(out[i].names, alias)
			}
		}
	}
	return out
}

// columnsOf merges the project's columns of an action with the metadata
// source's (what the source has now: the lookup never waits for it).
func (s *Server) columnsOf(ctx context.Context, f *fileCtx, a *workspace.Action) []workspace.Column {
	cols := append([]workspace.Column(nil), a.Columns...)
	if info, ok := f.snap.TableMetadata(ctx, a.Target); ok {
		have := map[string]int{}
		for i, c := range cols {
			have[c.Name] = i
		}
		for _, c := range info.Columns {
			if i, ok := have[c.Name]; ok {
				if cols[i].Type == "" {
					cols[i].Type = c.Type
				}
				if cols[i].Description == "" {
					cols[i].Description = c.Description
				}
				continue
			}
			cols = append(cols, c)
		}
	}
	return cols
}

// variableAt is the pre_operations variable that the word at off of a
// .sqlx file's SQL names, with the word's span: none when a table the
// file refs has a column of that name, which BigQuery takes instead.
func (s *Server) variableAt(ctx context.Context, f *fileCtx, off int) (source.Variable, source.Span, bool) {
	if !f.sqlx || off > len(f.text) {
		return source.Variable{}, source.Span{}, false
	}
	x := f.scan()
	if x.InJavaScript(off) {
		return source.Variable{}, source.Span{}, false
	}
	path, _, sp := source.WordAt(f.text, off)
	if len(path) != 1 {
		return source.Variable{}, source.Span{}, false
	}
	for _, v := range source.DeclaredVariables(x, f.text) {
		if !strings.EqualFold(v.Name, path[0]) {
			continue
		}
		if f.snap != nil {
			for _, t := range s.fileTables(f) {
				for _, c := range s.columnsOf(ctx, f, t.action) {
					if strings.EqualFold(c.Name, v.Name) {
						return source.Variable{}, source.Span{}, false
					}
				}
			}
		}
		return v, sp, true
	}
	return source.Variable{}, source.Span{}, false
}
