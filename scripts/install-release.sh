#!/usr/bin/env bash
# install-release.sh — install a dfd release binary (what scripts/release.sh
# publishes) after checking it against the release's SHA256SUMS. The GitHub
# Action (action.yml) runs it; it works on any Linux, macOS or Windows (Git
# Bash) machine with curl.
#
# Usage: scripts/install-release.sh [VERSION] [DIR]
#   VERSION: 0.2.0, v0.2.0 or latest (default latest)
#   DIR: where to put dfd (default ~/.local/bin; created)
# Environment:
#   DFD_RELEASE_BASE_URL  where the releases are (default
#                         https://github.com/dfdtools/dfd/releases); a
#                         release is at BASE/download/vVERSION/, the latest at
#                         BASE/latest/download/
# Prints the installed binary's path on stdout. Exit status: 0 installed; 1
# download or checksum failed, or no binary for this platform; 2 bad usage.
set -euo pipefail
die() { local code=$1; shift; printf 'install-release: error: %s\n' "$*" >&2; exit "$code"; }

version=${1:-latest}
dir=${2:-$HOME/.local/bin}
base=${DFD_RELEASE_BASE_URL:-https://github.com/dfdtools/dfd/releases}
[[ $# -le 2 ]] || die 2 "usage: install-release.sh [VERSION] [DIR]"

case $(uname -s) in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN* | Windows_NT) os=windows ;;
  *) die 1 "no dfd release binary for $(uname -s); build from source: go install github.com/dfdtools/dfd/cmd/dfd@latest" ;;
esac
case $(uname -m) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die 1 "no dfd release binary for $(uname -m); build from source: go install github.com/dfdtools/dfd/cmd/dfd@latest" ;;
esac
exe=; [[ $os == windows ]] && exe=.exe
name=dfd-$os-$arch$exe

if [[ $version == latest ]]; then
  url=$base/latest/download
else
  url=$base/download/v${version#v}
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL --retry 3 -o "$tmp/$name" "$url/$name" || die 1 "downloading $url/$name failed"
curl -fsSL --retry 3 -o "$tmp/SHA256SUMS" "$url/SHA256SUMS" || die 1 "downloading $url/SHA256SUMS failed"
want=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$tmp/SHA256SUMS")
[[ -n $want ]] || die 1 "SHA256SUMS of $url lists no $name"
if command -v sha256sum >/dev/null; then
  got=$(sha256sum "$tmp/$name" | cut -d' ' -f1)
else
  got=$(shasum -a 256 "$tmp/$name" | cut -d' ' -f1)
fi
[[ $got == "$want" ]] || die 1 "$name: checksum $got, but SHA256SUMS says $want: not installed"
mkdir -p "$dir"
chmod 755 "$tmp/$name"
mv "$tmp/$name" "$dir/dfd$exe"
echo "$dir/dfd$exe"
