// Package fakeeditor is an LSP client for tests: it drives dfd's language
// server the way an editor does (initialize, open, type, save, ask) over
// any connection — in-process pipes or a `dfd serve` subprocess — and
// records what the server sends (diagnostics, progress, log messages,
// dfd/previewChanged) so that tests wait for the server's own events
// instead of sleeping.
package fakeeditor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Config is what the fake editor tells the server about itself.
type Config struct {
	// NoWorkDoneProgress hides window.workDoneProgress support.
	NoWorkDoneProgress bool
	// NoWatchFiles hides dynamic registration of didChangeWatchedFiles.
	NoWatchFiles bool
	// InitializationOptions are sent as initializationOptions.
	InitializationOptions any
	// Configuration answers workspace/configuration (section "dfd").
	Configuration any
	// Capabilities, when set, edits the client capabilities sent with
	// initialize (see WorkspaceEditCapabilities).
	Capabilities func(*protocol.ClientCapabilities)
}

// Notification is a notification the server sent.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Progress is one work-done progress as the server reported it.
type Progress struct {
	Token    string
	Title    string
	Messages []string
	Ended    bool
	EndMsg   string
}

// State is what the editor has seen; Await conditions read it.
type State struct {
	// Diagnostics are the latest per URI; Published counts publications.
	Diagnostics map[uri.URI][]protocol.Diagnostic
	Published   map[uri.URI]int
	Progress    []*Progress
	Logs        []string
	Shown       []string
	// PreviewChanged are the dfd/previewChanged notifications, in order.
	PreviewChanged []json.RawMessage
	Registrations  []protocol.Registration
	Notifications  []Notification
}

// EndedProgress counts ended progresses whose title contains substr.
func (s *State) EndedProgress(substr string) int {
	n := 0
	for _, p := range s.Progress {
		if p.Ended && strings.Contains(p.Title, substr) {
			n++
		}
	}
	return n
}

// Editor is a fake LSP client.
type Editor struct {
	conn   jsonrpc2.Conn
	Server protocol.Server
	cfg    Config
	w      *lockedWriter

	mu      sync.Mutex // guards state, changed, docs
	state   State
	changed chan struct{}
	docs    map[uri.URI]*doc
}

type doc struct {
	version int32
	text    string
}

// lockedWriter serialises whole-frame writes: jsonrpc2 writes each
// message with one Write, and WriteRaw must not interleave with them.
type lockedWriter struct {
	mu sync.Mutex
	io.ReadWriteCloser
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ReadWriteCloser.Write(b)
}

// codec is the LSP payload codec (protocol's own is unexported).
type codec struct{}

func (codec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(jsonrpc2.RawMessage); ok {
		return m, nil
	}
	return protocol.Marshal(v)
}

func (codec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*jsonrpc2.RawMessage); ok {
		*p = append(jsonrpc2.RawMessage(nil), data...)
		return nil
	}
	if p, ok := v.(*json.RawMessage); ok {
		*p = append(json.RawMessage(nil), data...)
		return nil
	}
	return protocol.Unmarshal(data, v)
}

// New connects an editor to a server over rwc and starts reading.
func New(ctx context.Context, rwc io.ReadWriteCloser, cfg Config) *Editor {
	e := &Editor{cfg: cfg, changed: make(chan struct{}), docs: map[uri.URI]*doc{}, w: &lockedWriter{ReadWriteCloser: rwc}}
	e.state.Diagnostics = map[uri.URI][]protocol.Diagnostic{}
	e.state.Published = map[uri.URI]int{}
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewHeaderStream(e.w), jsonrpc2.WithCodec(codec{}))
	e.Server = protocol.ServerDispatcher(e.conn)
	// Synchronous: notifications (diagnostics, progress) are recorded in
	// the order the server sent them. handle never calls the server.
	e.conn.Go(ctx, e.handle)
	return e
}

// Close closes the connection (as an editor that quits or crashes).
func (e *Editor) Close() error {
	_ = e.w.Close()
	return e.conn.Close()
}

// Done is closed when the connection has ended.
func (e *Editor) Done() <-chan struct{} { return e.conn.Done() }

// WriteRaw writes bytes on the connection as they are (bad input tests).
func (e *Editor) WriteRaw(b []byte) error {
	_, err := e.w.Write(b)
	return err
}

// update changes the state and wakes waiters.
func (e *Editor) update(f func(s *State)) {
	e.mu.Lock()
	f(&e.state)
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// Snapshot is a copy of the state's maps and slices' headers (read-only).
func (e *Editor) Snapshot() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state
	s.Diagnostics = make(map[uri.URI][]protocol.Diagnostic, len(e.state.Diagnostics))
	for k, v := range e.state.Diagnostics {
		s.Diagnostics[k] = v
	}
	s.Published = make(map[uri.URI]int, len(e.state.Published))
	for k, v := range e.state.Published {
		s.Published[k] = v
	}
	return s
}

// Await waits until cond holds on the editor's state (checked after every
// event the server sends) or ctx ends.
func (e *Editor) Await(ctx context.Context, what string, cond func(s *State) bool) error {
	for {
		e.mu.Lock()
		ok := cond(&e.state)
		ch := e.changed
		e.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			st := e.Snapshot()
			var diag []string
			for u, ds := range st.Diagnostics {
				for _, d := range ds {
					diag = append(diag, fmt.Sprintf("%s:%d:%d %s", filepath.Base(string(u)), d.Range.Start.Line+1, d.Range.Start.Character+1, Message(d)))
				}
			}
			slices.Sort(diag)
			return fmt.Errorf("waiting for %s: %w\ndiagnostics now:\n  %s\nlast logs:\n  %s", what, ctx.Err(),
				strings.Join(diag, "\n  "), strings.Join(lastN(st.Logs, 15), "\n  "))
		}
	}
}

func lastN(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Message is a diagnostic's message text.
func Message(d protocol.Diagnostic) string {
	switch m := d.Message.(type) {
	case protocol.String:
		return string(m)
	case *protocol.MarkupContent:
		return m.Value
	}
	return fmt.Sprint(d.Message)
}

func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	// The connection decodes the method without copying it, into a buffer
	// it reuses: the Notifications kept beyond this call need a copy.
	method := strings.Clone(req.Method())
	params := json.RawMessage(append([]byte(nil), req.Params()...))
	switch method {
	case protocol.MethodTextDocumentPublishDiagnostics:
		var p protocol.PublishDiagnosticsParams
		if err := protocol.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		e.update(func(s *State) {
			s.Diagnostics[p.URI] = p.Diagnostics
			s.Published[p.URI]++
		})
	case protocol.MethodWindowWorkDoneProgressCreate:
		return nil, nil
	case protocol.MethodProgress:
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		tok := string(p.Token)
		e.update(func(s *State) {
			var pr *Progress
			for _, x := range s.Progress {
				if x.Token == tok && !x.Ended {
					pr = x
				}
			}
			switch p.Value.Kind {
			case "begin":
				s.Progress = append(s.Progress, &Progress{Token: tok, Title: p.Value.Title})
			case "report":
				if pr != nil {
					pr.Messages = append(pr.Messages, p.Value.Message)
				}
			case "end":
				if pr != nil {
					pr.Ended, pr.EndMsg = true, p.Value.Message
				}
			}
		})
	case protocol.MethodWindowLogMessage:
		var p protocol.LogMessageParams
		_ = protocol.Unmarshal(params, &p)
		e.update(func(s *State) { s.Logs = append(s.Logs, p.Message) })
	case protocol.MethodWindowShowMessage:
		var p protocol.ShowMessageParams
		_ = protocol.Unmarshal(params, &p)
		e.update(func(s *State) { s.Shown = append(s.Shown, p.Message) })
	case protocol.MethodClientRegisterCapability:
		var p protocol.RegistrationParams
		if err := protocol.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		e.update(func(s *State) { s.Registrations = append(s.Registrations, p.Registrations...) })
		return nil, nil
	case protocol.MethodWorkspaceConfiguration:
		var p protocol.ConfigurationParams
		_ = protocol.Unmarshal(params, &p)
		out := make([]json.RawMessage, len(p.Items))
		for i := range out {
			b, _ := json.Marshal(e.cfg.Configuration)
			out[i] = b
		}
		b, _ := json.Marshal(out)
		return jsonrpc2.RawMessage(b), nil
	case "dfd/previewChanged":
		e.update(func(s *State) { s.PreviewChanged = append(s.PreviewChanged, params) })
	}
	if !req.IsCall() {
		e.update(func(s *State) { s.Notifications = append(s.Notifications, Notification{method, params}) })
		return nil, nil
	}
	return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, "fake editor: "+method)
}

// Initialize sends initialize (with the capabilities of Config) and
// initialized, for workspace folders.
func (e *Editor) Initialize(ctx context.Context, folders ...string) (*protocol.InitializeResult, error) {
	yes := true
	caps := protocol.ClientCapabilities{
		Window:    &protocol.WindowClientCapabilities{},
		Workspace: &protocol.WorkspaceClientCapabilities{Configuration: &yes, WorkspaceFolders: &yes},
		TextDocument: &protocol.TextDocumentClientCapabilities{
			Hover: &protocol.HoverClientCapabilities{ContentFormat: []protocol.MarkupKind{protocol.MarkupKindMarkdown}},
		},
	}
	if !e.cfg.NoWorkDoneProgress {
		caps.Window.WorkDoneProgress = &yes
	}
	if !e.cfg.NoWatchFiles {
		caps.Workspace.DidChangeWatchedFiles = &protocol.DidChangeWatchedFilesClientCapabilities{DynamicRegistration: &yes, RelativePatternSupport: &yes}
	}
	if e.cfg.Capabilities != nil {
		e.cfg.Capabilities(&caps)
	}
	params := &protocol.InitializeParams{Capabilities: caps, ClientInfo: protocol.ClientInfo{Name: "fakeeditor"}}
	var wf []protocol.WorkspaceFolder
	for _, f := range folders {
		wf = append(wf, protocol.WorkspaceFolder{URI: uri.File(f), Name: filepath.Base(f)})
	}
	params.WorkspaceFolders = protocol.NewNullable(wf)
	if e.cfg.InitializationOptions != nil {
		b, err := json.Marshal(e.cfg.InitializationOptions)
		if err != nil {
			return nil, err
		}
		params.InitializationOptions = b
	}
	res, err := e.Server.Initialize(ctx, params)
	if err != nil {
		return nil, err
	}
	return res, e.Server.Initialized(ctx, &protocol.InitializedParams{})
}

// Shutdown and Exit end the session politely.
func (e *Editor) Shutdown(ctx context.Context) error { return e.Server.Shutdown(ctx) }
func (e *Editor) Exit(ctx context.Context) error     { return e.Server.Exit(ctx) }

func languageID(path string) protocol.LanguageKind {
	switch filepath.Ext(path) {
	case ".sqlx":
		return "sqlx"
	case ".js":
		return "javascript"
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	}
	return "sql"
}

// Open opens path with its content on disk.
func (e *Editor) Open(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return e.OpenText(ctx, path, string(b))
}

// OpenText opens path with text (which need not be on disk).
func (e *Editor) OpenText(ctx context.Context, path, text string) error {
	u := uri.File(path)
	e.mu.Lock()
	e.docs[u] = &doc{version: 1, text: text}
	e.mu.Unlock()
	return e.Server.DidOpen(ctx, &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
		URI: u, LanguageID: languageID(path), Version: 1, Text: text,
	}})
}

// Text is the editor's buffer of path.
func (e *Editor) Text(path string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.docs[uri.File(path)]; d != nil {
		return d.text
	}
	return ""
}

// SetText replaces the whole buffer.
func (e *Editor) SetText(ctx context.Context, path, text string) error {
	u := uri.File(path)
	e.mu.Lock()
	d := e.docs[u]
	if d == nil {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", path)
	}
	d.version++
	d.text = text
	v := d.version
	e.mu.Unlock()
	return e.Server.DidChange(ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument:   protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: v},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangeWholeDocument{Text: text}},
	})
}

// Replace replaces the first occurrence of old in the buffer with new, as
// an incremental edit (positions in UTF-16, as editors send them).
func (e *Editor) Replace(ctx context.Context, path, old, new string) error {
	u := uri.File(path)
	e.mu.Lock()
	d := e.docs[u]
	if d == nil {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open", path)
	}
	i := strings.Index(d.text, old)
	if i < 0 {
		e.mu.Unlock()
		return fmt.Errorf("%q not in %s", old, path)
	}
	start := PositionOf(d.text, i)
	end := PositionOf(d.text, i+len(old))
	d.text = d.text[:i] + new + d.text[i+len(old):]
	d.version++
	v := d.version
	e.mu.Unlock()
	return e.Server.DidChange(ctx, &protocol.DidChangeTextDocumentParams{
		TextDocument: protocol.VersionedTextDocumentIdentifier{TextDocumentIdentifier: protocol.TextDocumentIdentifier{URI: u}, Version: v},
		ContentChanges: []protocol.TextDocumentContentChangeEvent{&protocol.TextDocumentContentChangePartial{
			Range: protocol.Range{Start: start, End: end}, Text: new,
		}},
	})
}

// Save writes the buffer to disk and sends didSave.
func (e *Editor) Save(ctx context.Context, path string) error {
	if err := os.WriteFile(path, []byte(e.Text(path)), 0o644); err != nil {
		return err
	}
	return e.Server.DidSave(ctx, &protocol.DidSaveTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: uri.File(path)}})
}

// CloseFile sends didClose.
func (e *Editor) CloseFile(ctx context.Context, path string) error {
	u := uri.File(path)
	e.mu.Lock()
	delete(e.docs, u)
	e.mu.Unlock()
	return e.Server.DidClose(ctx, &protocol.DidCloseTextDocumentParams{TextDocument: protocol.TextDocumentIdentifier{URI: u}})
}

// FileEvent is a change on disk to report with Watched.
type FileEvent struct {
	Path string
	Type protocol.FileChangeType
}

// Watched reports changes made on disk outside the editor, as the
// editor's file watcher would.
func (e *Editor) Watched(ctx context.Context, events ...FileEvent) error {
	var ch []protocol.FileEvent
	for _, ev := range events {
		ch = append(ch, protocol.FileEvent{URI: uri.File(ev.Path), Type: ev.Type})
	}
	return e.Server.DidChangeWatchedFiles(ctx, &protocol.DidChangeWatchedFilesParams{Changes: ch})
}

// PositionOf is the LSP position (UTF-16) of byte offset i in text.
func PositionOf(text string, i int) protocol.Position {
	line := strings.Count(text[:i], "\n")
	start := strings.LastIndexByte(text[:i], '\n') + 1
	col := 0
	for _, r := range text[start:i] {
		if r >= 0x10000 {
			col += 2
		} else {
			col++
		}
	}
	return protocol.Position{Line: uint32(line), Character: uint32(col)}
}

// Pos is the position of the first occurrence of marker in path's buffer
// (or file on disk), plus delta bytes.
func (e *Editor) Pos(path, marker string, delta int) (protocol.Position, error) {
	text := e.Text(path)
	if text == "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return protocol.Position{}, err
		}
		text = string(b)
	}
	i := strings.Index(text, marker)
	if i < 0 {
		return protocol.Position{}, fmt.Errorf("%q not in %s", marker, path)
	}
	return PositionOf(text, i+delta), nil
}

// Call sends a request and decodes its result into result (JSON).
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	var raw json.RawMessage
	if err := protocol.Call(ctx, e.conn, method, params, &raw); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(raw, result)
}

// Notify sends a notification.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	return e.conn.Notify(ctx, method, params)
}
