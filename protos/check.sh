#!/usr/bin/env bash
# Fails (exit 1, printing a diff) if the committed generated code in
# protos/dataformpb differs from what protos/gen.sh produces now.
# Usage (from anywhere): bash protos/check.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
committed=$here/dataformpb

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DFD_PROTO_OUT=$tmp/dataformpb bash "$here/gen.sh"

# Compare only generated files; hand-written files (tests) are not generated.
mkdir -p "$tmp/committed" "$tmp/fresh"
shopt -s nullglob
for f in "$committed"/*.pb.go; do cp "$f" "$tmp/committed/"; done
for f in "$tmp/dataformpb"/*.pb.go; do cp "$f" "$tmp/fresh/"; done

if ! diff -ru "$tmp/committed" "$tmp/fresh" >"$tmp/diff"; then
	sed -e "s|$tmp/committed|protos/dataformpb (committed)|g" \
		-e "s|$tmp/fresh|protos/dataformpb (regenerated)|g" "$tmp/diff"
	echo "protos/check.sh: generated code is stale; run 'go generate ./protos' and commit the result" >&2
	exit 1
fi
echo "protos/check.sh: protos/dataformpb is up to date" >&2
