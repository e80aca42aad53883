package workspace

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/source"
)

// Quick fixes. A diagnostic carries its fixes (Diagnostic.Fixes): the LSP
// server publishes them with it (as the diagnostic's data) and offers them
// as code actions when the editor asks, so that any phase can attach
// fixes to what it reports — the compile's errors here, the source checks
// of open files (lint), and later phases' own (the SQL analyzer's "did you
// mean" columns) — without the LSP side knowing where they came from.
//
// Fixes that need I/O (a declaration of a table the metadata source
// knows) are computed when the editor asks (DeclarationFixes), from the
// diagnostic's Unresolved target.

// Fix is one quick fix: a title for the menu and the change it makes.
type Fix struct {
	Title string
	// Preferred: the fix that surely resolves the problem (editors apply
	// it with "auto fix").
	Preferred bool
	Change    *Change
}

// Codes of the diagnostics the source checks (lint) report.
const (
	CodeDuplicateKey           = "duplicate-key"
	CodeJitUndeclaredReference = "jit-undeclared-dependency"
)

// annotate adds to a compile's diagnostics the fixes that need only the
// snapshot and the text ("did you mean" for references to actions that do
// not exist), and the source checks of the open files.
func (s *Session) annotate(snap *Snapshot, diags []Diagnostic) []Diagnostic {
	if snap.Result == nil {
		return diags
	}
	snap.index()
	out := make([]Diagnostic, 0, len(diags))
	// (An action gone from the graph is unresolved at each of its refs:
	// the names near it are found once.)
	near := map[string][]string{}
	for _, d := range diags {
		if db, schema, name, ok := source.ParseUnresolved(d.Message); ok {
			d.Unresolved = &Target{Database: db, Schema: schema, Name: name}
			d.Fixes = append(append([]Fix(nil), d.Fixes...), s.didYouMean(snap, d, *d.Unresolved, near)...)
		}
		out = append(out, d)
	}
	return append(out, s.lint(snap)...)
}

// docFor is the text of path as snap compiled it: its open buffer then,
// else the file (as the editor sees it now).
func (s *Session) docFor(snap *Snapshot, p string) (*Document, string, bool) {
	rel, ok := RelSlash(snap.Root, p)
	if !ok {
		return nil, "", false
	}
	if d := snap.Docs[rel]; d != nil {
		return d, rel, true
	}
	d, err := s.View(p)
	if err != nil {
		return nil, "", false
	}
	return d, rel, true
}

// usesIn are the name uses of a file (its definitions' and actions.yaml's).
func usesIn(rel string, d *Document) []source.NameUse {
	if source.IsActionsYAML(rel) {
		var out []source.NameUse
		for _, e := range source.ScanActionsYAML(d.Text) {
			out = append(out, e.Deps...)
		}
		return out
	}
	return source.ScanNames(rel, d.Text).Uses
}

// didYouMean are fixes that replace the name of a reference to an action
// that does not exist with the project's closest action names (near holds
// those found for each name so far).
func (s *Session) didYouMean(snap *Snapshot, d Diagnostic, t Target, near map[string][]string) []Fix {
	p := d.Path
	if !filepath.IsAbs(p) {
		p = filepath.Join(snap.Root, filepath.FromSlash(p))
	}
	doc, rel, ok := s.docFor(snap, CanonicalPath(p))
	if !ok {
		return nil
	}
	// The reference the diagnostic is on: the daemon places core's
	// "Could not resolve" and "Missing dependency" on each ref and
	// dependencies entry naming the action (one diagnostic a place), so
	// the use that starts where the diagnostic does; failing that (a
	// message core could not place), one on its line, else the first.
	var use *source.NameUse
	rank := 0
	m := doc.Lines()
	for _, u := range usesIn(rel, doc) {
		if u.Name.Value != t.Name || u.Schema.Value != t.Schema || !u.Editable {
			continue
		}
		r := 1
		if line := m.LineOf(u.Name.Span.Start); line == d.Line {
			r = 2
			if col := u.Name.Span.Start - m.OffsetBytes(line, 0); col == d.Col {
				r = 3
			}
		}
		if r > rank {
			u := u
			use, rank = &u, r
		}
	}
	if use == nil {
		return nil
	}
	var fixes []Fix
	names, ok := near[t.Name]
	if !ok {
		names = closestNames(snap, t.Name)
		near[t.Name] = names
	}
	for _, name := range names {
		var b changeBuilder
		b.edit(doc, use.Name.Span, name)
		c, err := b.build()
		if err != nil {
			continue
		}
		fixes = append(fixes, Fix{Title: fmt.Sprintf("Did you mean %q?", name), Change: c})
	}
	if len(fixes) == 1 {
		fixes[0].Preferred = true
	}
	return fixes
}

// closestNames are the action names nearest to name by edit distance (at
// most a third of its length, at least 2), best first, at most 3.
func closestNames(snap *Snapshot, name string) []string {
	limit := max(2, len(name)/3)
	type cand struct {
		name string
		dist int
	}
	seen := map[string]bool{}
	var cs []cand
	lower := strings.ToLower(name)
	for _, a := range snap.Actions() {
		n := writtenName(a)
		if n == name || seen[n] || strings.Contains(n, "_assertions_") {
			continue
		}
		seen[n] = true
		var dist int
		if strings.EqualFold(n, name) {
			dist = 0
		} else {
			dist = source.EditDistanceWithin(lower, strings.ToLower(n), limit)
		}
		if dist <= limit {
			cs = append(cs, cand{n, dist})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].dist != cs[j].dist {
			return cs[i].dist < cs[j].dist
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		if i > 0 && cs[i].dist > cs[0].dist+1 {
			break
		}
		out = append(out, cs[i].name)
	}
	return out
}

// lint checks the open files of snap that compiled: config keys given
// twice, and references in JiT code to actions the JiT action does not
// declare as dependencies (core's JiT context refuses them when the action
// runs).
func (s *Session) lint(snap *Snapshot) []Diagnostic {
	rels := make([]string, 0, len(snap.Docs))
	for rel := range snap.Docs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	var out []Diagnostic
	for _, rel := range rels {
		doc := snap.Docs[rel]
		ext := strings.ToLower(path.Ext(rel))
		if !strings.HasPrefix(rel, "definitions/") || ext != ".sqlx" && ext != ".js" {
			continue
		}
		fn := source.ScanNames(rel, doc.Text)
		m := doc.Lines()
		at := func(sp source.Span) (line, col, endLine, endCol int) {
			line, endLine = m.LineOf(sp.Start), m.LineOf(sp.End)
			return line, sp.Start - m.OffsetBytes(line, 0), endLine, sp.End - m.OffsetBytes(endLine, 0)
		}
		for _, dup := range fn.Duplicates {
			var b changeBuilder
			b.edit(doc, dup.Remove, "")
			c, err := b.build()
			if err != nil {
				continue
			}
			l, cl, el, ec := at(dup.First)
			out = append(out, Diagnostic{
				Path: doc.Path, Line: l, Col: cl, EndLine: el, EndCol: ec,
				Severity: SeverityWarning, Source: "dfd", Code: CodeDuplicateKey,
				Message: fmt.Sprintf("%q is given again on line %d: JavaScript keeps the last one, so this one has no effect", dup.Key, m.LineOf(dup.Second.Start)+1),
				Fixes:   []Fix{{Title: fmt.Sprintf("Remove this %q (the one that has no effect)", dup.Key), Preferred: true, Change: c}},
			})
		}
		for i, def := range fn.Defs {
			if def.Jit == (source.Span{}) {
				continue
			}
			var a *Action
			for _, x := range snap.ActionsIn(rel) {
				if defines(x, rel, def) && x.Jit {
					a = x
				}
			}
			if a == nil {
				continue
			}
			added := map[string]bool{}
			for _, u := range fn.Uses {
				if u.Owner != i || u.Kind != source.UseRef && u.Kind != source.UseResolve || u.Span.Start < def.Jit.Start || u.Span.End > def.Jit.End {
					continue
				}
				found := snap.Lookup(u.Database.Value, u.Schema.Value, u.Name.Value)
				if len(found) != 1 || found[0] == a {
					continue
				}
				dep := found[0]
				declared := false
				for _, t := range a.Dependencies {
					if t == dep.Target {
						declared = true
					}
				}
				if declared {
					continue
				}
				l, cl, el, ec := at(u.Name.Span)
				diag := Diagnostic{
					Path: doc.Path, Line: l, Col: cl, EndLine: el, EndCol: ec,
					Severity: SeverityWarning, Source: "dfd", Code: CodeJitUndeclaredReference,
					Message: fmt.Sprintf("%q is not a dependency of the JiT action %s: its JiT code may reference only declared dependencies (core refuses it with \"Undeclared dependency referenced\" when the action runs)", u.Name.Value, a.Target.Name),
				}
				if at, text, ok := source.DependencyEdit(def.Deps, u.Schema.Value, u.Name.Value); ok && !added[u.Name.Value] {
					var b changeBuilder
					b.edit(doc, source.Span{Start: at, End: at}, text)
					if c, err := b.build(); err == nil {
						diag.Fixes = []Fix{{Title: fmt.Sprintf("Add %q to the dependencies of %s", u.Name.Value, a.Target.Name), Preferred: true, Change: c}}
					}
				}
				out = append(out, diag)
			}
		}
	}
	return out
}

// TableFinder is implemented by project backends whose metadata source can
// look a table up by name: the quick fix that declares a table a
// reference names and the project does not define. graph is the latest
// compile's CompileResult.Graph (which datasets the project uses); t's
// empty parts are unknown. It answers within ctx, from what the metadata
// source has.
type TableFinder interface {
	FindTables(ctx context.Context, graph any, t Target) []Target
}

// DeclarationFixes are fixes that declare a table t names when the
// project's metadata source knows such a table (none without a
// TableFinder backend): each creates a declaration file next to the
// project's other declarations.
func (s *Session) DeclarationFixes(ctx context.Context, snap *Snapshot, t Target) []Fix {
	tf, ok := snap.Backend().(TableFinder)
	if !ok || snap.Result == nil {
		return nil
	}
	if len(snap.Lookup(t.Database, t.Schema, t.Name)) > 0 {
		return nil // it exists now
	}
	var fixes []Fix
	for _, found := range tf.FindTables(ctx, snap.Result.Graph, t) {
		if found.Name != t.Name {
			continue
		}
		file := filepath.Join(snap.Root, filepath.FromSlash(declarationDir(snap)), found.Name+".sqlx")
		if _, err := os.Stat(file); err == nil || s.docs.get(file) != nil {
			continue
		}
		text := "config {\n  type: \"declaration\",\n"
		if found.Database != "" {
			text += fmt.Sprintf("  database: %q,\n", found.Database)
		}
		if found.Schema != "" {
			text += fmt.Sprintf("  schema: %q,\n", found.Schema)
		}
		text += fmt.Sprintf("  name: %q\n}\n", found.Name)
		rel, _ := RelSlash(snap.Root, file)
		fixes = append(fixes, Fix{
			Title:  fmt.Sprintf("Declare %s (new file %s)", found.String(), rel),
			Change: &Change{Creates: []FileCreate{{Path: file, Text: text}}},
		})
	}
	if len(fixes) == 1 {
		fixes[0].Preferred = true
	}
	return fixes
}

// declarationDir is where the project keeps SQLX declarations (the
// directory most of them are in), else definitions.
func declarationDir(snap *Snapshot) string {
	count := map[string]int{}
	for _, a := range snap.Actions() {
		if a.Kind == KindDeclaration && strings.HasSuffix(a.File, ".sqlx") {
			count[path.Dir(a.File)]++
		}
	}
	best, n := "definitions", 0
	for dir, c := range count {
		if c > n || c == n && dir < best {
			best, n = dir, c
		}
	}
	return best
}
