#!/usr/bin/env bash
# ensure.sh — install an exact npm package version into the dfd cache, once.
#
# Usage: tools/npm/ensure.sh <name@exact-version>
#   e.g. tools/npm/ensure.sh @dataform/core@3.0.62
#
# Installs the package with
#   npm i --ignore-scripts --no-audit --no-fund --save-exact <spec>
# into ${DFD_CACHE:-$HOME/.cache/dfd-ci}/npm/<sanitized spec>/ (every character
# outside [A-Za-z0-9._-] becomes "_", so @dataform/cli@3.0.69 lands in
# .../npm/_dataform_cli_3.0.69/) and prints the absolute path of the package
# directory (.../npm/_dataform_cli_3.0.69/node_modules/@dataform/cli) on stdout.
# Everything else (progress, npm output, errors) goes to stderr.
#
# Idempotent and safe to run in parallel:
#   - a marker file (.dfd-ensure-complete) is written only after a verified
#     install; with the marker present the script prints the path and exits
#     without taking a lock or touching the network;
#   - otherwise it takes an exclusive flock on .../npm/.<sanitized>.lock, checks
#     again, and either adopts an existing complete install made without this
#     script (version matches and `npm ls --all` is clean) or installs afresh
#     into a staging directory that is renamed into place when verified.
#
# Environment:
#   DFD_CACHE              cache root (default $HOME/.cache/dfd-ci)
#   DFD_NPM_LOCK_TIMEOUT   seconds to wait for the lock (default 900)
#
# Exit status: 0 on success; 1 on install/verification failure; 2 on bad usage.
set -euo pipefail

prog=ensure.sh
log() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { local code=$1; shift; printf '%s: error: %s\n' "$prog" "$*" >&2; exit "$code"; }

usage="usage: tools/npm/ensure.sh <name@exact-version>   (e.g. @dataform/core@3.0.62)"
[[ $# -eq 1 ]] || die 2 "expected exactly one argument; $usage"
spec=$1

# <name>@<x.y.z[-pre][+build]>; ranges, tags ("latest") and URLs are refused so that
# the cache directory name always determines the installed version.
re='^((@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*)@([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?)$'
if [[ ! $spec =~ $re ]]; then
  die 2 "'$spec' is not <name>@<exact-version> (no ranges or tags); $usage"
fi
name=${BASH_REMATCH[1]}
version=${BASH_REMATCH[3]}

command -v npm >/dev/null 2>&1 || die 1 "npm not found on PATH (needed to install $spec)"
command -v node >/dev/null 2>&1 || die 1 "node not found on PATH (needed to install $spec)"
command -v flock >/dev/null 2>&1 || die 1 "flock not found on PATH (util-linux)"

cache_root=${DFD_CACHE:-${HOME:?HOME is not set}/.cache/dfd-ci}/npm
mkdir -p "$cache_root" || die 1 "cannot create cache directory $cache_root"
cache_root=$(cd "$cache_root" && pwd -P)

sanitized=${spec//[^A-Za-z0-9._-]/_}
dir=$cache_root/$sanitized
pkgdir=$dir/node_modules/$name
marker_name=.dfd-ensure-complete
marker=$dir/$marker_name

# installed_version <package dir>: prints the version in its package.json, if any.
installed_version() {
  [[ -f $1/package.json ]] || return 1
  node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "$1/package.json" 2>/dev/null
}

done_ok() {
  printf '%s\n' "$pkgdir"
  exit 0
}

# Fast path: no lock when a verified install is already there.
if [[ -f $marker && -f $pkgdir/package.json ]]; then
  done_ok
fi

lockfile=$cache_root/.$sanitized.lock
exec 9>>"$lockfile" || die 1 "cannot open lock file $lockfile"
timeout=${DFD_NPM_LOCK_TIMEOUT:-900}
if ! flock -n 9; then
  log "waiting for another install of $spec (lock $lockfile, up to ${timeout}s)"
  flock -w "$timeout" 9 || die 1 "timed out after ${timeout}s waiting for lock $lockfile"
fi

# Someone else may have finished while we waited.
if [[ -f $marker && -f $pkgdir/package.json ]]; then
  done_ok
fi

write_marker() { # <dir>
  printf '%s\n' "$spec" >"$1/$marker_name.tmp" && mv -f "$1/$marker_name.tmp" "$1/$marker_name"
}

# Adopt an install made by hand in the same layout (e.g. a plain `npm i` run in $dir).
if [[ -d $dir ]] && [[ $(installed_version "$pkgdir" || true) == "$version" ]] \
   && npm ls --all --prefix "$dir" >/dev/null 2>&1; then
  write_marker "$dir" || die 1 "cannot write marker $marker"
  log "adopted existing install of $spec in $dir"
  done_ok
fi

stage=$cache_root/.stage-$sanitized-$$
# shellcheck disable=SC2317  # invoked through trap
cleanup() { rm -rf "$stage"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
# Leftovers of installs that were killed (we hold the lock, so none is running).
rm -rf "$cache_root/.stage-$sanitized-"*
mkdir -p "$stage"
# A package.json in the staging dir pins npm's project root there, whatever lies above.
printf '{}\n' >"$stage/package.json"

log "installing $spec into $dir"
set +e
npm i --prefix "$stage" --ignore-scripts --no-audit --no-fund --save-exact \
  --no-update-notifier "$spec" 1>&2
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  die 1 "npm install of $spec failed (exit $rc); see npm output above"
fi

got=$(installed_version "$stage/node_modules/$name" || true)
if [[ $got != "$version" ]]; then
  die 1 "npm install of $spec finished but $stage/node_modules/$name has version '${got:-none}', want $version"
fi
write_marker "$stage" || die 1 "cannot write marker in $stage"

rm -rf "$dir"
mv "$stage" "$dir" || die 1 "cannot move $stage to $dir"
log "installed $spec"
done_ok
