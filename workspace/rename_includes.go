package workspace

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dfdtools/dfd/source"
)

// includeModules are the project's includes/*.js files by global name
// (core's: the file name without .js), on disk and open.
func (s *Session) includeModules(root string) map[string]string {
	out := map[string]string{}
	entries, _ := os.ReadDir(filepath.Join(root, "includes"))
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".js") {
			out[strings.TrimSuffix(e.Name(), ".js")] = filepath.Join(root, "includes", e.Name())
		}
	}
	for rel, d := range s.docs.under(filepath.Join(root, "includes")) {
		if !strings.Contains(rel, "/") && strings.HasSuffix(rel, ".js") {
			out[strings.TrimSuffix(rel, ".js")] = d.Path
		}
	}
	return out
}

// includeMemberAt is the includes member at offset of d: m.member in any
// file, or a top-level member's name in includes/m.js itself.
func (s *Session) includeMemberAt(root, rel string, d *Document, offset int) (*RenameSubject, bool) {
	mods := s.includeModules(root)
	isModule := func(n string) bool { _, ok := mods[n]; return ok }
	if mod, member, sp, ok := source.IncludeMemberAt(rel, d.Text, offset, isModule); ok {
		return &RenameSubject{Include: &IncludeMember{Module: mod, Path: mods[mod], Member: member}, Name: member, Span: sp}, true
	}
	if dir, file := path.Split(rel); dir == "includes/" && strings.HasSuffix(file, ".js") {
		name, sp, ok := source.IdentAt(d.Text, offset)
		if !ok {
			return nil, false
		}
		if _, defined := source.IncludeDecls(d.Text)[name]; defined {
			mod := strings.TrimSuffix(file, ".js")
			return &RenameSubject{Include: &IncludeMember{Module: mod, Path: d.Path, Member: name}, Name: name, Span: sp}, true
		}
	}
	return nil, false
}

// planIncludeRename renames member m.Member of includes/m.Module.js: its
// definition and export there, and every m.Member of the project.
func (s *Session) planIncludeRename(snap *Snapshot, m *IncludeMember, newName string) (*Change, error) {
	root := snap.Root
	qualified := m.Module + "." + m.Member
	refuse := func(reason string, places ...Place) error {
		return &Refusal{Root: root, Reason: fmt.Sprintf("dfd cannot rename %s to %s: %s", qualified, newName, reason), Places: places}
	}
	if newName == m.Member {
		return &Change{}, nil
	}
	if !source.ValidJSIdentifier(newName) {
		return nil, refuse("not a JavaScript identifier")
	}
	modDoc, err := s.View(m.Path)
	if err != nil {
		return nil, refuse("cannot read " + m.Path + ": " + err.Error())
	}
	places := func(d *Document, spans []source.Span) []Place {
		var out []Place
		for _, sp := range spans {
			out = append(out, placeOf(d, sp))
		}
		return out
	}
	self := source.RenameIncludeMember(modDoc.Text, m.Member, newName)
	switch {
	case !self.Declared && !self.Exported:
		return nil, refuse("includes/" + m.Module + ".js neither declares nor exports it at top level")
	case len(self.Taken) > 0:
		return nil, refuse("includes/"+m.Module+".js already uses the name "+newName, places(modDoc, self.Taken)...)
	case len(self.Shadowed) > 0:
		return nil, refuse("includes/"+m.Module+".js declares "+m.Member+" again inside a function (a parameter or a local), which a rename cannot tell apart", places(modDoc, self.Shadowed)...)
	}
	var b changeBuilder
	for _, e := range self.Edits {
		text := newName
		if e.Shorthand {
			text = m.Member + ": " + newName
		}
		b.edit(modDoc, e.Span, text)
	}
	mods := s.includeModules(root)
	isModule := func(n string) bool { _, ok := mods[n]; return ok }
	var dynamic []Place
	for _, f := range s.sourceFiles(root) {
		sc := source.ScanIncludeUses(f.rel, f.doc.Text, isModule)
		for _, u := range sc.Uses {
			if u.Module == m.Module && u.Member == m.Member {
				b.edit(f.doc, u.Span, newName)
			}
		}
		for _, dy := range sc.Dynamic {
			if dy.Module != m.Module {
				continue
			}
			if dy.Members == nil {
				dynamic = append(dynamic, placeOf(f.doc, dy.Span))
				continue
			}
			for _, x := range dy.Members {
				if x == m.Member || x == newName {
					dynamic = append(dynamic, placeOf(f.doc, dy.Span))
				}
			}
		}
	}
	if len(dynamic) > 0 {
		return nil, refuse("these places reach its members by a computed name or by destructuring, which a rename cannot rewrite", dynamic...)
	}
	return b.build()
}
