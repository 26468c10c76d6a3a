// tally/device/detail/cuda_check.cuh -- turning CUDA errors into tally::error.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "tally/core/error.hpp"

namespace tally::detail {

// Throws tally::error when `status` is not cudaSuccess. The message names the tally
// function and the CUDA call: "tally::inclusive_scan: cudaMallocAsync failed: out of
// memory (cudaErrorMemoryAllocation)".
inline void cuda_check(cudaError_t status, const char* function, const char* call) {
  if (status != cudaSuccess) {
    throw tally::error(static_cast<int>(status), std::string("tally::") + function + ": " + call +
                                                     " failed: " + cudaGetErrorString(status) +
                                                     " (" + cudaGetErrorName(status) + ")");
  }
}

}  // namespace tally::detail

// TALLY_CUDA_CHECK(call, function): evaluates a CUDA runtime call and throws tally::error
// naming `function` (a const char*, the public tally function) if it failed.
#define TALLY_CUDA_CHECK(call, function) ::tally::detail::cuda_check((call), (function), #call)

// After a kernel launch: a bad configuration shows up in cudaGetLastError.
#define TALLY_CUDA_CHECK_LAUNCH(kernel_name, function) \
  ::tally::detail::cuda_check(cudaGetLastError(), (function), "launch of " kernel_name)
