#!/usr/bin/env bash
# Fails (exit 1) when vscode-extension/src/protocol_gen.ts — the TypeScript
# types of dfd's custom requests — is stale against the Go types of package
# lsp. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
go run ./lsp/gen -check
echo "lsp/check.sh: vscode-extension/src/protocol_gen.ts is up to date" >&2
