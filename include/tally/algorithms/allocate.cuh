// tally/algorithms/allocate.cuh -- allocating memory to parallel workers on the GPU: each
// worker's offset is the exclusive sum of the sizes before it (the idea and types:
// allocate.hpp, which also has the CPU form).
//
//   T tally::allocate(sizes, n, offsets, options = {})
//       offsets[i] = sizes[0] + ... + sizes[i-1]; returns the total (waits for it;
//       refused while the stream is captured into a graph)
//   void tally::allocate_into(sizes, n, offsets, total, options = {})
//       the same, writing the total to *total (device memory); asynchronous, no
//       allocation of its own beyond the scan's: the form to capture
//   T: the offsets' value type; sizes, offsets: device pointers or random-access iterators;
//   in place (offsets == sizes) is allowed.
//
// One launch: tally::exclusive_scan of the n sizes followed by a zero, whose (n+1)-th
// value, the total, is stored to *total. Errors: n < 0, null or host pointers ->
// std::invalid_argument naming the function; CUDA failures -> tally::error.
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/algorithms/allocate.hpp"
#include "tally/algorithms/support.cuh"
#include "tally/core/options.hpp"
#include "tally/device/arguments.cuh"
#include "tally/device/scan.cuh"

namespace tally {

template <class Sizes, class Offsets, class Total>
void allocate_into(Sizes sizes, std::int64_t n, Offsets offsets, Total total, const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "allocate_into";
  using T = std::remove_cv_t<std::iter_value_t<Offsets>>;
  require_count(function, "n", n);
  require_device_pointer(function, "sizes", sizes, n);
  require_device_pointer(function, "offsets", offsets, n);
  require_device_pointer(function, "total", total, 1);
  if (n == INT64_MAX) throw_argument_error(function, "n", "must be < 2^63 - 1");
  tally::exclusive_scan(sizes_then_zero<T>(sizes, n),
                        make_store_iterator(offset_or_total<Offsets, Total, T>{offsets, total, n}),
                        n + 1, T(0), plus{}, o);
}

template <class Sizes, class Offsets>
std::remove_cv_t<std::iter_value_t<Offsets>> allocate(Sizes sizes, std::int64_t n, Offsets offsets,
                                                      const options& o = {}) {
  using namespace algorithms_support;
  using T = std::remove_cv_t<std::iter_value_t<Offsets>>;
  constexpr const char* function = "allocate";
  require_count(function, "n", n);
  require_device_pointer(function, "sizes", sizes, n);
  require_device_pointer(function, "offsets", offsets, n);
  if (n == 0) return T(0);
  return fetch<T>(function, o, [&](T* total) { tally::allocate_into(sizes, n, offsets, total, o); });
}

}  // namespace tally
