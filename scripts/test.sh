#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script).
# It installs what the tests need, idempotently and with caches outside the
# clone (~/.cache/dfd-ci): Debian packages, npm packages (the official
# Dataform CLI and cores the parity tests compare against), the BigQuery
# emulator, and for the VS Code end-to-end test code-server, Debian's
# Chromium and playwright-core (tools/codeserver/ensure.sh). Screenshots of
# that test go to vscode-extension/e2e/artifacts ($DFD_E2E_ARTIFACTS).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '==> %s\n' "$*" >&2; }

# Debian packages: protoc regenerates the protobuf code for the staleness
# check; the race detector needs cgo, hence a C compiler and libc's headers.
# pre-commit runs the hooks of .pre-commit-hooks.yaml in their test.
apt_pkgs=(protobuf-compiler gcc libc6-dev pre-commit)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
for tool in go node npm protoc; do
  command -v "$tool" >/dev/null || { echo "test: $tool is required" >&2; exit 1; }
done

# npm packages the tests compare against, installed once into the cache.
for spec in @dataform/cli@3.0.69 @dataform/core@3.0.62 @dataform/core@3.0.59 @dataform/core@3.0.52; do
  bash tools/npm/ensure.sh "$spec" >/dev/null
done

# The BigQuery emulator the adapter tests talk to: built once (minutes) into
# the cache, keyed by version.
DFD_BQ_EMULATOR=$(bash tools/bqemulator/build.sh)
export DFD_BQ_EMULATOR

# Current Neovims beside Debian 12's 0.7.2 for the Neovim plugin's tests:
# Debian 13's and unstable's packages, unpacked into the cache (not
# installed). The archive moving under unstable must not break CI: a
# Neovim that cannot be fetched is said loudly and left out.
extra_nvims=()
for suite in trixie sid; do
  if nv=$(SUITE=$suite bash testdata/lsp/nvim/current-nvim.sh 2>/tmp/dfd-nvim-$suite.log); then
    extra_nvims+=("$nv")
  else
    log "WARNING: Debian $suite's Neovim could not be fetched; the plugin tests run without it (see /tmp/dfd-nvim-$suite.log)"
  fi
done
DFD_TEST_NVIM=$(IFS=:; echo "${extra_nvims[*]}")
export DFD_TEST_NVIM

# dfd is pure Go. Building without cgo, as tools/bqemulator/build.sh builds
# the emulator, lets both share the Go build cache for GoogleSQL
# (github.com/goccy/go-googlesql, ~100 MB of generated Go that takes minutes
# to compile on 2 cores): with cgo its packages would be compiled again.
export CGO_ENABLED=0
# Every daemon the tests start checks that no compiled graph's shared
# action messages were written to (compile.Decoder).
export DFD_VERIFY_DECODE=1

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' | grep -v '\.pb\.go$'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi
log "no merge-conflict markers"
if git grep -n -E '^(<<<<<<<|>>>>>>>) ' -- . ':!*.pb.go'; then
  echo "the lines above are merge-conflict markers left in the tree" >&2; exit 1
fi
log "go vet"
go vet ./...
log "generated code is up to date"
bash protos/check.sh
for check in $(git ls-files '*/check.sh' | grep -v '^protos/check.sh$'); do
  bash "$check"
done

log "go test"
go test -timeout 45m ./...

# The packages where goroutines meet (the LSP server and the workspace,
# the worker pool and its workers, the metadata cache, the daemon) once
# more under the race detector. It needs cgo, so this stage alone builds
# with it, and every package it links is compiled again, instrumented:
# GoogleSQL's (daemon links it) take minutes the first time, then come
# from the build cache. jit/nodeworker's concurrency is the pool's, raced
# in jit: its tests (Node.js workers, goja parity compiles) stay out.
log "go test -race"
CGO_ENABLED=1 go test -race -timeout 45m ./lsp/... ./workspace/... ./jit ./jit/wire ./adapters/cache/... ./daemon/...

# Incremental compiles, fuzzed briefly on both engines: random sequences of
# edits, each incremental result equal to the full compile's (issue 27).
# Their kept corpora (testdata/fuzz) ran with go test above; a failure here
# writes the new input there and fails the suite.
log "go test -fuzz (incremental compiles, 30 s per engine)"
go test ./engine -run '^$' -fuzz '^FuzzIncremental$' -fuzztime 30s
go test ./jit/nodeworker -run '^$' -fuzz '^FuzzNodeIncremental$' -fuzztime 30s

# The release build of linux/amd64 as scripts/release.sh makes it (-trimpath,
# stripped, version and commit stamped), built a second time from a copy of
# the tree at another path to show it reproducible; its dfd version, its
# checksum, and the demo run with it. Measured warm: 35 s for the two builds
# and 8 s for the demo on 2 busy cores. -trimpath compiles are cached apart
# from the others: on a machine whose cache has none, the first run compiles
# GoogleSQL once more (8 min of CPU measured).
log "release build (linux/amd64): reproducible, version, demo"
rel=$(mktemp -d)
DIST=$rel DFD_RELEASE_PLATFORMS=linux/amd64 DFD_RELEASE_CHECK_REPRO=1 DFD_RELEASE_COMMIT=$(git rev-parse HEAD) \
  bash scripts/release.sh 0.0.0-ci
want="dfd 0.0.0-ci (commit $(git rev-parse HEAD))"
got=$("$rel/dfd-linux-amd64" version)
[ "$got" = "$want" ] || { echo "release: dfd version printed '$got', want '$want'" >&2; exit 1; }
(cd "$rel" && sha256sum -c --quiet SHA256SUMS)
DFD_BINARY="$rel/dfd-linux-amd64" bash scripts/demo.sh >/dev/null
rm -rf "$rel"

log "VS Code end-to-end"
bash vscode-extension/e2e/run.sh
