package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// Hover implements protocol.Server: on a ref (or an action name in a
// dependency list), the action's target, type, description and columns,
// from the project and, when a metadata snapshot is configured, from the
// warehouse's metadata; on an includes function, its definition.
func (s *Server) Hover(ctx context.Context, params *protocol.HoverParams) (*protocol.Hover, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	if f.p == nil {
		return nil, nil
	}
	off := f.offset(params.Position)
	var actions []*workspace.Action
	var span source.Span
	if r, ok := source.RefAt(f.refs(), off); ok && f.snap != nil {
		actions = f.snap.Lookup(r.Database.Value, r.Schema.Value, r.Name.Value)
		span = r.Span
		if len(actions) == 0 {
			return s.markdown(f, span, fmt.Sprintf("**%s**: no action of this name in the last compile of `%s`", r.Name.Value, filepath.Base(f.p.Root()))), nil
		}
	} else if str, ok := source.StringAt(f.text, off); ok && f.snap != nil {
		actions = f.snap.Lookup("", "", str.Value)
		span = str.Span
	}
	if len(actions) > 0 {
		var parts []string
		for _, a := range actions {
			parts = append(parts, s.describeAction(ctx, f, a))
		}
		return s.markdown(f, span, strings.Join(parts, "\n\n---\n\n")), nil
	}
	if path, _, sp := source.WordAt(f.text, off); len(path) == 1 && (path[0] == "config" || path[0] == "publish") && f.snap != nil {
		// The action a config block or a publish( call defines: what it
		// is and, with BigQuery, what a run of it costs.
		if as := s.definedAt(f, sp, path[0] == "config"); len(as) > 0 {
			var parts []string
			for _, a := range as {
				parts = append(parts, s.describeAction(ctx, f, a))
			}
			return s.markdown(f, sp, strings.Join(parts, "\n\n---\n\n")), nil
		}
	}
	if path, idx, sp := source.WordAt(f.text, off); len(path) > 1 && idx > 0 {
		if file, ok := s.includeModules(f.p.Root())[path[0]]; ok {
			if text, err := s.readFile(file); err == nil {
				if def, ok := source.FindDefinition(text, path[1]); ok {
					m := source.NewMapper(text)
					line := m.LineOf(def.Start)
					snippet := strings.TrimSpace(m.LineText(line))
					if c := leadingComment(m, line); c != "" {
						snippet = c + "\n" + snippet
					}
					return s.markdown(f, sp, fmt.Sprintf("```js\n%s\n```\nfrom `includes/%s`", snippet, filepath.Base(file))), nil
				}
			}
		}
	}
	if v, sp, ok := s.variableAt(ctx, f, off); ok {
		text := fmt.Sprintf("**%s**: variable DECLAREd in `pre_operations`", v.Name)
		if v.Type != "" {
			text += " · `" + v.Type + "`"
		}
		return s.markdown(f, sp, text), nil
	}
	if h := s.columnHover(ctx, f, off); h != nil {
		return h, nil
	}
	return nil, nil
}

// columnHover is the hover on an output column's name in a .sqlx file's
// SQL: its type, description and where its values come from, as the last
// SQL check knows them (never waiting for one: the lineage is traced in
// the background for the next hover).
func (s *Server) columnHover(ctx context.Context, f *fileCtx, off int) *protocol.Hover {
	if !f.sqlx || f.snap == nil {
		return nil
	}
	x := f.scan()
	if x.InJavaScript(off) {
		return nil
	}
	if b, ok := x.Config(); ok && b.Span.Contains(off) {
		return nil
	}
	path, _, sp := source.WordAt(f.text, off)
	if len(path) != 1 || source.SQLKeywords[strings.ToLower(path[0])] {
		return nil
	}
	for _, a := range f.snap.ActionsIn(f.rel) {
		if a.Kind == workspace.KindAssertion {
			continue
		}
		l, err := f.snap.CachedLineage(ctx, a, path[0])
		if err != nil || l == nil || l.Reason != "" || len(l.Columns) != 1 {
			continue
		}
		c := l.Columns[0]
		var b strings.Builder
		fmt.Fprintf(&b, "**%s** `%s` — output column of `%s`", c.Name, c.Type, l.Action)
		for _, ac := range a.Columns {
			if strings.EqualFold(ac.Name, c.Name) && ac.Description != "" {
				fmt.Fprintf(&b, "\n\n%s", ac.Description)
			}
		}
		inputs := func(label string, ins []workspace.LineageInput) {
			if len(ins) == 0 {
				return
			}
			fmt.Fprintf(&b, "\n\n%s:", label)
			for _, in := range ins {
				fmt.Fprintf(&b, "\n- `%s.%s`", in.Table, in.Column)
				if in.Computed {
					b.WriteString(" (computed)")
				}
			}
		}
		inputs("from", c.Direct)
		inputs("origins in the warehouse", c.Origins)
		for _, u := range c.Unresolved {
			fmt.Fprintf(&b, "\n\n_%s_", u)
		}
		return s.markdown(f, sp, b.String())
	}
	return nil
}

// leadingComment is the // comment block right above line.
func leadingComment(m *source.Mapper, line int) string {
	var lines []string
	for l := line - 1; l >= 0; l-- {
		t := strings.TrimSpace(m.LineText(l))
		if !strings.HasPrefix(t, "//") {
			break
		}
		lines = append([]string{t}, lines...)
	}
	return strings.Join(lines, "\n")
}

func (s *Server) markdown(f *fileCtx, span source.Span, text string) *protocol.Hover {
	kind := protocol.MarkupKindPlainText
	if s.capabilities().markdownHover {
		kind = protocol.MarkupKindMarkdown
	}
	r := f.rangeOf(span)
	return &protocol.Hover{Contents: &protocol.MarkupContent{Kind: kind, Value: text}, Range: &r}
}

// describeAction is the hover text of an action.
func (s *Server) describeAction(ctx context.Context, f *fileCtx, a *workspace.Action) string {
	var b strings.Builder
	kind := a.Kind
	if a.Jit {
		kind += " · JiT"
	}
	if a.Disabled {
		kind += " · disabled"
	}
	fmt.Fprintf(&b, "**%s** — %s\n\n`%s`\n", a.Target.Name, kind, a.Target.String())
	if a.Description != "" {
		fmt.Fprintf(&b, "\n%s\n", a.Description)
	}
	var facts []string
	if a.File != "" {
		facts = append(facts, fmt.Sprintf("defined in `%s`", a.File))
	}
	if len(a.Tags) > 0 {
		facts = append(facts, "tags: "+strings.Join(a.Tags, ", "))
	}
	if len(a.Dependencies) > 0 {
		var names []string
		for _, d := range a.Dependencies {
			names = append(names, d.Name)
		}
		facts = append(facts, "depends on: "+strings.Join(names, ", "))
	}
	if n := len(f.snap.Dependents(a)); n > 0 {
		facts = append(facts, fmt.Sprintf("%d dependent(s)", n))
	}
	if len(facts) > 0 {
		fmt.Fprintf(&b, "\n%s\n", strings.Join(facts, " · "))
	}
	if line := costLine(f.snap, a); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	if len(a.Columns) > 0 {
		b.WriteString("\n| column | description |\n|---|---|\n")
		for _, c := range a.Columns {
			fmt.Fprintf(&b, "| `%s` | %s |\n", c.Name, cell(c.Description))
		}
	}
	if info, ok := f.snap.TableMetadata(ctx, a.Target); ok {
		fmt.Fprintf(&b, "\n**Metadata** (%s", info.Source)
		if info.Type != "" {
			fmt.Fprintf(&b, ", %s", info.Type)
		}
		b.WriteString(")")
		if info.Description != "" && info.Description != a.Description {
			fmt.Fprintf(&b, ": %s", info.Description)
		}
		b.WriteString("\n")
		if len(info.Columns) > 0 {
			b.WriteString("\n| column | type | description |\n|---|---|---|\n")
			for _, c := range info.Columns {
				t := c.Type
				if c.Mode != "" {
					t += " " + c.Mode
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Name, t, cell(c.Description))
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// definedAt are the actions of f defined on the line of sp (a publish(
// call), or every action of the file for a .sqlx config block.
func (s *Server) definedAt(f *fileCtx, sp source.Span, config bool) []*workspace.Action {
	all := f.snap.ActionsIn(f.rel)
	if config && strings.HasSuffix(f.rel, ".sqlx") {
		return all
	}
	line := f.m.LineOf(sp.Start)
	var out []*workspace.Action
	for _, a := range all {
		if def, ok := definitionSpan(f.doc, a); ok && f.m.LineOf(def.Start) == line {
			out = append(out, a)
		}
	}
	return out
}
