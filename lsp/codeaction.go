package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"go.lsp.dev/protocol"

	"github.com/dfdtools/dfd/internal/regfile"
	"github.com/dfdtools/dfd/workspace"
)

// Quick fixes. Diagnostics carry their fixes (workspace.Diagnostic.Fixes)
// in their data, published with them:
//
//	"data": {"dfd": {"version": 3,
//	                 "fixes": [{"title": "…", "preferred": true, "edit": WorkspaceEdit}],
//	                 "unresolved": {"name": "x", "schema": "s"}}}
//
// and textDocument/codeAction offers them back for the diagnostics the
// client sends, so whoever reports a problem (the compile, the source
// checks, the SQL analyzer) can attach its fixes without this file
// knowing about them. version is the document's version the edits were
// computed on: fixes of an older text are not offered (the next compile
// publishes new ones). unresolved is a reference to an action that does
// not exist; for it the workspace is asked, when the editor asks, for
// declarations of tables the metadata source knows (TableFinder).

type diagData struct {
	Dfd *dfdDiagData `json:"dfd,omitempty"`
}

type dfdDiagData struct {
	Version    *int32            `json:"version,omitempty"`
	Fixes      []fixData         `json:"fixes,omitempty"`
	Unresolved *workspace.Target `json:"unresolved,omitempty"`
}

type fixData struct {
	Title     string          `json:"title"`
	Preferred bool            `json:"preferred,omitempty"`
	Edit      json.RawMessage `json:"edit"`
}

// diagnosticData is the data published with d (nil when it has no fixes).
// versions are the versions of the open documents the diagnostics are
// about.
func (s *Server) diagnosticData(d workspace.Diagnostic, path string, versions map[string]int32) protocol.LSPAny {
	if len(d.Fixes) == 0 && d.Unresolved == nil {
		return nil
	}
	dd := &dfdDiagData{Unresolved: d.Unresolved}
	if v, ok := versions[path]; ok {
		dd.Version = &v
	}
	for _, f := range d.Fixes {
		if f.Change == nil || !s.canApply(f.Change) {
			continue
		}
		we, err := s.workspaceEdit(f.Change)
		if err != nil {
			continue
		}
		raw, err := protocol.Marshal(we)
		if err != nil {
			s.log.Error("encoding a quick fix", "error", err)
			continue
		}
		dd.Fixes = append(dd.Fixes, fixData{Title: f.Title, Preferred: f.Preferred, Edit: raw})
	}
	b, err := json.Marshal(diagData{Dfd: dd})
	if err != nil {
		return nil
	}
	return b
}

// CodeAction implements protocol.Server: the quick fixes of the
// diagnostics the client sends (their data, or — for clients that do not
// send data back — the data dfd published for a diagnostic at the same
// place with the same message).
func (s *Server) CodeAction(ctx context.Context, params *protocol.CodeActionParams) ([]protocol.CommandOrCodeAction, error) {
	f, err := s.fileAt(ctx, params.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	var out []protocol.CommandOrCodeAction
	if wantsDocumentColumns(params.Context.Only) {
		off := f.m.OffsetUTF16(int(params.Range.Start.Line), int(params.Range.Start.Character))
		if ca := s.documentColumns(ctx, f, off); ca != nil {
			out = append(out, ca)
		}
	}
	if only := params.Context.Only; len(only) > 0 {
		wanted := false
		for _, k := range only {
			if k == protocol.CodeActionKindQuickFix || k == "" {
				wanted = true
			}
		}
		if !wanted {
			return out, nil
		}
	}
	version := int32(0)
	open := false
	if d := s.ws.Document(f.path); d != nil {
		version, open = d.Version, true
	}
	quickfix := protocol.CodeActionKindQuickFix
	for _, diag := range params.Context.Diagnostics {
		data := s.dataOf(f.path, diag)
		if data == nil || data.Dfd == nil {
			continue
		}
		dd := data.Dfd
		if dd.Version != nil && (!open || *dd.Version != version) || dd.Version == nil && open && !s.sameAsDisk(f) {
			continue // computed on another text
		}
		for _, fx := range dd.Fixes {
			var we protocol.WorkspaceEdit
			if err := protocol.Unmarshal(fx.Edit, &we); err != nil {
				s.log.Warn("a quick fix's edit does not decode", "error", err)
				continue
			}
			ca := &protocol.CodeAction{Title: fx.Title, Kind: &quickfix, Diagnostics: []protocol.Diagnostic{diag}, Edit: &we}
			if fx.Preferred {
				yes := true
				ca.IsPreferred = &yes
			}
			out = append(out, ca)
		}
		if dd.Unresolved != nil && f.snap != nil {
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			fixes := s.ws.DeclarationFixes(dctx, f.snap, *dd.Unresolved)
			cancel()
			for _, fx := range fixes {
				if !s.canApply(fx.Change) {
					continue
				}
				we, err := s.workspaceEdit(fx.Change)
				if err != nil {
					continue
				}
				ca := &protocol.CodeAction{Title: fx.Title, Kind: &quickfix, Diagnostics: []protocol.Diagnostic{diag}, Edit: we}
				out = append(out, ca)
			}
		}
	}
	return out, nil
}

// dataOf decodes a diagnostic's data; when the client did not send it,
// the data of the published diagnostic at the same range with the same
// message.
func (s *Server) dataOf(path string, diag protocol.Diagnostic) *diagData {
	decode := func(raw protocol.LSPAny) *diagData {
		if len(raw) == 0 {
			return nil
		}
		var d diagData
		if json.Unmarshal(raw, &d) != nil {
			return nil
		}
		return &d
	}
	if d := decode(diag.Data); d != nil {
		return d
	}
	msg := diagnosticMessage(diag)
	s.diags.mu.Lock()
	defer s.diags.mu.Unlock()
	for _, byPath := range s.diags.byProject {
		for _, pd := range byPath[path] {
			if pd.Range.Start == diag.Range.Start && diagnosticMessage(pd) == msg {
				if d := decode(pd.Data); d != nil {
					return d
				}
			}
		}
	}
	return nil
}

// sameAsDisk reports whether the open buffer of f holds what is on disk.
func (s *Server) sameAsDisk(f *fileCtx) bool {
	b, err := regfile.ReadFile(f.path)
	return err == nil && bytes.Equal(b, f.text)
}

func diagnosticMessage(d protocol.Diagnostic) string {
	switch m := d.Message.(type) {
	case protocol.String:
		return string(m)
	case *protocol.MarkupContent:
		return m.Value
	}
	return ""
}
