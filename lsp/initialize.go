package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/dfdtools/dfd/settings"
	"github.com/dfdtools/dfd/source"
)

// Initialize implements protocol.Server.
func (s *Server) Initialize(ctx context.Context, params *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	caps := clientCaps{}
	c := params.Capabilities
	if c.Window != nil && c.Window.WorkDoneProgress != nil {
		caps.workDoneProgress = *c.Window.WorkDoneProgress
	}
	if w := c.Workspace; w != nil {
		if w.DidChangeWatchedFiles != nil {
			caps.watchFilesDynamic = w.DidChangeWatchedFiles.DynamicRegistration != nil && *w.DidChangeWatchedFiles.DynamicRegistration
			caps.watchRelativePattern = w.DidChangeWatchedFiles.RelativePatternSupport != nil && *w.DidChangeWatchedFiles.RelativePatternSupport
		}
		caps.configuration = w.Configuration != nil && *w.Configuration
		caps.codeLensRefresh = w.CodeLens != nil && w.CodeLens.RefreshSupport != nil && *w.CodeLens.RefreshSupport
		caps.edits = workspaceEditCaps(w.WorkspaceEdit)
	}
	if td := c.TextDocument; td != nil && td.Hover != nil {
		for _, k := range td.Hover.ContentFormat {
			if k == protocol.MarkupKindMarkdown {
				caps.markdownHover = true
			}
		}
	}

	var folders []string
	if wf, ok := params.WorkspaceFolders.Get(); ok {
		for _, f := range wf {
			if p := uriPath(f.URI); p != "" {
				folders = append(folders, p)
			}
		}
	}
	if len(folders) == 0 && params.RootURI != nil {
		if p := uriPath(*params.RootURI); p != "" {
			folders = append(folders, p)
		}
	}
	if len(folders) == 0 {
		if p, ok := params.RootPath.Get(); ok && p != "" {
			folders = append(folders, filepath.Clean(p))
		}
	}

	initial := settings.Defaults()
	if len(params.InitializationOptions) > 0 {
		initial, _ = settings.Parse(params.InitializationOptions, initial)
	}
	for i, f := range folders {
		folders[i] = canonicalPath(f)
	}

	s.mu.Lock()
	s.caps = caps
	s.initFolders = folders
	s.state = stateInitialized
	s.mu.Unlock()
	s.applyLogLevel(initial.LogLevel)
	s.settingsMu.Lock()
	if err := s.ws.Configure(initial); err != nil {
		s.log.Warn("dfd settings", "error", err)
	}
	s.settingsMu.Unlock()
	s.log.Info("initialized", "client", params.ClientInfo.Name, "folders", strings.Join(folders, ", "),
		"workDoneProgress", caps.workDoneProgress, "watchFiles", caps.watchFilesDynamic)

	yes := true
	incremental := protocol.TextDocumentSyncKindIncremental
	result := &protocol.InitializeResult{
		ServerInfo: protocol.ServerInfo{Name: s.opts.Name, Version: protocol.NewOptional(s.opts.Version)},
		Capabilities: protocol.ServerCapabilities{
			PositionEncoding: protocol.PositionEncodingKindUTF16,
			TextDocumentSync: &protocol.TextDocumentSyncOptions{
				OpenClose: &yes,
				Change:    &incremental,
				Save:      &protocol.SaveOptions{},
			},
			HoverProvider:           protocol.Boolean(true),
			DefinitionProvider:      protocol.Boolean(true),
			ReferencesProvider:      protocol.Boolean(true),
			DocumentSymbolProvider:  protocol.Boolean(true),
			WorkspaceSymbolProvider: protocol.Boolean(true),
			CompletionProvider: &protocol.CompletionOptions{
				TriggerCharacters: []string{`"`, "'", "`", "(", "."},
			},
			CodeLensProvider: &protocol.CodeLensOptions{},
			RenameProvider:   &protocol.RenameOptions{PrepareProvider: &yes},
			CodeActionProvider: &protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, protocol.CodeActionKindRefactorRewrite},
			},
			DocumentLinkProvider: &protocol.DocumentLinkOptions{},
			FoldingRangeProvider: protocol.Boolean(true),
			SemanticTokensProvider: &protocol.SemanticTokensOptions{
				Legend: semanticLegend,
				Range:  protocol.Boolean(true),
				Full:   protocol.Boolean(true),
			},
			SignatureHelpProvider: &protocol.SignatureHelpOptions{
				TriggerCharacters: []string{"(", ","},
			},
			InlayHintProvider:               protocol.Boolean(true),
			DocumentFormattingProvider:      protocol.Boolean(true),
			DocumentRangeFormattingProvider: protocol.Boolean(true),
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported:           &yes,
					ChangeNotifications: protocol.Boolean(true),
				},
			},
			Experimental: mustJSON(s.experimentalCapabilities()),
		},
	}
	return result, nil
}

// Initialized implements protocol.Server: now the server may call the
// client, so file watching is registered and projects are discovered.
func (s *Server) Initialized(ctx context.Context, _ *protocol.InitializedParams) error {
	s.goBackground(func(ctx context.Context) {
		s.registerWatchers(ctx)
		if s.capabilities().configuration {
			s.pullConfiguration(ctx, s.settingsGen.Add(1))
		}
	})
	s.mu.Lock()
	folders := s.initFolders
	s.initFolders = nil
	s.mu.Unlock()
	s.ws.SetFolders(folders)
	return nil
}

// capabilities are the client capabilities from initialize.
func (s *Server) capabilities() clientCaps {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// registerWatchers asks the client to report changes to project files made
// outside the editor (git checkouts, generators, renames in a terminal).
func (s *Server) registerWatchers(ctx context.Context) {
	caps := s.capabilities()
	if !caps.watchFilesDynamic {
		s.log.Info("the client cannot watch files for dfd: changes made outside the editor are seen on the next save")
		return
	}
	glob := watchGlob()
	folders := s.ws.Folders()
	var watchers []protocol.FileSystemWatcher
	if caps.watchRelativePattern && len(folders) > 0 {
		for _, f := range folders {
			watchers = append(watchers, protocol.FileSystemWatcher{GlobPattern: &protocol.RelativePattern{
				BaseURI: protocol.URI(uri.File(f)), Pattern: protocol.Pattern(glob),
			}})
		}
	} else {
		watchers = append(watchers, protocol.FileSystemWatcher{GlobPattern: protocol.Pattern(glob)})
	}
	opts, err := protocol.Marshal(&protocol.DidChangeWatchedFilesRegistrationOptions{Watchers: watchers})
	if err != nil {
		s.log.Error("encoding file watchers", "error", err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = s.client.RegisterCapability(ctx, &protocol.RegistrationParams{Registrations: []protocol.Registration{{
		ID: "dfd-watch-files", Method: protocol.MethodWorkspaceDidChangeWatchedFiles, RegisterOptions: opts,
	}}})
	if err != nil {
		s.log.Warn("the client refused to watch files for dfd", "error", err)
	}
}

// watchGlob matches the files a compile reads (source.ProjectFileExtensions):
// "**/*.{js,sql,sqlx,yaml,yml,json,ipynb}".
func watchGlob() string {
	exts := make([]string, len(source.ProjectFileExtensions))
	for i, e := range source.ProjectFileExtensions {
		exts[i] = strings.TrimPrefix(e, ".")
	}
	return "**/*.{" + strings.Join(exts, ",") + "}"
}

// parseLogLevel reads dfd.logLevel.
func parseLogLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "error":
		return slog.LevelError, true
	case "warn", "warning":
		return slog.LevelWarn, true
	case "info":
		return slog.LevelInfo, true
	case "debug":
		return slog.LevelDebug, true
	}
	return 0, false
}

// DidChangeConfiguration implements protocol.Server.
func (s *Server) DidChangeConfiguration(ctx context.Context, params *protocol.DidChangeConfigurationParams) error {
	raw := []byte(params.Settings)
	if !settings.Has(raw) {
		// Pull model (VS Code sends null and expects workspace/configuration).
		if s.capabilities().configuration {
			gen := s.settingsGen.Add(1)
			s.goBackground(func(ctx context.Context) { s.pullConfiguration(ctx, gen) })
		}
		return nil
	}
	s.applySettings(s.settingsGen.Add(1), raw)
	return nil
}

func (s *Server) currentSettings() settings.Settings { return s.ws.Settings() }

// pullConfiguration asks the client for section "dfd" and applies it,
// unless newer settings were pushed or pulled meanwhile (gen).
func (s *Server) pullConfiguration(ctx context.Context, gen int64) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	section := "dfd"
	items, err := s.client.Configuration(ctx, &protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: &section}}})
	if err != nil || len(items) == 0 || len(items[0]) == 0 || string(items[0]) == "null" {
		return
	}
	s.applySettings(gen, items[0])
}

// applySettings applies a settings payload on top of the current settings.
// Payloads apply in the order they were asked for (gen): a pulled answer
// that arrives after a newer push is dropped, so that settings never go
// back to an older state.
func (s *Server) applySettings(gen int64, raw []byte) {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	if gen < s.settingsApplied {
		s.log.Debug("dropping settings older than those applied", "generation", gen, "applied", s.settingsApplied)
		return
	}
	s.settingsApplied = gen
	prev := s.ws.Settings()
	next, _ := settings.Parse(raw, prev)
	if next == prev {
		return
	}
	s.applyLogLevel(next.LogLevel)
	s.log.Info("settings changed", "settings", fmt.Sprintf("%+v", next))
	previews := previewSettingsChanged(prev, next)
	if err := s.ws.Configure(next); err != nil {
		s.log.Warn("dfd settings", "error", err)
		if previews { // not again for a change of the log level, say
			s.showMessage(protocol.MessageTypeWarning, "dfd: "+err.Error())
		}
	}
	if previews {
		// Previews depend on the metadata source and the JiT settings:
		// drop cached JiT results and tell clients to refresh.
		s.ws.RefreshPreviews()
	}
}

// previewSettingsChanged reports whether a settings change may change JiT
// previews (not only the log level, the debounce or when to compile).
func previewSettingsChanged(prev, next settings.Settings) bool {
	prev.LogLevel, next.LogLevel = "", ""
	prev.Debounce, next.Debounce = 0, 0
	prev.CompileAsYouType, next.CompileAsYouType = false, false
	return prev != next
}

func (s *Server) showMessage(t protocol.MessageType, msg string) {
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: t, Message: msg})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// uriPath is the file path of a file: URI ("" for other schemes).
func uriPath(u uri.URI) string {
	if !strings.HasPrefix(string(u), "file:") {
		return ""
	}
	p := u.FsPath()
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}
