package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// CodeActionDocumentColumns is the kind of the "document columns" code
// action: a refactoring, offered wherever the cursor is in a .sqlx file.
const CodeActionDocumentColumns protocol.CodeActionKind = "refactor.rewrite.dfd.documentColumns"

// wantsDocumentColumns reports whether a code action request's `only`
// (empty: everything) takes the document-columns action.
func wantsDocumentColumns(only []protocol.CodeActionKind) bool {
	if len(only) == 0 {
		return true
	}
	for _, k := range only {
		if k == "" || strings.HasPrefix(string(CodeActionDocumentColumns), string(k)) {
			return true
		}
	}
	return false
}

// documentColumns is the "Document columns" code action of a .sqlx
// file's action: its output columns — the types the last SQL check
// inferred, else the built table's columns from the metadata source —
// written into config { columns: {…} } with the warehouse's descriptions
// where it has them (else ""), after the columns already there, which are
// kept as they are (text, comments, order). Nothing when every column is
// documented, or when the config has no object to add to.
func (s *Server) documentColumns(ctx context.Context, f *fileCtx, off int) *protocol.CodeAction {
	if !f.sqlx || f.snap == nil || f.snap.Result == nil {
		return nil
	}
	a, _ := lineageAction(f.snap, f.doc, f.rel, "", off)
	if a == nil {
		return nil
	}
	switch a.Kind {
	case workspace.KindTable, workspace.KindView, workspace.KindIncremental, workspace.KindDeclaration:
	default:
		return nil
	}
	cfg, ok := source.SQLXConfig(f.text)
	if !ok || cfg.Kind != source.ConfigObject {
		return nil
	}
	var names []string
	desc := map[string]string{}
	info, hasInfo := f.snap.TableMetadata(ctx, a.Target)
	if hasInfo {
		for _, c := range info.Columns {
			if !strings.Contains(c.Name, ".") {
				desc[c.Name] = c.Description
			}
		}
	}
	if a.Kind != workspace.KindDeclaration {
		if l, err := f.snap.ColumnTypes(ctx, a); err == nil && l != nil {
			for _, c := range l.Columns {
				if !strings.Contains(c.Name, ".") {
					names = append(names, c.Name)
				}
			}
		}
	}
	if len(names) == 0 && hasInfo { // not analysed (yet): the built table's
		for _, c := range info.Columns {
			if !strings.Contains(c.Name, ".") {
				names = append(names, c.Name)
			}
		}
	}
	cols, has := cfg.Field("columns")
	if has && cols.Value.Kind != source.ConfigObject {
		return nil // computed columns: not ours to edit
	}
	documented := map[string]bool{}
	for _, fl := range cols.Value.Fields {
		documented[strings.ToLower(fl.Key)] = true
	}
	var lines []string
	for _, n := range names {
		if documented[strings.ToLower(n)] {
			continue
		}
		documented[strings.ToLower(n)] = true
		v, _ := json.Marshal(desc[n])
		lines = append(lines, jsKey(n)+": "+string(v))
	}
	if len(lines) == 0 {
		return nil
	}
	fieldIndent := indentOf(f.text, cfg.Fields, "  ")
	var edits []workspace.Edit
	if has {
		edits = addFields(f.text, cols.Value, lines, indentOf(f.text, cols.Value.Fields, fieldIndent+"  "), fieldIndent)
	} else {
		block := "columns: {\n" + prefixAll(lines, fieldIndent+"  ", ",\n") + "\n" + fieldIndent + "}"
		edits = addFields(f.text, cfg, []string{block}, fieldIndent, "")
	}
	we, err := s.workspaceEdit(&workspace.Change{Edits: []*workspace.FileEdit{{Path: f.path, Doc: f.doc, Edits: edits}}})
	if err != nil {
		return nil
	}
	kind := CodeActionDocumentColumns
	title := fmt.Sprintf("Document columns: add %d to config.columns", len(lines))
	if len(lines) == 1 {
		title = "Document columns: add 1 to config.columns"
	}
	return &protocol.CodeAction{Title: title, Kind: &kind, Edit: we}
}

var jsIdent = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func jsKey(name string) string {
	if jsIdent.MatchString(name) {
		return name
	}
	b, _ := json.Marshal(name)
	return string(b)
}

func prefixAll(lines []string, indent, sep string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = indent + l
	}
	return strings.Join(out, sep)
}

// indentOf is the indentation of the line of an object's first field,
// else def.
func indentOf(text []byte, fields []source.ConfigField, def string) string {
	if len(fields) == 0 {
		return def
	}
	start := fields[0].KeyName.Start
	if fields[0].KeyQuoted {
		start--
	}
	ls := bytes.LastIndexByte(text[:start], '\n') + 1
	ind := text[ls:start]
	if len(bytes.TrimLeft(ind, " \t")) != 0 {
		return def // the field does not start its line
	}
	return string(ind)
}

// addFields adds lines (key: value, without separators) as the last
// fields of obj, each on a line of its own indented with indent, after
// the line of the last field (so a comment ending that line stays
// there); closeIndent is the indentation of obj's closing brace when obj
// is empty. Whether the last field is followed by a comma is kept as the
// object's style; an object written on one line stays on one line.
func addFields(text []byte, obj source.ConfigValue, lines []string, indent, closeIndent string) []workspace.Edit {
	closing := obj.Span.End - 1 // the '}'
	if len(obj.Fields) == 0 {
		return []workspace.Edit{{
			Span:    source.Span{Start: obj.Span.Start, End: obj.Span.End},
			NewText: "{\n" + prefixAll(lines, indent, ",\n") + "\n" + closeIndent + "}",
		}}
	}
	last := obj.Fields[len(obj.Fields)-1].Value.Span.End
	between := text[last:closing]
	comma := bytes.IndexByte(between, ',')
	if comma >= 0 && inComment(between[:comma]) {
		comma = -1
	}
	nl := bytes.IndexByte(between, '\n')
	switch {
	case nl >= 0 && comma >= 0 && comma < nl:
		at := last + nl + 1
		return []workspace.Edit{{Span: source.Span{Start: at, End: at}, NewText: prefixAll(lines, indent, ",\n") + ",\n"}}
	case nl >= 0 && comma < 0:
		at := last + nl + 1
		return []workspace.Edit{
			{Span: source.Span{Start: last, End: last}, NewText: ","},
			{Span: source.Span{Start: at, End: at}, NewText: prefixAll(lines, indent, ",\n") + "\n"},
		}
	case comma >= 0:
		at := last + comma + 1
		return []workspace.Edit{{Span: source.Span{Start: at, End: at}, NewText: " " + strings.Join(lines, ", ") + ","}}
	}
	return []workspace.Edit{{Span: source.Span{Start: last, End: last}, NewText: ", " + strings.Join(lines, ", ")}}
}

// inComment: the text before a comma opened a comment (the comma is in it).
func inComment(b []byte) bool {
	return bytes.Contains(b, []byte("//")) || bytes.Contains(b, []byte("/*"))
}
