package lsp

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// Column completion in the SQL of a .sqlx file: after "alias." the
// columns of the table the alias names (an explicit alias after the ref's
// placeholder, or the table's own name), and in a SELECT list (between
// SELECT and the next FROM) the columns of every table the file refs.
// Columns come from the project (declarations' and actions' `columns`)
// and from the metadata source; only top-level columns are offered.

var (
	aliasAccessRE = regexp.MustCompile(`(?:^|[^\w.` + "`" + `])([A-Za-z_]\w*)\.(\w*)$`)
	partialWordRE = regexp.MustCompile(`(?:^|[^\w.])(\w*)$`)
	refAliasRE    = regexp.MustCompile(`^\s*\}\s*(?:(?i:AS)\s+)?([A-Za-z_]\w*)`)
	clauseRE      = regexp.MustCompile(`(?i)\b(select|from|where|group|order|having|qualify|limit|union|join|on|window)\b`)
)

// sqlKeywords are words after a ref that are not an alias.
var sqlKeywords = map[string]bool{
	"where": true, "join": true, "left": true, "right": true, "inner": true, "full": true, "cross": true,
	"on": true, "using": true, "group": true, "order": true, "having": true, "qualify": true, "limit": true,
	"union": true, "except": true, "intersect": true, "window": true, "select": true, "from": true, "as": true,
	"tablesample": true, "for": true, "unnest": true,
}

// refTable is a table the file refs, with the names it goes by.
type refTable struct {
	action *workspace.Action
	names  []string // alias, and the table name
}

func (s *Server) completeColumns(ctx context.Context, f *fileCtx, off int) []protocol.CompletionItem {
	if !f.sqlx || f.snap == nil || f.p == nil || off > len(f.text) {
		return nil
	}
	x := source.ScanSQLX(f.text)
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
	if len(tables) == 0 {
		return nil
	}
	var chosen []refTable
	var partial string
	if m := aliasAccessRE.FindStringSubmatch(line); m != nil {
		partial = m[2]
		for _, t := range tables {
			for _, n := range t.names {
				if strings.EqualFold(n, m[1]) {
					chosen = append(chosen, t)
					break
				}
			}
		}
	} else if inSelectList(f.text, x, off) {
		if m := partialWordRE.FindStringSubmatch(line); m != nil {
			partial = m[1]
		}
		chosen = tables
	}
	if len(chosen) == 0 {
		return nil
	}
	replace := source.Span{Start: off - len(partial), End: off}
	var items []protocol.CompletionItem
	seen := map[string]bool{}
	for _, t := range chosen {
		for _, c := range s.columnsOf(ctx, f, t.action) {
			if strings.Contains(c.Name, ".") || seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			detail := "column · " + t.action.Target.String()
			if c.Type != "" {
				detail += " · " + c.Type
			}
			item := protocol.CompletionItem{
				Label: c.Name, Kind: protocol.CompletionItemKindField,
				Detail:   protocol.NewOptional(detail),
				TextEdit: &protocol.TextEdit{Range: f.rangeOf(replace), NewText: c.Name},
			}
			if c.Description != "" {
				item.Documentation = protocol.String(c.Description)
			}
			items = append(items, item)
		}
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Label < items[j].Label })
	return items
}

// fileTables are the actions the file's refs name, with their aliases.
func (s *Server) fileTables(f *fileCtx) []refTable {
	var out []refTable
	for _, r := range source.FindRefs(f.text) {
		if r.Func != "ref" && r.Func != "resolve" {
			continue
		}
		for _, a := range f.snap.Lookup(r.Database.Value, r.Schema.Value, r.Name.Value) {
			names := []string{a.Target.Name}
			if r.Span.End <= len(f.text) {
				if m := refAliasRE.FindSubmatch(f.text[r.Span.End:]); m != nil && !sqlKeywords[strings.ToLower(string(m[1]))] {
					names = append(names, string(m[1]))
				}
			}
			out = append(out, refTable{action: a, names: names})
		}
	}
	return out
}

// columnsOf merges the project's columns of an action with the metadata
// source's.
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

// inSelectList reports whether off is between a SELECT and its FROM (or
// the next clause) in the SQL of the statement off is in.
func inSelectList(text []byte, x *source.SQLX, off int) bool {
	start := 0
	if b, ok := x.Config(); ok && b.Span.End <= off {
		start = b.Span.End
	}
	for _, b := range x.Blocks {
		if b.Span.End <= off && b.Span.End > start {
			start = b.Span.End
		}
		if b.Body.Start <= off && off <= b.Body.End && b.Body.Start > start {
			start = b.Body.Start
		}
	}
	for _, sep := range x.Separators {
		if sep.Span.End <= off && sep.Span.End > start {
			start = sep.Span.End
		}
	}
	sql := maskPlaceholders(text, x, start, off)
	ms := clauseRE.FindAllStringSubmatch(sql, -1)
	return len(ms) > 0 && strings.EqualFold(ms[len(ms)-1][1], "select")
}

// maskPlaceholders is text[start:end] with ${} placeholders blanked.
func maskPlaceholders(text []byte, x *source.SQLX, start, end int) string {
	b := []byte(string(text[start:end]))
	for _, p := range x.Placeholders {
		for i := max(p.Start, start); i < min(p.End, end); i++ {
			b[i-start] = ' '
		}
	}
	return string(b)
}
