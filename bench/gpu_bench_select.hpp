// bench/gpu_bench_select.hpp -- the selection table (gpu_bench_select.cu).
#pragma once

namespace tally_bench::gpu {

struct gpu_context;

// The selection family on the device, at n = 2^10, 2^16, 2^20, 2^24 and 2^28 (--quick:
// 2^20 and 2^24; --sizes replaces the list, --max-log2 caps it), in one run. Each case
// (the row's variant) has three rows: a device-to-device copy of half the bytes the case
// reads + writes (the floor: its time is that of moving the case's bytes at the copy's
// rate), CUB's call and tally's.
//   uint32 (--types int32 or uint32): select_if 50% and 10% kept, select_flagged 50% (uint8
//     flags), partition 50%, unique, run_length_encode (int32 counts) and reduce_by_key
//     (uint32 keys and values, plus) on runs of U[1,7] equal items;
//   float: select_if 50%;
//   uint64 (--types int64 or uint64): select_if 50%, reduce_by_key (uint64 keys and values).
// Every CUB and tally output is compared in full with the sequential oracle
// (tally/cpu/sequential_select.hpp). Runs only when --operations names select.
void run_select_table(gpu_context& context);

}  // namespace tally_bench::gpu
