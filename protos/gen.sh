#!/usr/bin/env bash
# Regenerates the Go protobuf types in protos/dataformpb from the .proto files
# shipped in the npm package @dataform/core@$CORE_VERSION.
#
# Usage (from anywhere):  go generate ./protos    or    bash protos/gen.sh
#
# Environment:
#   DFD_CACHE      cache root (default $HOME/.cache/dfd-ci); the npm package is
#                  installed once into $DFD_CACHE/npm/_dataform_core_$CORE_VERSION
#                  and reused on later runs.
#   DFD_PROTO_OUT  output directory (default: protos/dataformpb next to this
#                  script). check.sh points it at a temporary directory.
#
# Requirements: bash, go, npm (only when the package is not cached yet), protoc
# (installed with apt-get if missing). protoc-gen-go is NOT taken from PATH: it
# is built from this module's tool dependency (`tool` line in go.mod), so its
# version equals the google.golang.org/protobuf version in go.mod.
set -euo pipefail

CORE_VERSION=3.0.62
GO_PACKAGE=github.com/dfdtools/dfd/protos/dataformpb
# Files shipped in @dataform/core, in a fixed order.
PROTO_FILES=(extension.proto core.proto configs.proto db_adapter.proto jit.proto)
# protoc release used for the committed code (descriptors are what matter; the
# version line in the generated header is normalised below).
EXPECTED_PROTOC=3.21.12

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module_root=$(cd "$here/.." && pwd)
out_dir=${DFD_PROTO_OUT:-$here/dataformpb}
cache_root=${DFD_CACHE:-$HOME/.cache/dfd-ci}
pkg_dir=$cache_root/npm/_dataform_core_$CORE_VERSION
core_dir=$pkg_dir/node_modules/@dataform/core

log() { echo "protos/gen.sh: $*" >&2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# installed_version DIR prints the "version" of DIR/package.json (empty if none).
installed_version() {
	[ -f "$1/package.json" ] || return 0
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$1/package.json" | head -n1
}

have_core() {
	[ "$(installed_version "$core_dir")" = "$CORE_VERSION" ] || return 1
	local f
	for f in "${PROTO_FILES[@]}"; do
		[ -f "$core_dir/$f" ] || return 1
	done
}

# --- 1. obtain @dataform/core@$CORE_VERSION (idempotent) ---------------------
if have_core; then
	log "reusing $core_dir"
else
	command -v npm >/dev/null || { log "npm is required to fetch @dataform/core@$CORE_VERSION"; exit 1; }
	log "installing @dataform/core@$CORE_VERSION into $pkg_dir"
	mkdir -p "$cache_root/npm"
	staging=$(mktemp -d "$cache_root/npm/.staging.XXXXXX")
	# Install into a private staging dir and move it into place, so that an
	# interrupted or concurrent run never leaves a half-installed cache entry.
	(
		cd "$staging"
		printf '{\n  "private": true,\n  "dependencies": {}\n}\n' >package.json
		npm i --ignore-scripts --no-audit --no-fund --save-exact --loglevel=error \
			"@dataform/core@$CORE_VERSION" >&2
	) || { rm -rf "$staging"; exit 1; }
	if ! have_core; then
		rm -rf "$pkg_dir"
		mv "$staging" "$pkg_dir" || true
	fi
	rm -rf "$staging"
	have_core || { log "failed to install @dataform/core@$CORE_VERSION"; exit 1; }
fi

# --- 2. copy the .proto files into a temp dir --------------------------------
src=$tmp/src
mkdir -p "$src"
for f in "${PROTO_FILES[@]}"; do
	cp "$core_dir/$f" "$src/$f"
done

# --- 3. repair known defects in the temp copies ------------------------------
# configs.proto uses core.proto types (e.g. DefaultIcebergConfig) but does not
# import core.proto. Add the import after the extension.proto one if missing.
if ! grep -q '^[[:space:]]*import[[:space:]]*"core.proto"[[:space:]]*;' "$src/configs.proto"; then
	log "patching configs.proto: adding missing import \"core.proto\""
	sed -i.bak 's/^\([[:space:]]*\)import[[:space:]]*"extension.proto";/&\
\1import "core.proto";/' "$src/configs.proto"
	rm -f "$src/configs.proto.bak"
	grep -q '^[[:space:]]*import "core.proto";' "$src/configs.proto" ||
		{ log "could not patch configs.proto"; exit 1; }
fi

# --- 4. run protoc + protoc-gen-go --------------------------------------------
if ! command -v protoc >/dev/null; then
	log "protoc not found; installing protobuf-compiler with apt-get"
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq protobuf-compiler >&2
fi
protoc_version=$(protoc --version | awk '{print $2}')
if [ "$protoc_version" != "$EXPECTED_PROTOC" ]; then
	log "warning: protoc $protoc_version, committed code was generated with $EXPECTED_PROTOC"
fi

# Include path for google/protobuf/*.proto (well-known types). apt's protoc
# finds /usr/include by itself; release zips ship them in ../include.
includes=(-I "$src")
protoc_include=$(cd "$(dirname "$(command -v protoc)")/.." && pwd)/include
if [ -f "$protoc_include/google/protobuf/struct.proto" ]; then
	includes+=(-I "$protoc_include")
fi

# protoc-gen-go from go.mod's tool dependency.
(cd "$module_root" && go build -o "$tmp/bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go)

go_opts=(--go_opt=paths=source_relative)
for f in "${PROTO_FILES[@]}"; do
	go_opts+=("--go_opt=M$f=$GO_PACKAGE;dataformpb")
done

gen=$tmp/gen
mkdir -p "$gen"
(
	cd "$src"
	protoc "${includes[@]}" \
		--plugin=protoc-gen-go="$tmp/bin/protoc-gen-go" \
		--go_out="$gen" "${go_opts[@]}" \
		"${PROTO_FILES[@]}"
)

# Deterministic header: the protoc version line depends on the machine, so
# replace it with the placeholder protoc-gen-go itself uses when unknown.
for f in "$gen"/*.pb.go; do
	sed -i.bak 's|^\(//[[:space:]]*protoc[[:space:]]*\)v[0-9][0-9.]*$|\1(unknown)|' "$f"
	rm -f "$f.bak"
done
gofmt -l "$gen" | grep . && { log "generated code is not gofmt-clean"; exit 1; }

# Replace the generated files in the output dir (and drop stale ones), leaving
# hand-written files such as tests alone.
mkdir -p "$out_dir"
rm -f "$out_dir"/*.pb.go
cp "$gen"/*.pb.go "$out_dir"/
log "wrote $(ls "$gen" | wc -l | tr -d ' ') files to $out_dir"
