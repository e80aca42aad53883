#!/usr/bin/env bash
# Builds the Dataform (dfd) VS Code extension into a .vsix.
#
#   scripts/package.sh [--binary PATH]
#
# Runs `npm ci`, compiles (tsc + esbuild bundle), runs the unit tests and
# packages with vsce. With --binary, PATH (a linux-x64 dfd) is bundled as
# bin/linux-x64/dfd inside the .vsix and removed from the tree afterwards.
# Writes $OUT if set, else vscode-extension/dfd-dataform.vsix, and prints
# the .vsix path on stdout; everything else goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
out="${OUT:-$here/dfd-dataform.vsix}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

if [ -n "$binary" ]; then
  if [ ! -f "$binary" ]; then
    echo "package.sh: --binary $binary: no such file" >&2
    exit 1
  fi
  binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
fi

cd "$here"
# One packaging at a time: npm ci, out/ and bin/ are shared by every run in
# this tree.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/dfd-vscode-package.$(printf '%s' "$here" | cksum | cut -d' ' -f1).lock"
  if ! flock -n 9; then
    echo "package.sh: another packaging of $here is running; waiting for it" >&2
    flock 9
  fi
fi
{
  echo "== npm ci"
  npm ci --no-audit --no-fund
  echo "== compile"
  npm run --silent compile
  echo "== unit tests"
  npm test --silent
} >&2

bundled="$here/bin/linux-x64/dfd"
created=""
cleanup() {
  # Only what this run put there.
  if [ -n "$created" ]; then
    rm -f "$bundled"
    rmdir "$here/bin/linux-x64" "$here/bin" 2>/dev/null || true
  fi
}
trap cleanup EXIT
if [ -n "$binary" ]; then
  if [ -e "$bundled" ]; then
    echo "package.sh: $bundled already exists; remove it first" >&2
    exit 1
  fi
  mkdir -p "$here/bin/linux-x64"
  created=1
  cp "$binary" "$bundled"
  chmod +x "$bundled"
  echo "== bundling $binary as bin/linux-x64/dfd" >&2
fi

mkdir -p "$(dirname "$out")"
echo "== vsce package → $out" >&2
npx --no-install vsce package --no-dependencies --out "$out" >&2
echo "$out"
