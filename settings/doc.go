// Package settings is dfd's client settings: the Settings the server reads
// and Parse, which reads them from whatever shape a client sends.
//
// One table, settings.json, decides every setting: its key, type, default,
// range and documentation. `go generate ./settings` (command gen) writes
// from it the Settings type and its field table (settings_gen.go), the
// settings table of lsp/PROTOCOL.md, the VS Code extension's configuration
// contribution and the keys it sends (vscode-extension/package.json and
// src/settings_gen.ts), and the extension README's table; check.sh fails
// when any of them is stale. The LSP server parses settings here and hands
// them on without looking at what they configure (BigQuery, say).
//
// It imports nothing of dfd's.
package settings

//go:generate go run ./gen -root ..
