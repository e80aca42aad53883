// Package lsp is dfd's language server: LSP 3.17 over JSON-RPC
// (go.lsp.dev/jsonrpc2 and protocol v1.0.1) with an ordered handler chain
// (handler.go; read-only requests leave it once they have read their
// document and snapshot, files.go), a framing reader that survives bad
// input (stream.go), and
// one file per feature — text sync, diagnostics, hover, definition,
// references, completion, symbols, code lenses, the custom dfd/* requests
// (custom.go, status.go; documented in PROTOCOL.md).
//
// What is open and compiled is the workspace's (package workspace): the
// server records edits there, turns the workspace's events into
// notifications, and answers requests from its snapshots. It knows no
// engine, protobuf or BigQuery, and no setting but the log level: settings
// are parsed by package settings and handed to the workspace.
//
// It imports workspace, source and settings of dfd's packages
// (internal/layers checks it).
package lsp
