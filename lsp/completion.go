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
// resolve( (both arguments of ref("schema", "name"); dependency lists),
// keys and type values of config objects (SQLX config blocks and the
// configs of publish/operate/assert/declare in JavaScript, without the keys
// already written), members of the JiT context in .jitCode functions, the
// functions and constants of includes/ files after "<file>.", and column
// names in SQLX SQL (see completeColumns). What is being typed is
// source.CompletionAt's business; this is the answer.
func (s *Server) Completion(ctx context.Context, params *protocol.CompletionParams) (protocol.CompletionResult, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	off := f.offset(params.Position)
	var x *source.SQLX
	if f.sqlx {
		x = f.scan()
	}
	var items []protocol.CompletionItem
	c := source.CompletionAt(f.text, off, x)
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
	case source.CompleteJitContext:
		items = completeJitContext(f, c)
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
		if c.Schema != "" && a.Target.Schema != c.Schema && a.CanonicalTarget.Schema != c.Schema {
			continue // ref("schema", "…"): only that schema's actions
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

// completeConfigKeys offers the keys of the config object being written
// that it does not have yet, for its action type.
func completeConfigKeys(f *fileCtx, c source.Completion) []protocol.CompletionItem {
	present := map[string]bool{}
	for _, k := range c.Present {
		present[k] = true
	}
	var items []protocol.CompletionItem
	for _, k := range source.ConfigKeys[c.Object] {
		if present[k.Name] {
			continue
		}
		if c.ActionType != "" && len(k.Types) > 0 && !contains(k.Types, c.ActionType) {
			continue
		}
		if c.JS && c.Object == "" && k.Name == "type" && c.ActionType != "" && !contains([]string{"table", "view", "incremental"}, c.ActionType) {
			continue // operate, assert, declare: the call is the type
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

// completeJitContext offers the members of the JiT context (or of its
// adapter) that the action's kind of context has.
func completeJitContext(f *fileCtx, c source.Completion) []protocol.CompletionItem {
	var items []protocol.CompletionItem
	for _, m := range source.JitMembers[c.Object] {
		if c.ActionType != "" && len(m.Types) > 0 && !contains(m.Types, c.ActionType) {
			continue
		}
		kind := protocol.CompletionItemKindProperty
		if m.Method {
			kind = protocol.CompletionItemKindMethod
		}
		items = append(items, protocol.CompletionItem{
			Label: m.Name, Kind: kind,
			Detail:        protocol.NewOptional(m.Signature),
			Documentation: protocol.String(m.Doc),
			TextEdit:      &protocol.TextEdit{Range: f.rangeOf(c.Replace), NewText: m.Name},
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
