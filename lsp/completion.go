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

// Completion implements protocol.Server: action names inside ref( and
// resolve( (and dependency lists), keys and type values of SQLX config
// blocks, the functions and constants of includes/ files after
// "<file>.", and column names in SQLX SQL (see completeColumns).
func (s *Server) Completion(ctx context.Context, params *protocol.CompletionParams) (protocol.CompletionResult, error) {
	f, err := s.fileAt(params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	off := f.offset(params.Position)
	var items []protocol.CompletionItem
	c := source.CompletionAt(f.text, off, f.sqlx)
	switch c.Kind {
	case source.CompleteActionName:
		items = s.completeActionNames(f, c)
	case source.CompleteConfigKey:
		items = completeConfigKeys(f, c)
	case source.CompleteTypeValue:
		for _, t := range source.ActionTypes {
			items = append(items, protocol.CompletionItem{
				Label: t, Kind: protocol.CompletionItemKindEnumMember,
				TextEdit: &protocol.TextEdit{Range: f.rangeOf(c.Replace), NewText: t},
			})
		}
	default:
		items = s.completeIncludeMembers(f, off)
		if items == nil {
			items = s.completeColumns(ctx, f, off)
		}
	}
	if items == nil {
		items = []protocol.CompletionItem{}
	}
	return &protocol.CompletionList{Items: items}, nil
}

func (s *Server) completeActionNames(f *fileCtx, c source.Completion) []protocol.CompletionItem {
	if f.snap == nil {
		return nil
	}
	own := map[*workspace.Action]bool{}
	for _, a := range f.snap.ActionsIn(f.rel) {
		own[a] = true
	}
	seen := map[string]bool{}
	var items []protocol.CompletionItem
	for _, a := range f.snap.Actions() {
		name := a.Target.Name
		if seen[name] || own[a] || a.Kind == workspace.KindTest {
			continue
		}
		seen[name] = true
		text := name
		if c.Quote == 0 {
			text = `"` + name + `"`
		}
		item := protocol.CompletionItem{
			Label:    name,
			Kind:     protocol.CompletionItemKindReference,
			Detail:   protocol.NewOptional(a.Kind + " · " + a.Target.String()),
			TextEdit: &protocol.TextEdit{Range: f.rangeOf(c.Replace), NewText: text},
			SortText: protocol.NewOptional(name),
		}
		if a.Description != "" {
			item.Documentation = protocol.String(a.Description)
		}
		items = append(items, item)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].Label < items[j].Label })
	return items
}

var configTypeRE = regexp.MustCompile(`\btype\s*:\s*["'](\w+)["']`)

func completeConfigKeys(f *fileCtx, c source.Completion) []protocol.CompletionItem {
	actionType := ""
	if b, ok := source.ScanSQLX(f.text).Config(); ok {
		if m := configTypeRE.FindSubmatch(f.text[b.Body.Start:min(b.Body.End, len(f.text))]); m != nil {
			actionType = string(m[1])
		}
	}
	var items []protocol.CompletionItem
	for _, k := range source.ConfigKeys[c.Object] {
		if actionType != "" && len(k.Types) > 0 && !contains(k.Types, actionType) {
			continue
		}
		items = append(items, protocol.CompletionItem{
			Label:         k.Name,
			Kind:          protocol.CompletionItemKindProperty,
			Detail:        protocol.NewOptional("config"),
			Documentation: protocol.String(k.Doc),
			TextEdit:      &protocol.TextEdit{Range: f.rangeOf(c.Replace), NewText: k.Name + ": "},
		})
	}
	return items
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	memberAccessRE = regexp.MustCompile(`(?:^|[^\w$.])([A-Za-z_$][\w$]*)\.([\w$]*)$`)
	exportedRE     = regexp.MustCompile(`(?m)^\s*(?:export\s+)?(?:(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=)`)
)

func (s *Server) completeIncludeMembers(f *fileCtx, off int) []protocol.CompletionItem {
	if f.p == nil {
		return nil
	}
	line := string(f.text[max(0, off-200):off])
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	m := memberAccessRE.FindStringSubmatch(line)
	if m == nil {
		return nil
	}
	file, ok := s.includeModules(f.p.Root())[m[1]]
	if !ok {
		return nil
	}
	text, err := s.readFile(file)
	if err != nil {
		return nil
	}
	replace := source.Span{Start: off - len(m[2]), End: off}
	var items []protocol.CompletionItem
	seen := map[string]bool{}
	for _, mm := range exportedRE.FindAllSubmatch(text, -1) {
		name, kind := string(mm[1]), protocol.CompletionItemKindFunction
		if name == "" {
			name, kind = string(mm[2]), protocol.CompletionItemKindConstant
		}
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		items = append(items, protocol.CompletionItem{
			Label: name, Kind: kind, Detail: protocol.NewOptional("includes/" + m[1] + ".js"),
			TextEdit: &protocol.TextEdit{Range: f.rangeOf(replace), NewText: name},
		})
	}
	return items
}
