#!/usr/bin/env bash
# ensure-nvim.sh — make sure a Neovim (0.7 or newer) is installed, for the
# headless editor test (daemon/nvim_test.go). Idempotent: does nothing when
# nvim is already on PATH; otherwise installs Debian's package with apt-get
# (as root, or through sudo when available). Prints nvim's path on stdout.
set -euo pipefail
if command -v nvim >/dev/null 2>&1; then
  command -v nvim
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-nvim.sh: nvim is missing and apt-get is not available; install Neovim >= 0.7" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "ensure-nvim.sh: not root and no sudo; install Neovim >= 0.7 (apt-get install neovim)" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# A lock shared with other installers of this repository's test tools.
exec 9>"${TMPDIR:-/tmp}/dfd-ensure-nvim.lock"
flock -w 600 9
if ! command -v nvim >/dev/null 2>&1; then
  $SUDO apt-get install -y -q neovim >&2 || { $SUDO apt-get update -q >&2 && $SUDO apt-get install -y -q neovim >&2; }
fi
command -v nvim
