#!/usr/bin/env bash
# Fails (exit 1) when a file generated from settings/settings.json is stale:
# settings/settings_gen.go, the settings tables of lsp/PROTOCOL.md,
# vscode-extension/README.md and docs/editors.md, vscode-extension/package.json's configuration and
# vscode-extension/src/settings_gen.ts. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
go run ./settings/gen -check
echo "settings/check.sh: generated settings files are up to date" >&2
