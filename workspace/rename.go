package workspace

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/dfdtools/dfd/project"
	"github.com/dfdtools/dfd/source"
)

// Renaming an action or an includes member across a project.
//
// Which actions exist, which file defines each, who depends on whom and
// the SQL each compiled to come from the snapshot; where names are written
// comes from source (ScanNames, ScanActionsYAML, the includes scanner),
// which reads JavaScript tokens and never takes a name in a comment or a
// SQL string for a reference. A rename is complete or refused: every place
// that could still name the old action after the edits — a ref() whose
// argument is computed, a dependency built at run time, SQL that names the
// table without ref() — is listed in the refusal.

// RenameSubject is what a rename at a position renames: an action, an
// includes member, or (Column set) an output column of Action
// (rename_column.go).
type RenameSubject struct {
	Action  *Action
	Include *IncludeMember
	Column  string // the output column as the analysis names it
	// Name is the name as written now (the placeholder of a rename);
	// Span is where the cursor's document writes it (for an action named
	// by its file: the config keyword, or the start of the file).
	Name string
	Span source.Span
}

// IncludeMember is a top-level constant or function of an includes file.
type IncludeMember struct {
	Module string // the file's global name (includes/<Module>.js)
	Path   string // absolute
	Member string
}

// RenameOptions say what the client can do with a workspace edit.
type RenameOptions struct {
	// FileRenames: the client applies file renames (LSP resource
	// operations). An action named by its file cannot be renamed without.
	FileRenames bool
}

// validActionName is what a new action name may be: BigQuery table
// characters that need no quoting in ref(), dependencies (where dots
// separate parts) and a SQLX input "…" block.
var validActionName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// projectFile is a source file of a project, read for a rename.
type projectFile struct {
	rel   string
	doc   *Document
	names *source.FileNames   // .sqlx, .js
	yaml  []source.YAMLAction // actions.yaml
}

// sourceFiles reads the files of the project at root that can name
// actions or use includes: definitions/**/*.{sqlx,js}, actions.yaml files
// and includes/*.js, as the editor sees them (open buffers included, also
// those not saved yet).
func (s *Session) sourceFiles(root string) []*projectFile {
	rels := map[string]bool{}
	if pr, err := project.Open(root); err == nil {
		if list, err := pr.FilePaths(); err == nil {
			for _, r := range list {
				rels[r] = true
			}
		}
	}
	for r := range s.docs.under(root) {
		rels[r] = true
	}
	var out []*projectFile
	for rel := range rels {
		ext := strings.ToLower(path.Ext(rel))
		isDef := strings.HasPrefix(rel, "definitions/") && (ext == ".sqlx" || ext == ".js")
		isInc := strings.HasPrefix(rel, "includes/") && !strings.Contains(strings.TrimPrefix(rel, "includes/"), "/") && ext == ".js"
		isYAML := source.IsActionsYAML(rel)
		if !isDef && !isInc && !isYAML {
			continue
		}
		d, err := s.View(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		f := &projectFile{rel: rel, doc: d}
		if isYAML {
			f.yaml = source.ScanActionsYAML(d.Text)
		} else {
			f.names = source.ScanNames(rel, d.Text)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

// writtenName is the name an action's definition writes: its canonical
// name (without the CLI's --table-prefix).
func writtenName(a *Action) string {
	if a.CanonicalTarget.Name != "" {
		return a.CanonicalTarget.Name
	}
	return a.Target.Name
}

// schemaMatches reports whether a schema written in a definition or a
// reference is a's (empty: not given).
func schemaMatches(a *Action, schema string) bool {
	return schema == "" || schema == a.Target.Schema || schema == a.CanonicalTarget.Schema
}

// defines reports whether definition def of file rel is action a.
func defines(a *Action, rel string, def source.ActionDef) bool {
	if def.NameComputed || path.Clean(a.File) != rel {
		return false
	}
	return def.Name.Value == writtenName(a) && schemaMatches(a, def.Schema.Value)
}

// yamlFileOf is the root-relative file an actions.yaml entry's filename
// names (relative to the actions.yaml's directory).
func yamlFileOf(yamlRel string, e source.YAMLAction) string {
	if !e.HasFile {
		return ""
	}
	return path.Clean(path.Join(path.Dir(yamlRel), e.FileName.Value))
}

// yamlDefines reports whether entry e of the actions.yaml at yamlRel
// defines a.
func yamlDefines(a *Action, yamlRel string, e source.YAMLAction) bool {
	if e.ActionName() != writtenName(a) || !schemaMatches(a, e.Dataset.Value) {
		return false
	}
	if f := yamlFileOf(yamlRel, e); f != "" {
		return f == path.Clean(a.File)
	}
	return a.File == "" || path.Clean(a.File) == yamlRel
}

// builtinAssertionOf reports whether b is one of the assertions core
// generates from a's config (uniqueKey, nonNull, rowConditions):
// "<schema>_<name>_assertions_…" in a's file.
func builtinAssertionOf(b, a *Action) bool {
	return b != a && b.Kind == KindAssertion && b.File == a.File && a.File != "" &&
		strings.Contains(b.Target.Name, "_"+a.Target.Name+"_assertions_")
}

// sqlTarget is how core writes a target into SQL: `database.schema.name`.
func sqlTarget(t Target) string {
	var parts []string
	for _, p := range []string{t.Database, t.Schema, t.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return "`" + strings.Join(parts, ".") + "`"
}

func (q SQL) mentions(s string) bool {
	for _, list := range [][]string{{q.Query, q.IncrementalQuery}, q.PreOps, q.PostOps, q.IncrementalPreOps, q.IncrementalPostOps, q.Queries} {
		for _, x := range list {
			if strings.Contains(x, s) {
				return true
			}
		}
	}
	return false
}

// PlanRename computes the edits that rename subj to newName in snap's
// project, or a *Refusal saying why it cannot be done completely.
func (s *Session) PlanRename(snap *Snapshot, subj *RenameSubject, newName string, opts RenameOptions) (*Change, error) {
	if snap == nil || snap.Result == nil {
		return nil, &Refusal{Reason: "dfd cannot rename yet: the project has not compiled"}
	}
	if subj.Include != nil {
		return s.planIncludeRename(snap, subj.Include, newName)
	}
	if subj.Column != "" {
		return nil, fmt.Errorf("dfd: a column rename is planned by PlanColumnRename")
	}
	return s.planActionRename(snap, subj.Action, newName, opts)
}

func (s *Session) planActionRename(snap *Snapshot, a *Action, newName string, opts RenameOptions) (*Change, error) {
	root := snap.Root
	old := writtenName(a)
	refuse := func(reason string, places ...Place) error {
		return &Refusal{Root: root, Reason: fmt.Sprintf("dfd cannot rename %s to %s: %s", old, newName, reason), Places: places}
	}
	if newName == old {
		return &Change{}, nil
	}
	if !validActionName.MatchString(newName) || len(newName) > 1024 {
		return nil, refuse("an action name here is letters, digits, _ and - (it is written in ref(), dependencies and file names as it is)")
	}
	files := s.sourceFiles(root)
	byRel := map[string]*projectFile{}
	for _, f := range files {
		byRel[f.rel] = f
	}

	// The new name must not name another action: a ref by name would
	// become ambiguous (or point elsewhere).
	var clash []Place
	for _, b := range snap.Actions() {
		if b == a || builtinAssertionOf(b, a) {
			continue
		}
		if b.Target.Name == newName || b.CanonicalTarget.Name == newName {
			clash = append(clash, s.actionPlace(snap, files, b))
		}
	}
	if len(clash) > 0 {
		return nil, refuse("an action named "+newName+" already exists", clash...)
	}

	var b changeBuilder
	var blocked []Place
	var why []string
	block := func(reason string, p Place) {
		blocked = append(blocked, p)
		why = append(why, reason)
	}

	// 1. The definition.
	defFile, defIndex, yamlIndex := "", -1, -1
	var computedDefs []Place
	if f := byRel[path.Clean(a.File)]; f != nil && f.names != nil {
		for i, d := range f.names.Defs {
			if defines(a, f.rel, d) {
				defFile, defIndex = f.rel, i
				break
			}
			if d.NameComputed {
				computedDefs = append(computedDefs, placeOf(f.doc, d.Span))
			}
		}
	}
	if defFile == "" {
		for _, f := range files {
			for i, e := range f.yaml {
				if yamlDefines(a, f.rel, e) {
					defFile, yamlIndex = f.rel, i
				}
			}
			if defFile != "" {
				break
			}
		}
	}
	switch {
	case defFile == "" && len(computedDefs) > 0:
		return nil, refuse("its name is computed where it is defined (a string built at run time)", computedDefs...)
	case defFile == "":
		if a.Kind == KindAssertion && strings.Contains(a.Target.Name, "_assertions_") {
			return nil, refuse("it is a built-in assertion, named after its table: rename the table")
		}
		return nil, refuse("dfd could not find where it is named (" + a.File + ")")
	}
	f := byRel[defFile]
	var renames []FileRename
	if defIndex >= 0 {
		d := f.names.Defs[defIndex]
		switch {
		case d.FromFile:
			if !opts.FileRenames {
				return nil, refuse("it is named by its file " + defFile + ", and this editor cannot rename files through the language server; rename the file, or give the action a name in its config")
			}
			to := filepath.Join(filepath.Dir(f.doc.Path), newName+filepath.Ext(f.doc.Path))
			if _, err := os.Stat(to); err == nil || s.docs.get(to) != nil {
				return nil, refuse("the file it would be renamed to exists", Place{Path: to, What: "exists"})
			}
			renames = append(renames, FileRename{From: f.doc.Path, To: to})
		case !d.Editable:
			return nil, refuse("its name is written with escapes", placeOf(f.doc, d.Name.Span))
		default:
			b.edit(f.doc, d.Name.Span, newName)
		}
	} else {
		e := f.yaml[yamlIndex]
		switch {
		case e.HasName && !e.NameEditable:
			return nil, refuse("its name in "+defFile+" is not a plain value", placeOf(f.doc, e.Span))
		case e.HasName:
			b.edit(f.doc, e.Name.Span, newName)
		default:
			// Named by its filename: rename the file and the filename.
			if !opts.FileRenames {
				return nil, refuse("it is named by its file " + e.FileName.Value + " in " + defFile + ", and this editor cannot rename files through the language server; rename the file, or give the entry a name")
			}
			if !e.FileEdit {
				return nil, refuse("its filename in "+defFile+" is not a plain value", placeOf(f.doc, e.Span))
			}
			base := path.Base(e.FileName.Value)
			stem := strings.TrimSuffix(base, path.Ext(base))
			stemStart := e.FileName.Span.End - len(base)
			b.edit(f.doc, source.Span{Start: stemStart, End: stemStart + len(stem)}, newName)
			from := filepath.Join(root, filepath.FromSlash(yamlFileOf(defFile, e)))
			to := filepath.Join(filepath.Dir(from), newName+path.Ext(base))
			if _, err := os.Stat(to); err == nil {
				return nil, refuse("the file it would be renamed to exists", Place{Path: to, What: "exists"})
			}
			renames = append(renames, FileRename{From: from, To: to})
		}
	}

	// 2. The references, and the built-in assertions' names that follow
	// the action's.
	builtins := map[*Action]bool{}
	for _, x := range snap.Actions() {
		if builtinAssertionOf(x, a) {
			builtins[x] = true
		}
	}
	// renamedTo is the new name of what a use names, if it is a or one of
	// its built-in assertions ("" otherwise); ambiguous when the use could
	// name another action too.
	renamedTo := func(u source.NameUse) (to string, ambiguous bool) {
		found := snap.Lookup(u.Database.Value, u.Schema.Value, u.Name.Value)
		for _, x := range found {
			switch {
			case x == a:
				to = newName
			case builtins[x]:
				to = strings.Replace(u.Name.Value, "_"+old+"_assertions_", "_"+newName+"_assertions_", 1)
			}
		}
		return to, to != "" && len(found) > 1
	}
	// lits[rel] are the uses rewritten in a file, by owner.
	type litUse struct {
		kind  source.UseKind
		owner int
	}
	lits := map[string][]litUse{}
	for _, f := range files {
		uses := []source.NameUse{}
		if f.names != nil {
			uses = f.names.Uses
		}
		for _, e := range f.yaml {
			uses = append(uses, e.Deps...)
		}
		for _, u := range uses {
			if u.Name.Value == "" {
				continue
			}
			to, ambiguous := renamedTo(u)
			switch {
			case to == "":
				continue
			case ambiguous:
				block("ambiguous", placeOf(f.doc, u.Span))
			case !u.Editable:
				block("escaped", placeOf(f.doc, u.Span))
			default:
				b.edit(f.doc, u.Name.Span, to)
				lits[f.rel] = append(lits[f.rel], litUse{u.Kind, u.Owner})
			}
		}
	}

	// 3. Nothing else may still name a: the actions that depend on it or
	// whose SQL names its table must each have a reference that was
	// rewritten, and no computed one that could name it too.
	target := sqlTarget(a.Target)
	for _, d := range snap.Actions() {
		if d.Kind == KindTest || d.Kind == KindDeclaration || d.Jit {
			continue
		}
		// SQL that writes the table's name itself (a .sql file of
		// actions.yaml, an operation creating its own table by name)
		// would still name the old table.
		if d.SQL.mentions(target) {
			if p, ok := s.hardCoded(root, d, a.Target); ok {
				block("sql", p)
			}
		}
	}
	for _, d := range snap.Actions() {
		if d == a || builtins[d] || d.Kind == KindTest || d.Kind == KindDeclaration {
			continue
		}
		depends := false
		for _, t := range d.Dependencies {
			if t == a.Target {
				depends = true
			}
		}
		mentions := !d.Jit && d.SQL.mentions(target)
		if !depends && !mentions {
			continue
		}
		df, owners := s.ownersOf(snap, files, byRel, d)
		if df == nil {
			block("unknown", Place{Path: filepath.Join(root, filepath.FromSlash(d.File)), What: d.Target.Name + " (its definition could not be read)"})
			continue
		}
		var ownLits []litUse
		for _, l := range lits[df.rel] {
			if owners[l.owner] {
				ownLits = append(ownLits, l)
			}
		}
		var comps []Place
		if df.names != nil {
			for _, c := range df.names.Computed {
				if !owners[c.Owner] {
					continue
				}
				// What could still name a: in JiT code anything; in AoT
				// code a computed dependency (for an action that depends
				// on a) or a computed ref()/resolve() (for one whose SQL
				// names a's table: a ref's value is written into SQL, so
				// one whose SQL does not name it did not produce a).
				isDep := c.What == "dependency"
				if !d.Jit && !(isDep && depends || !isDep && mentions) {
					continue
				}
				comps = append(comps, placeOf(df.doc, c.Span))
			}
		}
		if len(comps) > 0 {
			for _, c := range comps {
				block("computed", c)
			}
			continue
		}
		calls := 0
		for _, l := range ownLits {
			if l.kind == source.UseRef || l.kind == source.UseResolve {
				calls++
			}
		}
		switch {
		case mentions && calls == 0 && !s.isHardCoded(root, d, a.Target):
			p := s.actionPlace(snap, files, d)
			p.What = d.Target.Name + ": its SQL names " + target + " without a ref() that could be rewritten"
			block("sql", p)
		case depends && len(ownLits) == 0:
			p := s.actionPlace(snap, files, d)
			p.What = d.Target.Name + ": depends on " + old + " with no reference that could be rewritten"
			block("dependency", p)
		}
	}
	if len(blocked) > 0 {
		reason := "these places name it in a way a rename cannot rewrite (a reference computed at run time, escaped, ambiguous, or SQL without ref()); change them, then rename again"
		allComputed := true
		for _, w := range why {
			if w != "computed" {
				allComputed = false
			}
		}
		if allComputed {
			reason = "these references are computed at run time (strings built when the code runs), so they cannot be rewritten; write them as literal names, then rename again"
		}
		return nil, refuse(reason, blocked...)
	}
	c, err := b.build()
	if err != nil {
		return nil, err
	}
	c.Renames = renames
	return c, nil
}

// ownersOf finds the file whose code references for action d are, and the
// owner indexes (ScanNames' NameUse.Owner) of its definition there: its
// own definition, -1 (top-level code any action may use), and for actions
// whose definition cannot be told apart (a name computed in a loop), every
// definition with a computed name. For an actions.yaml action the file is
// its actions.yaml and the owner its entry.
func (s *Session) ownersOf(snap *Snapshot, files []*projectFile, byRel map[string]*projectFile, d *Action) (*projectFile, map[int]bool) {
	rel := path.Clean(d.File)
	if f := byRel[rel]; f != nil && f.names != nil {
		owners := map[int]bool{-1: true}
		found := false
		for i, def := range f.names.Defs {
			if defines(d, rel, def) {
				owners[i] = true
				found = true
			}
		}
		if !found {
			// A built-in assertion belongs to its table's definition.
			for i, def := range f.names.Defs {
				if !def.NameComputed && d.Kind == KindAssertion && strings.Contains(d.Target.Name, "_"+def.Name.Value+"_assertions_") {
					owners[i] = true
					found = true
				}
			}
		}
		if !found {
			for i, def := range f.names.Defs {
				if def.NameComputed {
					owners[i] = true
				}
			}
		}
		return f, owners
	}
	for _, f := range files {
		for i, e := range f.yaml {
			if yamlDefines(d, f.rel, e) {
				return f, map[int]bool{i: true}
			}
			if d.Kind == KindAssertion && yamlFileOf(f.rel, e) == rel && strings.Contains(d.Target.Name, "_"+e.ActionName()+"_assertions_") {
				return f, map[int]bool{i: true}
			}
		}
	}
	return nil, nil
}

// actionPlace is where action b is defined, for messages.
func (s *Session) actionPlace(snap *Snapshot, files []*projectFile, b *Action) Place {
	for _, f := range files {
		if f.names != nil && f.rel == path.Clean(b.File) {
			for _, d := range f.names.Defs {
				if defines(b, f.rel, d) {
					p := placeOf(f.doc, d.Span)
					p.What = b.Target.String()
					return p
				}
			}
			return Place{Path: f.doc.Path, What: b.Target.String()}
		}
		for _, e := range f.yaml {
			if yamlDefines(b, f.rel, e) {
				p := placeOf(f.doc, e.Span)
				p.What = b.Target.String()
				return p
			}
		}
	}
	return Place{Path: filepath.Join(snap.Root, filepath.FromSlash(b.File)), What: b.Target.String()}
}

// RenameSubjectAt says what a rename at offset of the file at path would
// rename. It reads that file only (and the snapshot): prepareRename calls
// it on every keystroke of some editors.
func (s *Session) RenameSubjectAt(snap *Snapshot, filePath string, offset int) (*RenameSubject, error) {
	if snap == nil || snap.Result == nil {
		return nil, fmt.Errorf("the project has not compiled yet")
	}
	rel, ok := RelSlash(snap.Root, filePath)
	if !ok {
		return nil, fmt.Errorf("%s is not in the project", filePath)
	}
	d, err := s.View(filePath)
	if err != nil {
		return nil, err
	}
	lookup := func(u source.NameUse) (*RenameSubject, error) {
		as := snap.Lookup(u.Database.Value, u.Schema.Value, u.Name.Value)
		switch len(as) {
		case 0:
			return nil, fmt.Errorf("no action named %q in the project", u.Name.Value)
		case 1:
			return &RenameSubject{Action: as[0], Name: u.Name.Value, Span: u.Name.Span}, nil
		}
		return nil, fmt.Errorf("%q names several actions (add its schema)", u.Name.Value)
	}
	inSpan := func(sp source.Span) bool { return sp.End > sp.Start && offset >= sp.Start && offset <= sp.End }
	ext := strings.ToLower(path.Ext(rel))
	if source.IsActionsYAML(rel) {
		for _, e := range source.ScanActionsYAML(d.Text) {
			for _, u := range e.Deps {
				if inSpan(u.Name.Span) {
					return lookup(u)
				}
			}
			sp := e.Name.Span
			if !e.HasName {
				base := path.Base(e.FileName.Value)
				stem := strings.TrimSuffix(base, path.Ext(base))
				start := e.FileName.Span.End - len(base)
				sp = source.Span{Start: start, End: start + len(stem)}
			}
			if inSpan(sp) {
				for _, a := range snap.Actions() {
					if yamlDefines(a, rel, e) && !strings.Contains(a.Target.Name, "_assertions_") {
						return &RenameSubject{Action: a, Name: e.ActionName(), Span: sp}, nil
					}
				}
			}
		}
		return nil, fmt.Errorf("no action name at the cursor")
	}
	if ext != ".sqlx" && ext != ".js" {
		return nil, fmt.Errorf("nothing dfd can rename in this file")
	}
	fn := source.ScanNames(rel, d.Text)
	for _, u := range fn.Uses {
		if inSpan(u.Name.Span) {
			return lookup(u)
		}
	}
	for _, def := range fn.Defs {
		onName := !def.FromFile && inSpan(def.Name.Span)
		onConfig := false
		if def.FromFile && ext == ".sqlx" {
			if b, ok := d.SQLX().Config(); ok && offset >= b.Span.Start && offset <= b.Span.Start+len("config") {
				onConfig = true
			}
		}
		if !onName && !onConfig {
			continue
		}
		for _, a := range snap.ActionsIn(rel) {
			if defines(a, rel, def) {
				sp := def.Name.Span
				if onConfig {
					b, _ := d.SQLX().Config()
					sp = source.Span{Start: b.Span.Start, End: b.Span.Start + len("config")}
				}
				return &RenameSubject{Action: a, Name: def.Name.Value, Span: sp}, nil
			}
		}
		return nil, fmt.Errorf("the action defined here did not compile")
	}
	if m, ok := s.includeMemberAt(snap.Root, rel, d, offset); ok {
		return m, nil
	}
	if ext == ".sqlx" {
		if c, ok := s.columnSubjectAt(snap, rel, d, offset); ok {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no action, includes member or output column at the cursor")
}

// hardCoded finds where the file of action d writes t's name as SQL does
// (database.schema.name, or `schema.name`), outside any ref().
func (s *Session) hardCoded(root string, d *Action, t Target) (Place, bool) {
	if d.File == "" {
		return Place{}, false
	}
	doc, err := s.View(filepath.Join(root, filepath.FromSlash(d.File)))
	if err != nil {
		return Place{}, false
	}
	forms := []string{t.Schema + "." + t.Name + "`"}
	if t.Database != "" {
		forms = append([]string{t.Database + "." + t.Schema + "." + t.Name}, forms...)
	}
	for _, f := range forms {
		if i := strings.Index(string(doc.Text), f); i >= 0 {
			p := placeOf(doc, source.Span{Start: i, End: i + len(f)})
			line := strings.TrimSpace(doc.Lines().LineText(p.Line))
			if len(line) > 80 {
				line = line[:77] + "…"
			}
			p.What = line + "   ← " + d.Target.Name + " names the table itself, not with ref()"
			return p, true
		}
	}
	return Place{}, false
}

func (s *Session) isHardCoded(root string, d *Action, t Target) bool {
	_, ok := s.hardCoded(root, d, t)
	return ok
}
