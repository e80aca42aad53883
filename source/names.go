package source

import (
	"path"
	"strings"
)

// Where a file names actions: the definitions and the references a rename
// must rewrite, the references it cannot (computed at run time), and the
// places a quick fix edits. It is read from JavaScript tokens (jstok.go),
// so a name in a comment, in SQL text or in a description is never taken
// for a reference.
//
// The semantics are @dataform/core 3.x's:
//
//   - an action is named by its config's name, else (SQLX, actions.yaml
//     entries with a filename) by its file's base name without extension;
//     JavaScript actions by the first argument of publish/operate/assert/
//     test/notebook or the name field of declare's config;
//   - ref()/resolve() take a name, (schema, name), (database, schema, name),
//     an array of those parts, or an object {name, schema|dataset,
//     database|project}; ctx.ref, jctx.ref and the bound ref of SQLX are
//     the same function;
//   - a dependencies entry is a name or "schema.name" / "db.schema.name"
//     (split at dots), or an object like ref's.

// UseKind says how a file uses an action's name.
type UseKind uint8

const (
	UseRef         UseKind = iota // ref(…), ctx.ref(…), jctx.ref(…)
	UseResolve                    // resolve(…) and its ctx./jctx. forms
	UseDependency                 // an entry of dependencies / dependencyTargets / .dependencies(…)
	UseTestDataset                // test(…).dataset("x"); a SQLX test's dataset: "x"
	UseTestInput                  // test(…).input("x", …); a SQLX input "x" { … } block
)

func (k UseKind) String() string {
	return [...]string{"ref()", "resolve()", "dependency", "test dataset", "test input"}[k]
}

// NameUse is a literal use of an action's name.
type NameUse struct {
	Kind UseKind
	// Database, Schema and Name as written (empty when not given).
	Database, Schema, Name StringArg
	// Editable: Name.Span holds exactly Name.Value (no escapes), so
	// replacing that span renames the action here.
	Editable bool
	// Span is the whole construct (the call, the entry), for messages.
	Span Span
	// Owner is the index in FileNames.Defs of the action whose definition
	// contains the use, or -1 (top-level code or a helper function).
	Owner int
}

// Computed is a use of an action name, or a definition, whose name is
// not a literal: it is built when the code runs.
type Computed struct {
	What  string // "ref()", "resolve()", "dependency", "action name", …
	Span  Span
	Owner int // as NameUse.Owner
}

// ActionDef is an action a file defines.
type ActionDef struct {
	// Func is "sqlx" for a SQLX file, else the JavaScript function
	// (publish, declare, assert, operate, test, notebook).
	Func string
	// Name is the name as written; FromFile: there is none and the action
	// is named after its file (SQLX); NameComputed: it is an expression.
	Name         StringArg
	Editable     bool
	FromFile     bool
	NameComputed bool
	// Schema and Database as written in the config (empty when absent).
	Schema, Database StringArg
	// Type is the config's type ("table", "test", …) when literal.
	Type string
	// Span covers the definition: the call and its chain of methods, or
	// the whole SQLX file.
	Span Span
	// Jit is the argument list of .jitCode(…) (empty when there is none).
	Jit Span
	// Deps is where a new dependency goes.
	Deps DepsSite
}

// DepsSite is where a dependency is added to a definition.
type DepsSite struct {
	Kind DepsSiteKind
	// At is the insertion offset: before the closing bracket of the list,
	// the closing brace of the config, or after the defining call.
	At int
	// Empty: the list (or the config object) has no elements yet.
	Empty bool
	// Objects: the list is dependencyTargets (entries are {name: …}).
	Objects bool
	// Indent is the indentation of the config's keys (for a new key), with
	// Multiline when the config spans several lines.
	Indent    string
	Multiline bool
}

// DepsSiteKind says what kind of place a DepsSite is.
type DepsSiteKind uint8

const (
	DepsNone      DepsSiteKind = iota // nowhere that can be edited safely
	DepsList                          // an existing dependencies / dependencyTargets array
	DepsConfigKey                     // a config object without such a key: add `dependencies: […]`
	DepsMethod                        // a JavaScript definition without a config: add `.dependencies([…])`
	DepsNewConfig                     // a SQLX file without a config block: add one
)

// DuplicateKey is a key given twice in one object of a config. JavaScript
// keeps the last; Remove is the text that deletes the first one (with its
// comma, and its whole lines when it has them to itself), which leaves
// the compiled result unchanged.
type DuplicateKey struct {
	Key           string
	First, Second Span // the keys
	Remove        Span
}

// FileNames is what ScanNames finds in one file.
type FileNames struct {
	Defs       []ActionDef
	Uses       []NameUse
	Computed   []Computed
	Duplicates []DuplicateKey
}

// ScanNames reads the action definitions and name uses of a .sqlx or .js
// file (path decides which; other files give nothing).
func ScanNames(filePath string, text []byte) *FileNames {
	switch strings.ToLower(path.Ext(filePath)) {
	case ".sqlx":
		return scanSQLXNames(filePath, text)
	case ".js":
		return scanJSNames(text, 0, len(text), -1)
	}
	return &FileNames{}
}

// --- values ----------------------------------------------------------------

type valKind uint8

const (
	valOther valKind = iota
	valString
	valArray
	valObject
)

// jsValue is an expression as far as names go: a string literal, an array
// or object literal, or anything else.
type jsValue struct {
	kind   valKind
	str    StringArg
	plain  bool
	elems  []jsValue
	fields []jsField
	span   Span
	open   int // token index of '[' or '{'
}

type jsField struct {
	key      string
	keySpan  Span
	computed bool // [computed] key or ...spread
	value    jsValue
	span     Span // from the key to the end of the value
}

func (v jsValue) field(keys ...string) (jsField, bool) {
	var found jsField
	ok := false
	for _, f := range v.fields { // the last wins, as in JavaScript
		for _, k := range keys {
			if f.key == k && !f.computed {
				found, ok = f, true
			}
		}
	}
	return found, ok
}

type parser struct {
	src  []byte
	toks []jsTok
}

func (p *parser) punct(i int, text string) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].Kind == tokPunct && p.toks[i].Text == text
}

func (p *parser) ident(i int, text string) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].Kind == tokIdent && (text == "" || p.toks[i].Text == text)
}

// ends reports whether token i ends an expression.
func (p *parser) ends(i int) bool {
	if i >= len(p.toks) {
		return true
	}
	t := p.toks[i]
	switch t.Kind {
	case tokPunct:
		switch t.Text {
		case ",", ")", "]", "}", ";":
			return true
		}
	case tokTemplateMiddle, tokTemplateTail:
		return true
	}
	return false
}

// skip returns the index after the expression starting at i.
func (p *parser) skip(i int) int {
	for i < len(p.toks) && !p.ends(i) {
		i = p.after(i)
	}
	return i
}

// after returns the index after token i and, for an opening bracket or a
// template head, everything up to its end.
func (p *parser) after(i int) int {
	t := p.toks[i]
	switch {
	case t.Kind == tokPunct && (t.Text == "(" || t.Text == "[" || t.Text == "{"):
		if t.Match > i {
			return t.Match + 1
		}
		return len(p.toks)
	case t.Kind == tokTemplateHead:
		for j := i; j < len(p.toks); {
			k := p.toks[j].Match
			if k <= j {
				return len(p.toks)
			}
			if p.toks[k].Kind == tokTemplateTail {
				return k + 1
			}
			j = k
		}
		return len(p.toks)
	}
	return i + 1
}

// end is the byte offset where the tokens before index i end.
func (p *parser) end(i int) int {
	if i <= 0 {
		return 0
	}
	return p.toks[min(i, len(p.toks))-1].Span.End
}

// value parses the expression at token i.
func (p *parser) value(i int) (jsValue, int) {
	if i >= len(p.toks) {
		return jsValue{}, i
	}
	t := p.toks[i]
	switch {
	case (t.Kind == tokString || t.Kind == tokTemplate) && p.ends(i+1):
		return jsValue{kind: valString, str: StringArg{Value: t.Value, Span: t.ValueSpan}, plain: t.Plain, span: t.Span}, i + 1
	case t.Kind == tokPunct && t.Text == "[" && t.Match > i && p.ends(t.Match+1):
		v := jsValue{kind: valArray, span: Span{t.Span.Start, p.toks[t.Match].Span.End}, open: i}
		for j := i + 1; j < t.Match; {
			if p.punct(j, ",") {
				j++
				continue
			}
			e, next := p.value(j)
			v.elems = append(v.elems, e)
			if next <= j {
				next = j + 1
			}
			j = next
		}
		return v, t.Match + 1
	case t.Kind == tokPunct && t.Text == "{" && t.Match > i && p.ends(t.Match+1):
		return p.object(i), t.Match + 1
	}
	next := p.skip(i)
	return jsValue{kind: valOther, span: Span{t.Span.Start, p.end(next)}}, next
}

// object parses the object literal whose '{' is token i.
func (p *parser) object(i int) jsValue {
	close := p.toks[i].Match
	v := jsValue{kind: valObject, span: Span{p.toks[i].Span.Start, p.toks[close].Span.End}, open: i}
	for j := i + 1; j < close; {
		if p.punct(j, ",") {
			j++
			continue
		}
		start := p.toks[j].Span.Start
		f := jsField{}
		switch t := p.toks[j]; {
		case t.Kind == tokPunct && t.Text == "...":
			f.computed = true
			next := p.skip(j + 1)
			f.span = Span{start, p.end(next)}
			v.fields = append(v.fields, f)
			j = next
			continue
		case t.Kind == tokPunct && t.Text == "[":
			f.computed = true
			j = p.after(j)
		case t.Kind == tokIdent || t.Kind == tokNumber:
			f.key, f.keySpan = t.Text, t.Span
			j++
		case t.Kind == tokString || t.Kind == tokTemplate:
			f.key, f.keySpan = t.Value, t.Span
			j++
		default:
			// Not a key: skip the expression, or at least this token — a
			// ';' or a stray ')' ends an expression at once, and the loop
			// would never move on (a typo mid-word, as in {;}, hung the
			// daemon's scan of the file).
			j = max(p.skip(j), j+1)
			continue
		}
		switch {
		case p.punct(j, ":"):
			val, next := p.value(j + 1)
			f.value = val
			f.span = Span{start, p.end(next)}
			j = next
		case p.ends(j):
			// Shorthand {name}: the value is a variable.
			f.value = jsValue{kind: valOther, span: f.keySpan}
			f.span = f.keySpan
		default:
			// A method, a getter: not data.
			f.computed = true
			next := p.skip(j)
			f.span = Span{start, p.end(next)}
			j = next
		}
		v.fields = append(v.fields, f)
	}
	return v
}

// --- targets -----------------------------------------------------------------

// targetOf reads a resolvable from call arguments (ref, resolve): strings
// (name; schema, name; database, schema, name), an array of those, or an
// object. ok is false when any part is not a literal.
func targetOf(args []jsValue) (db, schema, name StringArg, editable, ok bool) {
	parts := args
	if len(args) == 1 && args[0].kind == valArray {
		parts = args[0].elems
	}
	if len(parts) == 1 && parts[0].kind == valObject {
		return objectTarget(parts[0])
	}
	if len(parts) == 0 || len(parts) > 3 {
		return db, schema, name, false, false
	}
	for _, a := range parts {
		if a.kind != valString {
			return db, schema, name, false, false
		}
	}
	n := len(parts)
	name, editable = parts[n-1].str, parts[n-1].plain
	if n >= 2 {
		schema = parts[n-2].str
	}
	if n == 3 {
		db = parts[0].str
	}
	return db, schema, name, editable, true
}

// objectTarget reads {name, schema|dataset, database|project}.
func objectTarget(v jsValue) (db, schema, name StringArg, editable, ok bool) {
	for _, f := range v.fields {
		switch f.key {
		case "name", "schema", "dataset", "database", "project":
			if f.computed || f.value.kind != valString {
				return db, schema, name, false, false
			}
		}
	}
	n, has := v.field("name")
	if !has {
		return db, schema, name, false, false
	}
	name, editable = n.value.str, n.value.plain
	if f, ok := v.field("schema", "dataset"); ok {
		schema = f.value.str
	}
	if f, ok := v.field("database", "project"); ok {
		db = f.value.str
	}
	return db, schema, name, editable, true
}

// dottedTarget splits a dependencies string ("db.schema.name") as core's
// resolvableAsActionConfigTarget does; the name's span is its last part.
func dottedTarget(v jsValue) (db, schema, name StringArg) {
	parts := strings.Split(v.str.Value, ".")
	n := len(parts)
	last := parts[n-1]
	name = StringArg{Value: last, Span: Span{v.str.Span.End - len(last), v.str.Span.End}}
	if n >= 2 {
		schema = StringArg{Value: parts[n-2]}
	}
	if n >= 3 {
		db = StringArg{Value: parts[n-3]}
	}
	return db, schema, name
}

// --- JavaScript ----------------------------------------------------------------

var definers = map[string]bool{"publish": true, "declare": true, "assert": true, "operate": true, "test": true, "notebook": true}

// scanJSNames scans text[start:end] as JavaScript. owner is the definition
// index uses belong to when no definition of the scanned code contains
// them (-1 for .js files: top level; a SQLX file's own definition for its
// js blocks and placeholders).
func scanJSNames(text []byte, start, end, owner int) *FileNames {
	fn := &FileNames{}
	p := &parser{src: text, toks: jsTokens(text, start, end)}
	fn.addJS(p, owner)
	return fn
}

// addJS adds what the tokens of p hold.
func (fn *FileNames) addJS(p *parser, owner int) {
	toks := p.toks
	firstDef := len(fn.Defs)
	// Definitions first, so that uses know their owner.
	for i := range toks {
		t := toks[i]
		if t.Kind != tokIdent || !definers[t.Text] || !p.punct(i+1, "(") || p.punct(i-1, ".") || p.punct(i-1, "?.") || p.ident(i-1, "function") {
			continue
		}
		fn.jsDefinition(p, i)
	}
	// ownerAt is the innermost definition of these tokens containing off.
	ownerAt := func(off int) int {
		best := owner
		for d := firstDef; d < len(fn.Defs); d++ {
			sp := fn.Defs[d].Span
			if off >= sp.Start && off < sp.End && (best < firstDef || sp.Start >= fn.Defs[best].Span.Start) {
				best = d
			}
		}
		return best
	}
	for i := range toks {
		t := toks[i]
		if t.Kind != tokIdent || (t.Text != "ref" && t.Text != "resolve") || !p.punct(i+1, "(") {
			continue
		}
		if p.ident(i-1, "function") {
			continue // function ref(…) {…}
		}
		if (p.punct(i-1, ".") || p.punct(i-1, "?.")) && p.ident(i-2, "") && !isContextName(toks[i-2].Text) {
			continue // Promise.resolve(…), path.resolve(…): not Dataform's
		}
		open := toks[i+1]
		if open.Match <= i+1 || p.punct(open.Match+1, "{") || p.punct(open.Match+1, "=>") {
			continue // a method or an arrow parameter list, not a call
		}
		callStart := t.Span.Start
		if (p.punct(i-1, ".") || p.punct(i-1, "?.")) && p.ident(i-2, "") {
			callStart = toks[i-2].Span.Start
		} else if p.punct(i-1, ".") || p.punct(i-1, "?.") {
			// x().ref(…), a.b.ref(…): the receiver is an expression.
			callStart = toks[i-1].Span.Start
		}
		span := Span{callStart, toks[open.Match].Span.End}
		args := p.args(i + 1)
		if len(args) == 0 {
			continue
		}
		kind := UseRef
		if t.Text == "resolve" {
			kind = UseResolve
		}
		db, schema, name, editable, ok := targetOf(args)
		if !ok {
			fn.Computed = append(fn.Computed, Computed{What: kind.String(), Span: span, Owner: ownerAt(callStart)})
			continue
		}
		fn.Uses = append(fn.Uses, NameUse{Kind: kind, Database: db, Schema: schema, Name: name, Editable: editable, Span: span, Owner: ownerAt(callStart)})
	}
}

// args parses the arguments of the call whose '(' is token open.
func (p *parser) args(open int) []jsValue {
	closeIdx := p.toks[open].Match
	if closeIdx <= open {
		return nil
	}
	var out []jsValue
	for j := open + 1; j < closeIdx; {
		if p.punct(j, ",") {
			j++
			continue
		}
		v, next := p.value(j)
		out = append(out, v)
		if next <= j {
			next = j + 1
		}
		j = next
	}
	return out
}

// jsDefinition reads the definition whose function name is token i.
func (fn *FileNames) jsDefinition(p *parser, i int) {
	toks := p.toks
	fnName := toks[i].Text
	open := i + 1
	closeIdx := toks[open].Match
	if closeIdx <= open {
		return
	}
	d := ActionDef{Func: fnName, Span: Span{toks[i].Span.Start, toks[closeIdx].Span.End}}
	idx := len(fn.Defs)
	args := p.args(open)
	var config *jsValue
	switch {
	case fnName == "declare" && len(args) > 0 && args[0].kind == valObject:
		config = &args[0]
	case len(args) > 0 && args[0].kind == valObject:
		config = &args[0] // publish({name: …}) and the like
	case len(args) > 0 && args[0].kind == valString:
		d.Name, d.Editable = args[0].str, args[0].plain
		if len(args) > 1 && args[1].kind == valObject {
			config = &args[1]
		}
	default:
		d.NameComputed = true
		if len(args) > 1 && args[1].kind == valObject {
			config = &args[1]
		}
	}
	if config != nil && d.Name == (StringArg{}) && !d.NameComputed {
		if f, ok := config.field("name"); ok && f.value.kind == valString {
			d.Name, d.Editable = f.value.str, f.value.plain
		} else {
			d.NameComputed = true
		}
	}
	if d.Name.Value == "" && !d.NameComputed {
		d.NameComputed = true
	}
	var depsList *jsField
	if config != nil {
		fn.readConfig(p, *config, &d, idx, &depsList)
	}
	// The chain: .method(…) after the call.
	last := closeIdx
	for p.punct(last+1, ".") && p.ident(last+2, "") && p.punct(last+3, "(") && toks[last+3].Match > last+3 {
		m := toks[last+2].Text
		mOpen := last + 3
		mClose := toks[mOpen].Match
		margs := p.args(mOpen)
		switch m {
		case "dependencies":
			if len(margs) == 1 {
				if margs[0].kind == valArray {
					for _, e := range margs[0].elems {
						fn.dependency(e, idx)
					}
				} else {
					fn.dependency(margs[0], idx)
				}
			} else {
				fn.Computed = append(fn.Computed, Computed{What: "dependency", Span: Span{toks[last+2].Span.Start, toks[mClose].Span.End}, Owner: idx})
			}
		case "dataset", "input":
			if fnName != "test" || len(margs) == 0 {
				break
			}
			kind := UseTestDataset
			if m == "input" {
				kind = UseTestInput
			}
			sp := Span{toks[last+2].Span.Start, toks[mClose].Span.End}
			if margs[0].kind == valString {
				// A test input may name a dotted target; a dataset is a
				// name (core resolves both like ref).
				db, schema, name := dottedTarget(margs[0])
				if kind == UseTestDataset {
					db, schema, name = StringArg{}, StringArg{}, margs[0].str
				}
				fn.Uses = append(fn.Uses, NameUse{Kind: kind, Database: db, Schema: schema, Name: name, Editable: margs[0].plain, Span: sp, Owner: idx})
			} else {
				fn.Computed = append(fn.Computed, Computed{What: kind.String(), Span: sp, Owner: idx})
			}
		case "jitCode":
			d.Jit = Span{toks[mOpen].Span.End, toks[mClose].Span.Start}
			if len(margs) == 1 && margs[0].kind == valString {
				// JiT code given as a string: its refs run too.
				fn.codeString(p.src, margs[0], idx)
			}
		case "config":
			if len(margs) == 1 && margs[0].kind == valObject {
				fn.readConfig(p, margs[0], &d, idx, &depsList)
			}
		}
		last = mClose
	}
	d.Span.End = toks[last].Span.End
	switch {
	case depsList != nil:
		d.Deps = listSite(p, *depsList)
	case config != nil:
		d.Deps = configKeySite(p, *config)
	default:
		d.Deps = DepsSite{Kind: DepsMethod, At: toks[closeIdx].Span.End}
	}
	fn.Defs = append(fn.Defs, d)
}

// readConfig reads the keys of a config object that name actions.
func (fn *FileNames) readConfig(p *parser, cfg jsValue, d *ActionDef, owner int, depsList **jsField) {
	if f, ok := cfg.field("type"); ok && f.value.kind == valString {
		d.Type = f.value.str.Value
	}
	if d.Func == "declare" || d.Func == "sqlx" || d.Func == "publish" || d.Func == "operate" || d.Func == "assert" {
		if f, ok := cfg.field("schema"); ok && f.value.kind == valString {
			d.Schema = f.value.str
		} else if f, ok := cfg.field("dataset"); ok && f.value.kind == valString && d.Type != "test" {
			d.Schema = f.value.str
		}
		if f, ok := cfg.field("database", "project"); ok && f.value.kind == valString {
			d.Database = f.value.str
		}
	}
	for k := range cfg.fields {
		f := &cfg.fields[k]
		if f.computed {
			continue
		}
		switch f.key {
		case "dependencies", "dependencyTargets":
			if f.value.kind != valArray {
				fn.Computed = append(fn.Computed, Computed{What: "dependency", Span: f.span, Owner: owner})
				continue
			}
			for _, e := range f.value.elems {
				fn.dependency(e, owner)
			}
			*depsList = f
		case "dataset":
			if d.Type == "test" {
				if f.value.kind == valString {
					fn.Uses = append(fn.Uses, NameUse{Kind: UseTestDataset, Name: f.value.str, Editable: f.value.plain, Span: f.span, Owner: owner})
				} else {
					fn.Computed = append(fn.Computed, Computed{What: UseTestDataset.String(), Span: f.span, Owner: owner})
				}
			}
		}
	}
	fn.duplicates(p, cfg)
}

// dependency records one entry of a dependencies list.
func (fn *FileNames) dependency(e jsValue, owner int) {
	switch e.kind {
	case valString:
		db, schema, name := dottedTarget(e)
		fn.Uses = append(fn.Uses, NameUse{Kind: UseDependency, Database: db, Schema: schema, Name: name, Editable: e.plain, Span: e.span, Owner: owner})
		return
	case valObject:
		if db, schema, name, editable, ok := objectTarget(e); ok {
			fn.Uses = append(fn.Uses, NameUse{Kind: UseDependency, Database: db, Schema: schema, Name: name, Editable: editable, Span: e.span, Owner: owner})
			return
		}
	}
	fn.Computed = append(fn.Computed, Computed{What: "dependency", Span: e.span, Owner: owner})
}

// duplicates records keys given twice in obj and in the objects it holds.
func (fn *FileNames) duplicates(p *parser, obj jsValue) {
	seen := map[string]int{}
	for k, f := range obj.fields {
		if f.computed || f.key == "" {
			continue
		}
		if prev, ok := seen[f.key]; ok {
			first := obj.fields[prev]
			fn.Duplicates = append(fn.Duplicates, DuplicateKey{Key: f.key, First: first.keySpan, Second: f.keySpan, Remove: removalSpan(p, first)})
		}
		seen[f.key] = k
	}
	for _, f := range obj.fields {
		fn.nestedDuplicates(p, f.value)
	}
}

func (fn *FileNames) nestedDuplicates(p *parser, v jsValue) {
	switch v.kind {
	case valObject:
		fn.duplicates(p, v)
	case valArray:
		for _, e := range v.elems {
			fn.nestedDuplicates(p, e)
		}
	}
}

// removalSpan is the text that removes field f (which a later field
// follows): the field and the comma after it, and its whole lines when
// nothing else is on them.
func removalSpan(p *parser, f jsField) Span {
	src := p.src
	end := f.span.End
	// The comma after the field.
	j := end
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j < len(src) && src[j] == ',' {
		end = j + 1
	}
	start := f.span.Start
	ls := start
	for ls > 0 && (src[ls-1] == ' ' || src[ls-1] == '\t') {
		ls--
	}
	le := end
	for le < len(src) && (src[le] == ' ' || src[le] == '\t') {
		le++
	}
	if (ls == 0 || src[ls-1] == '\n') && (le == len(src) || src[le] == '\n' || src[le] == '\r') {
		// The field has its lines to itself: remove them.
		if le < len(src) && src[le] == '\r' {
			le++
		}
		if le < len(src) && src[le] == '\n' {
			le++
		}
		return Span{ls, le}
	}
	// Inline: remove the field, its comma and the blanks after it.
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return Span{start, end}
}

// listSite is where an entry goes in an existing dependencies (or
// dependencyTargets) array.
func listSite(p *parser, f jsField) DepsSite {
	list := f.value
	closeTok := p.toks[list.open].Match
	s := DepsSite{Kind: DepsList, At: p.toks[closeTok].Span.Start, Empty: len(list.elems) == 0, Objects: f.key == "dependencyTargets"}
	if len(list.elems) > 0 {
		s.At = list.elems[len(list.elems)-1].span.End
		s.Objects = s.Objects || list.elems[0].kind == valObject
	}
	return s
}

// configKeySite is where a dependencies key goes in a config object: after
// its last field (and its comma), in the layout the object has.
func configKeySite(p *parser, cfg jsValue) DepsSite {
	src := p.src
	closeTok := p.toks[cfg.open].Match
	closeAt := p.toks[closeTok].Span.Start
	s := DepsSite{Kind: DepsConfigKey, At: closeAt, Empty: len(cfg.fields) == 0}
	s.Multiline = strings.Contains(string(src[cfg.span.Start:closeAt]), "\n")
	if len(cfg.fields) > 0 {
		lastField := cfg.fields[len(cfg.fields)-1]
		s.At = lastField.span.End
		// Keep a trailing comma where it is.
		j := s.At
		for j < closeAt && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if j < closeAt && src[j] == ',' {
			s.At = j + 1
			s.Empty = true // a comma is already there
		}
		// The indentation of the last key.
		ls := lastField.span.Start
		for ls > 0 && (src[ls-1] == ' ' || src[ls-1] == '\t') {
			ls--
		}
		s.Indent = string(src[ls:lastField.span.Start])
	} else {
		s.Indent = "  "
	}
	return s
}

// DependencyEdit is the text that adds a dependency on name (with schema
// when not empty) at site: the insertion offset and the text. ok is false
// when the site cannot take one.
func DependencyEdit(site DepsSite, schema, name string) (at int, text string, ok bool) {
	entry := `"` + name + `"`
	if schema != "" {
		entry = `"` + schema + "." + name + `"`
	}
	switch site.Kind {
	case DepsList:
		if site.Objects {
			entry = `{ name: "` + name + `" }`
			if schema != "" {
				entry = `{ schema: "` + schema + `", name: "` + name + `" }`
			}
		}
		if site.Empty {
			return site.At, entry, true
		}
		return site.At, ", " + entry, true
	case DepsConfigKey:
		key := "dependencies: [" + entry + "]"
		sep := ", "
		if site.Empty {
			sep = " "
		}
		if site.Multiline {
			if site.Empty {
				return site.At, "\n" + site.Indent + key, true
			}
			return site.At, ",\n" + site.Indent + key, true
		}
		return site.At, sep + key, true
	case DepsMethod:
		return site.At, ".dependencies([" + entry + "])", true
	case DepsNewConfig:
		return site.At, "config {\n  dependencies: [" + entry + "]\n}\n", true
	}
	return 0, "", false
}

// --- SQLX ----------------------------------------------------------------------

func scanSQLXNames(filePath string, text []byte) *FileNames {
	x := ScanSQLX(text)
	fn := &FileNames{}
	base := path.Base(filePath)
	d := ActionDef{Func: "sqlx", Span: Span{0, len(text)}, FromFile: true,
		Name: StringArg{Value: strings.TrimSuffix(base, path.Ext(base))}}
	fn.Defs = append(fn.Defs, d)
	def := &fn.Defs[0]
	var depsList *jsField
	if b, ok := x.Config(); ok {
		brace := b.Span.Start + len("config ")
		p := &parser{src: text, toks: jsTokens(text, brace, b.Span.End)}
		if len(p.toks) > 0 && p.punct(0, "{") && p.toks[0].Match > 0 {
			cfg := p.object(0)
			if f, ok := cfg.field("name"); ok {
				def.FromFile = false
				if f.value.kind == valString {
					def.Name, def.Editable = f.value.str, f.value.plain
				} else {
					def.NameComputed = true
				}
			}
			fn.readConfig(p, cfg, def, 0, &depsList)
			if depsList != nil {
				def.Deps = listSite(p, *depsList)
			} else {
				def.Deps = configKeySite(p, cfg)
			}
		}
	} else {
		def.Deps = DepsSite{Kind: DepsNewConfig, At: 0}
	}
	for _, b := range x.Blocks {
		switch b.Kind {
		case JSBlock:
			fn.merge(scanJSNames(text, b.Body.Start, b.Body.End, 0))
		case InputBlock:
			fn.inputNames(text, b)
		}
	}
	for _, ph := range x.Placeholders {
		if ph.End-1 > ph.Start+2 {
			fn.merge(scanJSNames(text, ph.Start+2, ph.End-1, 0))
		}
	}
	return fn
}

// merge adds the uses of a scan of part of the same file (no definitions).
func (fn *FileNames) merge(o *FileNames) {
	fn.Uses = append(fn.Uses, o.Uses...)
	fn.Computed = append(fn.Computed, o.Computed...)
}

// inputNames records the names of an `input "a", "b" {` block header.
func (fn *FileNames) inputNames(text []byte, b Block) {
	head := string(text[b.Span.Start:b.Body.Start])
	for i := 0; i < len(head); i++ {
		if head[i] != '"' {
			continue
		}
		j := strings.IndexByte(head[i+1:], '"')
		if j < 0 {
			return
		}
		name := head[i+1 : i+1+j]
		at := b.Span.Start + i + 1
		fn.Uses = append(fn.Uses, NameUse{Kind: UseTestInput, Name: StringArg{Value: name, Span: Span{at, at + len(name)}}, Editable: true,
			Span: Span{b.Span.Start, b.Body.Start}, Owner: 0})
		i += j + 1
	}
}

// isContextName reports whether a receiver of .ref/.resolve may be a
// Dataform context (ctx, jctx, c, self, dataform, …): any identifier but
// those that start with a capital letter (Promise, Path) and Node's path.
func isContextName(name string) bool {
	if name == "" || name == "path" || name == "require" {
		return false
	}
	return !(name[0] >= 'A' && name[0] <= 'Z')
}

// codeString scans a string literal that holds JavaScript (JiT code given
// as a string) for names, mapping positions in its value back to the
// source. A ref whose name is written with escapes is not editable.
func (fn *FileNames) codeString(src []byte, v jsValue, owner int) {
	raw := src[v.str.Span.Start:v.str.Span.End]
	var cooked []byte
	var rawAt []int // offset in src of each cooked byte
	for i := 0; i < len(raw); i++ {
		at := v.str.Span.Start + i
		if raw[i] == '\\' && i+1 < len(raw) {
			switch c := raw[i+1]; c {
			case '"', '\'', '`', '\\', '$':
				cooked = append(cooked, c)
				rawAt = append(rawAt, at+1)
				i++
				continue
			case 'n', 't', 'r':
				cooked = append(cooked, unescapeJS(c))
				rawAt = append(rawAt, at)
				i++
				continue
			default:
				// \u…, \x…, a line continuation: the positions no longer
				// map; the names in it cannot be rewritten.
				fn.Computed = append(fn.Computed, Computed{What: "ref() in a JiT code string", Span: v.span, Owner: owner})
				return
			}
		}
		cooked = append(cooked, raw[i])
		rawAt = append(rawAt, at)
	}
	inner := scanJSNames(cooked, 0, len(cooked), owner)
	mapSpan := func(sp Span) Span {
		if sp.End <= sp.Start || sp.End > len(rawAt) {
			return Span{rawAt[min(sp.Start, len(rawAt)-1)], rawAt[min(sp.Start, len(rawAt)-1)]}
		}
		return Span{rawAt[sp.Start], rawAt[sp.End-1] + 1}
	}
	for _, u := range inner.Uses {
		u.Span = mapSpan(u.Span)
		u.Name.Span = mapSpan(u.Name.Span)
		u.Editable = u.Editable && string(src[u.Name.Span.Start:u.Name.Span.End]) == u.Name.Value
		u.Owner = owner
		fn.Uses = append(fn.Uses, u)
	}
	for _, c := range inner.Computed {
		c.Span = mapSpan(c.Span)
		c.Owner = owner
		fn.Computed = append(fn.Computed, c)
	}
}
