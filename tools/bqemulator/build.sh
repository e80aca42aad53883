#!/usr/bin/env bash
# Builds goccy/bigquery-emulator (pinned in this module's go.mod) once into a
# cache keyed by version and prints the binary's path. Pure Go (CGO_ENABLED=0);
# a fresh build takes 4-7 minutes and ~6 GB of memory on 2 cores, a cached one
# nothing. Tests find the binary through $DFD_BQ_EMULATOR.
#
# Safe to run concurrently (several test packages, CI steps, a developer's
# shell): builds are serialised by a lock file in the cache, and whoever gets
# the lock second finds the finished binary instead of building it again.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(cd "$here" && go list -m -f '{{.Version}}' github.com/goccy/bigquery-emulator)
cache=${DFD_CACHE:-$HOME/.cache/dfd-ci}/bqemulator
bin=$cache/bigquery-emulator-$version
if [ ! -x "$bin" ]; then
  mkdir -p "$cache"
  # The lock is held until this script exits (fd 9 stays open).
  exec 9>"$cache/.build.lock"
  if ! flock -n 9; then
    echo "bqemulator: another build of bigquery-emulator $version is running; waiting for it" >&2
    flock 9
  fi
  if [ ! -x "$bin" ]; then
    echo "bqemulator: building bigquery-emulator $version (first time only, several minutes)" >&2
    tmp=$(mktemp "$cache/.build.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    (cd "$here" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -ldflags='-s -w' -o "$tmp" github.com/goccy/bigquery-emulator/cmd/bigquery-emulator)
    chmod +x "$tmp"
    mv -f "$tmp" "$bin"
  fi
fi
echo "$bin"
