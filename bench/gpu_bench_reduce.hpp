// bench/gpu_bench_reduce.hpp -- the course's table of reductions (gpu_bench_reduce.cu).
#pragma once

namespace tally_bench::gpu {

struct gpu_context;

// For int32 and float sums at n = 1000, 1,000,000, 2^20, 2^24 and 2^28 (--quick: up to
// 2^24; --sizes replaces the list, --max-log2 caps it), in one run: a device-to-device copy
// of the same n, cub::DeviceReduce::Sum, tally's tree, block, chunked, chunked_consecutive,
// atomic and single-pass reductions (tally::reduction::*), tally::reduce_into (device
// result) and tally::reduce (value returned). Rows go to the report as reduce rows.
void run_reduce_course_table(gpu_context& context);

}  // namespace tally_bench::gpu
