package sqlcheck

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/dfdtools/dfd/gsql"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Verifying a planned column rename on the project compiled with the
// edits: every action's SQL must be what the plan expects (each edited
// statement as edited, every other one as it was: this catches an edit of
// text that also makes SQL the plan did not look at, and a mapping that
// went wrong), and the analysis of it must find no new problem and the
// same output schema for every action — the action's own with the one
// column renamed. A collision, an ambiguity the new name brings, or a
// built-in assertion whose config edit went wrong shows up there.

// statementsOf are an action's statements, labelled as a check does.
func statementsOf(a *action) []labelled {
	var out []labelled
	add := func(prefix string, list []string) {
		for i, s := range list {
			out = append(out, labelled{fmt.Sprintf("%s[%d]", prefix, i), s})
		}
	}
	add("pre_operations", a.preOps)
	out = append(out, labelled{"query", a.query})
	add("queries", a.queries)
	add("post_operations", a.postOps)
	add("incremental pre_operations", a.incPreOps)
	out = append(out, labelled{"incremental query", a.incQuery})
	add("incremental post_operations", a.incPostOps)
	return out
}

// VerifyColumnRename checks plan against after, the project's graph
// compiled with the plan's edits. The plan comes back refused when the
// result is not what it planned.
func (k *Checker) VerifyColumnRename(ctx context.Context, after *dataformpb.CompiledGraph, opts Options, plan *RenamePlan) (*RenamePlan, error) {
	if plan.Refused != "" || plan.before == nil {
		return plan, nil
	}
	req := plan.req
	var places []RenamePlace
	why := ""
	refuse := func(a *action, reason string) {
		if why == "" {
			why = "after the edits, " + reason
		}
		places = append(places, RenamePlace{File: path.Clean(a.file), Offset: 0, Why: reason})
	}
	seen := map[string]bool{}
	for _, a := range order(after) {
		lower := strings.ToLower(a.name)
		seen[lower] = true
		before, ok := plan.stmts[lower]
		if !ok {
			refuse(a, "the project has an action "+a.name+" it did not have")
			continue
		}
		if strings.EqualFold(a.parent, plan.Target) {
			continue // built from the config: the analysis below checks it
		}
		got := statementsOf(a)
		if len(got) != len(before) {
			refuse(a, "the SQL of "+a.name+" is not what dfd planned (its statements changed)")
			continue
		}
		for i, s := range got {
			want := before[i].sql
			if e, ok := plan.edited[lower][want]; ok {
				want = e
			}
			if s.sql != want {
				refuse(a, "the "+s.label+" of "+a.name+" is not what dfd planned: its text is used in more than one place, or built in a way dfd cannot follow")
				break
			}
		}
	}
	for name := range plan.stmts {
		if !seen[name] {
			places = append(places, RenamePlace{Why: "the project no longer has " + name})
			if why == "" {
				why = "after the edits, the project no longer has " + name
			}
		}
	}
	if why != "" {
		plan.Refused, plan.Places = why, dedupePlaces(places)
		return plan, nil
	}
	scratch := &Checker{metadataID: k.metadataID, warehouse: make(map[string]*warehouseTable, len(k.warehouse))}
	for key, w := range k.warehouse {
		scratch.warehouse[key] = w
	}
	res, err := scratch.Check(ctx, after, opts)
	if err != nil {
		return nil, fmt.Errorf("analysing the project after the rename of %s.%s: %w", req.Target, req.Column, err)
	}
	known := map[string]bool{}
	for _, f := range plan.before.Findings {
		known[findingKey(f)] = true
	}
	for _, f := range res.Findings {
		if !known[findingKey(f)] {
			places = append(places, RenamePlace{File: f.File, Offset: f.Offset, Why: f.Message})
			if why == "" {
				why = "after the edits, the analysis finds what it did not before"
			}
		}
	}
	for name, cols := range plan.before.Schemas {
		want := cols
		if strings.EqualFold(name, plan.Target) {
			want = renamedColumns(cols, req.Column, req.NewName)
		}
		if got, ok := res.Schemas[name]; !ok || !sameColumns(got, want) {
			places = append(places, RenamePlace{File: fileOf(plan, name), Why: "the columns of " + name + " would change: " + columnNames(got) + " instead of " + columnNames(want)})
			if why == "" {
				why = "after the edits, an action's output columns would change"
			}
		}
	}
	if why != "" {
		plan.Refused, plan.Places = why, dedupePlaces(places)
	}
	return plan, nil
}

func findingKey(f Finding) string {
	return f.Action + "\x00" + f.Statement + "\x00" + f.Code + "\x00" + f.Message
}

func renamedColumns(cols []gsql.Column, from, to string) []gsql.Column {
	out := append([]gsql.Column(nil), cols...)
	for i := range out {
		if strings.EqualFold(out[i].Name, from) {
			out[i].Name = to
		}
	}
	return out
}

func sameColumns(a, b []gsql.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type.String() != b[i].Type.String() {
			return false
		}
	}
	return true
}

func columnNames(cols []gsql.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// fileOf is the file of the action named name, for a message.
func fileOf(plan *RenamePlan, name string) string { return plan.files[strings.ToLower(name)] }
