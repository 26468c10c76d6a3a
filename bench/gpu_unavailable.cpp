// bench/gpu_unavailable.cpp -- the GPU part's stand-in in a build without CUDA, so that
// tally-bench links and runs its CPU part everywhere.
#include <stdexcept>

#include "gpu_bench.hpp"

namespace tally_bench {

int gpu_device_count() { return 0; }

std::string gpu_unavailable_reason() {
  return "tally-bench was built without CUDA (no nvcc found, or TALLY_ENABLE_CUDA=OFF)";
}

void run_gpu_bench(const bench_config&, report&) {
  throw std::runtime_error(gpu_unavailable_reason());
}

}  // namespace tally_bench
