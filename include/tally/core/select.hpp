// tally/core/select.hpp -- result types of the selection family (stream compaction,
// partitions, run-length encoding), shared by every backend.
#pragma once

#include <cstdint>

#include "tally/core/macros.hpp"

namespace tally {

// The element counts of a three-way partition: how many went to the first, the second
// and the rest output (first + second + rest is the input's length).
struct three_way_result {
  std::int64_t first = 0;
  std::int64_t second = 0;
  std::int64_t rest = 0;

  friend constexpr bool operator==(const three_way_result&, const three_way_result&) = default;
};

// The default `equal` of unique, unique_by_key, run_length_encode, non_trivial_runs and
// reduce_by_key on the device: a == b, callable in host and device code (std::equal_to<>
// is host-only without nvcc's experimental relaxed-constexpr flag).
struct equal_to {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr bool operator()(const T& a, const U& b) const {
    return a == b;
  }
};

// Where a device selection writes how many items it produced: a pointer to device memory
// (or memory the device can write), written by the kernel, so the call neither waits nor
// copies (graph-capturable). Made by tally::count_to(pointer).
template <class T>
struct device_count {
  T* pointer;
};
inline device_count<std::int64_t> count_to(std::int64_t* pointer) { return {pointer}; }
inline device_count<three_way_result> count_to(three_way_result* pointer) { return {pointer}; }

}  // namespace tally
