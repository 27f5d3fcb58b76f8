#!/usr/bin/env bash
# The compare view of two 1,000,000-step runs in headless Chromium, on the
# ledger bench_server left behind (runs long-a and long-b).
set -euo pipefail
build=${BUILD:-build}
db=$build/bench/server/server.db
[ -f "$db" ] || { echo "bench/dashboard.sh: run build/bench_server first" >&2; exit 1; }
scripts/deps.sh chromium >&2
BUILD="$build" scripts/peers.sh >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkfifo "$tmp/ready"
"$build/ordo" serve --db "$db" --listen 127.0.0.1:0 > "$tmp/ready" 2>/dev/null &
server=$!
read -r line < "$tmp/ready"
url=$(echo "$line" | grep -o 'http://[0-9.]*:[0-9]*')
node bench/dashboard.mjs "$build/peers/node_modules" "$url" long-a long-b
kill -TERM "$server"
wait "$server"
