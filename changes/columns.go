package changes

import (
	"sort"
	"strconv"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/sqlcheck"
)

// compareColumns compares the inferred output schemas and the columns'
// descriptions.
func (c *comparer) compareColumns(ch *Change, b, h *act) {
	line := func(col string) int { return columnLine(c.head.Read, h.file, col, 0) }
	bc, okb := c.b.schema(b)
	hc, okh := c.h.schema(h)
	if okb && okh {
		hByName := map[string]gsql.Column{}
		for _, col := range hc {
			hByName[strings.ToLower(col.Name)] = col
		}
		bByName := map[string]bool{}
		var removed []gsql.Column
		for _, col := range bc {
			bByName[strings.ToLower(col.Name)] = true
			hcol, ok := hByName[strings.ToLower(col.Name)]
			if !ok {
				removed = append(removed, col)
				continue
			}
			if kind, from, to := typeChange(col.Type, hcol.Type); kind != "" {
				ch.Columns = append(ch.Columns, ColumnChange{Column: hcol.Name, Change: kind, From: from, To: to, Line: line(hcol.Name)})
			}
		}
		var added []gsql.Column
		for _, col := range hc {
			if !bByName[strings.ToLower(col.Name)] {
				added = append(added, col)
			}
		}
		// A removed column and an added one that read the same columns,
		// with the same type, are one column renamed.
		taken := map[int]bool{}
		for _, r := range removed {
			rin, ok := c.b.columnInputs(b, r.Name)
			match := -1
			for i, a := range added {
				if taken[i] || r.Type.String() != a.Type.String() || !ok {
					continue
				}
				if ain, ok := c.h.columnInputs(h, a.Name); ok && sameSet(rin, ain) {
					match = i
					break
				}
			}
			if match >= 0 {
				taken[match] = true
				ch.Columns = append(ch.Columns, ColumnChange{Column: added[match].Name, Change: ColumnRenamed, From: r.Name, To: added[match].Name, Line: line(added[match].Name)})
				continue
			}
			ch.Columns = append(ch.Columns, ColumnChange{Column: r.Name, Change: ColumnRemoved, From: r.Type.String()})
		}
		for i, a := range added {
			if !taken[i] {
				ch.Columns = append(ch.Columns, ColumnChange{Column: a.Name, Change: ColumnAdded, To: a.Type.String(), Line: line(a.Name)})
			}
		}
	} else if b.kind != "operation" && b.kind != "assertion" && b.kind != "declaration" && ch.SQL == SQLMeaning {
		side, a := c.head, h
		if !okb {
			side, a = c.base, b
		}
		c.notes = append(c.notes, ch.Action+": output schema not compared: "+whyNoSchema(side, a))
	}
	renamedTo := map[string]string{}
	for _, col := range ch.Columns {
		if col.Change == ColumnRenamed {
			renamedTo[strings.ToLower(col.From)] = strings.ToLower(col.To)
		}
	}
	var paths []string
	for p := range b.colDesc {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		hp := p
		if to, ok := renamedTo[p]; ok {
			hp = to
		}
		hd, ok := h.colDesc[hp]
		if !ok || hd == b.colDesc[p] {
			continue
		}
		ch.Columns = append(ch.Columns, ColumnChange{Column: h.colNames[hp], Change: ColumnDescription, From: b.colDesc[p], To: hd, Line: line(h.colNames[hp])})
	}
	for p, hd := range h.colDesc {
		if _, ok := b.colDesc[p]; !ok && hd != "" && !isRenameTarget(renamedTo, p) {
			ch.Columns = append(ch.Columns, ColumnChange{Column: h.colNames[p], Change: ColumnDescription, To: hd, Line: line(h.colNames[p])})
		}
	}
	sort.SliceStable(ch.Columns, func(i, j int) bool { return ch.Columns[i].Column < ch.Columns[j].Column })
}

func isRenameTarget(m map[string]string, p string) bool {
	for _, to := range m {
		if to == p {
			return true
		}
	}
	return false
}

func whyNoSchema(rev Revision, a *act) string {
	if rev.Check == nil {
		return rev.Label + " has no analysis (compilation errors)"
	}
	if why, ok := rev.Check.WhyNotAnalysed(a.name); ok {
		return rev.Label + ": " + why
	}
	if a.jitCode != "" {
		return rev.Label + ": a JiT action whose SQL was not produced (it needs warehouse metadata)"
	}
	return rev.Label + ": its SQL was not analysed"
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// typeChange compares two column types: "mode" when only ARRAY-ness
// differs (BigQuery's REPEATED mode), "type" for any other difference.
func typeChange(b, h gsql.Type) (kind, from, to string) {
	bs, hs := b.String(), h.String()
	if bs == hs {
		return "", "", ""
	}
	if b.Kind == "ARRAY" && b.Elem != nil && b.Elem.String() == hs {
		return ColumnMode, "REPEATED", "NULLABLE"
	}
	if h.Kind == "ARRAY" && h.Elem != nil && h.Elem.String() == bs {
		return ColumnMode, "NULLABLE", "REPEATED"
	}
	return ColumnType, bs, hs
}

// compareConfig compares the config fields that matter in the warehouse.
func (c *comparer) compareConfig(ch *Change, b, h *act) {
	var fields []string
	seen := map[string]bool{}
	for k := range b.config {
		fields, seen[k] = append(fields, k), true
	}
	for k := range h.config {
		if !seen[k] {
			fields = append(fields, k)
		}
	}
	sort.Strings(fields)
	incremental := b.kind == "incremental" && h.kind == "incremental"
	for _, f := range fields {
		from, to := b.config[f], h.config[f]
		if from == to {
			continue
		}
		if f == "dependencies" && ch.Status == Renamed {
			continue
		}
		cf := ConfigChange{Field: f, From: from, To: to, Line: lineOf(c.head.Read, h.file, configWord(f), 0)}
		cf.FullRefresh = incremental && (f == "partitionBy" || f == "clusterBy")
		ch.Config = append(ch.Config, cf)
	}
}

// configWord is the word that sets a config field in a SQLX config block.
func configWord(field string) string {
	switch field {
	case "bigqueryLabels":
		return "labels"
	case "dependencies":
		return "dependencies"
	}
	return field
}

// impact finds the downstream readers of what the change removes,
// renames, retypes or disables, by Base's column lineage, and keeps those
// that Head confirms: a reader still affected there. A reader that Head
// has updated (it analyses cleanly without the removed or renamed
// column, it no longer reads the retyped one, it no longer depends on
// the disabled action) or removed is not; nor are the readers of its
// columns further down.
func (c *comparer) impact(ch *Change, p pair) {
	if p.b == nil {
		return
	}
	type root struct{ column, kind string } // kind: gone, retyped, disabled
	var roots []root
	switch {
	case p.h == nil || p.renamed:
		roots = append(roots, root{"", "gone"})
	case p.h.disabled && !p.b.disabled:
		roots = append(roots, root{"", "disabled"})
	}
	var gone []string
	for _, col := range ch.Columns {
		switch col.Change {
		case ColumnRemoved:
			roots, gone = append(roots, root{col.Column, "gone"}), append(gone, col.Column)
		case ColumnRenamed:
			roots, gone = append(roots, root{col.From, "gone"}), append(gone, col.From)
		case ColumnType, ColumnMode:
			roots = append(roots, root{col.Column, "retyped"})
		}
	}
	if len(roots) == 0 {
		return
	}
	type node struct {
		action *act
		column string // "" for all of it
		depth  int
		kind   string
	}
	seen := map[string]bool{}
	reached := map[string]bool{} // actions found reading it
	var out []Impact
	var queue []node
	for _, r := range roots {
		queue = append(queue, node{p.b, r.column, 0, r.kind})
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		hits := map[string]bool{} // readers found through lineage
		for _, r := range c.b.readers[n.action.key] {
			for _, l := range c.b.lineage[r.key] {
				for _, in := range l.Inputs {
					if !strings.EqualFold(in.Table, n.action.name) {
						continue
					}
					if n.column != "" && !strings.EqualFold(in.Column, n.column) && !hasFieldPrefix(in.Column, n.column) {
						continue
					}
					hits[r.key], reached[r.key] = true, true
					key := r.key + "\x00" + strings.ToLower(l.Name)
					if seen[key] {
						continue
					}
					seen[key] = true
					reads := in.Column
					if n.depth > 0 || n.column == "" {
						reads = n.action.name + "." + in.Column
					}
					im := c.reader(r, l.Name, reads, n.depth+1)
					// Deeper down, a reader is affected because the
					// column above it is: its own state is what counts.
					if n.depth == 0 && !c.confirmed(im, r, p, in.Column, n.kind) || im.AtHead == "removed" {
						continue
					}
					out = append(out, im)
					queue = append(queue, node{r, l.Name, n.depth + 1, n.kind})
				}
			}
			// A reader of the whole action without lineage (an operation,
			// an assertion, a statement not analysed) still reads it.
			if n.column == "" && !hits[r.key] && !seen[r.key] {
				seen[r.key], reached[r.key] = true, true
				im := c.reader(r, "", "*", n.depth+1)
				if (n.depth > 0 || c.confirmed(im, r, p, "", n.kind)) && im.AtHead != "removed" {
					out = append(out, im)
				}
			}
		}
	}
	// A direct reader that analysed cleanly at Base and fails at Head
	// reads what is gone somewhere lineage does not show (a WHERE, a
	// JOIN condition, an operation).
	if len(gone) > 0 {
		for _, r := range c.b.readers[p.b.key] {
			if reached[r.key] || hasErrors(c.base, r) {
				continue
			}
			if im := c.reader(r, "", "*", 1); im.AtHead == "errors" {
				reached[r.key] = true
				im.Reads = strings.Join(gone, ", ")
				out = append(out, im)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Depth != out[j].Depth {
			return out[i].Depth < out[j].Depth
		}
		if out[i].Action != out[j].Action {
			return out[i].Action < out[j].Action
		}
		return out[i].Column < out[j].Column
	})
	ch.Impact = append(ch.Impact, out...)
}

// confirmed says whether Head confirms that the direct reader r (its
// impact im) is affected by a change of kind to column of p's action.
func (c *comparer) confirmed(im Impact, r *act, p pair, column, kind string) bool {
	switch im.AtHead {
	case "removed":
		return false
	case "clean":
	default:
		return true // errors, not analysed, not compiled: it may still read it
	}
	h := c.h.byKey[r.key]
	switch kind {
	case "gone":
		// Clean at Head, it cannot read a column or action that is gone.
		return false
	case "disabled":
		return p.h != nil && dependsOn(h, p.h.name)
	}
	// Retyped: affected while it still reads the column.
	if p.h == nil {
		return false
	}
	lin, ok := c.h.lineage[h.key]
	if !ok {
		return true // no lineage at Head: it may
	}
	for _, l := range lin {
		for _, in := range l.Inputs {
			if strings.EqualFold(in.Table, p.h.name) && (column == "" || strings.EqualFold(in.Column, column) || hasFieldPrefix(in.Column, column)) {
				return true
			}
		}
	}
	return false
}

func dependsOn(a *act, name string) bool {
	for _, d := range a.deps {
		if strings.EqualFold(d, name) {
			return true
		}
	}
	return false
}

// reader is the impact on r (an action at Base) and how it fares at Head.
func (c *comparer) reader(r *act, column, reads string, depth int) Impact {
	im := Impact{Action: r.name, Column: column, Reads: reads, Depth: depth, File: r.file}
	h := c.h.byKey[r.key]
	switch {
	case h == nil:
		im.AtHead = "removed"
	case c.head.Check == nil:
		im.AtHead = "not compiled"
		im.Error = compileError(c.head, h)
	default:
		if msg, ok := firstError(c.head.Check, h.name); ok {
			im.AtHead, im.Error = "errors", msg
		} else if _, ok := c.h.schema(h); !ok && h.kind != "operation" && h.kind != "assertion" {
			im.AtHead = "not analysed"
			im.Error, _ = c.head.Check.WhyNotAnalysed(h.name)
		} else {
			im.AtHead = "clean"
		}
	}
	return im
}

func hasErrors(rev Revision, a *act) bool {
	if rev.Check == nil {
		return true
	}
	_, ok := firstError(rev.Check, a.name)
	return ok
}

// firstError is the first error the analysis found in the action.
func firstError(res *sqlcheck.Result, action string) (string, bool) {
	for _, f := range res.Findings {
		if f.Severity == sqlcheck.Error && strings.EqualFold(f.Action, action) {
			return f.File + ":" + strconv.Itoa(f.Line+1) + ":" + strconv.Itoa(f.Col+1) + ": " + f.Headline(), true
		}
	}
	return "", false
}

// compileError is the first compilation error of the action's file.
func compileError(rev Revision, a *act) string {
	for _, e := range rev.Graph.GetGraphErrors().GetCompilationErrors() {
		if e.GetFileName() == a.file || strings.EqualFold(e.GetActionName(), a.name) {
			return a.file + ": " + e.GetMessage()
		}
	}
	return "the project does not compile at " + rev.Label
}
