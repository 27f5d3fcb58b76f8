#!/usr/bin/env bash
# make regenerates build/config.mk from pkg-config, and runs the package
# installer ($(DEPS), scripts/deps.sh, which asks dpkg-query) only when pkg-config does not find
# every package: not at all when they are there, and on a machine lacking
# one of them or pkg-config itself. pkg-config and the installer are
# stand-ins (new files in a temporary folder, put first on PATH); the
# installer and dpkg-query note that they ran.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
real=$(command -v pkg-config) dpkg_query=$(command -v dpkg-query || echo false)

# stand_in PATH BODY: a new executable shell script (never through a link)
stand_in() {
  rm -f "$1"
  printf '#!/bin/sh\n%s\n' "$2" > "$1"
  chmod +x "$1"
}
stand_in "$tmp/deps" "echo ran >> '$tmp/deps.log'"

# regenerate CASE PKG_CONFIG_BODY: CASE's config.mk, under that pkg-config
regenerate() {
  mkdir -p "$tmp/$1/bin"
  stand_in "$tmp/$1/bin/pkg-config" "$2"
  stand_in "$tmp/$1/bin/dpkg-query" "echo ran >> '$tmp/deps.log'; exec '$dpkg_query' \"\$@\""
  rm -f "$tmp/deps.log"
  PATH="$tmp/$1/bin:$PATH" make -s -C "$root" BUILD="$tmp/$1" DEPS="$tmp/deps" \
    "$tmp/$1/config.mk" > "$tmp/$1.out" 2>&1
}
result() { # result NAME COMMAND...: passes when the command does
  local name=$1; shift
  if "$@"; then passed=$((passed + 1)); echo "ok   $name"
  else failed=$((failed + 1)); echo "FAIL $name"; cat "$tmp"/*.out | sed 's/^/    /'; fi
}
ran() { [ -f "$tmp/deps.log" ]; }
flags_written() { grep -q -- '^PKG_LIBS := .*-lsqlite3' "$tmp/$1/config.mk"; }

regenerate present "exec '$real' \"\$@\""
result "packages present: the installer does not run" eval '! ran && flags_written present'

regenerate missing "[ \"\$1\" = --exists ] && exit 1; exec '$real' \"\$@\""
result "a package missing: the installer runs, then the flags are written" \
  eval 'ran && flags_written missing'

regenerate fresh "exit 127" # as the shell answers for a command it cannot find
result "no pkg-config (a fresh machine): the installer runs" ran

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
