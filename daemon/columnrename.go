package daemon

import (
	"context"
	"fmt"
	"maps"

	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/sqlcheck"
	"github.com/dfdtools/dfd/workspace"
)

var _ workspace.ColumnRenamer = (*openProject)(nil)

// RenameColumn implements workspace.ColumnRenamer: the project's SQL
// analysis plans the rename (sqlcheck.PlanColumnRename), then the project
// is compiled with the edits (as unsaved buffers: nothing is written) and
// the plan verified on that graph (sqlcheck.VerifyColumnRename): the SQL
// the compile makes must be the SQL planned, and its analysis must find
// every action's columns as they were but the one renamed. It holds the
// project's SQL turn throughout, so no check runs meanwhile.
func (op *openProject) RenameColumn(ctx context.Context, req workspace.ColumnRenameRequest) (*workspace.ColumnRenamePlan, error) {
	h, ok := req.Graph.(*graphHandle)
	switch {
	case !ok || h == nil || req.Action == nil:
		return &workspace.ColumnRenamePlan{Refused: "the project has not compiled yet"}, nil
	case !op.b.currentSettings().SQLCheck:
		return &workspace.ColumnRenamePlan{Refused: "SQL analysis is off (setting dfd.sql.check), and dfd renames columns with it"}, nil
	case h.errors > 0:
		return &workspace.ColumnRenamePlan{Refused: fmt.Sprintf("the project has %d compilation error(s)", h.errors)}, nil
	}
	t := req.Action.Target
	if t.Database == "" {
		t.Database = h.graph.GetProjectConfig().GetDefaultDatabase()
	}
	st := &op.sql
	if err := st.acquire(ctx); err != nil {
		return nil, err
	}
	defer st.release()
	jitSQL := st.jitOf(h)
	ms := op.metadataSource()
	rreq := sqlcheck.RenameRequest{Target: t.String(), Column: req.Column, NewName: req.NewName}
	plan, err := st.checker.PlanColumnRename(ctx, h.graph, op.sqlOptions(ms, h.overlays, jitSQL, false), rreq)
	if err != nil {
		return nil, err
	}
	if plan.Refused == "" {
		overlays := editedOverlays(h.overlays, plan)
		paths, err := op.p.FilePaths()
		if err != nil {
			return nil, fmt.Errorf("listing %s for the rename: %w", op.p.Root, err)
		}
		res, err := op.runner.Compile(ctx, CompileJob{
			Overlays: overlays, FilePaths: withOverlayPaths(paths, overlays), Timeout: op.b.opts.CompileTimeout,
			Log: func(string, string) {},
		})
		if err != nil {
			return nil, fmt.Errorf("compiling %s with the rename: %w", op.p.Root, err)
		}
		if errs := res.Errors(); len(errs) > 0 {
			return &workspace.ColumnRenamePlan{Refused: "the project would not compile after the edits: " + errs[0].GetMessage()}, nil
		}
		if plan, err = st.checker.VerifyColumnRename(ctx, res.Graph, op.sqlOptions(ms, overlays, jitSQL, false), plan); err != nil {
			return nil, err
		}
	}
	return columnPlan(plan), nil
}

// jitOf is the JiT actions' SQL the last check of h's graph had.
func (st *sqlState) jitOf(h *graphHandle) map[string]*dataformpb.JitCompilationResponse {
	if last := st.last.Load(); last != nil && last.g == h.graph {
		return last.jit
	}
	return nil
}

// editedOverlays are the compile's buffers with the plan's files edited.
func editedOverlays(base map[string][]byte, plan *sqlcheck.RenamePlan) map[string][]byte {
	out := maps.Clone(base)
	if out == nil {
		out = map[string][]byte{}
	}
	for rel, text := range plan.Files {
		var b []byte
		cur := 0
		for _, e := range plan.Edits {
			if e.File != rel {
				continue
			}
			b = append(b, text[cur:e.Start]...)
			b = append(b, e.New...)
			cur = e.End
		}
		out[rel] = append(b, text[cur:]...)
	}
	return out
}

func columnPlan(p *sqlcheck.RenamePlan) *workspace.ColumnRenamePlan {
	out := &workspace.ColumnRenamePlan{Refused: p.Refused, Texts: p.Files,
		Item: workspace.ColumnEdit{File: p.Item.File, Start: p.Item.Start, End: p.Item.End, Old: p.Item.Old, New: p.Item.New}}
	for _, e := range p.Edits {
		out.Edits = append(out.Edits, workspace.ColumnEdit{File: e.File, Start: e.Start, End: e.End, Old: e.Old, New: e.New})
	}
	for _, pl := range p.Places {
		out.Places = append(out.Places, workspace.ColumnPlace{File: pl.File, Offset: pl.Offset, Why: pl.Why})
	}
	return out
}
