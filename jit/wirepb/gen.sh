#!/usr/bin/env bash
# Regenerates wire.pb.go from wire.proto, the frames of the JiT worker
# protocol (see jit/wire).
#
# Usage (from anywhere):  go generate ./jit/wirepb    or    bash jit/wirepb/gen.sh
#
# Environment:
#   DFD_WIRE_OUT  output directory (default: this directory). check.sh points
#                 it at a temporary directory.
#
# As protos/gen.sh: protoc comes from apt (installed if missing), and
# protoc-gen-go is built from this module's tool dependency (go.mod), so its
# version equals the google.golang.org/protobuf the code links against. The
# protoc version line of the header is normalised so that the output does not
# depend on the machine.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module_root=$(cd "$here/../.." && pwd)
out_dir=${DFD_WIRE_OUT:-$here}

log() { echo "jit/wirepb/gen.sh: $*" >&2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v protoc >/dev/null; then
	log "protoc not found; installing protobuf-compiler with apt-get"
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq protobuf-compiler >&2
fi

(cd "$module_root" && go build -o "$tmp/bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go)

mkdir -p "$tmp/gen"
(
	cd "$here"
	protoc -I "$here" \
		--plugin=protoc-gen-go="$tmp/bin/protoc-gen-go" \
		--go_out="$tmp/gen" --go_opt=paths=source_relative \
		wire.proto
)
sed -i.bak 's|^\(//[[:space:]]*protoc[[:space:]]*\)v[0-9][0-9.]*$|\1(unknown)|' "$tmp/gen/wire.pb.go"
rm -f "$tmp/gen/wire.pb.go.bak"
if gofmt -l "$tmp/gen" | grep .; then
	log "generated code is not gofmt-clean"
	exit 1
fi

mkdir -p "$out_dir"
cp "$tmp/gen/wire.pb.go" "$out_dir/wire.pb.go"
log "wrote $out_dir/wire.pb.go"
