package lsp

import (
	"context"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/workspace"
)

// Text synchronisation. These handlers run strictly in order (see
// handler.go) and are quick: they record the buffer in the workspace,
// which tells the project it changed; compiling happens on the project's
// own goroutine.

// DidOpen implements protocol.Server.
func (s *Server) DidOpen(ctx context.Context, params *protocol.DidOpenTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	s.ws.OpenDocument(workspace.NewDocument(string(params.TextDocument.URI), path, params.TextDocument.Version, []byte(params.TextDocument.Text)))
	return nil
}

// DidChange implements protocol.Server. An edit whose version does not
// follow the open document's is refused (an error notification in the
// log), since applying edits out of order corrupts the text.
func (s *Server) DidChange(ctx context.Context, params *protocol.DidChangeTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	old := s.ws.Document(path)
	if old == nil {
		return fmt.Errorf("didChange for %s, which is not open", params.TextDocument.URI)
	}
	text, err := applyChanges(old.Text, params.ContentChanges)
	if err != nil {
		return fmt.Errorf("didChange for %s: %w", params.TextDocument.URI, err)
	}
	if err := s.ws.ChangeDocument(workspace.NewDocument(old.URI, path, params.TextDocument.Version, text)); err != nil {
		return fmt.Errorf("didChange refused: %w", err)
	}
	return nil
}

// DidSave implements protocol.Server.
func (s *Server) DidSave(ctx context.Context, params *protocol.DidSaveTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	var text []byte
	if params.Text != nil {
		text = []byte(*params.Text)
	}
	s.ws.SaveDocument(path, text)
	return nil
}

// DidClose implements protocol.Server.
func (s *Server) DidClose(ctx context.Context, params *protocol.DidCloseTextDocumentParams) error {
	if path := uriPath(params.TextDocument.URI); path != "" {
		s.ws.CloseDocument(path)
	}
	return nil
}
