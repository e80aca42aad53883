#!/usr/bin/env bash
# size.sh — what each package contributes to the dfd binary.
#
# Usage: bench/size.sh [BINARY] [N]
#   BINARY: an unstripped dfd (default: build one into a temporary file,
#           CGO_ENABLED=0, as a release build but without -s -w, which
#           would drop the symbol table this reads)
#   N:      how many rows of the package table (default 25)
#
# Sums `go tool nm -size` symbol sizes (code, data, read-only data, type
# descriptors) per Go package and per module, biggest first. Symbols name
# their package: "github.com/x/y/z.F", "type:*github.com/x/y/z.T",
# "go:string.*" (strings and other linker-made data: "go:"). Symbol sizes do
# not add up to the file's size: DWARF, the symbol table, pclntab and
# section padding are not symbols; the header says how much of the file the
# symbols cover. Zero-initialised variables (.bss, .noptrbss) take memory
# but no room in the file: with readelf (ELF binaries) they are counted
# apart, not in the tables.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-}
rows=${2:-25}
if [[ -z $bin ]]; then
  bin=$(mktemp)
  trap 'rm -f "$bin"' EXIT
  CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$bin" ./cmd/dfd
fi
size=$(stat -c %s "$bin" 2>/dev/null || stat -f %z "$bin")
# The address range of the zero-initialised sections, "0 0" when unknown.
bss="0 0"
if command -v readelf >/dev/null 2>&1 && readelf -h "$bin" >/dev/null 2>&1; then
  bss=$(readelf -SW "$bin" | awk '
function hex(s,   i, n) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
$0 ~ /NOBITS/ { for (i = 1; i <= NF; i++) if ($i == "NOBITS") { a = hex($(i+1)); z = hex($(i+3)); if (!lo || a < lo) lo = a; if (a + z > hi) hi = a + z } } END { printf "%d %d", lo, hi }')
fi

# Where the file's bytes are, by section kind (ELF only): the symbol tables
# below cover code and data; the PC-line table grows with the number of
# functions and stays in a stripped binary, DWARF and .symtab do not.
if [[ $bss != "0 0" ]]; then
  readelf -SW "$bin" | awk '
function hex(s,   i, n) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
/^ *\[ *[0-9]+\]/ {
  sub(/^ *\[ *[0-9]+\] */, "")
  if ($2 == "NOBITS" || $1 == "") next
  z = hex($5); k = $1
  if (k ~ /^\.debug/) k = "DWARF (.debug_*, dropped by -w)"
  else if (k ~ /^\.(sym|str)tab$/) k = "symbol table (dropped by -s)"
  else if (k ~ /^\.(text|rodata|gopclntab|noptrdata|data|typelink|itablink|go\.buildinfo)$/) k = k
  else k = "other sections"
  sec[k] += z
}
END {
  n = split(".text .gopclntab .rodata .noptrdata .data .typelink .itablink .go.buildinfo", order, " ")
  order[++n] = "DWARF (.debug_*, dropped by -w)"; order[++n] = "symbol table (dropped by -s)"; order[++n] = "other sections"
  printf "sections:"
  for (i = 1; i <= n; i++) if (sec[order[i]] >= 50000) printf " %s %.1f MB;", order[i], sec[order[i]] / 1e6
  printf "\n"
}'
fi

go tool nm -size "$bin" | awk -v rows="$rows" -v file="$size" -v bss="$bss" '
function hex(s,   i, n) { n = 0; s = tolower(s); for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return n }
# pkg: the package of a symbol name, "" for the linker'"'"'s own.
function pkg(name,   i, rest, slash) {
  sub(/^type:(\*|\.)?/, "", name)
  sub(/^go:(itab\.|string|cuinfo|buildinfo|info|func)?.*/, "go:", name)
  if (name == "go:") return "(linker: strings, itabs, go: data)"
  sub(/^\*/, "", name)
  slash = 0
  for (i = length(name); i > 0; i--) if (substr(name, i, 1) == "/") { slash = i; break }
  rest = substr(name, slash + 1)
  i = index(rest, ".")
  if (i == 0) return "(other)"
  return substr(name, 1, slash + i - 1)
}
function module(p,   n, parts) {
  n = split(p, parts, "/")
  if (p ~ /^\(/ || n == 1) return (n == 1 && p !~ /^\(/) ? "(standard library)" : p
  if (parts[1] ~ /\./) {
    if (parts[1] == "golang.org" || parts[1] == "google.golang.org" || parts[1] == "cloud.google.com" || parts[1] == "go.opentelemetry.io") return parts[1] "/" parts[2]
    if (n < 3) return p
    return parts[1] "/" parts[2] "/" parts[3]
  }
  return "(standard library)"
}
BEGIN { split(bss, r, " "); bsslo = r[1] + 0; bsshi = r[2] + 0 }
$2 ~ /^[0-9]+$/ && NF >= 4 {
  s = $2; name = $4
  addr = hex($1)
  if (bsshi > 0 && addr >= bsslo && addr < bsshi) { zero += s; next }
  for (i = 5; i <= NF; i++) name = name " " $i
  p = pkg(name)
  gsub(/%2e/, ".", p)
  bypkg[p] += s; bymod[module(p)] += s; total += s
}
END {
  printf "binary %.1f MB; symbols %.1f MB (%.0f%%)", file / 1e6, total / 1e6, 100 * total / file
  if (zero > 0) printf "; zero-initialised variables %.1f MB more, in memory only", zero / 1e6
  printf "\n\n"
  print "| module | MB | % of symbols |"
  print "| --- | ---: | ---: |"
  n = 0
  for (m in bymod) mods[++n] = m
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (bymod[mods[j]] > bymod[mods[i]]) { t = mods[i]; mods[i] = mods[j]; mods[j] = t }
  for (i = 1; i <= n && i <= 15; i++) printf "| %s | %.1f | %.1f |\n", mods[i], bymod[mods[i]] / 1e6, 100 * bymod[mods[i]] / total
  print ""
  print "| package | MB | % of symbols |"
  print "| --- | ---: | ---: |"
  n = 0
  for (p in bypkg) pkgs[++n] = p
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (bypkg[pkgs[j]] > bypkg[pkgs[i]]) { t = pkgs[i]; pkgs[i] = pkgs[j]; pkgs[j] = t }
  for (i = 1; i <= n && i <= rows; i++) printf "| %s | %.2f | %.1f |\n", pkgs[i], bypkg[pkgs[i]] / 1e6, 100 * bypkg[pkgs[i]] / total
}'
