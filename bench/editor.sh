#!/usr/bin/env bash
# editor.sh — what an editor waits for on a warm `dfd serve` (bench/cmd/lspbench
# drives the real binary over stdio):
#
#   1. edit → diagnostics with the server's defaults (no settings sent: the
#      adaptive debounce, --engine=auto), from didChange to the
#      publishDiagnostics that shows it, on generated projects: an edit after
#      a pause, and the last keystroke of a burst of typing
#      (lspbench -mode diagnostics);
#   2. hover, definition, column completion, documentSymbol and
#      workspace/symbol on a 2 MB unsaved .sqlx buffer, plus a hover on
#      another file, all sent at once while a compile of the buffer runs
#      (Node.js engine), and again after it (lspbench -mode requests).
#
# Writes bench/results/editor.md; bench/run.sh runs it too and includes its
# tables in bench.md.
#
# Usage: bench/editor.sh
#
# Environment:
#   BENCH_EDITOR_RUNS     edits per project (section 1) and request rounds (section 2) (default 20)
#   BENCH_SIZES           generated sizes of section 1, comma-separated (default 30,400,1000,3000,10000)
#   BENCH_REQUESTS_SIZE   the generated project of section 2 (default 400; empty: skip section 2)
#   BENCH_REQUESTS_ENGINE its engine (default node)
#   BENCH_BIG_BYTES       size of its .sqlx buffer (default 2097152)
#   BENCH_SEED            generator seed (default 1)
#   BENCH_DFD             a dfd binary to measure instead of building one
#   BENCH_OUT             the markdown file to write (default bench/results/editor.md)
#   EDITOR_BENCH_WORK     a scratch directory that already has bin/{lspbench,genproject} (and bin/dfd
#                         unless BENCH_DFD is set); its projects/generated-<N> are used, the missing
#                         ones generated (bench/run.sh passes its own)
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
runs=${BENCH_EDITOR_RUNS:-20}
sizes=${BENCH_SIZES-30,400,1000,3000,10000}
req_size=${BENCH_REQUESTS_SIZE-400}
req_engine=${BENCH_REQUESTS_ENGINE:-node}
big_bytes=${BENCH_BIG_BYTES:-2097152}
seed=${BENCH_SEED:-1}
out=${BENCH_OUT:-$repo/bench/results/editor.md}
core_version=3.0.62 # testenv.CoreVersion

log() { printf 'editor bench: %s\n' "$*" >&2; }
die() { printf 'editor bench: error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. "$repo/bench/lib.sh"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_EDITOR_RUNS must be a positive number, got '$runs'"
[[ $(uname -s) == Linux ]] || die "lspbench needs Linux"
for t in go node; do
  command -v "$t" >/dev/null || die "$t is needed"
done

work=${EDITOR_BENCH_WORK:-}
if [[ -z $work ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/dfd-editor-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  log "building lspbench and genproject"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$work/bin/" ./bench/cmd/lspbench ./bench/cmd/genproject) || die "go build failed"
  if [[ -z ${BENCH_DFD:-} ]]; then
    log "building dfd"
    (cd "$repo" && CGO_ENABLED=0 go build -o "$work/bin/dfd" ./cmd/dfd) || die "go build failed"
  fi
fi
dfd=$work/bin/dfd
if [[ -n ${BENCH_DFD:-} ]]; then
  dfd=$(cd "$(dirname "$BENCH_DFD")" && pwd -P)/$(basename "$BENCH_DFD")
fi
core_dir=$("$repo/tools/npm/ensure.sh" "@dataform/core@$core_version") || die "cannot install @dataform/core@$core_version"
all=$sizes
[[ -n $req_size ]] && all+=",$req_size"
IFS=, read -r -a gen <<<"$all"
for n in "${gen[@]}"; do
  [[ -z $n || -d $work/projects/generated-$n ]] && continue
  "$work/bin/genproject" -n "$n" -seed "$seed" -core "$core_version" -jit -o "$work/projects/generated-$n" >&2 || die "generating generated-$n failed"
  mkdir -p "$work/projects/generated-$n/node_modules/@dataform"
  cp -r "$core_dir" "$work/projects/generated-$n/node_modules/@dataform/core"
done
mkdir -p "$work/editor"

count_files() { # <project>: source files, as the compiler sees them
  find "$1" -path "$1/node_modules" -prune -o -type f \( -name '*.sqlx' -o -name '*.js' -o -name '*.sql' -o -name '*.yaml' \) -print | wc -l
}

IFS=, read -r -a size_list <<<"$sizes"
# The tree dfd was built from (edits made while the bench runs are not in it).
commit=$(bench_commit)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for n in "${size_list[@]}"; do
  [[ -z $n ]] && continue
  log "generated-$n: edit → diagnostics on the defaults, $runs edits after a pause and $runs bursts"
  "$work/bin/lspbench" -mode diagnostics -dfd "$dfd" -project "$work/projects/generated-$n" -runs "$runs" \
    >"$work/editor/diag-$n.json" || die "lspbench -mode diagnostics failed on generated-$n"
done
if [[ -n $req_size ]]; then
  log "generated-$req_size: requests on a $big_bytes-byte .sqlx ($req_engine engine), $runs rounds"
  "$work/bin/lspbench" -mode requests -dfd "$dfd" -project "$work/projects/generated-$req_size" -runs "$runs" \
    -big-sqlx-bytes "$big_bytes" -serve-args "--engine=$req_engine" >"$work/editor/requests.json" ||
    die "lspbench -mode requests failed"
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

mkdir -p "$(dirname "$out")"
{
  echo "## Editor latency on a warm daemon"
  echo
  echo "Generated by \`bench/editor.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): $(nproc) CPUs, load average before $load_before,"
  echo "after $load_after; dfd $commit; \`bench/cmd/genproject -seed $seed -jit\` projects."
  echo
  echo "**Edit → diagnostics, on the defaults** (\`lspbench -mode diagnostics\`): no settings sent (the adaptive debounce,"
  echo "150 ms or half the last compile's time if less; incremental compiles; \`--engine=auto\`: Node.js when node ≥ 20 is"
  echo "installed, unless a multi-megabyte .sqlx makes goja faster), an incremental didChange of one open .sqlx file that"
  echo "adds or removes an unknown config property, until the publishDiagnostics that shows it; \"after a pause\": 300 ms"
  echo "after the previous result; \"typing\": the last of 5 keystrokes 60 ms apart. $runs of each, after 5 untimed edits"
  echo "(an incremental daemon's learning ones) and one untimed burst; milliseconds, p50 (p95)."
  echo
  echo "| project | files | after a pause p50 (p95) | typing p50 (p95) |"
  echo "|---|---:|---:|---:|"
  for n in "${size_list[@]}"; do
    [[ -z $n ]] && continue
    node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const f = p => `${p.p50.toFixed(0)} (${p.p95.toFixed(0)})`;
      process.stdout.write(`| generated-${process.argv[2]} | ${process.argv[3]} | ${f(r.afterPause)} | ${f(r.typing)} |\n`);
    ' "$work/editor/diag-$n.json" "$n" "$(count_files "$work/projects/generated-$n")"
  done
  if [[ -n $req_size ]]; then
    echo
    echo "**Read-only requests on a 2 MB .sqlx** (\`lspbench -mode requests\`, generated-$req_size, \`--engine=$req_engine\`):"
    echo "an unsaved buffer of $big_bytes bytes, edited each round; once the compile of the edit has started, every"
    echo "request below is sent at once (hover and definition on its last ref, column completion after \`src.\`,"
    echo "documentSymbol, workspace/symbol with an empty query, a hover on another file); then again after the compile."
    echo "$runs rounds after one untimed; milliseconds from request to answer."
    echo
    node -e '
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const med = a => { const v = [...a].sort((x, y) => x - y); const n = v.length; return n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; };
      const names = { hover: "hover", definition: "definition", completion: "completion (columns)", documentSymbol: "documentSymbol",
        workspaceSymbol: "workspace/symbol", hoverOtherFile: "hover on another file" };
      let s = `| request | while compiling p50 | p95 | idle p50 | p95 |\n|---|---:|---:|---:|---:|\n`;
      for (const k of Object.keys(names)) {
        const b = r.busyStats[k], i = r.idleStats[k];
        s += `| ${names[k]} | ${b.p50.toFixed(1)} | ${b.p95.toFixed(1)} | ${i.p50.toFixed(1)} | ${i.p95.toFixed(1)} |\n`;
      }
      s += `\nThe compile ran through the last answer in ${r.stillCompiling} of ${r.busy.hover.length} rounds; it took ` +
        `${med(r.compileMs).toFixed(0)} ms (median, the daemon\x27s compileMs).\n`;
      process.stdout.write(s);
    ' "$work/editor/requests.json"
  fi
} >"$out"
log "wrote $out"
cat "$out"
