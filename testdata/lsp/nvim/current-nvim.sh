#!/usr/bin/env bash
# current-nvim.sh — a current Neovim for the editor tests, beside Debian
# 12's 0.7.2: Debian unstable's (or, with SUITE=trixie, Debian 13's)
# neovim package and the libraries it needs, unpacked under
# ${DFD_CI_CACHE:-~/.cache/dfd-ci}/nvim-$SUITE without installing anything,
# and run with that suite's own loader and libc (its binaries need a newer
# glibc than Debian 12's). Prints the path of a wrapper script on stdout:
#   DFD_TEST_NVIM=$(bash testdata/lsp/nvim/current-nvim.sh) go test ./daemon -run TestNeovim
# Needs apt-get and dpkg-deb, and Debian's package archive. Idempotent.
set -euo pipefail
SUITE=${SUITE:-sid}
DIR=${DFD_CI_CACHE:-$HOME/.cache/dfd-ci}/nvim-$SUITE
if [ -x "$DIR/nvim" ] && "$DIR/nvim" --version >/dev/null 2>&1; then
  echo "$DIR/nvim"
  exit 0
fi
mkdir -p "$DIR/lists/partial" "$DIR/debs"
exec 9>"$DIR/.lock"
flock -w 600 9
echo "deb http://deb.debian.org/debian $SUITE main" >"$DIR/sources.list"
APT=(-q -o Dir::Etc::sourcelist="$DIR/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$DIR/lists"
  -o Dir::Cache="$DIR/cache" -o APT::Sandbox::User=root)
apt-get "${APT[@]}" update >&2
# neovim, its libraries, and the loader and libc they were built against.
pkgs=(neovim neovim-runtime libc6 libgcc-s1)
for dep in $(apt-cache "${APT[@]}" depends --no-recommends --no-suggests neovim | awk '/Depends:/ { print $2 }' | tr -d '<>' | sort -u); do
  case "$dep" in neovim-runtime | libc6) ;; *) pkgs+=("$dep") ;; esac
done
pkgs+=(libluajit-5.1-common)
(cd "$DIR/debs" && apt-get "${APT[@]}" download "${pkgs[@]}" >&2)
rm -rf "$DIR/root"
for deb in "$DIR"/debs/*.deb; do dpkg-deb -x "$deb" "$DIR/root"; done
libs=$(find "$DIR/root" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
loader=$(find "$DIR/root" -name 'ld-linux-x86-64.so.2' | head -1)
cat >"$DIR/nvim" <<WRAP
#!/bin/sh
# Debian $SUITE's Neovim with its own loader and libc (current-nvim.sh).
export VIMRUNTIME="$DIR/root/usr/share/nvim/runtime"
export LUA_CPATH="$DIR/root/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;;"
exec "$loader" --library-path "$libs" "$DIR/root/usr/bin/nvim" "\$@"
WRAP
chmod +x "$DIR/nvim"
"$DIR/nvim" --version | head -1 >&2
echo "$DIR/nvim"
