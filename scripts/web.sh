#!/usr/bin/env bash
# Fetches the dashboard's pinned dependency (web/package-lock.json: uPlot)
# with npm and copies the files the dashboard serves into build/web.
# Reuses what is there. Needs Node.js and npm (and the npm registry).
set -euo pipefail
build=${BUILD:-build}
npm_dir=$build/web-npm
out=$build/web
mkdir -p "$npm_dir" "$out"
if ! command -v npm >/dev/null 2>&1; then
  echo "web: npm is missing (install Node.js 20 and npm)" >&2
  exit 1
fi
if ! cmp -s web/package-lock.json "$npm_dir/package-lock.json" || [ ! -d "$npm_dir/node_modules/uplot" ]; then
  cp web/package.json web/package-lock.json "$npm_dir/"
  (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
for f in uPlot.iife.min.js uPlot.min.css; do
  cmp -s "$npm_dir/node_modules/uplot/dist/$f" "$out/$f" || cp "$npm_dir/node_modules/uplot/dist/$f" "$out/$f"
done
