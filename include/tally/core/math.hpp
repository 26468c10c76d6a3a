// tally/core/math.hpp -- the few standard helpers that device code needs, callable from
// host and device code. std::min and std::max are constexpr host functions, which nvcc
// lets device code call only under --expt-relaxed-constexpr; these have the same
// results (the first argument where the two compare equal, as std::min and std::max).
#pragma once

#include "tally/core/macros.hpp"

namespace tally::detail {

template <class T>
TALLY_HOST_DEVICE constexpr const T& min_of(const T& a, const T& b) {
  return b < a ? b : a;
}

template <class T>
TALLY_HOST_DEVICE constexpr const T& max_of(const T& a, const T& b) {
  return a < b ? b : a;
}

}  // namespace tally::detail
