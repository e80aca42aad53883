#!/usr/bin/env bash
# make-main.sh — lay out the npm package @dfdtools/dfd (the launcher,
# npm/dfd) for VERSION in OUTDIR, with an optional dependency on each
# platform package laid out beside OUTDIR (OUTDIR/../dfd-<os>-<cpu>, made by
# npm/make-platform.sh): a release lists the platforms it built.
#
# Usage: npm/make-main.sh VERSION OUTDIR      (OUTDIR is replaced)
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: npm/make-main.sh VERSION OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
version=$1 out=$2
rm -rf "$out"
mkdir -p "$out/bin"
cp "$here/dfd/bin/dfd" "$out/bin/dfd"
chmod 755 "$out/bin/dfd"
cp "$here/dfd/README.md" "$out/README.md"
node -e '
const fs = require("fs"), path = require("path");
const [template, version, out] = process.argv.slice(1);
const pkg = JSON.parse(fs.readFileSync(template, "utf8"));
pkg.version = version;
pkg.optionalDependencies = {};
for (const d of fs.readdirSync(path.dirname(out)).sort()) {
  const f = path.join(path.dirname(out), d, "package.json");
  if (!d.startsWith("dfd-") || !fs.existsSync(f)) continue;
  const p = JSON.parse(fs.readFileSync(f, "utf8"));
  if (p.version !== version) throw new Error(`${f} is version ${p.version}, not ${version}`);
  pkg.optionalDependencies[p.name] = version;
}
if (Object.keys(pkg.optionalDependencies).length === 0) throw new Error(`no platform package beside ${out}`);
fs.writeFileSync(path.join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
' "$here/dfd/package.json" "$version" "$out"
