// bench/gpu_bench_segmented_double.cu -- the segmented table's double rows (one type per
// translation unit, so that the types compile in parallel).
#include "gpu_bench_segmented.cuh"

namespace tally_bench::gpu::segmented {
template void run_segmented_type<double>(gpu_context&, const std::string&, const segmented_plan&);
}  // namespace tally_bench::gpu::segmented
