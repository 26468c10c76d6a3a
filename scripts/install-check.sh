#!/usr/bin/env bash
# The consumer test of the installed package: configures tally without tests and
# benchmark in a temporary build directory, installs it into a temporary prefix, then
# configures and builds tests/install against that prefix with find_package(tally) (the
# GPU program too where nvcc is found, only compiled and linked) and runs the CPU program.
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
echo "install-check: passed"
