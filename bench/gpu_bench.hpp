// bench/gpu_bench.hpp -- the GPU part of tally-bench (gpu_bench.cu), or its stand-in
// when tally is built without CUDA (gpu_unavailable.cpp).
#pragma once

#include <string>

#include "bench_config.hpp"
#include "report.hpp"

namespace tally_bench {

// The number of CUDA devices usable at run time: 0 without CUDA, a driver or a device.
int gpu_device_count();

// Why there is no GPU part (empty when gpu_device_count() > 0).
std::string gpu_unavailable_reason();

// Measures the device-to-device copy, CUB, Thrust and every tally strategy x block
// algorithm on device 0, adding the rows to `out`.
void run_gpu_bench(const bench_config& config, report& out);

}  // namespace tally_bench
