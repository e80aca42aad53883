package source

import "strings"

// Signature help for Dataform's built-ins: the calls SQLX placeholders,
// js blocks and definitions' JavaScript make (ref, resolve, self, when,
// incremental, name, schema, database — bare, on ctx, or on jctx) and
// the JiT adapter's methods.

// Signature is one form of a call: its label and its parameters' labels
// (each a substring of Label, as LSP shows them).
type Signature struct {
	Label  string
	Doc    string
	Params []string
}

// targetForms are the forms ref and resolve take (core 3.x: a name, a
// schema and a name, or a target object).
func targetForms(fn, doc string) []Signature {
	return []Signature{
		{Label: fn + "(name) → string", Doc: doc, Params: []string{"name"}},
		{Label: fn + "(schema, name) → string", Doc: doc, Params: []string{"schema", "name"}},
		{Label: fn + "({database?, schema?, name}) → string", Doc: doc, Params: []string{"{database?, schema?, name}"}},
	}
}

// builtinSignatures are the context's functions, by name.
var builtinSignatures = map[string][]Signature{
	"ref":         targetForms("ref", "The table of a dependency, quoted (`database.schema.name`); adds the dependency."),
	"resolve":     targetForms("resolve", "The table of an action, quoted, without adding a dependency."),
	"self":        {{Label: "self() → string", Doc: "This action's own table, quoted."}},
	"when":        {{Label: "when(condition, then, else?) → string", Doc: "then when condition holds, else else (or \"\").", Params: []string{"condition", "then", "else?"}}},
	"incremental": {{Label: "incremental() → boolean", Doc: "Whether this run updates the table incrementally (incremental tables)."}},
	"name":        {{Label: "name() → string", Doc: "This action's name."}},
	"schema":      {{Label: "schema() → string", Doc: "This action's schema (dataset)."}},
	"database":    {{Label: "database() → string", Doc: "This action's database (project)."}},
}

// adapterSignatures are the JiT adapter's methods (jctx.adapter.…).
var adapterSignatures = map[string][]Signature{
	"execute":     {{Label: "execute({statement, …}) → Promise<ExecuteResponse>", Doc: "Runs a statement; in a preview only a read-only query runs for real.", Params: []string{"{statement, …}"}}},
	"getTable":    {{Label: "getTable({target}) → Promise<TableMetadata>", Doc: "A table's metadata: type, fields, description.", Params: []string{"{target}"}}},
	"listTables":  {{Label: "listTables({database, schema}) → Promise<ListTablesResponse>", Doc: "The tables of a dataset, with their metadata.", Params: []string{"{database, schema}"}}},
	"deleteTable": {{Label: "deleteTable({target}) → Promise", Doc: "Deletes a table (refused in previews).", Params: []string{"{target}"}}},
}

// SignaturesFor are the forms of the call named by callee (a dotted path
// as written: "ref", "ctx.ref", "jctx.adapter.execute"), nil for a call
// that is not Dataform's.
func SignaturesFor(callee string) []Signature {
	parts := strings.Split(callee, ".")
	last := parts[len(parts)-1]
	switch {
	case len(parts) == 1:
		return builtinSignatures[last]
	case len(parts) == 2 && (parts[0] == "ctx" || parts[0] == "jctx"):
		return builtinSignatures[last]
	case len(parts) >= 2 && parts[len(parts)-2] == "adapter":
		return adapterSignatures[last]
	}
	return nil
}

// CallAt is the innermost call whose parentheses hold offset in the
// JavaScript src[start:end]: its callee as written (a dotted identifier
// path) and the index of the argument offset is in. ok is false outside
// every call, or for a callee that is not a plain path (a call of a call).
func CallAt(src []byte, start, end, offset int) (callee string, arg int, ok bool) {
	if offset < start || offset > end {
		return "", 0, false
	}
	toks := jsTokens(src, start, end)
	open := -1
	for i, t := range toks {
		if t.Span.Start >= offset {
			break
		}
		if t.Kind != tokPunct || t.Text != "(" {
			continue
		}
		if t.Match < 0 || toks[t.Match].Span.Start >= offset {
			open = i // holds offset; a later one is inner
		}
	}
	if open <= 0 {
		return "", 0, false
	}
	// The callee: ident (. ident)* just before the parenthesis.
	var path []string
	for i := open - 1; i >= 0; i -= 2 {
		if toks[i].Kind != tokIdent {
			return "", 0, false
		}
		path = append([]string{toks[i].Text}, path...)
		if i == 0 || toks[i-1].Kind != tokPunct || toks[i-1].Text != "." {
			break
		}
	}
	// The argument: commas directly inside the parenthesis, before offset.
	for i := open + 1; i < len(toks) && toks[i].Span.Start < offset; i++ {
		t := toks[i]
		if t.Kind == tokPunct && t.Text == "," {
			arg++
		}
		if t.Match > i { // skip a nested bracket whole
			if toks[t.Match].Span.Start >= offset {
				break
			}
			i = t.Match
		}
	}
	return strings.Join(path, "."), arg, true
}
