// bench/gpu_bench_double.cu -- the GPU benchmark of double elements (one type per translation
// unit, so that the types compile in parallel).
#include "gpu_bench_type.cuh"

namespace tally_bench::gpu {
template void run_gpu_type<double>(gpu_context&, const std::string&);
}  // namespace tally_bench::gpu
