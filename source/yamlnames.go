package source

import (
	"path"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// YAMLAction is one entry of an actions.yaml file:
//
//	actions:
//	  - table:
//	      filename: inventory/stock_levels.sql
//	      name: stock_levels        # optional: the file's base name otherwise
//	      dataset: inventory
//	      dependencyTargets:
//	        - name: stock_movements
//
// Core names the action by its name, else by the base name of its
// filename without extension, and reads its query from that file (relative
// to the actions.yaml's directory).
type YAMLAction struct {
	Kind string // declaration, table, view, incrementalTable, operation, assertion, …
	// Name and FileName are the values of those keys (Span: the value as
	// written, without quotes); the Editable flags say whether replacing
	// the span replaces exactly the value.
	Name, FileName         StringArg
	NameEditable, FileEdit bool
	HasName, HasFile       bool
	Dataset, Project       StringArg
	// Span covers the entry (its first key to its last value).
	Span Span
	// Deps are the dependencyTargets (Kind UseDependency; Owner is the
	// index of this entry).
	Deps []NameUse
	// DepsAt is where a new dependency target goes (the end of the last
	// one, or of the entry) and DepsIndent the indentation of a "- name:"
	// item there; DepsList says the list exists.
	DepsAt     int
	DepsIndent string
	DepsList   bool
}

// ActionName is the name core gives the entry's action.
func (a YAMLAction) ActionName() string {
	if a.HasName {
		return a.Name.Value
	}
	base := path.Base(a.FileName.Value)
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		return base[:i]
	}
	return ""
}

// IsActionsYAML reports whether a root-relative path is an actions.yaml
// core loads (definitions/**/actions.yaml).
func IsActionsYAML(rel string) bool {
	return path.Base(rel) == "actions.yaml" && strings.HasPrefix(rel, "definitions/")
}

// ScanActionsYAML reads the entries of an actions.yaml file. A file that
// does not parse gives none (core reports it).
func ScanActionsYAML(text []byte) []YAMLAction {
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil || len(root.Content) == 0 {
		return nil
	}
	lines := NewMapper(text)
	offset := func(n *yaml.Node) int {
		// yaml.v3 columns count characters from 1.
		start, _ := lines.lineBounds(n.Line - 1)
		off := start
		for k := 1; k < n.Column && off < len(text); k++ {
			_, w := utf8.DecodeRune(text[off:])
			off += w
		}
		return off
	}
	// scalar is the node's value and where it is written; editable when
	// the text there is exactly the value (plain, or quoted without
	// escapes).
	scalar := func(n *yaml.Node) (StringArg, bool) {
		if n == nil || n.Kind != yaml.ScalarNode {
			return StringArg{}, false
		}
		off := offset(n)
		switch n.Style {
		case 0:
			if strings.HasPrefix(string(text[off:]), n.Value) {
				return StringArg{Value: n.Value, Span: Span{off, off + len(n.Value)}}, true
			}
		case yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
			q := text[off]
			if v := off + 1; v+len(n.Value) < len(text) && string(text[v:v+len(n.Value)]) == n.Value && text[v+len(n.Value)] == q {
				return StringArg{Value: n.Value, Span: Span{v, v + len(n.Value)}}, true
			}
		}
		return StringArg{Value: n.Value, Span: Span{off, off}}, false
	}
	get := func(m *yaml.Node, key string) *yaml.Node {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil
		}
		var found *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				found = m.Content[i+1]
			}
		}
		return found
	}
	var end func(n *yaml.Node) int
	end = func(n *yaml.Node) int {
		if len(n.Content) > 0 {
			return end(n.Content[len(n.Content)-1])
		}
		off := offset(n)
		if n.Kind == yaml.ScalarNode {
			if sa, ok := scalar(n); ok {
				e := sa.Span.End
				if n.Style == yaml.SingleQuotedStyle || n.Style == yaml.DoubleQuotedStyle {
					e++
				}
				return e
			}
			// Multi-line or escaped: the end of its first line.
			_, le := lines.lineBounds(n.Line - 1)
			return le
		}
		return off
	}
	doc := root.Content[0]
	list := get(doc, "actions")
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil
	}
	var out []YAMLAction
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) < 2 {
			continue
		}
		kind, body := item.Content[0].Value, item.Content[1]
		if body.Kind != yaml.MappingNode {
			continue
		}
		a := YAMLAction{Kind: kind, Span: Span{offset(item.Content[0]), end(body)}}
		if n := get(body, "name"); n != nil {
			a.Name, a.NameEditable = scalar(n)
			a.HasName = true
		}
		if n := get(body, "filename"); n != nil {
			a.FileName, a.FileEdit = scalar(n)
			a.HasFile = true
		}
		if n := get(body, "dataset"); n != nil {
			a.Dataset, _ = scalar(n)
		}
		if n := get(body, "project"); n != nil {
			a.Project, _ = scalar(n)
		}
		a.DepsAt = a.Span.End
		if deps := get(body, "dependencyTargets"); deps != nil && deps.Kind == yaml.SequenceNode {
			a.DepsList = true
			for _, d := range deps.Content {
				u := NameUse{Kind: UseDependency, Owner: len(out), Span: Span{offset(d), end(d)}}
				if d.Kind != yaml.MappingNode {
					// Not a target; core rejects it.
					continue
				}
				u.Name, u.Editable = scalar(get(d, "name"))
				u.Schema, _ = scalar(get(d, "dataset"))
				u.Database, _ = scalar(get(d, "project"))
				a.Deps = append(a.Deps, u)
			}
			if len(deps.Content) > 0 {
				first := deps.Content[0]
				a.DepsAt = end(deps.Content[len(deps.Content)-1])
				// "- " sits two columns before the item's first key.
				a.DepsIndent = strings.Repeat(" ", max(first.Column-3, 0))
			}
		} else {
			// A new list goes after the entry, at its keys' indentation.
			first := body.Content[0]
			a.DepsIndent = strings.Repeat(" ", max(first.Column-1, 0))
		}
		out = append(out, a)
	}
	return out
}
