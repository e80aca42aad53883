#!/usr/bin/env bash
# Fails (exit 1, printing a diff) if the committed jit/wirepb/wire.pb.go
# differs from what gen.sh produces from wire.proto now.
# Usage (from anywhere): bash jit/wirepb/check.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DFD_WIRE_OUT=$tmp bash "$here/gen.sh"
if ! diff -u "$here/wire.pb.go" "$tmp/wire.pb.go" >"$tmp/diff"; then
	sed -e "s|$tmp/wire.pb.go|jit/wirepb/wire.pb.go (regenerated)|" \
		-e "s|$here/wire.pb.go|jit/wirepb/wire.pb.go (committed)|" "$tmp/diff"
	echo "jit/wirepb/check.sh: generated code is stale; run 'go generate ./jit/wirepb' and commit the result" >&2
	exit 1
fi
echo "jit/wirepb/check.sh: jit/wirepb is up to date" >&2
