// tally/device/arguments.cuh -- the pointer check of tally's device calls, for code built
// on them (tally/algorithms/ uses it):
//
//   tally::require_device_pointer(function, argument, it, n)
//       a raw pointer with n > 0 elements must not be null and must be memory the device
//       can read (device, managed or pinned host memory; pageable host memory only where
//       the device reads it directly); otherwise std::invalid_argument
//       "tally::<function>: argument '<argument>' ...". Iterators are not checked.
//
// A kernel that reads pageable host memory faults, and the fault is sticky: it takes the
// whole CUDA context with it. Checking before the first launch turns that into an
// exception the caller can handle.
#pragma once

#include <cstdint>

#include "tally/device/detail/pointer_check.cuh"

namespace tally {

template <class It>
void require_device_pointer(const char* function, const char* argument, const It& it,
                            std::int64_t n) {
  detail::check_device_pointer(function, argument, it, n);
}

}  // namespace tally
