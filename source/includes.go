package source

import (
	"path"
	"strings"
)

// Renaming a constant or function of an includes file. Core gives every
// top-level file includes/<name>.js to SQLX and JavaScript as a global
// <name> holding its module.exports, so a member X of includes/m.js is
// used elsewhere as m.X, and defined in m.js by a top-level declaration
// exported by `module.exports = { X }`, `{ X: X }` or `exports.X = …`.

// IncludeUse is one place another file uses a member: the member name of
// mod.member (or alias.member, alias = require("…/includes/mod")).
type IncludeUse struct {
	Module, Member string
	Span           Span // the member's identifier
}

// IncludeScan is what a file does with the includes modules.
type IncludeScan struct {
	Uses []IncludeUse
	// Dynamic are uses of a module a rename cannot follow: mod[expr] and
	// destructuring (const {a} = mod), with the module named.
	Dynamic []IncludeDynamic
}

// IncludeDynamic is a use of a module whose members are not written out.
type IncludeDynamic struct {
	Module string
	Span   Span
	// Members are the names a destructuring takes (empty for mod[expr]).
	Members []string
}

// jsRegions are the parts of a file that are JavaScript: all of a .js
// file; a SQLX file's config and js blocks and its ${} placeholders.
func jsRegions(filePath string, text []byte) []Span {
	if strings.ToLower(path.Ext(filePath)) != ".sqlx" {
		return []Span{{0, len(text)}}
	}
	x := ScanSQLX(text)
	var out []Span
	for _, b := range x.Blocks {
		switch b.Kind {
		case ConfigBlock, JSBlock:
			out = append(out, b.Body)
		}
	}
	for _, ph := range x.Placeholders {
		if ph.End-1 > ph.Start+2 {
			out = append(out, Span{ph.Start + 2, ph.End - 1})
		}
	}
	return out
}

// ScanIncludeUses finds the uses of includes modules (isModule says which
// global names are modules) in a .js or .sqlx file.
func ScanIncludeUses(filePath string, text []byte, isModule func(string) bool) *IncludeScan {
	out := &IncludeScan{}
	for _, r := range jsRegions(filePath, text) {
		p := &parser{src: text, toks: jsTokens(text, r.Start, r.End)}
		aliases := requireAliases(p)
		moduleOf := func(i int) (string, bool) {
			t := p.toks[i]
			if t.Kind != tokIdent || p.punct(i-1, ".") || p.punct(i-1, "?.") {
				return "", false
			}
			if m, ok := aliases[t.Text]; ok {
				return m, true
			}
			if isModule(t.Text) {
				return t.Text, true
			}
			return "", false
		}
		for i := range p.toks {
			mod, ok := moduleOf(i)
			if !ok {
				continue
			}
			switch {
			case (p.punct(i+1, ".") || p.punct(i+1, "?.")) && p.ident(i+2, ""):
				out.Uses = append(out.Uses, IncludeUse{Module: mod, Member: p.toks[i+2].Text, Span: p.toks[i+2].Span})
			case p.punct(i+1, "[") || p.punct(i+1, "?.") && p.punct(i+2, "["):
				end := p.after(i + 1)
				out.Dynamic = append(out.Dynamic, IncludeDynamic{Module: mod, Span: Span{p.toks[i].Span.Start, p.end(end)}})
			case p.punct(i-1, "=") && p.punct(i-2, "}"):
				// const { a, b: c } = mod
				closeIdx := i - 2
				open := p.toks[closeIdx].Match
				if open < 0 || open >= closeIdx {
					continue
				}
				obj := p.object(open)
				var members []string
				for _, f := range obj.fields {
					members = append(members, f.key)
				}
				out.Dynamic = append(out.Dynamic, IncludeDynamic{Module: mod, Span: Span{p.toks[open].Span.Start, p.toks[i].Span.End}, Members: members})
			}
		}
	}
	return out
}

// requireAliases maps v to m for `const v = require("…includes/m")`.
func requireAliases(p *parser) map[string]string {
	out := map[string]string{}
	for i := range p.toks {
		if !p.ident(i, "require") || !p.punct(i+1, "(") || !p.punct(i-1, "=") || !p.ident(i-2, "") {
			continue
		}
		if !(p.ident(i-3, "const") || p.ident(i-3, "let") || p.ident(i-3, "var")) {
			continue
		}
		args := p.args(i + 1)
		if len(args) != 1 || args[0].kind != valString {
			continue
		}
		spec := strings.TrimSuffix(args[0].str.Value, ".js")
		if dir, base := path.Split(spec); strings.HasSuffix(strings.TrimSuffix(dir, "/"), "includes") && base != "" {
			out[p.toks[i-2].Text] = base
		}
	}
	return out
}

// IncludeEdit is an edit of the includes file itself for a member rename.
type IncludeEdit struct {
	Span Span
	// Shorthand: the span is a shorthand property {X} of an object that
	// is not the exports, which must keep its key: "X: Y".
	Shorthand bool
}

// IncludeMemberRename is how the includes file writes member X.
type IncludeMemberRename struct {
	// Declared: a top-level declaration (function, const, let, var,
	// class) names it; Exported: module.exports or exports names it.
	Declared, Exported bool
	DeclSpan           Span
	Edits              []IncludeEdit
	// Shadowed are declarations of the same name inside functions and
	// parameters named so: a rename by text could not tell them apart.
	Shadowed []Span
	// Taken: the new name is already an identifier of the file (or an
	// exported key).
	Taken []Span
}

// RenameIncludeMember finds what renaming member to newName changes in the
// text of its includes file.
func RenameIncludeMember(text []byte, member, newName string) IncludeMemberRename {
	p := &parser{src: text, toks: jsTokens(text, 0, len(text))}
	toks := p.toks
	var r IncludeMemberRename
	// enclosing[i] is the index of the innermost open bracket around
	// token i (-1 at top level).
	enclosing := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		if len(stack) > 0 && stack[len(stack)-1] >= 0 && toks[stack[len(stack)-1]].Match == i {
			stack = stack[:len(stack)-1]
		}
		enclosing[i] = -1
		if len(stack) > 0 {
			enclosing[i] = stack[len(stack)-1]
		}
		if t.Kind == tokPunct && (t.Text == "(" || t.Text == "[" || t.Text == "{") && t.Match > i {
			stack = append(stack, i)
		}
	}
	// exportsObject reports whether the '{' at o is `module.exports = {` or
	// `exports = {`.
	exportsObject := func(o int) bool {
		return o >= 2 && p.punct(o-1, "=") && p.ident(o-2, "exports") && (!p.punct(o-3, ".") || p.ident(o-4, "module"))
	}
	// params reports whether the '(' at o opens a parameter list.
	params := func(o int) bool {
		if o < 0 || !p.punct(o, "(") {
			return false
		}
		c := toks[o].Match
		if p.punct(c+1, "=>") || p.ident(o-1, "function") || p.ident(o-1, "catch") {
			return true
		}
		return p.ident(o-1, "") && p.ident(o-2, "function")
	}
	var refs []IncludeEdit
	for i, t := range toks {
		if t.Kind != tokIdent {
			continue
		}
		if t.Text == newName && !p.punct(i-1, ".") && !p.punct(i-1, "?.") {
			r.Taken = append(r.Taken, t.Span)
		}
		if t.Text != member {
			continue
		}
		enc := enclosing[i]
		switch {
		case p.punct(i-1, ".") || p.punct(i-1, "?."):
			// exports.X, module.exports.X; another object's property
			// otherwise.
			if p.ident(i-2, "exports") && (!p.punct(i-3, ".") || p.ident(i-4, "module")) {
				r.Exported = true
				r.Edits = append(r.Edits, IncludeEdit{Span: t.Span})
			}
		case p.punct(i+1, ":") && (p.punct(i-1, "{") || p.punct(i-1, ",")) && enc >= 0 && p.punct(enc, "{"):
			// A key.
			if exportsObject(enc) {
				r.Exported = true
				r.Edits = append(r.Edits, IncludeEdit{Span: t.Span})
			}
		case (p.punct(i+1, ",") || p.punct(i+1, "}")) && (p.punct(i-1, "{") || p.punct(i-1, ",")) && enc >= 0 && p.punct(enc, "{"):
			// Shorthand {X}: the exports, a destructuring (a declaration
			// of X), or an object literal.
			closeIdx := toks[enc].Match
			switch {
			case exportsObject(enc):
				r.Exported = true
				r.Edits = append(r.Edits, IncludeEdit{Span: t.Span})
			case p.punct(closeIdx+1, "=") || params(enclosing[enc]):
				r.Shadowed = append(r.Shadowed, t.Span)
			default:
				refs = append(refs, IncludeEdit{Span: t.Span, Shorthand: true})
			}
		case p.ident(i-1, "function") || p.ident(i-1, "class") || p.ident(i-1, "const") || p.ident(i-1, "let") || p.ident(i-1, "var"):
			if enc < 0 {
				r.Declared = true
				r.DeclSpan = t.Span
				refs = append(refs, IncludeEdit{Span: t.Span})
			} else {
				r.Shadowed = append(r.Shadowed, t.Span)
			}
		case params(enc) || p.punct(i+1, "=>"):
			r.Shadowed = append(r.Shadowed, t.Span)
		default:
			refs = append(refs, IncludeEdit{Span: t.Span})
		}
	}
	if r.Declared {
		// Bare identifiers name the top-level declaration; without one
		// they name something else (a global), not this member.
		r.Edits = append(r.Edits, refs...)
	}
	return r
}

// IncludeDecls are the members an includes file defines at top level or
// exports, with the span of each name's first definition.
func IncludeDecls(text []byte) map[string]Span {
	p := &parser{src: text, toks: jsTokens(text, 0, len(text))}
	out := map[string]Span{}
	depth := 0
	for i, t := range p.toks {
		if t.Kind == tokPunct {
			switch t.Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			continue
		}
		if t.Kind != tokIdent {
			continue
		}
		add := func() {
			if _, ok := out[t.Text]; !ok {
				out[t.Text] = t.Span
			}
		}
		switch {
		case depth == 0 && (p.ident(i-1, "function") || p.ident(i-1, "class") || p.ident(i-1, "const") || p.ident(i-1, "let") || p.ident(i-1, "var")):
			add()
		case (p.punct(i-1, ".")) && p.ident(i-2, "exports") && p.punct(i+1, "="):
			add()
		case depth == 1 && (p.punct(i-1, "{") || p.punct(i-1, ",")) && (p.punct(i+1, ":") || p.punct(i+1, ",") || p.punct(i+1, "}")):
			// a key of module.exports = { … }
			for j := i - 1; j >= 0; j-- {
				if p.punct(j, "{") && p.toks[j].Match > i {
					if p.punct(j-1, "=") && p.ident(j-2, "exports") {
						add()
					}
					break
				}
			}
		}
	}
	return out
}

// IncludeMemberAt is the includes member named at offset of a .js or .sqlx
// file: mod.member with the cursor on member (isModule says which names
// are modules). It reads JavaScript tokens only.
func IncludeMemberAt(filePath string, text []byte, offset int, isModule func(string) bool) (module, member string, span Span, ok bool) {
	for _, u := range ScanIncludeUses(filePath, text, isModule).Uses {
		if offset >= u.Span.Start && offset <= u.Span.End {
			return u.Module, u.Member, u.Span, true
		}
	}
	return "", "", Span{}, false
}

// IdentAt is the JavaScript identifier token at offset of a .js file, if
// the offset is on one (not in a comment or a string).
func IdentAt(text []byte, offset int) (string, Span, bool) {
	for _, t := range jsTokens(text, 0, len(text)) {
		if t.Kind == tokIdent && offset >= t.Span.Start && offset <= t.Span.End {
			return t.Text, t.Span, true
		}
		if t.Span.Start > offset {
			break
		}
	}
	return "", Span{}, false
}

// jsReserved are words that cannot name a constant or function.
var jsReserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`break case catch class const continue debugger default delete do else
		enum export extends false finally for function if import in instanceof new null return super switch
		this throw true try typeof var void while with yield let static implements interface package private
		protected public await arguments eval undefined NaN Infinity`) {
		jsReserved[w] = true
	}
}

// ValidJSIdentifier reports whether name can name a constant or function.
func ValidJSIdentifier(name string) bool {
	if name == "" || jsReserved[name] || !isIdentStart(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isIdentByte(name[i]) {
			return false
		}
	}
	return true
}
