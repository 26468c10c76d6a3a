#!/usr/bin/env bash
# A/B of two tally-bench builds on the GPU machine, run one after the other in one call:
#   scripts/gpu-ab.sh A_DIR B_DIR [rounds] [tally-bench arguments...]
# A_DIR and B_DIR are build trees (or unpacked scripts/gpu-prebuild.sh bundles) holding
# bench/tally-bench and, where the host libraries travelled with them, lib/. Each round runs
# A then B with `--gpu --quick` (or the arguments given), writing ab-{a,b}-ROUND.csv into
# build/gpu-ab; then scripts/ab_compare.py prints the rows where B is slower than A by more
# than 2% in every round (the ratio to each run's own copy, and the speedup over CUB). With
# $OUT set (the device tool's folder), the CSVs and the comparison land there as one
# ab.tar.gz (the tool brings back few files).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
a=${1:?A_DIR}; b=${2:?B_DIR}; rounds=${3:-2}
shift $(( $# >= 3 ? 3 : $# ))
args=("$@")
((${#args[@]} == 0)) && args=(--gpu --quick)
out=$root/build/gpu-ab
mkdir -p "$out"
run() {  # run DIR CSV
  LD_LIBRARY_PATH="$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$1/bench/tally-bench" "${args[@]}" --csv "$2" >"$2.log" 2>&1 ||
    { echo "gpu-ab: $1/bench/tally-bench failed (see $2.log)"; tail -5 "$2.log"; return 1; }
}
pairs=()
for ((r = 1; r <= rounds; ++r)); do
  run "$a" "$out/ab-a-$r.csv" || exit 1
  run "$b" "$out/ab-b-$r.csv" || exit 1
  pairs+=("$out/ab-a-$r.csv" "$out/ab-b-$r.csv")
done
python3 scripts/ab_compare.py "${pairs[@]}" | tee "$out/ab-compare.txt"
if [[ -n ${OUT:-} ]]; then tar -C "$out" -czf "$OUT/ab.tar.gz" .; fi
