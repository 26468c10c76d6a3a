#!/usr/bin/env bash
# A development round on the GPU machine, cheaper than scripts/gpu-check.sh: builds only
# the named targets, runs the named test executables (full size), then tally-bench with
# the given arguments. Logs under $OUT (or build/gpu-iterate).
#   scripts/gpu-iterate.sh "tally_gpu_single_pass tally-bench" "tally_gpu_single_pass" \
#       --gpu --types int32 --ops plus --operations inclusive
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
out=${OUT:-$root/build/gpu-iterate}
mkdir -p "$out"
targets=$1 tests=$2
shift 2
start=$SECONDS
cmake --preset gpu >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build --preset gpu -j "$jobs" --target $targets >"$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
echo "build OK in $((SECONDS - start)) s ($(grep -c -i warning "$out/build.log") warning lines)"
status=0
for t in $tests; do
  exe=$(find build/gpu/tests -name "$t" -type f | head -1)
  if "$exe" >"$out/$t.log" 2>&1; then
    echo "$t: $(grep -E '^\[  PASSED  \]' "$out/$t.log")"
  else
    status=1
    echo "$t: FAILED"; grep -E "FAILED|Failure|error|got|expected|differ" "$out/$t.log" | head -20
  fi
done
if (($# > 0)); then
  build/gpu/bench/tally-bench "$@" --csv "$out/bench.csv" >"$out/bench.log" 2>&1 || status=1
  tail -5 "$out/bench.log"
fi
exit $status
