package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
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

	settings := Settings{}
	if len(params.InitializationOptions) > 0 {
		settings = parseSettings(params.InitializationOptions, settings)
	}

	s.mu.Lock()
	s.caps = caps
	s.folders = folders
	s.settings = settings
	s.state = stateInitialized
	s.mu.Unlock()
	if err := s.backend.Configure(settings); err != nil {
		s.log.Warn("dfd settings", "error", err)
	}
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
			Workspace: &protocol.WorkspaceOptions{
				WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
					Supported:           &yes,
					ChangeNotifications: protocol.Boolean(true),
				},
			},
			Experimental: mustJSON(map[string]any{
				"dfd": map[string]any{"preview": true, "graph": true, "previewChanged": true, "protocol": "lsp/PROTOCOL.md"},
			}),
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
			s.pullConfiguration(ctx)
		}
	})
	s.mu.Lock()
	folders := append([]string(nil), s.folders...)
	s.mu.Unlock()
	for _, f := range folders {
		s.addFolder(f)
	}
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
	const glob = "**/*.{sqlx,js,sql,yaml,json}"
	s.mu.Lock()
	folders := append([]string(nil), s.folders...)
	s.mu.Unlock()
	var watchers []protocol.FileSystemWatcher
	if caps.watchRelativePattern && len(folders) > 0 {
		for _, f := range folders {
			watchers = append(watchers, protocol.FileSystemWatcher{GlobPattern: &protocol.RelativePattern{
				BaseURI: protocol.URI(uri.File(f)), Pattern: glob,
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

// parseSettings reads dfd's settings from initializationOptions or a
// didChangeConfiguration payload. It accepts {"dfd": {...}}, the inner
// object itself, and the flat VS Code form {"dfd.metadata.snapshot": …}.
func parseSettings(raw []byte, cur Settings) Settings {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return cur
	}
	if inner, ok := top["dfd"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(inner, &m) == nil {
			top = m
		}
	}
	var cfg struct {
		Metadata struct {
			Snapshot *string `json:"snapshot"`
			Source   *string `json:"source"`
		} `json:"metadata"`
		BigQuery struct {
			Endpoint    *string `json:"endpoint"`
			Credentials *string `json:"credentials"`
		} `json:"bigquery"`
		DebounceMs *int `json:"debounceMs"`
	}
	if b, err := json.Marshal(top); err == nil {
		_ = json.Unmarshal(b, &cfg)
	}
	if cfg.Metadata.Snapshot != nil {
		cur.MetadataSnapshot = *cfg.Metadata.Snapshot
	}
	if cfg.Metadata.Source != nil {
		cur.MetadataSource = *cfg.Metadata.Source
	}
	if cfg.BigQuery.Endpoint != nil {
		cur.BigQueryEndpoint = *cfg.BigQuery.Endpoint
	}
	if cfg.BigQuery.Credentials != nil {
		cur.BigQueryCredentials = *cfg.BigQuery.Credentials
	}
	if cfg.DebounceMs != nil && *cfg.DebounceMs >= 0 {
		cur.Debounce = time.Duration(*cfg.DebounceMs) * time.Millisecond
	}
	for k, dst := range map[string]*string{
		"metadata.snapshot": &cur.MetadataSnapshot, "metadata.source": &cur.MetadataSource,
		"bigquery.endpoint": &cur.BigQueryEndpoint, "bigquery.credentials": &cur.BigQueryCredentials,
	} {
		for _, key := range []string{"dfd." + k, k} {
			var v string
			if raw, ok := top[key]; ok && json.Unmarshal(raw, &v) == nil {
				*dst = v
			}
		}
	}
	return cur
}

// DidChangeConfiguration implements protocol.Server.
func (s *Server) DidChangeConfiguration(ctx context.Context, params *protocol.DidChangeConfigurationParams) error {
	raw := []byte(params.Settings)
	if len(raw) == 0 || string(raw) == "null" || !strings.Contains(string(raw), "dfd") && !strings.Contains(string(raw), "metadata") && !strings.Contains(string(raw), "bigquery") {
		// Pull model (VS Code sends null and expects workspace/configuration).
		if s.capabilities().configuration {
			s.goBackground(s.pullConfiguration)
		}
		return nil
	}
	s.applySettings(parseSettings(raw, s.currentSettings()))
	return nil
}

func (s *Server) currentSettings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

func (s *Server) pullConfiguration(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	section := "dfd"
	items, err := s.client.Configuration(ctx, &protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: &section}}})
	if err != nil || len(items) == 0 || len(items[0]) == 0 || string(items[0]) == "null" {
		return
	}
	s.applySettings(parseSettings(items[0], s.currentSettings()))
}

func (s *Server) applySettings(next Settings) {
	s.mu.Lock()
	changed := next != s.settings
	s.settings = next
	s.mu.Unlock()
	if !changed {
		return
	}
	s.log.Info("settings changed", "metadata.snapshot", next.MetadataSnapshot, "metadata.source", next.MetadataSource,
		"bigquery.endpoint", next.BigQueryEndpoint, "bigquery.credentials", next.BigQueryCredentials)
	if err := s.backend.Configure(next); err != nil {
		s.log.Warn("dfd settings", "error", err)
		s.showMessage(protocol.MessageTypeWarning, "dfd: "+err.Error())
	}
	// Previews depend on the metadata snapshot: drop cached JiT results
	// and tell clients to refresh.
	for _, p := range s.projects.all() {
		if snap := p.latest(); snap != nil {
			snap.dropJitCache()
			s.notifyPreviewChanged(p, snap)
		}
	}
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
