#!/usr/bin/env bash
# ensure.sh — install what the VS Code end-to-end test needs, once:
#   - Debian packages chromium, ripgrep, libkrb5-dev, zip and unzip (only the missing ones;
#     as root, or through `sudo -n`);
#   - code-server (VS Code in a browser) into
#     ${DFD_CACHE:-$HOME/.cache/dfd-ci}/codeserver/<version>/;
#   - playwright-core (the driver only; never `playwright`, which downloads
#     browsers) into ${DFD_CACHE:-$HOME/.cache/dfd-ci}/playwright-core/<version>/.
#
# Usage: tools/codeserver/ensure.sh
#
# Prints KEY=value lines on stdout:
#   CODE_SERVER=<path of the code-server launcher>
#   PLAYWRIGHT_CORE=<package directory of playwright-core>
#   CHROMIUM=/usr/bin/chromium
#   CODE_SERVER_VERSION=…  PLAYWRIGHT_CORE_VERSION=…
# Everything else (progress, npm and apt output, errors) goes to stderr.
#
# Idempotent and safe to run in parallel: each npm install happens in a staging
# directory that is renamed into place after it is verified and a marker file
# (.dfd-ensure-complete) written; with the markers and packages present the
# script prints the paths and exits within a second without a lock or network.
# Otherwise it takes an exclusive flock on <cache>/codeserver/.ensure.lock and
# checks again.
#
# code-server's dependency @vscode/ripgrep downloads rg from GitHub in its
# postinstall, which cannot be reached here: Debian's rg is put, as a tar.gz,
# where that script looks for its download cache ($TMPDIR/vscode-ripgrep-cache-*),
# with TMPDIR pointing at a private staging directory.
#
# Environment:
#   DFD_CACHE                     cache root (default $HOME/.cache/dfd-ci)
#   DFD_CODESERVER_LOCK_TIMEOUT   seconds to wait for the lock (default 1200)
#
# Exit status: 0 on success; 1 when something cannot be installed (the message
# says what and why).
set -euo pipefail

CODE_SERVER_VERSION=4.100.3   # newest code-server that runs on Node 20 (VS Code 1.100.3)
PLAYWRIGHT_CORE_VERSION=1.65.1
# @vscode/ripgrep as pinned by code-server 4.100.3's VS Code, and the asset its
# postinstall wants.
RIPGREP_PKG_VERSION=1.15.11
RIPGREP_ASSET=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
APT_PKGS=(chromium ripgrep libkrb5-dev zip unzip)  # zip/unzip: run.sh checks and trims the .vsix
CHROMIUM=/usr/bin/chromium

prog=codeserver/ensure.sh
log() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { printf '%s: error: %s\n' "$prog" "$*" >&2; exit 1; }

cache=${DFD_CACHE:-${HOME:?HOME is not set}/.cache/dfd-ci}
cs_root=$cache/codeserver
pw_root=$cache/playwright-core
cs_dir=$cs_root/$CODE_SERVER_VERSION
pw_dir=$pw_root/$PLAYWRIGHT_CORE_VERSION
cs_bin=$cs_dir/node_modules/code-server/out/node/entry.js
cs_launcher=$cs_dir/node_modules/.bin/code-server
pw_pkg=$pw_dir/node_modules/playwright-core
marker_name=.dfd-ensure-complete

apt_missing() {
  local p
  for p in "${APT_PKGS[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || printf '%s\n' "$p"
  done
}

cs_ok() { [[ -f $cs_dir/$marker_name && -f $cs_bin && -x $cs_launcher ]]; }
pw_ok() { [[ -f $pw_dir/$marker_name && -f $pw_pkg/package.json ]]; }

print_result() {
  printf 'CODE_SERVER=%s\n' "$cs_launcher"
  printf 'CODE_SERVER_VERSION=%s\n' "$CODE_SERVER_VERSION"
  printf 'PLAYWRIGHT_CORE=%s\n' "$pw_pkg"
  printf 'PLAYWRIGHT_CORE_VERSION=%s\n' "$PLAYWRIGHT_CORE_VERSION"
  printf 'CHROMIUM=%s\n' "$CHROMIUM"
}

# Fast path: everything there, no lock, no network.
if [[ -z $(apt_missing) && -x $CHROMIUM ]] && cs_ok && pw_ok; then
  print_result
  exit 0
fi

for tool in node npm flock tar; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found on PATH (needed to install code-server and playwright-core)"
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
[[ $node_major == 20 ]] || log "warning: code-server $CODE_SERVER_VERSION wants Node 20, found $(node --version)"

mkdir -p "$cs_root" "$pw_root" || die "cannot create cache directories under $cache"
lockfile=$cs_root/.ensure.lock
exec 9>>"$lockfile" || die "cannot open lock file $lockfile"
timeout=${DFD_CODESERVER_LOCK_TIMEOUT:-1200}
if ! flock -n 9; then
  log "waiting for another install (lock $lockfile, up to ${timeout}s)"
  flock -w "$timeout" 9 || die "timed out after ${timeout}s waiting for lock $lockfile"
fi

# --- Debian packages --------------------------------------------------------
mapfile -t missing < <(apt_missing)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    die "Debian packages ${missing[*]} are missing and this user can neither install them (not root) nor use 'sudo -n'; install them: apt-get install -y ${missing[*]}"
  fi
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -qq 1>&2 || die "apt-get update failed"
  "${SUDO[@]}" apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" 1>&2 \
    || die "apt-get install ${missing[*]} failed"
  mapfile -t still < <(apt_missing)
  ((${#still[@]} == 0)) || die "Debian packages still missing after apt-get install: ${still[*]}"
fi
[[ -x $CHROMIUM ]] || die "$CHROMIUM is missing although package chromium is installed"
command -v rg >/dev/null 2>&1 || die "rg (package ripgrep) not on PATH"

write_marker() { # <dir> <text>
  printf '%s\n' "$2" >"$1/$marker_name.tmp" && mv -f "$1/$marker_name.tmp" "$1/$marker_name"
}

stages=()
# shellcheck disable=SC2317  # invoked through trap
cleanup() { local s; for s in "${stages[@]}"; do rm -rf "$s"; done; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# --- code-server --------------------------------------------------------------
if ! cs_ok; then
  # Leftovers of installs that were killed (we hold the lock, so none is running).
  rm -rf "$cs_root/.stage-"*
  stage=$cs_root/.stage-$CODE_SERVER_VERSION-$$
  stages+=("$stage")
  mkdir -p "$stage/pkg" "$stage/tmp"
  printf '{}\n' >"$stage/pkg/package.json"
  # Debian's rg where @vscode/ripgrep's postinstall looks for its download.
  rgcache=$stage/tmp/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION
  mkdir -p "$rgcache/rg"
  cp "$(command -v rg)" "$rgcache/rg/rg"
  tar -czf "$rgcache/$RIPGREP_ASSET" -C "$rgcache/rg" rg
  rm -rf "$rgcache/rg"
  log "installing code-server@$CODE_SERVER_VERSION into $cs_dir (about a minute)"
  set +e
  ( cd "$stage/pkg" &&
    TMPDIR=$stage/tmp TMP=$stage/tmp TEMP=$stage/tmp \
    npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
    npm i --prefix "$stage/pkg" --no-audit --no-fund --save-exact --no-update-notifier \
      "code-server@$CODE_SERVER_VERSION" ) 1>&2
  rc=$?
  set -e
  ((rc == 0)) || die "npm install of code-server@$CODE_SERVER_VERSION failed (exit $rc); see npm output above"
  got=$(node -p 'require(process.argv[1]).version' "$stage/pkg/node_modules/code-server/package.json" 2>/dev/null || true)
  [[ $got == "$CODE_SERVER_VERSION" ]] || die "code-server installed with version '${got:-none}', want $CODE_SERVER_VERSION"
  [[ -x $stage/pkg/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg ]] \
    || die "code-server's postinstall did not install rg (lib/vscode/node_modules/@vscode/ripgrep/bin/rg)"
  ver=$(TMPDIR=$stage/tmp HOME=$stage/tmp XDG_CONFIG_HOME=$stage/tmp/config XDG_DATA_HOME=$stage/tmp/data \
    "$stage/pkg/node_modules/.bin/code-server" --version 2>/dev/null | grep -m1 -E '^[0-9]+\.[0-9]+\.[0-9]+' || true)
  [[ $ver == "$CODE_SERVER_VERSION"* ]] || die "code-server --version says '$ver', want $CODE_SERVER_VERSION"
  rm -rf "$stage/pkg/package.json.tmp"
  write_marker "$stage/pkg" "code-server@$CODE_SERVER_VERSION"
  rm -rf "$cs_dir"
  mv "$stage/pkg" "$cs_dir" || die "cannot move $stage/pkg to $cs_dir"
  rm -rf "$stage"
  log "installed code-server@$CODE_SERVER_VERSION"
fi

# --- playwright-core -------------------------------------------------------------
if ! pw_ok; then
  rm -rf "$pw_root/.stage-"*
  stage=$pw_root/.stage-$PLAYWRIGHT_CORE_VERSION-$$
  stages+=("$stage")
  mkdir -p "$stage"
  printf '{}\n' >"$stage/package.json"
  log "installing playwright-core@$PLAYWRIGHT_CORE_VERSION into $pw_dir"
  set +e
  npm i --prefix "$stage" --ignore-scripts --no-audit --no-fund --save-exact --no-update-notifier \
    "playwright-core@$PLAYWRIGHT_CORE_VERSION" 1>&2
  rc=$?
  set -e
  ((rc == 0)) || die "npm install of playwright-core@$PLAYWRIGHT_CORE_VERSION failed (exit $rc); see npm output above"
  got=$(node -p 'require(process.argv[1]).version' "$stage/node_modules/playwright-core/package.json" 2>/dev/null || true)
  [[ $got == "$PLAYWRIGHT_CORE_VERSION" ]] || die "playwright-core installed with version '${got:-none}', want $PLAYWRIGHT_CORE_VERSION"
  write_marker "$stage" "playwright-core@$PLAYWRIGHT_CORE_VERSION"
  rm -rf "$pw_dir"
  mv "$stage" "$pw_dir" || die "cannot move $stage to $pw_dir"
  log "installed playwright-core@$PLAYWRIGHT_CORE_VERSION"
fi

cs_ok || die "code-server is not complete in $cs_dir"
pw_ok || die "playwright-core is not complete in $pw_dir"
print_result
