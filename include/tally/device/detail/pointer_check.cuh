// tally/device/detail/pointer_check.cuh -- the pointer arguments of the device-wide calls:
// null with n > 0, or host memory the device cannot read, is a std::invalid_argument
// naming the argument, before any kernel touches it (a kernel that reads pageable host
// memory faults, and the fault is sticky: it takes the whole CUDA context with it).
//
// cudaPointerGetAttributes reports pageable (malloc, new, std::vector) host memory as
// cudaMemoryTypeUnregistered. Device, managed and pinned host memory (cudaHostAlloc,
// cudaHostRegister: mapped into the device's address space) are accepted, and so is
// pageable memory on a device that reads it directly (cudaDevAttrPageableMemoryAccess: HMM
// or ATS systems). Iterators are not checked (their memory is not known); what the check
// costs a call is in docs/performance.md ("Plans and thresholds").
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/occupancy.cuh"

namespace tally::detail {

// Whether the current device reads pageable host memory, cached per device.
inline bool reads_pageable_memory(const char* function) {
  static std::array<std::atomic<int>, 64> cache{};  // 0 unknown, 1 no, 2 yes
  const int device = current_device(function);
  int known = cache[static_cast<std::size_t>(device)].load(std::memory_order_relaxed);
  if (known == 0) {
    int value = 0;
    TALLY_CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrPageableMemoryAccess, device),
                     function);
    known = value != 0 ? 2 : 1;
    cache[static_cast<std::size_t>(device)].store(known, std::memory_order_relaxed);
  }
  return known == 2;
}

template <class It>
void check_device_pointer(const char* function, const char* argument, const It& it,
                          std::int64_t n) {
  check_pointer(function, argument, it, n);
  if constexpr (std::is_pointer_v<It>) {
    if (n <= 0) return;
    cudaPointerAttributes attributes{};
    TALLY_CUDA_CHECK(cudaPointerGetAttributes(&attributes, static_cast<const void*>(it)),
                     function);
    if (attributes.type == cudaMemoryTypeUnregistered && !reads_pageable_memory(function)) {
      throw_invalid(function, argument,
                    "is host memory the device cannot read (pageable memory: malloc, new, "
                    "std::vector); pass device, managed or pinned host memory");
    }
  }
}

}  // namespace tally::detail
