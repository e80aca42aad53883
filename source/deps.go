package source

import "strings"

// DependencyEntry is an entry of a dependency list with literal values:
// what it names, as written (a string entry is a Name, as core takes it).
type DependencyEntry struct {
	Database, Schema, Name StringArg
}

// FindDependencies finds the entries of the dependency lists in src (a
// SQLX file or JavaScript): `dependencies:` and `dependencyTargets:` keys
// (a SQLX config block, a JavaScript config object) and `.dependencies(…)`
// calls, each with an array, a string or an object like ref's
// ({name, schema|dataset, database|project}). Entries that are not
// literals are skipped.
func FindDependencies(src []byte) []DependencyEntry {
	s := string(src)
	var out []DependencyEntry
	for _, key := range []string{"dependencies", "dependencyTargets"} {
		for from := 0; ; {
			j := strings.Index(s[from:], key)
			if j < 0 {
				break
			}
			p := from + j
			from = p + len(key)
			end := from
			if p > 0 && isIdentByte(s[p-1]) || end < len(s) && isIdentByte(s[end]) {
				continue
			}
			i := end
			if i < len(s) && isQuote(s[i]) && p > 0 && s[p-1] == s[i] {
				i++ // "dependencies": …
			}
			i = skipSpace(s, i)
			if i >= len(s) || s[i] != ':' && !(s[i] == '(' && key == "dependencies" && dotBefore(s, p)) {
				continue
			}
			out = append(out, dependencyValues(s, skipSpace(s, i+1))...)
		}
	}
	return out
}

// dotBefore reports whether s[:p] ends with "." (and spaces): a method call.
func dotBefore(s string, p int) bool {
	i := p - 1
	for i >= 0 && isRESpace(s[i]) {
		i--
	}
	return i >= 0 && s[i] == '.'
}

// dependencyValues reads a dependency list (or a single entry) at s[i].
func dependencyValues(s string, i int) []DependencyEntry {
	if i >= len(s) {
		return nil
	}
	if s[i] != '[' {
		if e, _, ok := dependencyValue(s, i); ok {
			return []DependencyEntry{e}
		}
		return nil
	}
	var out []DependencyEntry
	for i = skipSpace(s, i+1); i < len(s) && s[i] != ']'; i = skipSpace(s, i) {
		e, next, ok := dependencyValue(s, i)
		if ok {
			out = append(out, e)
		}
		if next <= i {
			return out // not a literal list: stop here
		}
		i = skipSpace(s, next)
		if i < len(s) && s[i] == ',' {
			i++
		} else {
			break
		}
	}
	return out
}

// dependencyValue reads one entry: a string or an object literal.
func dependencyValue(s string, i int) (DependencyEntry, int, bool) {
	switch {
	case i < len(s) && isQuote(s[i]):
		a, next, ok := stringLit(s, i)
		if !ok {
			return DependencyEntry{}, i, false
		}
		return DependencyEntry{Name: a}, next, a.Value != ""
	case i < len(s) && s[i] == '{':
		fields, next, ok := objectLit(s, i)
		if !ok {
			return DependencyEntry{}, i, false
		}
		e := DependencyEntry{Database: fields["database"], Schema: fields["schema"], Name: fields["name"]}
		if e.Database == (StringArg{}) {
			e.Database = fields["project"]
		}
		if e.Schema == (StringArg{}) {
			e.Schema = fields["dataset"]
		}
		return e, next, e.Name.Value != ""
	}
	return DependencyEntry{}, i, false
}
