package daemon

import (
	"encoding/json"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// Errors about the graph name actions, not places: core checks the graph
// after every file has run, and reports a cycle once (on whichever action
// it met first), a dependency that does not resolve on the action (and,
// for a ref, again as "Could not resolve" from the ref itself), and an
// ambiguous name it could not attribute to a file on "index.js". They are
// put where the actions involved are written.

var (
	cycleRE     = regexp.MustCompile(`^Circular dependency detected in chain: \[(.*)\]$`)
	missingRE   = regexp.MustCompile(`^Missing dependency detected: Action "[^"]*" depends on "(.*)" which does not exist`)
	ambiguousRE = regexp.MustCompile(`^Ambiguous Action name: (.*)\. Did you mean one of: `)
	resolveRE   = regexp.MustCompile(`^Could not resolve "(.*)"$`)
)

// resolvable is an action as a message names it: a JSON target or
// "database.schema.name" (parts may be missing).
type resolvable struct{ Database, Schema, Name string }

func parseResolvable(s string) (resolvable, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") {
		var r resolvable
		if json.Unmarshal([]byte(s), &r) != nil || r.Name == "" {
			return resolvable{}, false
		}
		return r, true
	}
	parts := strings.Split(s, ".")
	r := resolvable{Name: parts[len(parts)-1]}
	if len(parts) >= 2 {
		r.Schema = parts[len(parts)-2]
	}
	if len(parts) >= 3 {
		r.Database = strings.Join(parts[:len(parts)-2], ".")
	}
	return r, r.Name != ""
}

func (r resolvable) matches(a *workspace.Action) bool {
	return a.Target.Matches(r.Database, r.Schema, r.Name) || a.CanonicalTarget.Matches(r.Database, r.Schema, r.Name)
}

// written reports whether a ref or dependencies entry names r exactly
// (exact: the parts it gives are r's).
func (r resolvable) written(db, schema, name string) bool {
	return name == r.Name && schema == r.Schema && db == r.Database
}

// mapGraphError places an error about the graph (a cycle, a dependency
// that does not resolve, an ambiguous name) where the actions involved are
// written; nil when it is not one, or when there is nothing better to say
// than mapError.
func mapGraphError(root string, e *dataformpb.CompilationError, read fileReader, actions []*workspace.Action) []workspace.Diagnostic {
	msg := strings.TrimSpace(e.GetMessage())
	file := path.Clean(filepath.ToSlash(e.GetFileName()))
	newDiag := func(file string) workspace.Diagnostic {
		return workspace.Diagnostic{Path: filepath.Join(root, filepath.FromSlash(file)), Severity: workspace.SeverityError, Message: msg, Source: "dataform", EndLine: -1}
	}
	if m := cycleRE.FindStringSubmatch(msg); m != nil {
		// Core's chain is a strongly connected component in Tarjan's
		// order, not a path along the edges: for a simple cycle it runs
		// against the dependencies (a > c > b > a when a refs b, b refs c
		// and c refs a), and for a component with more edges than a cycle
		// neighbours need not depend on each other at all. So which member
		// each one depends on comes from the graph, not from the order.
		var members []*workspace.Action
		for _, part := range strings.Split(m[1], " > ") {
			r, ok := parseResolvable(part)
			if !ok {
				return nil
			}
			a := findAction(actions, r)
			if a == nil {
				return nil
			}
			if !slices.Contains(members, a) {
				members = append(members, a)
			}
		}
		var out []workspace.Diagnostic
		for _, a := range members {
			text, ok := read(a.File)
			if !ok {
				continue
			}
			mp := source.NewMapper(text)
			found := false
			deps := dependenciesAmong(a, members)
			own, known := definedIn(a, text)
			// Every edge inside the component lies on a cycle, so each
			// mention of a member this one depends on, within a's own
			// definition, is part of it.
			for _, dep := range deps {
				if !known {
					break
				}
				for _, sp := range sitesOf(text, mentionsOnly(dep, actions)) {
					if sp.Start < own.Start || sp.End > own.End {
						continue // another action of the file names dep
					}
					d := withSpan(newDiag(a.File), mp, sp)
					d.RelatedPath, d.RelatedLine = definitionOf(root, dep, read)
					d.RelatedDescription = dep.Target.String() + " is defined here"
					out = append(out, d)
					found = true
				}
			}
			if found {
				continue
			}
			if sp, ok := source.DefinitionSpan(a.File, text, definitionName(a), nil); ok {
				d := withSpan(newDiag(a.File), mp, sp)
				if len(deps) > 0 {
					d.RelatedPath, d.RelatedLine = definitionOf(root, deps[0], read)
					d.RelatedDescription = deps[0].Target.String() + " is defined here"
				}
				out = append(out, d)
			}
		}
		return out
	}
	if m := missingRE.FindStringSubmatch(msg); m != nil {
		r, ok := parseResolvable(m[1])
		if !ok {
			return nil
		}
		return placeOnSites(root, file, read, r, newDiag, e)
	}
	if m := ambiguousRE.FindStringSubmatch(msg); m != nil {
		r, ok := parseResolvable(m[1])
		if !ok {
			return nil
		}
		if _, userFile := read(file); !userFile || file == "index.js" {
			if f, _ := firstProjectFrame(root, e.GetStack(), file, read); f != "" {
				return nil // the frame says which ref: mapError's
			}
		} else if ds := placeOnSites(root, file, read, r, newDiag, e); len(ds) > 0 {
			return ds
		}
		// On every definition of the name, each pointing at another.
		var defs []*workspace.Action
		seen := map[string]bool{}
		for _, a := range actions {
			if k := a.File + "\x00" + a.Target.String(); r.matches(a) && !seen[k] {
				seen[k] = true
				defs = append(defs, a)
			}
		}
		if len(defs) < 2 {
			return nil
		}
		var out []workspace.Diagnostic
		for i, a := range defs {
			text, ok := read(a.File)
			if !ok {
				continue
			}
			sp, ok := source.DefinitionSpan(a.File, text, definitionName(a), nil)
			if !ok {
				continue
			}
			d := withSpan(newDiag(a.File), source.NewMapper(text), sp)
			other := defs[(i+1)%len(defs)]
			d.RelatedPath, d.RelatedLine = definitionOf(root, other, read)
			d.RelatedDescription = "also named " + other.Target.String()
			out = append(out, d)
		}
		return out
	}
	return nil
}

// placeOnSites puts an error about r in file on each ref and dependencies
// entry there that names r; nil when there is none.
func placeOnSites(root, file string, read fileReader, r resolvable, newDiag func(string) workspace.Diagnostic, e *dataformpb.CompilationError) []workspace.Diagnostic {
	text, ok := read(file)
	if !ok {
		return nil
	}
	sites := sitesOf(text, r.written)
	if len(sites) == 0 {
		return nil
	}
	mp := source.NewMapper(text)
	var out []workspace.Diagnostic
	for _, sp := range sites {
		d := withSpan(newDiag(file), mp, sp)
		if t := e.GetActionTarget(); t != nil && t.GetName() != "" && !strings.Contains(d.Message, t.GetName()) {
			d.Message += " (action " + target(t).String() + ")"
		}
		out = append(out, d)
	}
	return out
}

// sitesOf are the names of the refs and dependencies entries of text that
// match.
func sitesOf(text []byte, match func(db, schema, name string) bool) []source.Span {
	var out []source.Span
	for _, r := range source.FindRefs(text) {
		if match(r.Database.Value, r.Schema.Value, r.Name.Value) {
			out = append(out, r.NameSpan())
		}
	}
	for _, d := range source.FindDependencies(text) {
		if match(d.Database.Value, d.Schema.Value, d.Name.Value) {
			out = append(out, d.Name.Span)
		}
	}
	return out
}

// definedIn is the part of text that defines a: the whole file when it
// defines one action, else a's definition (its call and chain of
// methods); known=false when which definition is a's is not certain (a
// name built at run time, two with one name), and then no mention in the
// file is certainly a's.
func definedIn(a *workspace.Action, text []byte) (own source.Span, known bool) {
	defs := source.ScanNames(a.File, text).Defs
	if len(defs) <= 1 {
		return source.Span{Start: 0, End: len(text)}, true
	}
	name, found := definitionName(a), -1
	for i, d := range defs {
		if d.NameComputed {
			return source.Span{}, false
		}
		if d.Name.Value == name {
			if found >= 0 {
				return source.Span{}, false
			}
			found = i
		}
	}
	if found < 0 {
		return source.Span{}, false
	}
	return defs[found].Span, true
}

// dependenciesAmong are the members a depends on, as core resolved its
// dependencies.
func dependenciesAmong(a *workspace.Action, members []*workspace.Action) []*workspace.Action {
	var out []*workspace.Action
	for _, m := range members {
		if slices.Contains(a.Dependencies, m.Target) {
			out = append(out, m)
		}
	}
	return out
}

// mentionsOnly matches a ref or dependencies entry that can stand for a
// and for no other action: one that could name another too is not
// certainly part of the cycle.
func mentionsOnly(a *workspace.Action, actions []*workspace.Action) func(db, schema, name string) bool {
	return func(db, schema, name string) bool {
		r := resolvable{Database: db, Schema: schema, Name: name}
		if !r.matches(a) {
			return false
		}
		for _, o := range actions {
			if o.Target != a.Target && r.matches(o) {
				return false
			}
		}
		return true
	}
}

func findAction(actions []*workspace.Action, r resolvable) *workspace.Action {
	for _, a := range actions {
		if r.matches(a) {
			return a
		}
	}
	return nil
}

func definitionName(a *workspace.Action) string {
	if a.CanonicalTarget.Name != "" {
		return a.CanonicalTarget.Name
	}
	return a.Target.Name
}

// definitionOf is where a is defined: its file's path and the line.
func definitionOf(root string, a *workspace.Action, read fileReader) (string, int) {
	p := filepath.Join(root, filepath.FromSlash(a.File))
	text, ok := read(a.File)
	if !ok {
		return p, 0
	}
	if sp, ok := source.DefinitionSpan(a.File, text, definitionName(a), nil); ok {
		return p, source.NewMapper(text).LineOf(sp.Start)
	}
	return p, 0
}

// dedupe drops what repeats a diagnostic on the same range: the same
// message, or the same complaint about the same name in other words (core
// reports an unresolvable ref as "Could not resolve" and as "Missing
// dependency", an ambiguous one from the ref and from the graph).
func dedupe(ds []workspace.Diagnostic) []workspace.Diagnostic {
	type key struct {
		path                       string
		line, col, endLine, endCol int
		what                       string
	}
	seen := map[key]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		k := key{d.Path, d.Line, d.Col, d.EndLine, d.EndCol, complaint(d.Message)}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, d)
	}
	return out
}

// complaint is what a message is about, the same for core's different
// wordings of one problem.
func complaint(msg string) string {
	if m := resolveRE.FindStringSubmatch(msg); m != nil {
		return "unresolved " + m[1]
	}
	if m := missingRE.FindStringSubmatch(msg); m != nil {
		if r, ok := parseResolvable(m[1]); ok {
			return "unresolved " + r.Name
		}
	}
	if m := ambiguousRE.FindStringSubmatch(msg); m != nil {
		if r, ok := parseResolvable(m[1]); ok {
			return "ambiguous " + r.Name
		}
	}
	return msg
}
