#!/usr/bin/env bash
# The Python package's tests with Debian's python3 (and python3-numpy,
# installed as root when missing), against build/libordo.so and a real
# ordo serve.
set -uo pipefail
build=${BUILD:-build}
scripts/deps.sh python3 python3-numpy >&2 || { echo "0 passed, 1 failed"; exit 1; }
BUILD="$(cd "$build" && pwd)" /usr/bin/python3 tests/python/run.py
