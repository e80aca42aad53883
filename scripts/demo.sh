#!/usr/bin/env bash
# The main job on a fresh machine: build dfd and compile (and preview) the
# example project shipped in examples/clickstream. Its workflow_settings.yaml
# names dataformCoreVersion, so dfd installs that @dataform/core into its
# per-user cache with npm on the first run and reuses it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "demo: $1 is required ($2)" >&2; exit 1; }; }
need go "https://go.dev/dl, Go 1.26 or newer"
need node "Node.js 20 or newer, e.g. apt-get install nodejs"
need npm "npm, e.g. apt-get install npm"

mkdir -p bin
echo "==> building bin/dfd" >&2
go build -o bin/dfd ./cmd/dfd

project=examples/clickstream
echo "==> dfd compile $project" >&2
bin/dfd compile "$project"

echo "==> dfd compile $project --json (first lines)" >&2
bin/dfd compile "$project" --json | head -n 25
