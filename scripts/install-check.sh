#!/usr/bin/env bash
# The consumer test of the installed package: configures tally without tests and
# benchmark in a temporary build directory, installs it into a temporary prefix, then
# configures and builds tests/install against that prefix with find_package(tally) (the
# GPU program too where nvcc is found, only compiled and linked) and runs the CPU program;
# then builds examples/ against the same prefix and runs its ctest tests: the CPU examples,
# and the GPU examples too where this machine has a GPU (elsewhere they are not built:
# compiling them as CUDA takes minutes on CI's 2 cores, and nothing could run them).
# Exits non-zero on any failure; prints `install-check: passed` last.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"

work=$(mktemp -d "${TMPDIR:-/tmp}/tally-install-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'echo "install-check: FAILED" >&2' ERR
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "install-check: tally into $work/prefix"
cmake -S . -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DTALLY_BUILD_TESTS=OFF -DTALLY_BUILD_BENCH=OFF -DTALLY_INSTALL=ON \
      -DCMAKE_INSTALL_PREFIX="$work/prefix" >"$work/tally-configure.log" ||
  { cat "$work/tally-configure.log"; false; }
cmake --build "$work/build" -j "$jobs"
cmake --install "$work/build" >"$work/install.log" || { cat "$work/install.log"; false; }

echo "install-check: tests/install against the installed package"
cmake -S tests/install -B "$work/consumer" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/consumer-configure.log" ||
  { cat "$work/consumer-configure.log"; false; }
cmake --build "$work/consumer" -j "$jobs"
"$work/consumer/tally_install_cpu"
if [[ -x "$work/consumer/tally_install_gpu" ]]; then
  echo "install-check: the GPU program compiled and linked (not run)"
fi

examples_gpu=OFF
labels=cpu
if has_gpu && command -v nvcc >/dev/null 2>&1; then examples_gpu=ON; labels='cpu|gpu'; fi
echo "install-check: examples/ against the installed package (labels $labels)"
cmake -S examples -B "$work/examples" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DTALLY_EXAMPLES_GPU="$examples_gpu" \
      >"$work/examples-configure.log" || { cat "$work/examples-configure.log"; false; }
cmake --build "$work/examples" -j "$jobs"
ctest --test-dir "$work/examples" -L "$labels" --output-on-failure
echo "install-check: passed"
