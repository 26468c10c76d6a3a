// bench/gpu_bench_float.cu -- the GPU benchmark of float elements (one type per translation
// unit, so that the types compile in parallel).
#include "gpu_bench_type.cuh"

namespace tally_bench::gpu {
template void run_gpu_type<float>(gpu_context&, const std::string&);
}  // namespace tally_bench::gpu
