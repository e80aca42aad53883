package lsp

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/workspace"
)

// events turns the workspace's events into LSP notifications.
type events struct{ s *Server }

var _ workspace.Events = events{}

// Diagnostics implements workspace.Events.
func (e events) Diagnostics(root string, snap *workspace.Snapshot, diags []workspace.Diagnostic) {
	if snap == nil {
		e.s.setDiagnostics(root, nil, nil)
		return
	}
	byPath, versions := e.s.convertDiagnostics(snap, diags)
	e.s.setDiagnostics(root, byPath, versions)
}

// Compiled implements workspace.Events.
func (e events) Compiled(snap *workspace.Snapshot) { e.s.notifyPreviewChanged(snap) }

// Warn implements workspace.Events.
func (e events) Warn(msg string) { e.s.showMessage(protocol.MessageTypeWarning, msg) }

// Progress implements workspace.Events.
func (e events) Progress(ctx context.Context, title, msg string) workspace.Progress {
	return e.s.beginProgress(ctx, title, msg)
}
