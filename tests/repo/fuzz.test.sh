#!/bin/sh
# A short run of every libFuzzer harness (tests/fuzz/), after replaying
# every input that once crashed one.  `make fuzz FUZZ_SECONDS=N` is the
# long run; this keeps the harnesses building and finds the shallow bugs.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
command -v clang >/dev/null || { echo "fuzz: no clang (make deps)" >&2; exit 1; }
make -s --no-print-directory fuzz-build
sh tests/fuzz/run.sh build-fuzz "${FUZZ_SECONDS:-5}"
