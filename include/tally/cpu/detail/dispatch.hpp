// tally/cpu/detail/dispatch.hpp -- argument checks, tuning and path selection shared by
// the CPU backend's scans and reduction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>

#include "tally/core/error.hpp"
#include "tally/cpu/detail/simd.hpp"

namespace tally::cpu {

// Tuning of the parallel CPU paths (docs/performance.md, "Plans and thresholds").
struct cpu_tuning {
  // Elements per tile of the chained scan and leaves of the reduction: a tile is read
  // once from memory and scanned again from the core's L2, so it must fit in L2 with room.
  static constexpr std::size_t tile_bytes = std::size_t{96} << 10;
  // Below this many bytes of input one thread does the whole job (starting threads costs
  // more than it saves).
  static constexpr std::size_t parallel_min_bytes = std::size_t{512} << 10;
  // From this many bytes of output on, scans write with non-temporal stores: an output
  // this large is not in cache and will not be read back soon.
  static constexpr std::size_t stream_min_bytes = std::size_t{16} << 20;

  template <class T>
  static constexpr std::int64_t tile_elements() {
    return static_cast<std::int64_t>(tile_bytes / sizeof(T) > 0 ? tile_bytes / sizeof(T) : 1);
  }
};

namespace detail {

// The number of elements in [first, last), checked.
template <class It>
std::int64_t checked_distance(const char* function, It first, It last) {
  if constexpr (std::is_pointer_v<It>) {
    if ((first == nullptr) != (last == nullptr)) {
      tally::detail::throw_invalid(function, first == nullptr ? "first" : "last",
                    "is a null pointer and the other end of the range is not");
    }
  }
  const auto n = static_cast<std::int64_t>(std::ranges::distance(first, last));
  if (n < 0) {
    tally::detail::throw_invalid(function, "last", "comes before 'first' (distance " + std::to_string(n) + ")");
  }
  return n;
}

// A contiguous iterator as a raw pointer, for the vectorised paths.
template <class It>
auto raw(It it) {
  if constexpr (std::is_pointer_v<It>) {
    return it;
  } else {
    return std::to_address(it);
  }
}

// Whether writing the output cannot change the input: true unless both are contiguous
// and start at the same address (in place) or the input yields references that might
// alias the output. Decides whether the parallel scan may re-read input tiles.
template <class InIt, class OutIt>
bool input_survives_output(InIt first, OutIt d_first) {
  if constexpr (std::contiguous_iterator<InIt> && std::contiguous_iterator<OutIt>) {
    return static_cast<const void*>(raw(first)) != static_cast<const void*>(raw(d_first));
  } else {
    // A counting or transforming input returns values, not references: nothing aliases.
    return !std::is_reference_v<std::iter_reference_t<InIt>>;
  }
}

// Whether the (input, output, operator, accumulator) combination has a vectorised kernel:
// contiguous input and output of the same arithmetic type, accumulated in that type.
template <class InIt, class OutIt, class Op, class Acc>
constexpr bool vectorisable() {
  if constexpr (std::contiguous_iterator<InIt> && std::contiguous_iterator<OutIt>) {
    using T = std::remove_cv_t<std::iter_value_t<InIt>>;
    using U = std::remove_cv_t<std::iter_value_t<OutIt>>;
    return std::is_same_v<T, U> && std::is_same_v<T, Acc> && is_simd_type_v<T> &&
           is_simd_op_v<Op> && std::is_assignable_v<std::iter_reference_t<OutIt>, T>;
  } else {
    return false;
  }
}

}  // namespace detail
}  // namespace tally::cpu
