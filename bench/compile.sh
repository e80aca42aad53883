#!/usr/bin/env bash
# compile.sh — wall time and peak memory of `dfd compile --json` against the
# official `dataform compile --json`, both as cold processes, on generated
# projects and the repository's fixtures. Writes bench/results/compile.md.
#
# Usage: bench/compile.sh
#
# Environment:
#   BENCH_RUNS   timed runs per tool and project (default 5)
#   BENCH_FULL   1 adds a 3000-action project
#   BENCH_SIZES  generated sizes, comma-separated (default 30,400,1000[,3000])
#   BENCH_JIT    1 (default) includes JiT actions in generated projects
#   BENCH_SEED   generator seed (default 1)
#   BENCH_OUT    the markdown file to write (default bench/results/compile.md)
#   BENCH_KEEP   1 keeps the scratch directory
#
# Method: each tool runs once untimed per project (warm-up of the page
# cache; its --json output is kept for the byte comparison), then K timed
# runs alternate between the tools, and which tool goes first alternates
# too, so that load from other processes hits both alike. Each run goes
# through bench/cmd/measure: wall time until the tool exits, CPU time (user +
# system) of all its processes, and peak RSS summed over its process tree.
# GNU time would miss the CLI's compile worker, which the CLI kills and never
# reaps. On a shared machine CPU time is the steadier figure: wall time also
# counts waiting for a CPU.
# Both tools get --timeout=10m so that big projects on a busy machine are
# measured rather than cut off (the default, 60 s, is the same in both).
set -euo pipefail
export LC_ALL=C # awk and sort must read "1.5" the same way everywhere

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
runs=${BENCH_RUNS:-5}
sizes=${BENCH_SIZES:-30,400,1000}
if [[ ${BENCH_FULL:-0} == 1 && -z ${BENCH_SIZES:-} ]]; then
  sizes+=",3000"
fi
jit=${BENCH_JIT:-1}
seed=${BENCH_SEED:-1}
out=${BENCH_OUT:-$repo/bench/results/compile.md}
core_version=3.0.62 # testenv.CoreVersion
cli_version=3.0.69  # testenv.CLIVersion

log() { printf 'compile.sh: %s\n' "$*" >&2; }
die() { printf 'compile.sh: error: %s\n' "$*" >&2; exit 1; }

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive number, got '$runs'"
[[ $(uname -s) == Linux ]] || die "bench/cmd/measure needs Linux (/proc, child subreapers)"
for t in go node npm awk cmp; do
  command -v "$t" >/dev/null || die "$t is needed"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/dfd-bench.XXXXXX")
if [[ ${BENCH_KEEP:-0} == 1 ]]; then
  log "keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi

log "building dfd, genproject and measure"
(cd "$repo" && go build -o "$work/bin/" ./cmd/dfd ./bench/cmd/genproject ./bench/cmd/measure) || die "go build failed"
dfd=$work/bin/dfd
cli_dir=$("$repo/tools/npm/ensure.sh" "@dataform/cli@$cli_version") || die "cannot install @dataform/cli@$cli_version"
core_dir=$("$repo/tools/npm/ensure.sh" "@dataform/core@$core_version") || die "cannot install @dataform/core@$core_version"
cli=$cli_dir/bundle.js

# add_core <project>: a copy, not a link; the CLI refuses modules whose real
# path leaves the project.
add_core() {
  mkdir -p "$1/node_modules/@dataform"
  cp -r "$core_dir" "$1/node_modules/@dataform/core"
}

projects=() # names; the directory is $work/projects/<name>
IFS=, read -r -a size_list <<<"$sizes"
for n in "${size_list[@]}"; do
  name=generated-$n
  flags=(-n "$n" -seed "$seed" -core "$core_version" -o "$work/projects/$name")
  [[ $jit == 1 ]] && flags+=(-jit)
  "$work/bin/genproject" "${flags[@]}" >&2 || die "generating $name failed"
  add_core "$work/projects/$name"
  projects+=("$name")
done
# Fixtures that compile cleanly with this core (testdata/README.md) and have a
# package.json. A dataformCoreVersion project makes the CLI run `npm i` on
# every compile, which would time npm and the network, not the compiler.
while read -r name; do
  [[ -f $repo/testdata/projects/$name/package.json ]] || continue
  cp -r "$repo/testdata/projects/$name" "$work/projects/$name"
  add_core "$work/projects/$name"
  projects+=("$name")
done < <(grep -E "^[a-z0-9_]+: cores=[0-9.,]*\b${core_version//./\\.}\b[0-9.,]* expect=ok" "$repo/testdata/README.md" | cut -d: -f1)

# run_tool <tool> <project> <stdout file>: runs one compile, appends
# "<wall s> <peak KiB> <cpu s>" to $work/runs/<project>.<tool>; returns its
# status.
run_tool() {
  local tool=$1 name=$2 stdout=$3 dir=$work/projects/$2 cmd rc
  case $tool in
    cli) cmd=(node "$cli" compile "$dir" --json --timeout=10m) ;;
    dfd) cmd=("$dfd" compile "$dir" --json --timeout=10m) ;;
  esac
  rc=0
  NO_COLOR=1 "$work/bin/measure" -o "$work/usage" -- "${cmd[@]}" >"$stdout" 2>"$work/stderr" || rc=$?
  if [[ $rc != 0 ]]; then
    log "$tool on $name exited $rc:"
    tail -n 20 "$work/stderr" >&2
    return "$rc"
  fi
  cat "$work/usage" >>"$work/runs/$name.$tool"
}

# stats <file> <column>: "median min max" of a column of numbers.
stats() {
  sort -n -k "$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
    END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s\n", m, v[1], v[NR] }'
}

# vm2, the CLI's sandbox, inserts this statement into every `catch (e)` of
# user code, and jitCode prints functions' source.
vm2_catch='[A-Za-z_$][A-Za-z0-9_$]*=VM2_INTERNAL_STATE_DO_NOT_USE_OR_PROGRAM_WILL_FAIL\.handleException\([A-Za-z_$][A-Za-z0-9_$]*\);'

# compare <cli json> <dfd json>: prints the verdict for the table.
compare() {
  if cmp -s "$1" "$2"; then
    echo "identical"
  elif cmp -s <(sed -E "s/$vm2_catch//g" "$1") "$2"; then
    echo "identical except vm2's catch rewrite in jitCode (expected)"
  else
    echo "**DIFFERENT**: $(cmp "$1" "$2" 2>&1 | sed 's/^.*differ: //' | head -n 1)"
  fi
}

mkdir -p "$work/runs" "$work/json"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for name in "${projects[@]}"; do
  log "$name: warm-up"
  run_tool cli "$name" "$work/json/$name.cli.json" || die "the official CLI failed on $name"
  run_tool dfd "$name" "$work/json/$name.dfd.json" || die "dfd failed on $name"
  # The warm-up's measurements are dropped.
  : >"$work/runs/$name.cli"
  : >"$work/runs/$name.dfd"
  for ((i = 1; i <= runs; i++)); do
    order=(cli dfd)
    ((i % 2 == 0)) && order=(dfd cli)
    for tool in "${order[@]}"; do
      run_tool "$tool" "$name" /dev/null || die "$tool failed on $name"
    done
    log "$name: run $i/$runs: cli $(tail -n 1 "$work/runs/$name.cli" | cut -d' ' -f1) s, dfd $(tail -n 1 "$work/runs/$name.dfd" | cut -d' ' -f1) s"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- report ----------------------------------------------------------------

count_actions() { # <compiled graph JSON>
  node -e 'const g = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const n = k => (g[k] || []).length;
    process.stdout.write(String(n("tables") + n("operations") + n("assertions") + n("declarations") + n("tests")));' "$1"
}
count_files() { # <project>: source files, as the compiler sees them
  find "$1" -path "$1/node_modules" -prune -o -type f \( -name '*.sqlx' -o -name '*.js' -o -name '*.sql' -o -name '*.yaml' \) -print | wc -l
}

cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
[[ -n $cpu ]] || cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git -C "$repo" status --porcelain 2>/dev/null | head -n 1) ]]; then
  commit+=" (with uncommitted changes)"
fi

mkdir -p "$(dirname "$out")"
{
  echo "# Compile benchmark: dfd vs the official Dataform CLI"
  echo
  echo "Generated by \`bench/compile.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'). Both tools run as cold processes:"
  echo "\`node @dataform/cli/bundle.js compile <dir> --json\` and \`dfd compile <dir> --json\`."
  echo "$runs timed runs per tool and project, alternating between the tools after one untimed warm-up run each."
  echo "Wall and CPU (user + system, all processes) times are medians, with min–max for wall, in seconds. Peak RSS is the"
  echo "median over runs of the peak resident memory summed over the tool's processes (the CLI runs a main process and a"
  echo "compile worker at once), sampled every 25 ms, and never below one process's own peak. Measured by"
  echo "\`bench/cmd/measure\`. On a shared machine the CPU times are the steadier comparison: wall time also counts"
  echo "waiting for a CPU."
  echo
  echo "| | |"
  echo "|---|---|"
  echo "| machine | $(nproc) CPUs, $cpu, $mem RAM, $(uname -sr) |"
  echo "| load average (1/5/15 min) | before: $load_before; after: $load_after |"
  echo "| dfd | $commit, $(go version | cut -d' ' -f3) |"
  echo "| official CLI | @dataform/cli $cli_version, node $(node --version) |"
  echo "| core | @dataform/core $core_version |"
  echo "| generated projects | \`bench/cmd/genproject -seed $seed$([[ $jit == 1 ]] && echo ' -jit')\` |"
  echo
  echo "| project | actions | files | CLI wall s | dfd wall s | CLI / dfd wall | CLI CPU s | dfd CPU s | CLI / dfd CPU | CLI peak RSS MB | dfd peak RSS MB | dfd --json vs CLI |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for name in "${projects[@]}"; do
    read -r cm cl ch < <(stats "$work/runs/$name.cli" 1)
    read -r dm dl dh < <(stats "$work/runs/$name.dfd" 1)
    read -r crss _ _ < <(stats "$work/runs/$name.cli" 2)
    read -r drss _ _ < <(stats "$work/runs/$name.dfd" 2)
    read -r ccpu _ _ < <(stats "$work/runs/$name.cli" 3)
    read -r dcpu _ _ < <(stats "$work/runs/$name.dfd" 3)
    awk -v n="$name" -v a="$(count_actions "$work/json/$name.cli.json")" -v f="$(count_files "$work/projects/$name")" \
      -v cm="$cm" -v cl="$cl" -v ch="$ch" -v dm="$dm" -v dl="$dl" -v dh="$dh" -v cr="$crss" -v dr="$drss" -v cc="$ccpu" -v dc="$dcpu" \
      -v cmp="$(compare "$work/json/$name.cli.json" "$work/json/$name.dfd.json")" \
      'BEGIN { printf "| %s | %d | %d | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.2f× | %.2f | %.2f | %.2f× | %.0f | %.0f | %s |\n",
        n, a, f, cm, cl, ch, dm, dl, dh, cm / dm, cc, dc, cc / dc, cr / 1024, dr / 1024, cmp }'
  done
  echo
  echo "CLI / dfd above 1 means dfd is faster or uses less CPU. Raw runs (wall s, peak KiB, CPU s), in the order they ran:"
  echo
  echo '```'
  for name in "${projects[@]}"; do
    printf '%-24s cli: %s\n' "$name" "$(tr '\n' ';' <"$work/runs/$name.cli" | sed 's/;$//; s/;/; /g')"
    printf '%-24s dfd: %s\n' "" "$(tr '\n' ';' <"$work/runs/$name.dfd" | sed 's/;$//; s/;/; /g')"
  done
  echo '```'
} >"$out"
log "wrote $out"
cat "$out"
