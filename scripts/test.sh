#!/usr/bin/env bash
# Builds tally and runs its tests: the `cpu` tests always, the `gpu` tests too when this
# machine has a GPU. The GPU code is compiled wherever nvcc is found. Then the consumer
# test of the installed package (scripts/install-check.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
scripts/install-deps.sh test
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
labels=cpu
if has_gpu; then labels='cpu|gpu'; fi
ctest --test-dir "build/$preset" -L "$labels" --output-on-failure
# the installed package, as a consumer's find_package(tally) sees it
scripts/install-check.sh
