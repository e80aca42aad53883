package lsp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"go.lsp.dev/protocol"
)

// Text synchronisation. These handlers run strictly in order (see
// handler.go) and are quick: they record the buffer and tell the project
// it changed; compiling happens on the project's own goroutine.

// DidOpen implements protocol.Server.
func (s *Server) DidOpen(ctx context.Context, params *protocol.DidOpenTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	d := &document{uri: params.TextDocument.URI, path: path, version: params.TextDocument.Version, text: []byte(params.TextDocument.Text)}
	s.docs.set(d)
	p := s.projectFor(path)
	if p == nil {
		return nil
	}
	// Opening a file as it is on disk changes nothing once the project has
	// compiled; otherwise compile now, the user is looking at it.
	if onDisk, err := os.ReadFile(path); err == nil && bytes.Equal(onDisk, d.text) && p.latest() != nil {
		return nil
	}
	p.changed(changeUrgent)
	return nil
}

// DidChange implements protocol.Server.
func (s *Server) DidChange(ctx context.Context, params *protocol.DidChangeTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	old := s.docs.get(path)
	if old == nil {
		return fmt.Errorf("didChange for %s, which is not open", params.TextDocument.URI)
	}
	text, err := applyChanges(old.text, params.ContentChanges)
	if err != nil {
		return fmt.Errorf("didChange for %s: %w", params.TextDocument.URI, err)
	}
	s.docs.set(&document{uri: old.uri, path: path, version: params.TextDocument.Version, text: text})
	if p := s.projectFor(path); p != nil {
		if s.currentSettings().ManualCompile {
			p.deferChange()
		} else {
			p.changed(0)
		}
	}
	return nil
}

// DidSave implements protocol.Server.
func (s *Server) DidSave(ctx context.Context, params *protocol.DidSaveTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	if params.Text != nil {
		if d := s.docs.get(path); d != nil {
			s.docs.set(&document{uri: d.uri, path: path, version: d.version, text: []byte(*params.Text)})
		}
	}
	p := s.projectFor(path)
	if p == nil {
		return nil
	}
	flags := changeUrgent
	if isProjectConfigFile(p.root, path) {
		flags |= changeReopen
	}
	p.changed(flags)
	return nil
}

// DidClose implements protocol.Server.
func (s *Server) DidClose(ctx context.Context, params *protocol.DidCloseTextDocumentParams) error {
	path := uriPath(params.TextDocument.URI)
	if path == "" {
		return nil
	}
	d := s.docs.remove(path)
	if d == nil {
		return nil
	}
	// The disk version counts again; recompile if it differs.
	onDisk, err := os.ReadFile(path)
	if err == nil && bytes.Equal(onDisk, d.text) {
		return nil
	}
	if p := s.projectFor(path); p != nil {
		p.changed(changeUrgent)
	}
	return nil
}

// isProjectConfigFile reports whether path is a file whose change means the
// project must be opened again: its settings, its package.json, or
// anything of its installed core.
func isProjectConfigFile(root, path string) bool {
	rel, ok := relSlash(root, path)
	if !ok {
		return false
	}
	switch rel {
	case "workflow_settings.yaml", "dataform.json", "package.json", "package-lock.json":
		return true
	}
	return strings.HasPrefix(rel, "node_modules/@dataform/core/")
}
