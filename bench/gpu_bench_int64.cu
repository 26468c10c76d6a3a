// bench/gpu_bench_int64.cu -- the GPU benchmark of int64 elements (one type per translation
// unit, so that the types compile in parallel).
#include "gpu_bench_type.cuh"

namespace tally_bench::gpu {
template void run_gpu_type<std::int64_t>(gpu_context&, const std::string&);
}  // namespace tally_bench::gpu
