package lsp

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/workspace"
)

// Rename of actions and includes members (the workspace plans it:
// workspace/rename.go) and of output columns (the backend plans and
// verifies it: workspace/rename_column.go).

// errRequestFailed is LSP's RequestFailed: the request was fine, the
// answer is no (a rename that cannot be done completely). Editors show
// its message.
func errRequestFailed(msg string) error {
	return jsonrpc2.NewError(jsonrpc2.Code(protocol.LSPErrorCodesRequestFailed), msg)
}

// PrepareRename implements protocol.Server: what a rename at the position
// would rename, from the latest snapshot and the file's text (no compile,
// no other file read).
func (s *Server) PrepareRename(ctx context.Context, params *protocol.PrepareRenameParams) (protocol.PrepareRenameResult, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	if f.p == nil {
		return nil, errRequestFailed("dfd: this file is not in a Dataform project")
	}
	subj, err := s.ws.RenameSubjectAt(f.snap, f.path, f.offset(params.Position))
	if err != nil {
		return nil, errRequestFailed("dfd: " + err.Error())
	}
	return &protocol.PrepareRenamePlaceholder{Range: f.rangeOf(subj.Span), Placeholder: subj.Name}, nil
}

// Rename implements protocol.Server: every place that names the action (or
// includes member) at the position, from a snapshot that covers every edit
// received so far; a rename that cannot be complete is refused with the
// places that stand in the way.
func (s *Server) Rename(ctx context.Context, params *protocol.RenameParams) (*protocol.WorkspaceEdit, error) {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		Release(ctx)
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("dfd: not a file URI: %q", params.TextDocument.URI))
	}
	path = canonicalPath(path)
	p := s.ws.ProjectFor(path)
	if p == nil {
		Release(ctx)
		return nil, errRequestFailed("dfd: this file is not in a Dataform project")
	}
	d, err := s.ws.View(path)
	if err != nil {
		Release(ctx)
		return nil, fmt.Errorf("dfd: %w", err)
	}
	off := d.Lines().OffsetUTF16(int(params.Position.Line), int(params.Position.Character))
	p.FlushDeferred()
	min := p.Version()
	Release(ctx)
	snap, err := p.Await(ctx, min)
	if err != nil {
		return nil, err
	}
	subj, err := s.ws.RenameSubjectAt(snap, path, off)
	if err != nil {
		return nil, errRequestFailed("dfd: " + err.Error())
	}
	caps := s.capabilities().edits
	var change *workspace.Change
	if subj.Column != "" {
		// An output column: the backend analyses and compiles the
		// project with the edits (workspace/rename_column.go).
		change, err = s.ws.PlanColumnRename(ctx, snap, subj, params.NewName)
	} else {
		change, err = s.ws.PlanRename(snap, subj, params.NewName, workspace.RenameOptions{FileRenames: caps.rename})
	}
	var refusal *workspace.Refusal
	if errors.As(err, &refusal) {
		s.log.Info("rename refused", "name", subj.Name, "to", params.NewName, "why", refusal.Error())
		return nil, errRequestFailed(refusal.Error())
	}
	if err != nil {
		return nil, err
	}
	s.log.Info("rename", "name", subj.Name, "to", params.NewName, "files", len(change.Edits), "fileRenames", len(change.Renames))
	return s.workspaceEdit(change)
}
