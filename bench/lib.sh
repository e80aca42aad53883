# lib.sh — what the lspbench scripts (cost.sh, incremental.sh, editor.sh) share. Source it
# after setting repo, and defining log and die.

# bench_tools WORK: builds lspbench and genproject into WORK/bin, and dfd
# unless BENCH_DFD names one; prints the dfd binary's absolute path.
bench_tools() {
  local work=$1
  log "building lspbench and genproject"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$work/bin/" ./bench/cmd/lspbench ./bench/cmd/genproject) >&2 || die "go build failed"
  if [[ -n ${BENCH_DFD:-} ]]; then
    echo "$(cd "$(dirname "$BENCH_DFD")" && pwd -P)/$(basename "$BENCH_DFD")"
    return
  fi
  log "building dfd"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$work/bin/dfd" ./cmd/dfd) >&2 || die "go build failed"
  echo "$work/bin/dfd"
}

# bench_with_core DIR CORE_DIR: gives the project in DIR that @dataform/core.
bench_with_core() {
  mkdir -p "$1/node_modules/@dataform"
  cp -r "$2" "$1/node_modules/@dataform/core"
}

# bench_commit: the commit measured, for the report ("abc1234 (with
# uncommitted changes)").
bench_commit() {
  local commit
  commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [[ -n $(git -C "$repo" status --porcelain 2>/dev/null | head -n 1) ]]; then
    commit+=" (with uncommitted changes)"
  fi
  echo "$commit"
}
