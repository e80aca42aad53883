package lsp

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sort"
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
	s.applyLogLevel(settings.LogLevel)
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
				"dfd": map[string]any{"preview": true, "graph": true, "previewChanged": true, "status": true, "refreshMetadata": true, "protocol": "lsp/PROTOCOL.md"},
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
// object itself, the flat VS Code form {"dfd.metadata.snapshot": …} and
// mixtures ({"metadata": {…}, "bigquery.endpoint": …}). Keys that are
// absent keep their current value; null resets a setting to its default;
// values of the wrong type or out of range are ignored.
func parseSettings(raw []byte, cur Settings) Settings {
	vals, ok := settingValues(raw)
	if !ok {
		return cur
	}
	str := func(key string, dst *string) {
		if r, ok := vals[key]; ok {
			var v *string
			if json.Unmarshal(r, &v) == nil {
				*dst = ""
				if v != nil {
					*dst = *v
				}
			}
		}
	}
	// num reads a number; null gives (0, true).
	num := func(key string) (float64, bool) {
		r, ok := vals[key]
		if !ok {
			return 0, false
		}
		var v *float64
		if json.Unmarshal(r, &v) != nil {
			return 0, false
		}
		if v == nil {
			return 0, true
		}
		return *v, true
	}
	str("metadata.snapshot", &cur.MetadataSnapshot)
	str("metadata.source", &cur.MetadataSource)
	str("bigquery.endpoint", &cur.BigQueryEndpoint)
	str("bigquery.credentials", &cur.BigQueryCredentials)
	if v, ok := num("debounceMs"); ok && v >= 0 {
		cur.Debounce = time.Duration(v * float64(time.Millisecond))
	}
	if v, ok := num("jit.timeoutMs"); ok && v >= 0 {
		if v > 0 {
			cur.JitTimeout = time.Duration(v * float64(time.Millisecond))
		} else if string(vals["jit.timeoutMs"]) == "null" {
			cur.JitTimeout = 0
		}
	}
	if v, ok := num("preview.maxBytesBilled"); ok && v >= 0 && v <= 1<<62 {
		cur.PreviewMaxBytesBilled = int64(v)
	}
	if r, ok := vals["preview.unlimitedBytesBilled"]; ok {
		var v *bool
		if json.Unmarshal(r, &v) == nil {
			cur.PreviewUnlimitedBytesBilled = v != nil && *v
		}
	}
	if r, ok := vals["compileAsYouType"]; ok {
		var v *bool
		if json.Unmarshal(r, &v) == nil {
			cur.ManualCompile = v != nil && !*v
		}
	}
	if r, ok := vals["logLevel"]; ok {
		var v *string
		if json.Unmarshal(r, &v) == nil {
			switch {
			case v == nil || *v == "":
				cur.LogLevel = ""
			default:
				if _, ok := parseLogLevel(*v); ok {
					cur.LogLevel = strings.ToLower(strings.TrimSpace(*v))
				}
			}
		}
	}
	return cur
}

// settingKeys are the keys parseSettings knows, without "dfd.".
var settingKeys = map[string]bool{
	"metadata.snapshot": true, "metadata.source": true,
	"bigquery.endpoint": true, "bigquery.credentials": true,
	"debounceMs": true, "jit.timeoutMs": true, "preview.maxBytesBilled": true, "preview.unlimitedBytesBilled": true,
	"compileAsYouType": true, "logLevel": true,
}

// settingValues flattens a settings payload into its dotted keys without
// "dfd." ("metadata.snapshot" → raw value). Nested objects are read first,
// then flat keys, which win.
func settingValues(raw []byte) (map[string]json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || top == nil {
		return nil, false
	}
	if inner, ok := top["dfd"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(inner, &m) == nil && m != nil {
			top = m
		}
	}
	out := map[string]json.RawMessage{}
	var walk func(prefix string, m map[string]json.RawMessage, depth int)
	walk = func(prefix string, m map[string]json.RawMessage, depth int) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		// Objects and plain keys before dotted ones, so that flat keys win.
		sort.Slice(keys, func(i, j int) bool {
			di, dj := strings.Contains(keys[i], "."), strings.Contains(keys[j], ".")
			if di != dj {
				return !di
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			name := prefix + strings.TrimPrefix(k, "dfd.")
			if settingKeys[name] {
				out[name] = m[k]
				continue
			}
			var sub map[string]json.RawMessage
			if depth < 3 && json.Unmarshal(m[k], &sub) == nil && sub != nil {
				walk(name+".", sub, depth+1)
			}
		}
	}
	walk("", top, 0)
	return out, true
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
	if !hasSettings(raw) {
		// Pull model (VS Code sends null and expects workspace/configuration).
		if s.capabilities().configuration {
			s.goBackground(s.pullConfiguration)
		}
		return nil
	}
	s.applySettings(parseSettings(raw, s.currentSettings()))
	return nil
}

// hasSettings reports whether a didChangeConfiguration payload carries
// dfd settings (else the client expects them to be pulled).
func hasSettings(raw []byte) bool {
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	vals, ok := settingValues(raw)
	return ok && len(vals) > 0
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
	prev := s.settings
	s.settings = next
	s.mu.Unlock()
	if next == prev {
		return
	}
	s.applyLogLevel(next.LogLevel)
	s.log.Info("settings changed", "metadata.snapshot", next.MetadataSnapshot, "metadata.source", next.MetadataSource,
		"bigquery.endpoint", next.BigQueryEndpoint, "bigquery.credentials", next.BigQueryCredentials,
		"jit.timeoutMs", next.JitTimeout.Milliseconds(), "preview.maxBytesBilled", next.PreviewMaxBytesBilled,
		"preview.unlimitedBytesBilled", next.PreviewUnlimitedBytesBilled, "compileAsYouType", !next.ManualCompile, "logLevel", next.LogLevel)
	if prev.ManualCompile && !next.ManualCompile {
		// Compiling as you type again: compile the edits held back.
		for _, p := range s.projects.all() {
			p.flushDeferred()
		}
	}
	previews := previewSettingsChanged(prev, next)
	if err := s.backend.Configure(next); err != nil {
		s.log.Warn("dfd settings", "error", err)
		if previews { // not again for a change of the log level, say
			s.showMessage(protocol.MessageTypeWarning, "dfd: "+err.Error())
		}
	}
	if !previews {
		return
	}
	// Previews depend on the metadata source and the JiT settings: drop
	// cached JiT results and tell clients to refresh.
	s.refreshPreviews(s.projects.all())
}

// previewSettingsChanged reports whether a settings change may change JiT
// previews (not only the log level, the debounce or when to compile).
func previewSettingsChanged(prev, next Settings) bool {
	prev.LogLevel, next.LogLevel = "", ""
	prev.Debounce, next.Debounce = 0, 0
	prev.ManualCompile, next.ManualCompile = false, false
	return prev != next
}

// refreshPreviews drops the cached JiT results of projects and sends
// dfd/previewChanged for each, so that clients ask for previews again.
func (s *Server) refreshPreviews(ps []*projectState) {
	for _, p := range ps {
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
