// tally/core/shape.hpp -- the argument checks of the batched scans (CPU and GPU): an N-d
// shape and an axis to the (outer, len, inner) view of the scanned axis.
//
//   tally::axis_view v = tally::check_shape(function, shape, axis);
//       for code built on the batched scans (tally/algorithms/): the same checks and
//       messages as tally's own calls; a shape with a zero extent gives {0, 0, 0}.
//       Element (o, k, j) of the view (o < outer, k < len along the axis, j < inner) is
//       element (o * len + k) * inner + j of the row-major array; its line is o * inner + j.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "tally/core/error.hpp"

namespace tally::detail {

// Shape checks; returns (outer, len, inner) of the scanned axis.
struct axis_view {
  std::int64_t outer, len, inner;
  std::int64_t total() const { return outer * len * inner; }
};

inline axis_view checked_shape(const char* fn, std::span<const std::int64_t> shape, int axis) {
  if (shape.empty()) throw_invalid(fn, "shape", "is empty (no axis to scan)");
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (axis < 0 || axis >= rank) {
    throw_invalid(fn, "axis", "must be in [0, " + std::to_string(rank) + "), got " +
                                                 std::to_string(axis));
  }
  std::int64_t total = 1;
  bool any_zero = false;
  for (std::size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] < 0) {
      throw_invalid(fn, "shape", "has a negative extent: shape[" + std::to_string(a) +
                                                    "] = " + std::to_string(shape[a]));
    }
    if (shape[a] == 0) any_zero = true;
  }
  for (std::size_t a = 0; a < shape.size() && !any_zero; ++a) {
    if (total > std::numeric_limits<std::int64_t>::max() / shape[a]) {
      throw_invalid(fn, "shape", "has more elements than an int64 can count");
    }
    total *= shape[a];
  }
  axis_view v{1, shape[static_cast<std::size_t>(axis)], 1};
  for (int a = 0; a < axis; ++a) v.outer *= shape[static_cast<std::size_t>(a)];
  for (std::size_t a = static_cast<std::size_t>(axis) + 1; a < shape.size(); ++a) v.inner *= shape[a];
  if (any_zero) v = axis_view{0, 0, 0};
  return v;
}

inline void check_matrix(const char* fn, std::int64_t rows, std::int64_t cols, int axis) {
  if (rows < 0) throw_invalid(fn, "rows", "must be >= 0, got " + std::to_string(rows));
  if (cols < 0) throw_invalid(fn, "cols", "must be >= 0, got " + std::to_string(cols));
  if (axis != 0 && axis != 1) {
    throw_invalid(fn, "axis", "must be 0 (down the columns) or 1 (along the rows), got " +
                                                 std::to_string(axis));
  }
}

}  // namespace tally::detail

namespace tally {
using detail::axis_view;
inline axis_view check_shape(const char* function, std::span<const std::int64_t> shape, int axis) {
  return detail::checked_shape(function, shape, axis);
}
}  // namespace tally
