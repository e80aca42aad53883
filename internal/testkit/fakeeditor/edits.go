package fakeeditor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf16"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// WorkspaceEditCapabilities makes the editor say it applies versioned
// document changes with file renames and creations, as VS Code does.
func WorkspaceEditCapabilities(c *protocol.ClientCapabilities) {
	yes := true
	if c.Workspace == nil {
		c.Workspace = &protocol.WorkspaceClientCapabilities{}
	}
	c.Workspace.WorkspaceEdit = &protocol.WorkspaceEditClientCapabilities{
		DocumentChanges:    &yes,
		ResourceOperations: []protocol.ResourceOperationKind{protocol.ResourceOperationKindCreate, protocol.ResourceOperationKindRename, protocol.ResourceOperationKindDelete},
	}
	if c.TextDocument == nil {
		c.TextDocument = &protocol.TextDocumentClientCapabilities{}
	}
	c.TextDocument.Rename = &protocol.RenameClientCapabilities{PrepareSupport: &yes}
}

// WorkspaceEdit is an LSP workspace edit as the server sent it.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []DocumentChange      `json:"documentChanges,omitempty"`
}

// TextEdit is an LSP text edit.
type TextEdit struct {
	Range   protocol.Range `json:"range"`
	NewText string         `json:"newText"`
}

// DocumentChange is a text document edit (Kind "") or a file operation
// (Kind "rename", "create", "delete").
type DocumentChange struct {
	Kind         string `json:"kind,omitempty"`
	TextDocument *struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"`
	} `json:"textDocument,omitempty"`
	Edits  []TextEdit `json:"edits,omitempty"`
	OldURI string     `json:"oldUri,omitempty"`
	NewURI string     `json:"newUri,omitempty"`
	URI    string     `json:"uri,omitempty"`
}

// Rename sends textDocument/rename and returns the edit (nil with the
// server's error when it refused).
func (e *Editor) Rename(ctx context.Context, path string, pos protocol.Position, newName string) (*WorkspaceEdit, error) {
	var we *WorkspaceEdit
	err := e.Call(ctx, protocol.MethodTextDocumentRename, map[string]any{
		"textDocument": map[string]any{"uri": uri.File(path)}, "position": pos, "newName": newName,
	}, &we)
	return we, err
}

// CodeAction is a code action as the server sent it.
type CodeAction struct {
	Title       string                `json:"title"`
	Kind        string                `json:"kind"`
	IsPreferred bool                  `json:"isPreferred"`
	Diagnostics []protocol.Diagnostic `json:"diagnostics"`
	Edit        *WorkspaceEdit        `json:"edit"`
}

// CodeActions sends textDocument/codeAction for rng with the editor's
// diagnostics of path that overlap it (as editors do), data included.
func (e *Editor) CodeActions(ctx context.Context, path string, rng protocol.Range) ([]CodeAction, error) {
	u := uri.File(path)
	var diags []json.RawMessage
	e.mu.Lock()
	for _, d := range e.state.Diagnostics[u] {
		if after(d.Range.Start, rng.End) || after(rng.Start, d.Range.End) {
			continue
		}
		b, err := protocol.Marshal(d)
		if err != nil {
			e.mu.Unlock()
			return nil, err
		}
		diags = append(diags, b)
	}
	e.mu.Unlock()
	if diags == nil {
		diags = []json.RawMessage{}
	}
	// The diagnostics in the answer are decoded with protocol.Unmarshal:
	// encoding/json cannot decode a Diagnostic's code (an interface,
	// protocol.ProgressToken), and dfd's codes are strings.
	var raw []struct {
		CodeAction
		Diagnostics []json.RawMessage `json:"diagnostics"`
	}
	err := e.Call(ctx, protocol.MethodTextDocumentCodeAction, map[string]any{
		"textDocument": map[string]any{"uri": u}, "range": rng, "context": map[string]any{"diagnostics": diags},
	}, &raw)
	if err != nil {
		return nil, err
	}
	out := make([]CodeAction, 0, len(raw))
	for _, r := range raw {
		a := r.CodeAction
		for _, b := range r.Diagnostics {
			var d protocol.Diagnostic
			if err := protocol.Unmarshal(b, &d); err != nil {
				return nil, fmt.Errorf("code action %q: its diagnostic: %w", a.Title, err)
			}
			a.Diagnostics = append(a.Diagnostics, d)
		}
		out = append(out, a)
	}
	return out, nil
}

func after(a, b protocol.Position) bool {
	return a.Line > b.Line || a.Line == b.Line && a.Character > b.Character
}

// ApplyEdit applies a workspace edit as an editor does: text edits to open
// buffers (didChange; the version must be the buffer's when the edit names
// one) and to other files on disk, file operations on disk — each change
// on disk reported as the editor's file watcher would. Open buffers are
// left unsaved; call Save.
func (e *Editor) ApplyEdit(ctx context.Context, we *WorkspaceEdit) error {
	if we == nil {
		return errors.New("no edit")
	}
	for u, edits := range we.Changes {
		if err := e.applyText(ctx, uri.URI(u).FsPath(), nil, edits); err != nil {
			return err
		}
	}
	for _, c := range we.DocumentChanges {
		var err error
		switch c.Kind {
		case "":
			if c.TextDocument == nil {
				return errors.New("a document change without a textDocument")
			}
			err = e.applyText(ctx, uri.URI(c.TextDocument.URI).FsPath(), c.TextDocument.Version, c.Edits)
		case "rename":
			err = e.renameFile(ctx, uri.URI(c.OldURI).FsPath(), uri.URI(c.NewURI).FsPath())
		case "create":
			p := uri.URI(c.URI).FsPath()
			if _, serr := os.Stat(p); serr == nil {
				return fmt.Errorf("create %s: it exists", p)
			}
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				if err = os.WriteFile(p, nil, 0o644); err == nil {
					err = e.Watched(ctx, FileEvent{Path: p, Type: protocol.FileChangeTypeCreated})
				}
			}
		default:
			err = fmt.Errorf("unsupported change %q", c.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// applyText applies edits to path's open buffer (at version, when given),
// else to the file on disk.
func (e *Editor) applyText(ctx context.Context, path string, version *int32, edits []TextEdit) error {
	e.mu.Lock()
	d := e.docs[uri.File(path)]
	var text string
	if d != nil {
		if version != nil && *version != d.version {
			e.mu.Unlock()
			return fmt.Errorf("%s: the edit is for version %d, the buffer is at %d", path, *version, d.version)
		}
		text = d.text
	}
	e.mu.Unlock()
	if d == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text = string(b)
	}
	next, err := ApplyTextEdits(text, edits)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d != nil {
		return e.SetText(ctx, path, next)
	}
	if err := os.WriteFile(path, []byte(next), 0o644); err != nil {
		return err
	}
	return e.Watched(ctx, FileEvent{Path: path, Type: protocol.FileChangeTypeChanged})
}

func (e *Editor) renameFile(ctx context.Context, from, to string) error {
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("rename %s: %s exists", from, to)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	e.mu.Lock()
	d := e.docs[uri.File(from)]
	e.mu.Unlock()
	if d != nil {
		// The buffer moves with the file (unsaved text included).
		text := d.text
		if err := os.Rename(from, to); err != nil {
			return err
		}
		if err := e.CloseFile(ctx, from); err != nil {
			return err
		}
		if err := e.OpenText(ctx, to, text); err != nil {
			return err
		}
	} else if err := os.Rename(from, to); err != nil {
		return err
	}
	return e.Watched(ctx, FileEvent{Path: from, Type: protocol.FileChangeTypeDeleted}, FileEvent{Path: to, Type: protocol.FileChangeTypeCreated})
}

// ApplyTextEdits applies LSP text edits (UTF-16 positions, non-overlapping)
// to text.
func ApplyTextEdits(text string, edits []TextEdit) (string, error) {
	type span struct {
		start, end int
		text       string
	}
	var spans []span
	for _, ed := range edits {
		s, err := offsetOf(text, ed.Range.Start)
		if err != nil {
			return "", err
		}
		en, err := offsetOf(text, ed.Range.End)
		if err != nil {
			return "", err
		}
		spans = append(spans, span{s, en, ed.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return "", fmt.Errorf("overlapping edits")
		}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		sp := spans[i]
		text = text[:sp.start] + sp.text + text[sp.end:]
	}
	return text, nil
}

// offsetOf is the byte offset of an LSP position (UTF-16 column).
func offsetOf(text string, pos protocol.Position) (int, error) {
	off := 0
	for line := uint32(0); line < pos.Line; line++ {
		i := indexByteFrom(text, off, '\n')
		if i < 0 {
			return 0, fmt.Errorf("line %d is past the end", pos.Line)
		}
		off = i + 1
	}
	units := 0
	for i, r := range text[off:] {
		if units >= int(pos.Character) || r == '\n' {
			return off + i, nil
		}
		units += len(utf16.Encode([]rune{r}))
	}
	if units >= int(pos.Character) {
		return len(text), nil
	}
	return 0, fmt.Errorf("column %d is past the end of line %d", pos.Character, pos.Line)
}

func indexByteFrom(s string, from int, c byte) int {
	for i := from; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
