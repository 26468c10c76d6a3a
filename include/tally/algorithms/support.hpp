// tally/algorithms/support.hpp -- what the applications' CPU forms share beyond tally's
// public calls.
//
//   algorithms_support::share_memory(a, na, b, nb)
//       whether two contiguous ranges overlap. A parallel CPU scan may read an input tile
//       again after other threads wrote output; through iterators that hide the memory
//       (a transform of the index, a store_iterator) it cannot see an in-place call, so
//       the applications check and run in place on one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>

namespace tally::algorithms_support {

// Non-contiguous iterators are taken to be apart.
template <class It1, class It2>
bool share_memory(It1 a, std::int64_t na, It2 b, std::int64_t nb) {
  if constexpr (std::contiguous_iterator<It1> && std::contiguous_iterator<It2>) {
    if (na <= 0 || nb <= 0) return false;
    const auto* a0 = reinterpret_cast<const unsigned char*>(std::to_address(a));
    const auto* b0 = reinterpret_cast<const unsigned char*>(std::to_address(b));
    const auto* a1 = a0 + static_cast<std::size_t>(na) * sizeof(std::iter_value_t<It1>);
    const auto* b1 = b0 + static_cast<std::size_t>(nb) * sizeof(std::iter_value_t<It2>);
    return std::less<>{}(a0, b1) && std::less<>{}(b0, a1);
  } else {
    return false;
  }
}

}  // namespace tally::algorithms_support
