#!/usr/bin/env bash
# Makes sure the Debian packages ordo builds against are installed.
# As root: installs what is missing with apt-get (after apt-get update).
# Otherwise: prints exactly which packages are missing and fails.
# Usage: scripts/deps.sh [extra-package ...]
set -euo pipefail

packages=(pkg-config libsqlite3-dev libmicrohttpd-dev libjansson-dev libssl-dev libzstd-dev libpcre2-dev zlib1g-dev libsnappy-dev "$@")

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  exit 0
fi

echo "deps: missing Debian packages: ${missing[*]}" >&2
echo "deps: install them with: sudo apt-get install ${missing[*]}" >&2
exit 1
