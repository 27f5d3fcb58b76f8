#!/usr/bin/env bash
# The Python package's tests with Debian's python3 (python3-numpy and, for
# the training job, python3-torch: installed as root when missing), against
# build/libordo.so and a real ordo serve.
set -uo pipefail
build=${BUILD:-build}
# libopenblas0-pthread: Debian's torch runs its matrix products on the
# reference BLAS otherwise (~25x slower); one BLAS thread per process, as
# the jobs run several processes on two cores.
scripts/deps.sh python3 python3-numpy python3-torch libopenblas0-pthread >&2 ||
  { echo "0 passed, 1 failed"; exit 1; }
export OPENBLAS_NUM_THREADS=1
BUILD="$(cd "$build" && pwd)" /usr/bin/python3 tests/python/run.py
