#!/usr/bin/env bash
# make-platform.sh — lay out the npm package @dfdtools/dfd-<os>-<cpu> that
# holds dfd's binary for one platform (scripts/release.sh runs it).
#
# Usage: npm/make-platform.sh VERSION OS CPU BINARY OUTDIR
#   OS and CPU are Node's names (process.platform, process.arch): linux,
#   darwin, win32; x64, arm64. OUTDIR is replaced.
# The package has no bin of its own: @dfdtools/dfd's launcher runs it, and
# npm installs it only where os and cpu match.
set -euo pipefail
[[ $# -eq 5 ]] || { echo "usage: npm/make-platform.sh VERSION OS CPU BINARY OUTDIR" >&2; exit 2; }
version=$1 os=$2 cpu=$3 binary=$4 out=$5
exe=dfd; [[ $os == win32 ]] && exe=dfd.exe
rm -rf "$out"
mkdir -p "$out/bin"
cp "$binary" "$out/bin/$exe"
chmod 755 "$out/bin/$exe"
node -e '
const [version, os, cpu, out] = process.argv.slice(1);
const pkg = {
  name: `@dfdtools/dfd-${os}-${cpu}`,
  version,
  description: `The dfd binary for ${os} ${cpu} (installed by @dfdtools/dfd)`,
  license: "MIT",
  repository: { type: "git", url: "git+https://github.com/dfdtools/dfd.git" },
  os: [os],
  cpu: [cpu],
  files: ["bin"],
  preferUnplugged: true,
};
require("fs").writeFileSync(`${out}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
' "$version" "$os" "$cpu" "$out"
printf '# @dfdtools/dfd-%s-%s\n\nThe dfd binary for %s %s. Install `@dfdtools/dfd`, which picks the right one.\n' "$os" "$cpu" "$os" "$cpu" >"$out/README.md"
