#!/usr/bin/env bash
# JiT preview latency, side by side in one run: dfd's warm worker through the
# real pipe (0 and 3 adapter calls), a cold dfd worker, and the official
# CLI's way on the same requests and adapter answers — a fresh Node process
# running core's jitCompiler, and the CLI's own vm2 JiT worker process, which
# `dataform run` starts for every JiT action. Writes bench/results/jit.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${BENCH_RUNS:-20}
bash tools/npm/ensure.sh @dataform/cli@3.0.69 >/dev/null
bash tools/npm/ensure.sh @dataform/core@3.0.62 >/dev/null
mkdir -p bench/results
{
  echo "# bench/jit.sh $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3), node $(node --version)"
  go test ./jit -run '^$' -bench 'JitWarm|JitCLIWay|WorkerColdStart' -benchtime "${n}x"
} | tee bench/results/jit.txt
