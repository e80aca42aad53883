package lsp

import (
	"fmt"
	"slices"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/workspace"
)

// editCaps are what the client can apply in a workspace edit.
type editCaps struct {
	docChanges bool // documentChanges: versioned edits, resource operations
	rename     bool // resource operation "rename"
	create     bool // resource operation "create"
}

func workspaceEditCaps(w *protocol.WorkspaceEditClientCapabilities) editCaps {
	if w == nil {
		return editCaps{}
	}
	c := editCaps{
		rename: slices.Contains(w.ResourceOperations, protocol.ResourceOperationKindRename),
		create: slices.Contains(w.ResourceOperations, protocol.ResourceOperationKindCreate),
	}
	// Resource operations travel only in documentChanges, so a client
	// that announces one accepts documentChanges even when it does not
	// say so: Neovim (0.7 to 0.11) announces rename/create/delete without
	// documentChanges and applies them.
	c.docChanges = w.DocumentChanges != nil && *w.DocumentChanges || c.rename || c.create
	return c
}

// lspEdits converts a file's byte-span edits to LSP text edits (UTF-16)
// against the text they were computed on.
func lspEdits(fe *workspace.FileEdit) []protocol.TextEdit {
	m := fe.Doc.Lines()
	out := make([]protocol.TextEdit, 0, len(fe.Edits))
	for _, e := range fe.Edits {
		out = append(out, protocol.TextEdit{Range: rangeOf(m, e.Span), NewText: e.NewText})
	}
	return out
}

// workspaceEdit turns a workspace change into the LSP edit the client can
// apply: versioned document changes with file operations when it supports
// them, else plain changes (a change that renames or creates files is then
// an error: the caller checks first).
func (s *Server) workspaceEdit(c *workspace.Change) (*protocol.WorkspaceEdit, error) {
	caps := s.capabilities().edits
	if !caps.docChanges {
		if len(c.Renames) > 0 || len(c.Creates) > 0 {
			return nil, fmt.Errorf("dfd: this editor cannot rename or create files through the language server")
		}
		we := &protocol.WorkspaceEdit{Changes: map[uri.URI][]protocol.TextEdit{}}
		for _, fe := range c.Edits {
			u := s.uriFor(fe.Path)
			we.Changes[u] = append(we.Changes[u], lspEdits(fe)...)
		}
		return we, nil
	}
	if len(c.Renames) > 0 && !caps.rename || len(c.Creates) > 0 && !caps.create {
		return nil, fmt.Errorf("dfd: this editor cannot rename or create files through the language server")
	}
	we := &protocol.WorkspaceEdit{}
	for _, fe := range c.Edits {
		id := protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: s.uriFor(fe.Path)}}
		if fe.Doc.URI != "" { // an open buffer: only that version
			v := fe.Doc.Version
			id.Version = &v
		}
		var edits []protocol.TextDocumentEditElement
		for _, e := range lspEdits(fe) {
			edits = append(edits, &e)
		}
		we.DocumentChanges = append(we.DocumentChanges, &protocol.TextDocumentEdit{TextDocument: id, Edits: edits})
	}
	for _, r := range c.Renames {
		we.DocumentChanges = append(we.DocumentChanges, &protocol.RenameFile{Kind: "rename", OldURI: s.uriFor(r.From), NewURI: uri.File(r.To)})
	}
	for _, cr := range c.Creates {
		u := uri.File(cr.Path)
		we.DocumentChanges = append(we.DocumentChanges, &protocol.CreateFile{Kind: "create", URI: u},
			&protocol.TextDocumentEdit{
				TextDocument: protocol.OptionalVersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}},
				Edits:        []protocol.TextDocumentEditElement{&protocol.TextEdit{NewText: cr.Text}},
			})
	}
	return we, nil
}

// canApply reports whether the client can apply c.
func (s *Server) canApply(c *workspace.Change) bool {
	caps := s.capabilities().edits
	return (len(c.Renames) == 0 || caps.rename) && (len(c.Creates) == 0 || caps.create)
}
