#!/usr/bin/env bash
# Builds the Dataform (dfd) VS Code extension into a .vsix.
#
#   scripts/package.sh [--target TARGET --binary PATH]
#
# Runs `npm ci`, compiles (tsc + esbuild bundle), runs the unit tests and
# packages with vsce. With --binary, PATH (a dfd built for TARGET) is
# bundled as bin/TARGET/dfd (dfd.exe for win32-*) inside a platform .vsix
# (`vsce package --target TARGET`, which VS Code installs only on TARGET)
# and removed from the tree afterwards. TARGET is one of linux-x64,
# linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64 (default
# linux-x64). Without --binary the .vsix is the generic one: no binary, dfd
# comes from dfd.path or PATH.
# Writes $OUT if set, else vscode-extension/dfd-dataform.vsix, and prints
# the .vsix path on stdout; everything else goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary=""
target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    --target) target="${2:?--target needs a target}"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
    *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -n "$target" ] && [ -z "$binary" ]; then
  echo "package.sh: --target $target needs --binary (a platform .vsix carries its dfd)" >&2
  exit 2
fi
if [ -n "$binary" ]; then
  target="${target:-linux-x64}"
  case "$target" in
    linux-x64|linux-arm64|darwin-x64|darwin-arm64|win32-x64|win32-arm64) ;;
    *) echo "package.sh: --target $target is not one of linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64" >&2; exit 2 ;;
  esac
fi
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

exe=dfd
case "$target" in win32-*) exe=dfd.exe ;; esac
bundled="$here/bin/${target:-none}/$exe"
created=""
cleanup() {
  # Only what this run put there.
  if [ -n "$created" ]; then
    rm -f "$bundled"
    rmdir "$here/bin/$target" "$here/bin" 2>/dev/null || true
  fi
}
trap cleanup EXIT
if [ -n "$binary" ]; then
  if [ -e "$bundled" ]; then
    echo "package.sh: $bundled already exists; remove it first" >&2
    exit 1
  fi
  mkdir -p "$here/bin/$target"
  created=1
  cp "$binary" "$bundled"
  chmod +x "$bundled"
  echo "== bundling $binary as bin/$target/$exe" >&2
fi

mkdir -p "$(dirname "$out")"
echo "== vsce package ${target:+--target $target }→ $out" >&2
npx --no-install vsce package --no-dependencies ${target:+--target "$target"} --out "$out" >&2
echo "$out"
