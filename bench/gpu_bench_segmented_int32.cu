// bench/gpu_bench_segmented_int32.cu -- the segmented table's int32 rows (one type per
// translation unit, so that the types compile in parallel).
#include "gpu_bench_segmented.cuh"

namespace tally_bench::gpu::segmented {
template void run_segmented_type<std::int32_t>(gpu_context&, const std::string&, const segmented_plan&);
}  // namespace tally_bench::gpu::segmented
