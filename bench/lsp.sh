#!/usr/bin/env bash
# LSP latency on a warm daemon, as the editor sees it: didSave → published
# diagnostics, and unsaved didChange → dfd/preview showing the edit (with
# the default debounce and with ~0), on the sqlx_warehouse fixture and a
# generated 1,000-action project, with compiles on `dfd worker` processes
# and in-process. Writes bench/results/lsp.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${BENCH_RUNS:-5}
bash tools/npm/ensure.sh @dataform/core@3.0.62 >/dev/null
mkdir -p bench/results
{
  echo "# bench/lsp.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3), node $(node --version)"
  go test ./daemon -run '^$' -bench LSPLatency -benchtime "${n}x" -timeout 60m
} | tee bench/results/lsp.txt
