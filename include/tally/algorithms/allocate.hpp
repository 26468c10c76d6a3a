// tally/algorithms/allocate.hpp -- allocating memory to parallel workers (Blelloch 1990,
// "Prefix sums and their applications", 1.6; the course's sausage-cutting example): worker
// i asks for sizes[i] units and receives the block starting at offsets[i], the exclusive
// sum of the sizes before it, and the call returns the total, which is where the next
// allocation would start:
//     offsets[i] = sizes[0] + ... + sizes[i-1],   total = sizes[0] + ... + sizes[n-1]
// One exclusive scan of n + 1 values, the sizes followed by a zero: its last value is the
// total, which the scan's output (a store_iterator) writes to the total's place instead
// of offsets[n]. The sums are in the offsets' value type (int64 offsets for int32 sizes
// count beyond 2^31). Sizes are not checked (negative sizes give decreasing offsets).
//
//   tally::cpu::allocate(sizes_first, sizes_last, offsets_first) -> total
//       in place (offsets_first == sizes_first) is allowed. The GPU forms: allocate.cuh.
#pragma once

#include <cstdint>
#include <iterator>

#include "tally/algorithms/support.hpp"
#include "tally/core/counting_iterator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/store_iterator.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/scan.hpp"
#include "tally/cpu/sequential.hpp"

namespace tally::algorithms_support {

// i -> sizes[i] for i < n, 0 at i == n (the total's place).
template <class Sizes, class T>
struct size_or_zero {
  Sizes sizes{};
  std::int64_t n = 0;
  TALLY_HOST_DEVICE T operator()(std::int64_t i) const {
    return i < n ? static_cast<T>(sizes[i]) : T(0);
  }
};

// offsets[i] for i < n, the total at i == n.
template <class Offsets, class Total, class T>
struct offset_or_total {
  Offsets offsets{};
  Total total{};
  std::int64_t n = 0;
  TALLY_HOST_DEVICE void operator()(std::int64_t i, const T& v) const {
    if (i < n) {
      offsets[i] = static_cast<std::iter_value_t<Offsets>>(v);
    } else {
      *total = v;
    }
  }
};

template <class T, class Sizes>
auto sizes_then_zero(Sizes sizes, std::int64_t n) {
  return make_transform_iterator(counting_iterator<std::int64_t>(0), size_or_zero<Sizes, T>{sizes, n});
}

}  // namespace tally::algorithms_support

namespace tally::cpu {

template <std::random_access_iterator SizeIt, std::random_access_iterator OffIt>
std::iter_value_t<OffIt> allocate(SizeIt sizes_first, SizeIt sizes_last, OffIt offsets_first) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::allocate";
  using T = std::iter_value_t<OffIt>;
  const std::int64_t n = static_cast<std::int64_t>(sizes_last - sizes_first);
  if (n < 0) throw_argument_error(function, "sizes_last", "is before sizes_first");
  require_pointer(function, "sizes_first", sizes_first, n);
  require_pointer(function, "offsets_first", offsets_first, n);
  T total{};
  const auto in = sizes_then_zero<T>(sizes_first, n);
  const auto out = make_store_iterator(offset_or_total<OffIt, T*, T>{offsets_first, &total, n});
  if (share_memory(sizes_first, n, offsets_first, n)) {
    // in place: one thread (each size is read before its offset overwrites it)
    tally::cpu::sequential::exclusive_scan(in, in + (n + 1), out, T(0), plus{});
  } else {
    tally::cpu::exclusive_scan(in, in + (n + 1), out, T(0), plus{});
  }
  return total;
}

}  // namespace tally::cpu
