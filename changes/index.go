package changes

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// act is one action of a revision, with what the comparison reads of it.
type act struct {
	key, name  string // lower-case and as written: database.schema.name
	kind, file string
	stmts      []stmt
	jitCode    string
	deps       []string // database.schema.name, sorted
	config     map[string]string
	colDesc    map[string]string // lower-case dotted path → description
	colNames   map[string]string // lower-case dotted path → as written
	disabled   bool
}

type stmt struct{ label, sql string }

// revIndex is a revision's actions by name.
type revIndex struct {
	list    []*act
	byKey   map[string]*act
	rev     Revision
	lineage map[string][]gsql.ColumnLineage // lower-case name → output columns' lineage
	schemas map[string][]gsql.Column        // lower-case name → inferred output schema
	// readers: lower-case name → the actions that depend on it.
	readers map[string][]*act
}

func targetPath(t *dataformpb.Target, defaultDB string) string {
	db := t.GetDatabase()
	if db == "" {
		db = defaultDB
	}
	return db + "." + t.GetSchema() + "." + t.GetName()
}

func index(rev Revision) *revIndex {
	g := rev.Graph
	dp := g.GetProjectConfig().GetDefaultDatabase()
	ix := &revIndex{byKey: map[string]*act{}, rev: rev, lineage: map[string][]gsql.ColumnLineage{},
		schemas: map[string][]gsql.Column{}, readers: map[string][]*act{}}
	add := func(a *act, t *dataformpb.Target, deps []*dataformpb.Target, d *dataformpb.ActionDescriptor, tags []string) {
		a.name = targetPath(t, dp)
		a.key = strings.ToLower(a.name)
		for _, dt := range deps {
			a.deps = append(a.deps, targetPath(dt, dp))
		}
		sort.Strings(a.deps)
		if a.config == nil {
			a.config = map[string]string{}
		}
		a.config["dependencies"] = strings.Join(a.deps, ", ")
		a.config["tags"] = sortedJoin(tags)
		a.config["description"] = d.GetDescription()
		a.config["labels"] = mapString(d.GetBigqueryLabels())
		a.config["disabled"] = strconv.FormatBool(a.disabled)
		a.colDesc, a.colNames = map[string]string{}, map[string]string{}
		for _, c := range d.GetColumns() {
			p := strings.Join(c.GetPath(), ".")
			a.colDesc[strings.ToLower(p)] = c.GetDescription()
			a.colNames[strings.ToLower(p)] = p
		}
		if _, dup := ix.byKey[a.key]; dup {
			return // core reports a duplicate; the first one stands
		}
		ix.byKey[a.key] = a
		ix.list = append(ix.list, a)
	}
	for _, t := range g.GetTables() {
		kind := "table"
		switch t.GetEnumType() {
		case dataformpb.TableType_VIEW:
			kind = "view"
		case dataformpb.TableType_INCREMENTAL:
			kind = "incremental"
		}
		a := &act{kind: kind, file: t.GetFileName(), jitCode: t.GetJitCode(), disabled: t.GetDisabled()}
		a.stmts = labelled(a.stmts, "pre_operations", t.GetPreOps())
		if q := t.GetQuery(); q != "" {
			a.stmts = append(a.stmts, stmt{"query", q})
		}
		a.stmts = labelled(a.stmts, "post_operations", t.GetPostOps())
		if kind == "incremental" {
			a.stmts = labelled(a.stmts, "incremental pre_operations", t.GetIncrementalPreOps())
			if q := t.GetIncrementalQuery(); q != "" {
				a.stmts = append(a.stmts, stmt{"incremental query", q})
			}
			a.stmts = labelled(a.stmts, "incremental post_operations", t.GetIncrementalPostOps())
		}
		bq := t.GetBigquery()
		a.config = map[string]string{
			"type":                  kind,
			"partitionBy":           bq.GetPartitionBy(),
			"clusterBy":             strings.Join(bq.GetClusterBy(), ", "),
			"updatePartitionFilter": bq.GetUpdatePartitionFilter(),
			"requirePartitionFilter": func() string {
				if bq.GetRequirePartitionFilter() {
					return "true"
				}
				return ""
			}(),
			"partitionExpirationDays": func() string {
				if n := bq.GetPartitionExpirationDays(); n != 0 {
					return strconv.Itoa(int(n))
				}
				return ""
			}(),
			"uniqueKey":      strings.Join(t.GetUniqueKey(), ", "),
			"protected":      strconv.FormatBool(t.GetProtected()),
			"onSchemaChange": onSchemaChange(t),
			"bigqueryLabels": mapString(bq.GetLabels()),
			"assertions":     "",
		}
		add(a, t.GetTarget(), t.GetDependencyTargets(), t.GetActionDescriptor(), t.GetTags())
	}
	for _, o := range g.GetOperations() {
		a := &act{kind: "operation", file: o.GetFileName(), jitCode: o.GetJitCode(), disabled: o.GetDisabled()}
		a.stmts = labelled(a.stmts, "queries", o.GetQueries())
		a.config = map[string]string{"type": "operation", "hasOutput": strconv.FormatBool(o.GetHasOutput())}
		add(a, o.GetTarget(), o.GetDependencyTargets(), o.GetActionDescriptor(), o.GetTags())
	}
	// An assertion made from a table's `assertions` config belongs to the
	// table: its change is a config change of the table.
	var children []*dataformpb.Assertion
	for _, as := range g.GetAssertions() {
		if as.GetParentAction() != nil {
			children = append(children, as)
			continue
		}
		a := &act{kind: "assertion", file: as.GetFileName(), jitCode: as.GetJitCode(), disabled: as.GetDisabled()}
		if q := as.GetQuery(); q != "" {
			a.stmts = append(a.stmts, stmt{"query", q})
		}
		a.config = map[string]string{"type": "assertion"}
		add(a, as.GetTarget(), as.GetDependencyTargets(), as.GetActionDescriptor(), as.GetTags())
	}
	for _, d := range g.GetDeclarations() {
		a := &act{kind: "declaration", file: d.GetFileName(), config: map[string]string{"type": "declaration"}}
		add(a, d.GetTarget(), nil, d.GetActionDescriptor(), d.GetTags())
	}
	assertions := map[string][]string{}
	for _, as := range children {
		parent := strings.ToLower(targetPath(as.GetParentAction(), dp))
		// The assertion's name says which check it is (…_assertions_uniqueKey_0,
		// …_rowConditions); its query says what it checks.
		assertions[parent] = append(assertions[parent], as.GetTarget().GetName()+": "+strings.Join(strings.Fields(as.GetQuery()), " "))
	}
	for key, list := range assertions {
		if a := ix.byKey[key]; a != nil && a.config != nil {
			sort.Strings(list)
			a.config["assertions"] = strings.Join(list, "\n")
		}
	}
	for _, a := range ix.list {
		for _, d := range a.deps {
			k := strings.ToLower(d)
			ix.readers[k] = append(ix.readers[k], a)
		}
	}
	if rev.Check != nil {
		for k, v := range rev.Check.Lineage {
			ix.lineage[strings.ToLower(k)] = v
		}
		for k, v := range rev.Check.Schemas {
			ix.schemas[strings.ToLower(k)] = v
		}
	}
	return ix
}

func onSchemaChange(t *dataformpb.Table) string {
	if t.GetEnumType() != dataformpb.TableType_INCREMENTAL {
		return ""
	}
	return strings.ToLower(t.GetOnSchemaChange().String())
}

func labelled(out []stmt, label string, sqls []string) []stmt {
	for i, s := range sqls {
		out = append(out, stmt{fmt.Sprintf("%s[%d]", label, i), s})
	}
	return out
}

func sortedJoin(ss []string) string {
	c := append([]string(nil), ss...)
	sort.Strings(c)
	return strings.Join(c, ", ")
}

func mapString(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// schema is the action's inferred output schema, when the revision's
// analysis has one.
func (ix *revIndex) schema(a *act) ([]gsql.Column, bool) {
	cols, ok := ix.schemas[a.key]
	return cols, ok
}

// columnInputs is the set of columns (table.column, lower-case) the
// action's output column reads, by the revision's lineage.
func (ix *revIndex) columnInputs(a *act, column string) (map[string]bool, bool) {
	for _, l := range ix.lineage[a.key] {
		if strings.EqualFold(l.Name, column) {
			if len(l.Inputs) == 0 || len(l.Unresolved) > 0 {
				return nil, false
			}
			set := map[string]bool{}
			for _, in := range l.Inputs {
				set[strings.ToLower(in.String())] = true
			}
			return set, true
		}
	}
	return nil, false
}

// columnLine is the 1-based line where the file names output column
// col: its "AS col" alias, else its first mention after the config
// block (a config's description may use the word), else def.
func columnLine(read func(string) ([]byte, bool), file, col string, def int) int {
	if read == nil {
		return def
	}
	text, ok := read(file)
	if !ok {
		return def
	}
	if loc := regexp.MustCompile(`(?i)\bAS\s+` + "`?" + regexp.QuoteMeta(col) + "`?" + `(?:[^A-Za-z0-9_]|$)`).FindIndex(text); loc != nil {
		return 1 + bytes.Count(text[:loc[0]], []byte("\n"))
	}
	body := 0
	if m := regexp.MustCompile(`(?m)^config\s*\{`).FindIndex(text); m != nil {
		if end := regexp.MustCompile(`(?m)^\}`).FindIndex(text[m[1]:]); end != nil {
			body = m[1] + end[1]
		}
	}
	if l := lineOf(func(string) ([]byte, bool) { return text[body:], true }, file, col, 0); l > 0 {
		return l + bytes.Count(text[:body], []byte("\n"))
	}
	return lineOf(read, file, col, def)
}

// lineOf is the 1-based line of the first whole-word occurrence of word
// in the file (case-insensitive), or def: 1 for an empty word.
func lineOf(read func(string) ([]byte, bool), file, word string, def int) int {
	if word == "" {
		return 1
	}
	if read == nil {
		return def
	}
	text, ok := read(file)
	if !ok {
		return def
	}
	lower := bytes.ToLower(text)
	w := []byte(strings.ToLower(word))
	for from := 0; ; {
		i := bytes.Index(lower[from:], w)
		if i < 0 {
			return def
		}
		at := from + i
		end := at + len(w)
		if (at == 0 || !isWord(lower[at-1])) && (end >= len(lower) || !isWord(lower[end])) {
			return 1 + bytes.Count(text[:at], []byte("\n"))
		}
		from = at + 1
	}
}

func isWord(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
