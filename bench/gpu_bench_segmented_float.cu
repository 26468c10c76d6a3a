// bench/gpu_bench_segmented_float.cu -- the segmented table's float rows (one type per
// translation unit, so that the types compile in parallel).
#include "gpu_bench_segmented.cuh"

namespace tally_bench::gpu::segmented {
template void run_segmented_type<float>(gpu_context&, const std::string&, const segmented_plan&);
}  // namespace tally_bench::gpu::segmented
