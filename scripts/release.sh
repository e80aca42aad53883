#!/usr/bin/env bash
# release.sh — build dfd's release artifacts into dist/.
#
# Usage: scripts/release.sh VERSION        e.g. scripts/release.sh 0.2.0
#
# Writes, for each platform (default: linux, darwin and windows on amd64 and
# arm64; DFD_RELEASE_PLATFORMS="linux/amd64 …" picks some):
#   dist/dfd-<os>-<arch>[.exe]     the binary: CGO_ENABLED=0, -trimpath,
#                                  stripped (-s -w), version and commit
#                                  stamped (dfd version prints them)
#   dist/npm/dfd-<os>-<cpu>/       the npm package @dfdtools/dfd-<os>-<cpu>
#                                  holding it (npm's names: x64, arm64,
#                                  win32), and dist/npm/dfd/, the dfd
#                                  package whose bin finds it (npm/dfd/README.md)
# with DFD_RELEASE_VSIX=1, dist/dfd-dataform-<os>-<cpu>-VERSION.vsix, the
# VS Code extension for that platform with the binary inside; and
# dist/SHA256SUMS (sha256sum's format, of every binary and .vsix) and
# dist/CHANGELOG.md (this version's section: the commit subjects since the
# previous v* tag).
#
# Reproducible: the same commit and Go toolchain give the same bytes, from
# any checkout directory (-trimpath, -buildvcs=false, the commit stamped by
# -X rather than read from the working tree, no build time stamped);
# DFD_RELEASE_CHECK_REPRO=1 builds linux/amd64 a second time from a copy of
# the tree at another path and fails if a byte differs.
#
# Environment: DIST (default dist), DFD_RELEASE_PLATFORMS, DFD_RELEASE_VSIX, DFD_RELEASE_COMMIT
# (default: git rev-parse HEAD, with -dirty when tracked files changed;
# "unknown" outside git), DFD_RELEASE_CHECK_REPRO.
# Exit status: 0 done; 1 a build or check failed; 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

log() { printf 'release: %s\n' "$*" >&2; }
die() { local code=$1; shift; printf 'release: error: %s\n' "$*" >&2; exit "$code"; }

[[ $# -eq 1 ]] || die 2 "usage: scripts/release.sh VERSION (e.g. 0.2.0)"
version=${1#v}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die 2 "'$1' is not a version such as 0.2.0 or 0.2.0-rc.1"

commit=${DFD_RELEASE_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
# A tree whose tracked files differ from the commit is not that commit:
# say so in the stamp (untracked files are not built unless they are Go
# files of dfd's packages, which git status lists too).
if [[ -z ${DFD_RELEASE_COMMIT:-} ]] && [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
  log "warning: the working tree has uncommitted changes; the commit is stamped $commit-dirty"
  commit=$commit-dirty
fi
dist=${DIST:-dist}
platforms=${DFD_RELEASE_PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}
mkdir -p "$dist"
dist=$(cd "$dist" && pwd)

# build OS ARCH OUT [DIR]: the release build of cmd/dfd, from DIR (default
# the repository). -buildvcs=false: the commit comes from -X, so a copy
# without .git builds the same bytes.
build() {
  local os=$1 arch=$2 out=$3 dir=${4:-$root}
  (cd "$dir" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS= go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X main.version=$version -X main.commit=$commit" -o "$out" ./cmd/dfd)
}

# npm's names for Go's: process.platform and process.arch.
npm_os() { case $1 in windows) echo win32 ;; *) echo "$1" ;; esac; }
npm_cpu() { case $1 in amd64) echo x64 ;; *) echo "$1" ;; esac; }

bins=()
for p in $platforms; do
  os=${p%/*} arch=${p#*/}
  exe=; [[ $os == windows ]] && exe=.exe
  out=$dist/dfd-$os-$arch$exe
  log "building $os/$arch"
  start=$SECONDS
  build "$os" "$arch" "$out"
  log "  $(basename "$out"): $(stat -c %s "$out" 2>/dev/null || stat -f %z "$out") bytes, $((SECONDS - start)) s"
  bins+=("$(basename "$out")")
  pkg=$dist/npm/dfd-$(npm_os "$os")-$(npm_cpu "$arch")
  bash npm/make-platform.sh "$version" "$(npm_os "$os")" "$(npm_cpu "$arch")" "$out" "$pkg"
done

if [[ ${DFD_RELEASE_CHECK_REPRO:-} == 1 ]]; then
  log "reproducibility: linux/amd64 again, from a copy of the tree at another path"
  copy=$(mktemp -d)
  trap 'rm -rf "$copy"' EXIT
  git ls-files -z | (cd "$root" && xargs -0 tar cf -) | (cd "$copy" && tar xf -)
  build linux amd64 "$copy/dfd-again" "$copy"
  first=$dist/dfd-linux-amd64
  [[ -f $first ]] || build linux amd64 "$copy/dfd-first"
  [[ -f $first ]] || first=$copy/dfd-first
  if ! cmp -s "$first" "$copy/dfd-again"; then
    die 1 "linux/amd64 is not reproducible: $(sha256sum "$first" "$copy/dfd-again")"
  fi
  log "  same bytes: $(sha256sum "$first" | cut -d' ' -f1)"
fi

# The dfd npm package: the launcher, with an optional dependency on every
# platform package of this version.
bash npm/make-main.sh "$version" "$dist/npm/dfd"

# The platform .vsix files (vsce package --target), each with its binary:
# vscode-extension/scripts/package.sh runs npm ci, the extension's build
# and unit tests each time, so only on request.
if [[ ${DFD_RELEASE_VSIX:-} == 1 ]]; then
  for p in $platforms; do
    os=${p%/*} arch=${p#*/}
    exe=; [[ $os == windows ]] && exe=.exe
    target=$(npm_os "$os")-$(npm_cpu "$arch")
    log "packaging the VS Code extension for $target"
    OUT=$dist/dfd-dataform-$target-$version.vsix bash vscode-extension/scripts/package.sh \
      --target "$target" --binary "$dist/dfd-$os-$arch$exe" >/dev/null
    bins+=("dfd-dataform-$target-$version.vsix")
  done
fi

(cd "$dist" && sha256sum "${bins[@]}" >SHA256SUMS)
log "SHA256SUMS: ${#bins[@]} files"

# The changelog section: commit subjects since the previous release tag.
prev=$(git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null || true)
{
  printf '## dfd %s\n\n' "$version"
  printf 'Commit %s.\n\n' "$commit"
  if [[ -n $prev ]]; then
    printf 'Changes since %s:\n\n' "$prev"
    git log --no-merges --format='- %s' "$prev..HEAD"
  else
    printf 'The first release: the %s latest changes.\n\n' 30
    git log --no-merges --format='- %s' -n 30 HEAD 2>/dev/null || true
  fi
} >"$dist/CHANGELOG.md"
log "done: $dist"
