#!/usr/bin/env bash
# The main job on a fresh machine: build dfd and compile (and preview) the
# example project shipped in examples/clickstream. Its workflow_settings.yaml
# names dataformCoreVersion, so dfd installs that @dataform/core into its
# per-user cache with npm on the first run and reuses it afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null 2>&1 || { echo "demo: $1 is required ($2)" >&2; exit 1; }; }
[[ -n ${DFD_BINARY:-} ]] || need go "https://go.dev/dl, Go 1.26 or newer"
need node "Node.js 20 or newer, e.g. apt-get install nodejs"
need npm "npm, e.g. apt-get install npm"

# DFD_BINARY: run that dfd (a release binary: scripts/test.sh runs the demo
# with the one scripts/release.sh built) rather than building bin/dfd.
dfd=${DFD_BINARY:-bin/dfd}
if [[ -z ${DFD_BINARY:-} ]]; then
  mkdir -p bin
  echo "==> building bin/dfd (the first build compiles GoogleSQL, BigQuery's SQL front end: minutes on a small machine)" >&2
  # Pure Go; without cgo the build shares its cache with the test suite's.
  CGO_ENABLED=0 go build -o bin/dfd ./cmd/dfd
fi
echo "==> $("$dfd" version)" >&2

project=examples/clickstream
echo "==> dfd compile $project" >&2
"$dfd" compile "$project"

echo "==> dfd compile $project --json (first lines)" >&2
"$dfd" compile "$project" --json | head -n 25

# BigQuery's analyzer over every action's SQL, against the snapshot's
# schemas and the schemas the project's own actions produce.
echo "==> dfd check $project --metadata $project/metadata.json" >&2
"$dfd" check "$project" --metadata "$project/metadata.json"

echo "==> dfd format --check $project" >&2
"$dfd" format --check "$project"

# JiT actions produce their SQL only at run time; dfd previews it by running
# their jitCode in a warm worker, answering database calls from the
# project's offline metadata snapshot under the preview policy.
for action in daily_clicks click_sessions daily_clicks_volume; do
  echo "==> dfd jit $project --action $action --metadata $project/metadata.json" >&2
  "$dfd" jit "$project" --action "$action" --metadata "$project/metadata.json"
done
echo "==> dfd jit $project --action drop_stale_scratch_tables --execution-data (its deletes are refused in preview)" >&2
"$dfd" jit "$project" --action drop_stale_scratch_tables --metadata "$project/metadata.json" --execution-data
