package lsp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/source"
	"github.com/dfdtools/dfd/workspace"
)

// MethodLineage is dfd/lineage: the column lineage of an action of a file.
const MethodLineage = "dfd/lineage"

// LineageParams are the params of dfd/lineage.
type LineageParams struct {
	TextDocument struct {
		URI uri.URI `json:"uri"`
	} `json:"textDocument"`
	// Position picks the action (in a file that defines several) and, when
	// it is on an output column's name, that column.
	Position *protocol.Position `json:"position,omitempty"`
	// Action names the action instead: name, schema.name or
	// database.schema.name, of the file or else of the project.
	Action string `json:"action,omitempty"`
	// Column asks for one output column (a dotted path reaches a STRUCT
	// field: "s.id"); without it, the column under Position, else all.
	Column string `json:"column,omitempty"`
}

// LineageResult is the result of dfd/lineage: `dfd lineage --json`'s
// shape, with where each table is defined when it is one of the project's
// actions. Reason is set, and Columns empty, when the action has no
// lineage (an assertion, SQL analysis off, SQL with errors, …).
type LineageResult struct {
	URI     uri.URI `json:"uri"`
	Project uri.URI `json:"project"`
	Version int64   `json:"version"`
	// Action is the action's target, database.schema.name ("" when the
	// file defines none).
	Action string `json:"action"`
	// Column is the column asked for or found under the cursor; empty when
	// Columns are all of the action's.
	Column  string          `json:"column,omitempty"`
	Columns []LineageColumn `json:"columns"`
	Reason  string          `json:"reason,omitempty"`
}

// LineageColumn is one output column of a dfd/lineage result.
type LineageColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Direct are the columns the action's SQL reads.
	Direct []LineageInput `json:"direct"`
	// Origins are the warehouse columns the values come from through the
	// project's own actions.
	Origins []LineageInput `json:"origins"`
	// Unresolved says what part of the lineage is not known, and why.
	Unresolved []string `json:"unresolved,omitempty"`
}

// LineageInput is a column of a table (database.schema.name), nested
// fields as a dotted path.
type LineageInput struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	// Computed: the values are computed from the column rather than its
	// values unchanged.
	Computed bool `json:"computed,omitempty"`
	// File (root-relative) and Location are where the project defines
	// Table, when it is one of its actions or declarations.
	File     string             `json:"file,omitempty"`
	Location *protocol.Location `json:"location,omitempty"`
}

func (s *Server) lineage(ctx context.Context, raw []byte) (*LineageResult, error) {
	var params LineageParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	// The answer reflects every edit received before the request (the
	// document is that text); later messages go on while the compile and
	// the SQL analysis run.
	r, err := s.awaitDocument(ctx, "dfd/lineage", params.TextDocument.URI, true)
	if err != nil {
		return nil, err
	}
	p, d, rel, snap := r.p, r.doc, r.rel, r.snap
	res := &LineageResult{URI: params.TextDocument.URI, Project: uri.File(p.Root()), Version: snap.Version, Columns: []LineageColumn{}}
	if snap.Result == nil {
		res.Reason = "the project has not compiled: " + errString(snap.Err)
		return res, nil
	}
	off, hasPos := -1, params.Position != nil
	if hasPos {
		off = d.Lines().OffsetUTF16(int(params.Position.Line), int(params.Position.Character))
	}
	a, reason := lineageAction(snap, d, rel, params.Action, off)
	if a == nil {
		res.Reason = reason
		return res, nil
	}
	res.Action = a.Target.String()
	column := params.Column
	var under string // the word under the cursor, a column's name perhaps
	if column == "" && hasPos {
		if path, at, _ := source.WordAt(d.Text, off); len(path) > at && at >= 0 {
			under = path[at]
		}
	}
	l, err := snap.Lineage(ctx, a, column)
	if err != nil {
		if errors.Is(err, workspace.ErrNoLineage) {
			res.Reason = err.Error()
			return res, nil
		}
		return nil, err
	}
	res.Action, res.Reason, res.Column = l.Action, l.Reason, column
	cols := l.Columns
	if under != "" {
		for _, c := range cols {
			if strings.EqualFold(c.Name, under) {
				cols, res.Column = []workspace.ColumnLineage{c}, c.Name
				break
			}
		}
	}
	defined := s.definedTables(snap)
	for _, c := range cols {
		res.Columns = append(res.Columns, LineageColumn{
			Name: c.Name, Type: c.Type,
			Direct: defined.inputs(c.Direct), Origins: defined.inputs(c.Origins),
			Unresolved: c.Unresolved,
		})
	}
	return res, nil
}

// lineageAction is the action a dfd/lineage request is about: the one
// named, else the file's — at the cursor when the file defines several
// (the last whose definition starts before it), else its first that
// outputs a table. reason says why there is none.
func lineageAction(snap *workspace.Snapshot, d *workspace.Document, rel, name string, off int) (*workspace.Action, string) {
	inFile := snap.ActionsIn(rel)
	if name != "" {
		for _, list := range [][]*workspace.Action{inFile, snap.Actions()} {
			for _, a := range list {
				if actionNamed(a, name) {
					return a, ""
				}
			}
		}
		return nil, fmt.Sprintf("no action %s in the last compile", name)
	}
	if len(inFile) == 0 {
		return nil, "the file defines no action"
	}
	if len(inFile) == 1 {
		return inFile[0], ""
	}
	if off >= 0 {
		var best *workspace.Action
		bestStart := -1
		for _, a := range inFile {
			if sp, ok := definitionSpan(d, a); ok && sp.Start <= off && sp.Start > bestStart {
				best, bestStart = a, sp.Start
			}
		}
		if best != nil {
			return best, ""
		}
	}
	// A .sqlx file's own action comes with the assertions its config
	// asks for (uniqueKey, nonNull), which have no definition of their own.
	for _, a := range inFile {
		if a.Kind != workspace.KindAssertion {
			return a, ""
		}
	}
	return inFile[0], ""
}

// actionNamed says whether name (name, schema.name or
// database.schema.name; any case) names a.
func actionNamed(a *workspace.Action, name string) bool {
	for _, t := range []workspace.Target{a.Target, a.CanonicalTarget} {
		if t.Name == "" {
			continue
		}
		for _, n := range []string{t.Name, t.Schema + "." + t.Name, t.String()} {
			if strings.EqualFold(n, name) {
				return true
			}
		}
	}
	return false
}

// tableDefs finds where the project defines a table (database.schema.name).
type tableDefs struct {
	s    *Server
	root string
	by   map[string]*workspace.Action // lower-case target
	locs map[*workspace.Action]protocol.Location
}

func (s *Server) definedTables(snap *workspace.Snapshot) tableDefs {
	td := tableDefs{s: s, root: snap.Root, by: map[string]*workspace.Action{}, locs: map[*workspace.Action]protocol.Location{}}
	for _, a := range snap.Actions() {
		if a.File != "" {
			td.by[strings.ToLower(a.Target.String())] = a
		}
	}
	return td
}

func (td tableDefs) inputs(ins []workspace.LineageInput) []LineageInput {
	out := make([]LineageInput, len(ins))
	for i, in := range ins {
		out[i] = LineageInput{Table: in.Table, Column: in.Column, Computed: in.Computed}
		if a, ok := td.by[strings.ToLower(in.Table)]; ok {
			loc, ok := td.locs[a]
			if !ok {
				loc = td.s.actionLocation(td.root, a)
				td.locs[a] = loc
			}
			out[i].File, out[i].Location = a.File, &loc
		}
	}
	return out
}
