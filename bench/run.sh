#!/usr/bin/env bash
# run.sh — dfd side by side with the official Dataform CLI, in one run:
#
#   1. cold processes: `dataform compile --json` (npm @dataform/cli) vs
#      `dfd compile --json`, alternating, on generated projects of 30, 400,
#      1,000 and 3,000 actions, on small projects with one big .sqlx file
#      (2 MB and 10 MB; dfd with --engine=auto, goja and node), on the real
#      public projects of testdata/realprojects (also each engine) and on the
#      repository's clean fixtures, with a byte comparison of the two --json
#      outputs;
#   2. the warm daemon as an editor sees it (bench/cmd/lspbench drives the real
#      `dfd serve` over stdio): recompile after an unsaved edit of one .sqlx
#      file (the big one in the big-sqlx projects), and after an edit of an
#      includes/ file, per engine; peak RSS of the daemon plus its workers;
#   3. JiT preview latency on a warm worker (0 and 3 adapter calls) vs the
#      CLI's way on the same requests: a fresh Node process with core's
#      jitCompiler, and the CLI's own vm2 JiT worker (go test ./jit -bench);
#   4. what an editor waits for on the warm daemon (bench/editor.sh, which also
#      runs alone): edit → diagnostics with the server's defaults, and hover,
#      definition, completion and symbols on a 2 MB .sqlx while a compile runs.
#
# Writes bench/results/bench.md (the README quotes its tables).
#
# Usage: bench/run.sh
#        BENCH_SIZES= BENCH_FIXTURES=0 BENCH_JIT_RUNS=0 bench/run.sh   # the big-sqlx rows only
#
# Environment:
#   BENCH_RUNS      timed runs per tool and project, and edits per LSP session (default 5)
#   BENCH_SIZES     generated sizes, comma-separated (default 30,400,1000,3000; empty: none)
#   BENCH_BIG_SQLX  sizes in MB of the big-sqlx-<N>mb projects: a 30-action project plus one
#                   .sqlx of N MB (bench/projectgen.BigSQLX), comma-separated (default 2,10; empty: none)
#   BENCH_DFD       a dfd binary to measure instead of building one
#   BENCH_ENGINES   engines of the warm-daemon section (default: goja, and node when `dfd serve --engine=node` works)
#   BENCH_FIXTURES  0 skips the fixtures (default 1)
#   BENCH_REAL      0 skips the real public projects of testdata/realprojects (default 1)
#   BENCH_JIT_RUNS  JiT requests per case (default 20; 0 skips section 3)
#   BENCH_EDITOR    0 skips section 4 (default 1; see bench/editor.sh for its own settings)
#   BENCH_JIT       1 (default) includes JiT actions in generated projects
#   BENCH_SEED      generator seed (default 1)
#   BENCH_OUT       the markdown file to write (default bench/results/bench.md)
#   BENCH_KEEP      1 keeps the scratch directory
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
# dfd's cold runs use its transpile cache on disk (as a user's second
# compile does); the warm-up run fills it. DFD_TRANSPILE_CACHE points it at
# the scratch directory so that earlier runs do not count.
set -euo pipefail
export LC_ALL=C # awk and sort must read "1.5" the same way everywhere

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
runs=${BENCH_RUNS:-5}
sizes=${BENCH_SIZES-30,400,1000,3000}
big_sqlx=${BENCH_BIG_SQLX-2,10}
jit=${BENCH_JIT:-1}
seed=${BENCH_SEED:-1}
out=${BENCH_OUT:-$repo/bench/results/bench.md}
jit_runs=${BENCH_JIT_RUNS:-20}
core_version=3.0.62 # testenv.CoreVersion
cli_version=3.0.69  # testenv.CLIVersion

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

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

if [[ -n ${BENCH_DFD:-} ]]; then
  log "building genproject, measure and lspbench; dfd is $BENCH_DFD"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$work/bin/" ./bench/cmd/genproject ./bench/cmd/measure ./bench/cmd/lspbench) || die "go build failed"
  dfd=$(cd "$(dirname "$BENCH_DFD")" && pwd -P)/$(basename "$BENCH_DFD")
else
  log "building dfd, genproject, measure and lspbench"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$work/bin/" ./cmd/dfd ./bench/cmd/genproject ./bench/cmd/measure ./bench/cmd/lspbench) || die "go build failed"
  dfd=$work/bin/dfd
fi
export DFD_TRANSPILE_CACHE=$work/transpile-cache
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
edit_file=() # <name>=<file> when the warm daemon edits a given .sqlx
IFS=, read -r -a size_list <<<"$sizes"
for n in "${size_list[@]}"; do
  name=generated-$n
  flags=(-n "$n" -seed "$seed" -core "$core_version" -o "$work/projects/$name")
  [[ $jit == 1 ]] && flags+=(-jit)
  "$work/bin/genproject" "${flags[@]}" >&2 || die "generating $name failed"
  add_core "$work/projects/$name"
  projects+=("$name")
done
IFS=, read -r -a big_list <<<"$big_sqlx"
for mb in "${big_list[@]}"; do
  name=big-sqlx-${mb}mb
  "$work/bin/genproject" -n 30 -seed "$seed" -core "$core_version" -jit -big-sqlx $((mb * 1024 * 1024)) -o "$work/projects/$name" >&2 ||
    die "generating $name failed"
  add_core "$work/projects/$name"
  projects+=("$name")
  edit_file+=("$name=definitions/shared/big_mapping.sqlx") # projectgen.BigSQLXPath
done
generated=("${projects[@]}")

# dfd_tools <project>: the dfd runs of a project's cold compiles: its
# defaults, and for big-sqlx projects each engine too.
dfd_tools() {
  case $1 in
    big-sqlx-* | real-*) echo "dfd dfd-goja dfd-node" ;;
    *) echo dfd ;;
  esac
}
# Fixtures that compile cleanly with this core (testdata/README.md) and have a
# package.json. A dataformCoreVersion project makes the CLI run `npm i` on
# every compile, which would time npm and the network, not the compiler.
while [[ ${BENCH_FIXTURES:-1} == 1 ]] && read -r name; do
  [[ -f $repo/testdata/projects/$name/package.json ]] || continue
  cp -r "$repo/testdata/projects/$name" "$work/projects/$name"
  add_core "$work/projects/$name"
  projects+=("$name")
done < <(grep -E "^[a-z0-9_]+: cores=[0-9.,]*\b${core_version//./\\.}\b[0-9.,]* expect=ok" "$repo/testdata/README.md" | cut -d: -f1)

# Real public projects (testdata/realprojects, each with a package.json
# that names this core), as real-<fixture>.
real=()
if [[ ${BENCH_REAL:-1} == 1 ]]; then
  mkdir -p "$work/projects"
  for d in "$repo"/testdata/realprojects/*/; do
    name=real-$(basename "$d")
    cp -r "$d" "$work/projects/$name"
    add_core "$work/projects/$name"
    projects+=("$name")
    real+=("$name")
  done
fi

# run_tool <tool> <project> <stdout file>: runs one compile, appends
# "<wall s> <peak KiB> <cpu s>" to $work/runs/<project>.<tool>; returns its
# status.
run_tool() {
  local tool=$1 name=$2 stdout=$3 dir=$work/projects/$2 cmd rc
  case $tool in
    cli) cmd=(node "$cli" compile "$dir" --json --timeout=10m) ;;
    dfd) cmd=("$dfd" compile "$dir" --json --timeout=10m) ;;
    dfd-*) cmd=("$dfd" compile "$dir" --json --timeout=10m --engine="${tool#dfd-}") ;;
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
  read -r -a tools <<<"$(dfd_tools "$name")"
  log "$name: warm-up"
  run_tool cli "$name" "$work/json/$name.cli.json" || die "the official CLI failed on $name"
  for tool in "${tools[@]}"; do
    run_tool "$tool" "$name" "$work/json/$name.$tool.json" || die "$tool failed on $name"
  done
  # The warm-up's measurements are dropped.
  : >"$work/runs/$name.cli"
  for tool in "${tools[@]}"; do : >"$work/runs/$name.$tool"; done
  for ((i = 1; i <= runs; i++)); do
    order=(cli "${tools[@]}")
    ((i % 2 == 0)) && order=("${tools[@]}" cli)
    for tool in "${order[@]}"; do
      run_tool "$tool" "$name" /dev/null || die "$tool failed on $name"
    done
    msg="$name: run $i/$runs: cli $(tail -n 1 "$work/runs/$name.cli" | cut -d' ' -f1) s"
    for tool in "${tools[@]}"; do msg+=", $tool $(tail -n 1 "$work/runs/$name.$tool" | cut -d' ' -f1) s"; done
    log "$msg"
  done
done

# serve_has_engine: dfd serve takes --engine. (grep reads all of the help:
# with -q it could exit first, and pipefail would see dfd's SIGPIPE.)
serve_has_engine() { "$dfd" serve --help 2>&1 | grep -- '-engine' >/dev/null; }

# ---- warm daemon over LSP --------------------------------------------------

engines=${BENCH_ENGINES:-goja}
if [[ -z ${BENCH_ENGINES:-} ]] && serve_has_engine &&
  [[ $(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/') -ge 20 ]]; then
  engines="goja node"
fi
mkdir -p "$work/lsp"
# Real projects are edited where they have what lspbench edits: a .sqlx
# table or view and an includes/*.js file.
lsp_projects=("${generated[@]}")
for name in "${real[@]}"; do
  compgen -G "$work/projects/$name/includes/*.js" >/dev/null || continue
  # Real files may start with a licence comment, which lspbench's own pick
  # (a file that starts with its config block) passes over.
  f=$(grep -rlE "type: *[\"'](table|view)" --include='*.sqlx' "$work/projects/$name/definitions" 2>/dev/null | sort | head -n 1) || true
  [[ -n $f ]] || continue
  lsp_projects+=("$name")
  edit_file+=("$name=${f#"$work/projects/$name/"}")
done
for name in "${lsp_projects[@]}"; do
  for engine in $engines; do
    serve_args=""
    if serve_has_engine; then
      serve_args="--engine=$engine" # explicit: the default (auto) picks by project size
    fi
    edit=""
    for e in "${edit_file[@]}"; do [[ ${e%%=*} == "$name" ]] && edit=${e#*=}; done
    log "$name: warm daemon ($engine engine), $runs edits of each kind${edit:+ of $edit}"
    "$work/bin/lspbench" -dfd "$dfd" -project "$work/projects/$name" -runs "$runs" -serve-args "$serve_args" -file "$edit" \
      >"$work/lsp/$name.$engine.json" || die "lspbench failed on $name ($engine)"
  done
done

# ---- JiT previews ----------------------------------------------------------

if [[ $jit_runs != 0 ]]; then
  log "JiT latency: warm worker vs the CLI's per-action process, $jit_runs requests per case"
  (cd "$repo" && go test ./jit -run '^$' -bench 'JitWarm|JitCLIWay' -benchtime "${jit_runs}x" -count 1 -timeout 30m) \
    >"$work/jit.txt" 2>&1 || { cat "$work/jit.txt" >&2; die "the JiT benchmarks failed"; }
fi
# ---- editor latency ---------------------------------------------------------

if [[ ${BENCH_EDITOR:-1} == 1 ]]; then
  log "editor latency: bench/editor.sh"
  EDITOR_BENCH_WORK=$work BENCH_DFD=$dfd BENCH_SIZES=$sizes BENCH_SEED=$seed BENCH_OUT=$work/editor.md \
    "$repo/bench/editor.sh" >&2 || die "bench/editor.sh failed"
fi
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
  echo "# dfd vs the official Dataform CLI"
  echo
  echo "Generated by \`bench/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "## Cold compile"
  echo
  echo "Both tools run as cold processes, each with its defaults (dfd's engine is \`auto\`: Node.js workers from 150 source"
  echo "files, or when goja would take half a second longer (daemon.DefaultNodeMinExcess), when node ≥ 20 is installed,"
  echo "as here; goja otherwise):"
  echo "\`node @dataform/cli/bundle.js compile <dir> --json\` and \`dfd compile <dir> --json\`; the big-sqlx projects"
  echo "also with \`--engine=goja\` and \`--engine=node\`, against the same CLI runs."
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
    read -r crss _ _ < <(stats "$work/runs/$name.cli" 2)
    read -r ccpu _ _ < <(stats "$work/runs/$name.cli" 3)
    for tool in $(dfd_tools "$name"); do
      read -r dm dl dh < <(stats "$work/runs/$name.$tool" 1)
      read -r drss _ _ < <(stats "$work/runs/$name.$tool" 2)
      read -r dcpu _ _ < <(stats "$work/runs/$name.$tool" 3)
      label=$name
      [[ $tool != dfd ]] && label+=" (--engine=${tool#dfd-})"
      awk -v n="$label" -v a="$(count_actions "$work/json/$name.cli.json")" -v f="$(count_files "$work/projects/$name")" \
        -v cm="$cm" -v cl="$cl" -v ch="$ch" -v dm="$dm" -v dl="$dl" -v dh="$dh" -v cr="$crss" -v dr="$drss" -v cc="$ccpu" -v dc="$dcpu" \
        -v cmp="$(compare "$work/json/$name.cli.json" "$work/json/$name.$tool.json")" \
        'BEGIN { printf "| %s | %d | %d | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.2f× | %.2f | %.2f | %.2f× | %.0f | %.0f | %s |\n",
          n, a, f, cm, cl, ch, dm, dl, dh, cm / dm, cc, dc, cc / dc, cr / 1024, dr / 1024, cmp }'
    done
  done
  echo
  echo "CLI / dfd above 1 means dfd is faster or uses less CPU."
  echo
  echo "## Warm daemon: recompile after an edit, as the editor sees it"
  echo
  echo "\`bench/cmd/lspbench\` starts \`dfd serve\` (the real binary, with its worker processes) over stdio, opens the"
  echo "project and waits for the first compile (open), then $runs times: an unsaved edit of one .sqlx file until"
  echo "\`dfd/preview\` of that file shows it (edit), and an unsaved edit of an \`includes/\` file until \`dfd/preview\` answers"
  echo "from a compile that covers it (includes); one untimed round first. As-you-type debounce 1 ms. Milliseconds,"
  echo "median (min–max). CLI / dfd compares the CLI's cold compile median above with the edit median. Peak RSS is the"
  echo "summed resident memory of the daemon and its workers over the whole session, sampled every 25 ms."
  echo
  echo "| project | actions | engine | open s | edit ms | includes edit ms | CLI cold / dfd edit | peak RSS MB (processes) |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|"
  for name in "${lsp_projects[@]}"; do
    read -r cm _ _ < <(stats "$work/runs/$name.cli" 1)
    for engine in $engines; do
      node -e '
        const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
        const st = a => { const v = [...a].sort((x, y) => x - y); const n = v.length;
          const m = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2; return [m, v[0], v[n - 1]]; };
        const [em, el, eh] = st(r.editMs), [im, il, ih] = st(r.includesMs);
        const f = x => x.toFixed(0);
        process.stdout.write(`| ${process.argv[2]} | ${process.argv[3]} | ${process.argv[4]} | ${(r.openMs / 1000).toFixed(2)} | ` +
          `${f(em)} (${f(el)}–${f(eh)}) | ${f(im)} (${f(il)}–${f(ih)}) | ${(Number(process.argv[5]) * 1000 / em).toFixed(1)}× | ` +
          `${(r.peakRssKiB / 1024).toFixed(0)} (${r.processes}) |\n`);
      ' "$work/lsp/$name.$engine.json" "$name" "$(count_actions "$work/json/$name.cli.json")" "$engine" "$cm"
    done
  done
  if [[ $jit_runs != 0 ]]; then
    echo
    echo "## JiT preview latency"
    echo
    echo "The same JiT requests and adapter answers (\`go test ./jit -bench 'JitWarm|JitCLIWay' -benchtime ${jit_runs}x\`):"
    echo "dfd's warm worker through the real pipe (adapter answered in the daemon at once, i.e. cached metadata), a fresh"
    echo "Node process running core's jitCompiler, and the official CLI's own vm2 JiT worker process, which \`dataform run\`"
    echo "starts for every JiT action. Median (p50) and p95 in milliseconds."
    echo
    echo "| adapter calls | dfd warm worker p50 (p95) | fresh Node + core p50 | CLI JiT worker p50 | CLI worker / dfd |"
    echo "|---:|---:|---:|---:|---:|"
    for c in 0 3; do
      awk -v c="$c-calls" '
        function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return "" }
        $1 ~ "^BenchmarkJitWarm/" c "(-[0-9]+)?$" { w50 = metric("p50-ms"); w95 = metric("p95-ms") }
        $1 ~ "^BenchmarkJitCLIWay/" c "/node(-[0-9]+)?$" { n50 = metric("p50-ms") }
        $1 ~ "^BenchmarkJitCLIWay/" c "/cli-worker(-[0-9]+)?$" { v50 = metric("p50-ms") }
        END { printf "| %s | %.2f (%.2f) | %.0f | %.0f | %.0f× |\n", substr(c, 1, 1), w50, w95, n50, v50, (w50 > 0 ? v50 / w50 : 0) }
      ' "$work/jit.txt"
    done
    awk '
      function metric(unit,   i) { for (i = 2; i <= NF; i++) if ($i == unit) return $(i - 1); return "" }
      $1 ~ "^BenchmarkJitWarm/3-cached-calls(-[0-9]+)?$" { printf "| 3, cached (answers sent with the request) | %.2f (%.2f) | | | |\n", metric("p50-ms"), metric("p95-ms") }
    ' "$work/jit.txt"
  fi
  if [[ -f $work/editor.md ]]; then
    echo
    cat "$work/editor.md"
  fi
  echo
  echo "## Raw runs"
  echo
  echo "Cold compiles (wall s, peak KiB, CPU s), in the order they ran:"
  echo
  echo '```'
  for name in "${projects[@]}"; do
    printf '%-24s cli: %s\n' "$name" "$(tr '\n' ';' <"$work/runs/$name.cli" | sed 's/;$//; s/;/; /g')"
    for tool in $(dfd_tools "$name"); do
      printf '%-24s %s: %s\n' "" "$tool" "$(tr '\n' ';' <"$work/runs/$name.$tool" | sed 's/;$//; s/;/; /g')"
    done
  done
  echo '```'
} >"$out"
log "wrote $out"
cat "$out"
