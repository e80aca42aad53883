#!/usr/bin/env bash
# run.sh — end-to-end test of the VS Code extension in a real VS Code
# (code-server 4.100.3, VS Code 1.100.3) driven by Playwright in Debian's
# Chromium, as a user sees it: status bar, Problems panel, compiled preview
# (AoT and JiT), hover and go-to-definition, the dependency graph, rename
# across files, format on save, the bad cases (no project, no dfd
# binary, no core), and a data preview against the BigQuery emulator.
#
# Usage: bash vscode-extension/e2e/run.sh      (from anywhere)
#
# Steps: installs what it needs (tools/codeserver/ensure.sh, tools/npm/ensure.sh;
# cached under ${DFD_CACHE:-$HOME/.cache/dfd-ci}), builds dfd, packages the
# extension twice (with the bundled dfd, and without it), prepares fixture
# workspaces in a temporary directory, then for each of the two packages
# installs it into a fresh extensions dir, starts code-server under setsid on
# a free loopback port, runs e2e.mjs, and kills code-server's process group.
#
# Environment:
#   DFD_E2E_ARTIFACTS  where screenshots and logs go
#                      (default vscode-extension/e2e/artifacts; emptied first)
#   DFD_E2E_VSIX, DFD_E2E_VSIX_NOBIN
#                      use these packages instead of running scripts/package.sh
#   DFD_E2E_KEEP=1     keep the temporary directory
#   DFD_E2E_ONLY=main|nobin   run only one of the two code-server sessions
#
# Nothing is skipped silently: a dependency that cannot be installed is an
# error. Exit status is 0 only when every check passed; the last line printed
# is "N passed, N failed".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
repo=$(cd "$here/../.." && pwd -P)
cd "$repo"

t_start=$(date +%s)
log() { printf '==> e2e [%3ds]: %s\n' "$(($(date +%s) - t_start))" "$*" >&2; }
passed=0
failed=0
fail_setup() { # a failure before/outside the driver counts as a failed check
  printf 'FAIL %s\n' "$*"
  failed=$((failed + 1))
}
die() {
  printf 'e2e: error: %s\n' "$*" >&2
  fail_setup "setup: $*"
  printf '%d passed, %d failed\n' "$passed" "$failed"
  exit 1
}

artifacts=${DFD_E2E_ARTIFACTS:-$here/artifacts}
mkdir -p "$artifacts"
artifacts=$(cd "$artifacts" && pwd -P)
find "$artifacts" -mindepth 1 -maxdepth 1 \( -name '*.png' -o -name '*.log' -o -name '*.json' -o -name '*.txt' \) -delete
find "$artifacts" -mindepth 1 -maxdepth 1 -type d -name '*-vscode-logs' -exec rm -rf {} +

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dfd-e2e.XXXXXX")
tmp=$(cd "$tmp" && pwd -P)
pgids=()

# kill_group <pgid>: TERM the whole process group, then KILL what is left.
kill_group() {
  local g=$1 i
  kill -TERM -- "-$g" 2>/dev/null || return 0
  for i in $(seq 1 50); do
    kill -0 -- "-$g" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$g" 2>/dev/null || true
}

# Processes still running with our temporary directory on their command line
# (a browser whose driver died, an extension host): their ids, for kill.
leftover_pids() {
  local d pid
  for d in /proc/[0-9]*; do
    pid=${d#/proc/}
    [[ $pid == "$$" ]] && continue
    if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -qF -- "$tmp"; then
      printf '%s\n' "$pid"
    fi
  done
}

cleanup() {
  local g pid
  for g in "${pgids[@]}"; do kill_group "$g"; done
  for pid in $(leftover_pids); do kill -KILL "$pid" 2>/dev/null || true; done
  if [[ ${DFD_E2E_KEEP:-} == 1 ]]; then
    log "kept $tmp"
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP


# --- dependencies -------------------------------------------------------------
for tool in go node npm curl setsid timeout; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required (not found on PATH)"
done
log "ensuring code-server, playwright-core and chromium"
ensure_out=$(bash "$repo/tools/codeserver/ensure.sh") || die "tools/codeserver/ensure.sh failed (see its messages above)"
CODE_SERVER= PLAYWRIGHT_CORE= CHROMIUM=
while IFS='=' read -r k v; do
  case $k in
    CODE_SERVER) CODE_SERVER=$v ;;
    PLAYWRIGHT_CORE) PLAYWRIGHT_CORE=$v ;;
    CHROMIUM) CHROMIUM=$v ;;
  esac
done <<<"$ensure_out"
[[ -x $CODE_SERVER ]] || die "code-server not found at '$CODE_SERVER'"
[[ -f $PLAYWRIGHT_CORE/package.json ]] || die "playwright-core not found at '$PLAYWRIGHT_CORE'"
[[ -x $CHROMIUM ]] || die "chromium not found at '$CHROMIUM'"
command -v unzip >/dev/null 2>&1 || die "unzip not found (tools/codeserver/ensure.sh installs it)"

core=$(bash "$repo/tools/npm/ensure.sh" @dataform/core@3.0.62) || die "installing @dataform/core@3.0.62 failed"
[[ -f $core/package.json ]] || die "@dataform/core@3.0.62 not found at '$core'"

log "building dfd"
mkdir -p "$tmp/bin"
CGO_ENABLED=${CGO_ENABLED:-0} go build -o "$tmp/bin/dfd" ./cmd/dfd || die "go build ./cmd/dfd failed"

# --- packages -----------------------------------------------------------------
# package <out.vsix> [--binary <dfd>]: prints the .vsix path; errors on stderr
# (it runs in $(...), so it returns non-zero and the caller dies).
package() {
  local out=$1; shift
  if [[ ! -f $repo/vscode-extension/scripts/package.sh ]]; then
    echo "e2e: vscode-extension/scripts/package.sh is missing (it packages the extension)" >&2
    return 1
  fi
  local printed
  if ! printed=$(OUT=$out bash "$repo/vscode-extension/scripts/package.sh" "$@" </dev/null); then
    echo "e2e: vscode-extension/scripts/package.sh $* failed (see its output above)" >&2
    return 1
  fi
  printed=$(printf '%s\n' "$printed" | tail -n1)
  if [[ ! -f $printed ]]; then
    echo "e2e: package.sh printed '$printed', which is not a file" >&2
    return 1
  fi
  printf '%s\n' "$printed"
}
# has_entry <vsix> <regex>: whether an entry of the zip matches (no pipe into
# grep -q: with pipefail, unzip's SIGPIPE would turn a match into a failure).
has_entry() {
  local listing
  listing=$(unzip -Z1 "$1" 2>/dev/null) || return 1
  grep -Eq -- "$2" <<<"$listing"
}
if [[ -n ${DFD_E2E_VSIX:-} ]]; then
  vsix=$DFD_E2E_VSIX
else
  log "packaging the extension with the bundled dfd"
  vsix=$(package "$tmp/dfd-bundled.vsix" --target linux-x64 --binary "$tmp/bin/dfd") || die "packaging the extension with --binary failed"
fi
if [[ ${DFD_E2E_ONLY:-} != nobin ]] && ! has_entry "$vsix" '^extension/bin/linux-x64/dfd$'; then
  die "$vsix has no bundled extension/bin/linux-x64/dfd (is bin/ excluded by vscode-extension/.vscodeignore?)"
fi
# The bundled package is the platform .vsix a release ships for linux-x64
# (vsce package --target linux-x64).
if [[ ${DFD_E2E_ONLY:-} != nobin ]]; then
  manifest=$(unzip -p "$vsix" extension.vsixmanifest 2>/dev/null) || die "$vsix has no extension.vsixmanifest"
  grep -q 'TargetPlatform="linux-x64"' <<<"$manifest" || die "$vsix is not a linux-x64 platform .vsix (no TargetPlatform in its manifest)"
fi
# code-server's PATH (see session) has no dfd: the bundled one is the
# only dfd the main session can find, and no workspace there sets dfd.path.
session_path="$(dirname "$(command -v node)"):/usr/local/bin:/usr/bin:/bin"
if found=$(PATH=$session_path command -v dfd); then
  die "a dfd is on code-server's PATH ($found): the test would not show that the bundled one suffices"
fi
if [[ -n ${DFD_E2E_VSIX_NOBIN:-} ]]; then
  vsix_nobin=$DFD_E2E_VSIX_NOBIN
elif [[ ${DFD_E2E_ONLY:-} != main ]]; then
  # The same package without bin/: deleting the entry is much quicker than a
  # second package.sh (npm ci, compile, unit tests); package.sh without
  # --binary when zip is not installed.
  if command -v zip >/dev/null 2>&1 && has_entry "$vsix" '^extension/bin/linux-x64/dfd$'; then
    log "deriving a package without the dfd binary"
    vsix_nobin=$tmp/dfd-nobin.vsix
    cp "$vsix" "$vsix_nobin"
    zip -q -d "$vsix_nobin" 'extension/bin/*' >&2 || die "zip -d of extension/bin from $vsix failed"
  else
    log "packaging the extension without a dfd binary"
    vsix_nobin=$(package "$tmp/dfd-nobin.vsix") || die "packaging the extension without a binary failed"
  fi
  if has_entry "$vsix_nobin" '^extension/bin/'; then
    die "$vsix_nobin still contains extension/bin/"
  fi
fi

# --- fixture workspaces -------------------------------------------------------------
ws=$tmp/ws
mkdir -p "$ws" "$tmp/snapshot"
cp "$repo/testdata/metadata/clickstream.json" "$tmp/snapshot/clickstream.json"
snapshot=$tmp/snapshot/clickstream.json

# jit_actions: AoT tables and views, JiT actions, a declaration with columns in
# the snapshot. Core copied into node_modules, as internal/testkit/testenv.ProjectCopy does.
main_ws=$ws/jit_actions
cp -R "$repo/testdata/projects/jit_actions" "$main_ws"
mkdir -p "$main_ws/node_modules/@dataform"
cp -R "$core" "$main_ws/node_modules/@dataform/core"
mkdir -p "$main_ws/.vscode"
cat >"$main_ws/.vscode/settings.json" <<EOF
{
  "dfd.metadata.source": "snapshot",
  "dfd.metadata.snapshot": "$snapshot"
}
EOF

# A git repository whose main is the project as copied: "Dataform: Changes
# vs main" compares the work tree with it.
printf 'node_modules/\n.vscode/\n' >"$main_ws/.gitignore"
git -C "$main_ws" init -q -b main
git -C "$main_ws" add -A
git -C "$main_ws" -c user.name=dfd -c user.email=dfd@localhost -c commit.gpgsign=false commit -q -m "the fixture"

# A folder with no Dataform project.
mkdir -p "$ws/not_dataform"
printf '# Just some notes\n' >"$ws/not_dataform/README.md"
printf 'SELECT 1 AS one\n' >"$ws/not_dataform/query.sql"
# A stray .sqlx file activates the extension (activationEvents) outside any project.
printf 'SELECT 1 AS one\n' >"$ws/not_dataform/scratch.sqlx"

# A Dataform project without @dataform/core (no node_modules, no
# dataformCoreVersion).
mkdir -p "$ws/no_core/definitions"
printf 'defaultProject: acme\ndefaultDataset: d\ndefaultLocation: US\n' >"$ws/no_core/workflow_settings.yaml"
printf 'config { type: "view" }\nSELECT 1 AS one\n' >"$ws/no_core/definitions/one.sqlx"

# The jit_actions project again, with dfd.path pointing nowhere (run with the
# package that has no bundled dfd).
nobin_ws=$ws/no_binary
cp -R "$main_ws" "$nobin_ws"
cat >"$nobin_ws/.vscode/settings.json" <<EOF
{
  "dfd.path": "$tmp/does-not-exist/dfd",
  "dfd.metadata.snapshot": "$snapshot"
}
EOF

# data_preview: a project on BigQuery — the emulator, started here with a
# table of two rows — for the data-preview scenario.
emulator=$(bash "$repo/tools/bqemulator/build.sh") || die "tools/bqemulator/build.sh failed"
emu_port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
emu_grpc=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
cat >"$tmp/emulator.yaml" <<'EOF'
projects:
  - id: test
    datasets:
      - id: shop
        tables:
          - id: orders
            columns:
              - name: id
                type: INTEGER
              - name: name
                type: STRING
            data:
              - id: 1
                name: Ann
              - id: 2
                name: Bo
EOF
log "starting the BigQuery emulator on 127.0.0.1:$emu_port"
setsid "$emulator" --project=test --host=127.0.0.1 --port="$emu_port" --grpc-port="$emu_grpc" --log-level=error \
  --data-from-yaml="$tmp/emulator.yaml" >"$artifacts/emulator.log" 2>&1 </dev/null &
emu_pid=$!
pgids+=("$emu_pid")
emu_ok=
for i in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$emu_port/bigquery/v2/projects/test/datasets" >/dev/null 2>&1; then emu_ok=1; break; fi
  kill -0 "$emu_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n $emu_ok ]] || die "the BigQuery emulator did not answer within 30s (see $artifacts/emulator.log)"
data_ws=$ws/data_preview
mkdir -p "$data_ws/definitions" "$data_ws/.vscode" "$data_ws/node_modules/@dataform"
cp -R "$core" "$data_ws/node_modules/@dataform/core"
printf 'defaultProject: test\ndefaultDataset: shop\ndefaultLocation: US\n' >"$data_ws/workflow_settings.yaml"
printf 'config { type: "declaration" }\n' >"$data_ws/definitions/orders.sqlx"
cat >"$data_ws/definitions/order_view.sqlx" <<'EOF'
config { type: "view" }
SELECT id, name, STRUCT(name AS n) AS buyer, [id, id + 1] AS ids, CAST(NULL AS STRING) AS nothing
FROM ${ref("orders")}
ORDER BY id
EOF
cat >"$data_ws/.vscode/settings.json" <<EOF
{
  "dfd.metadata.source": "bigquery",
  "dfd.bigquery.endpoint": "http://127.0.0.1:$emu_port"
}
EOF

# --- code-server sessions -----------------------------------------------------------
free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# session <name> <vsix> <scenario,scenario,...> <folder,folder,...>
session() {
  local name=$1 pkg=$2 scenarios=$3 folders=$4
  local home=$tmp/$name/home ud=$tmp/$name/user-data ed=$tmp/$name/extensions
  mkdir -p "$home" "$ud/User" "$ed" "$tmp/$name/xdg-config" "$tmp/$name/xdg-data" "$tmp/$name/xdg-cache" "$tmp/$name/xdg-state" "$tmp/$name/tmp"
  cat >"$ud/User/settings.json" <<'EOF'
{
  "workbench.startupEditor": "none",
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.editor.enablePreview": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "security.workspace.trust.enabled": false,
  "git.enabled": false,
  "files.autoSave": "off",
  "editor.minimap.enabled": false,
  "editor.autoClosingBrackets": "never",
  "editor.autoClosingQuotes": "never",
  "editor.autoClosingOvertype": "never",
  "editor.autoSurround": "never",
  "editor.autoIndent": "none",
  "editor.formatOnType": false,
  "editor.quickSuggestions": { "other": "off", "comments": "off", "strings": "off" },
  "editor.suggestOnTriggerCharacters": false,
  "editor.parameterHints.enabled": false,
  "editor.hover.delay": 300,
  "editor.hover.sticky": true,
  "typescript.disableAutomaticTypeAcquisition": true,
  "typescript.surveys.enabled": false,
  "npm.fetchOnlinePackageInfo": false,
  "workbench.settings.enableNaturalLanguageSearch": false
}
EOF
  local -a env=(env "HOME=$home" "XDG_CONFIG_HOME=$tmp/$name/xdg-config" "XDG_DATA_HOME=$tmp/$name/xdg-data"
    "XDG_CACHE_HOME=$tmp/$name/xdg-cache" "XDG_STATE_HOME=$tmp/$name/xdg-state" "TMPDIR=$tmp/$name/tmp"
    "PATH=$session_path")
  printf 'auth: none\ncert: false\n' >"$tmp/$name/config.yaml"
  local -a common=(--user-data-dir "$ud" --extensions-dir "$ed")
  log "[$name] installing $(basename "$pkg")"
  if ! "${env[@]}" "$CODE_SERVER" "${common[@]}" --install-extension "$pkg" >"$artifacts/$name-install.log" 2>&1; then
    cat "$artifacts/$name-install.log" >&2
    fail_setup "$name: code-server --install-extension $(basename "$pkg")"
    return
  fi
  local installed
  installed=$("${env[@]}" "$CODE_SERVER" "${common[@]}" --list-extensions 2>/dev/null || true)
  if ! grep -qx 'dfdtools.dfd-dataform' <<<"$installed"; then
    fail_setup "$name: extension dfdtools.dfd-dataform not listed after install"
    return
  fi
  local port
  port=$(free_port)
  log "[$name] starting code-server on 127.0.0.1:$port"
  "${env[@]}" setsid "$CODE_SERVER" "${common[@]}" --bind-addr "127.0.0.1:$port" --auth none \
    --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --config "$tmp/$name/config.yaml" \
    >"$artifacts/$name-code-server.log" 2>&1 </dev/null &
  local pid=$!
  sleep 0.2
  local pgid
  pgid=$(ps -o pgid= -p "$pid" | tr -d ' ' || true)
  pgids+=("${pgid:-$pid}")
  local ok= i
  for i in $(seq 1 600); do
    if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then ok=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $ok ]]; then
    cat "$artifacts/$name-code-server.log" >&2
    fail_setup "$name: code-server did not answer /healthz within 60s"
    return
  fi
  local result=$tmp/$name/result.json
  log "[$name] running the Playwright driver"
  set +e
  "${env[@]}" "DFD_E2E_RESULT=$result" "PLAYWRIGHT_CORE=$PLAYWRIGHT_CORE" "CHROMIUM=$CHROMIUM" \
    "DFD_E2E_URL=http://127.0.0.1:$port" "DFD_E2E_ARTIFACTS=$artifacts" "DFD_E2E_SESSION=$name" \
    "DFD_E2E_SCENARIOS=$scenarios" "DFD_E2E_FOLDERS=$folders" "DFD_E2E_PROFILE=$tmp/$name/chromium-profile" \
    "DFD_E2E_DFD=$tmp/bin/dfd" \
    setsid timeout -k 10 600 node "$here/e2e.mjs" </dev/null &
  local dpid=$!
  pgids+=("$dpid")
  wait "$dpid"
  local rc=$?
  set -e
  kill_group "${pgid:-$pid}"
  kill_group "$dpid"
  if [[ -f $result ]]; then
    local p f
    p=$(node -p 'require(process.argv[1]).passed' "$result")
    f=$(node -p 'require(process.argv[1]).failed' "$result")
    passed=$((passed + p))
    failed=$((failed + f))
    if ((rc != 0 && f == 0)); then fail_setup "$name: driver exited with status $rc"; fi
  else
    fail_setup "$name: driver wrote no result (exit status $rc)"
  fi
  # VS Code's logs, with the extension's output channel "Dataform (dfd)".
  [[ -d $ud/logs ]] && cp -R "$ud/logs" "$artifacts/$name-vscode-logs" 2>/dev/null || true
}

if [[ ${DFD_E2E_ONLY:-} != nobin ]]; then
  session main "$vsix" "project,nodataform,nocore,data" "$main_ws,$ws/not_dataform,$ws/no_core,$data_ws"
fi
if [[ ${DFD_E2E_ONLY:-} != main ]]; then
  session nobin "$vsix_nobin" "nobinary" "$nobin_ws"
fi

log "done; screenshots in $artifacts"
printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0 && passed > 0))
