// tally/core/select.hpp -- result types of the selection family (stream compaction,
// partitions, run-length encoding), shared by every backend.
#pragma once

#include <cstdint>

namespace tally {

// The element counts of a three-way partition: how many went to the first, the second
// and the rest output (first + second + rest is the input's length).
struct three_way_result {
  std::int64_t first = 0;
  std::int64_t second = 0;
  std::int64_t rest = 0;

  friend constexpr bool operator==(const three_way_result&, const three_way_result&) = default;
};

}  // namespace tally
