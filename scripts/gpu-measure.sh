#!/usr/bin/env bash
# Measurements for docs/ on the GPU machine, after scripts/gpu-check.sh built build/gpu:
#   1. the full GPU benchmark (every strategy x block algorithm beside the copy and CUB);
#   2. the CPU backend's thread scaling on the GPU host's cores (n = 2^26 int32);
#   3. shared-memory bank conflicts of the block algorithms (ncu), for algorithms.md.
# Writes to $OUT (or build/gpu-measure). Prints the key lines last.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$root"
out=${OUT:-$root/build/gpu-measure}
mkdir -p "$out"
bench=build/gpu/bench/tally-bench

"$bench" --gpu --csv "$out/bench-gpu.csv" --json "$out/bench-gpu.json" >"$out/bench-gpu.log" 2>&1
echo "gpu bench exit $?"
"$bench" --cpu --sizes 2^26 --types int32,float --threads "1,2,4,8,$(nproc)" \
  --csv "$out/bench-cpu-threads.csv" >"$out/bench-cpu-threads.log" 2>&1
echo "cpu thread sweep exit $?"

# Bank conflicts: one size, the scan kernels of every block algorithm.
ncu --clock-control none --csv --page raw -k regex:scan_kernel -c 60 \
  --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,gpu__time_duration.sum \
  "$bench" --gpu --sizes 2^24 --types int32 --ops plus --operations inclusive --reps 1 \
  --filter reduce_then_scan >"$out/ncu-bank-conflicts.csv" 2>"$out/ncu.log"
echo "ncu exit $?"
grep -E "int32  plus  inclusive_scan" "$out/bench-gpu.log" | grep -E "^2\^(16|20|24|28) " | head -60
tail -30 "$out/bench-cpu-threads.log"
