// tally/device/batched/column_groups.cuh -- rows of 2, 3 or 4 columns as ONE value.
//
// A batched scan along a non-last axis with inner == 2, 3 or 4 scans every column of a
// slice over its rows. Taking a row as one 8- to 24-byte value (a column group) whose
// operator applies column by column turns the batched scan into ONE scan of groups: a
// plain scan for one slice (every plan of the single-pass engine, at the full width of
// 16-byte vectors, where the strided kernel's tiles are 2 or 4 columns wide), or, for
// several slices of 8-byte groups, a segmented scan of equal lengths of len rows. Which
// calls take it: detail/segmented_plans.cuh; what it earns: docs/performance.md, "What
// each path earns".
#pragma once

#include <cstddef>

#include "tally/core/macros.hpp"

namespace tally::detail::segmented {

// A group is aligned to its size where that is a power of two (8 and 16 bytes: the
// vectorised and 16-byte paths take it), otherwise as T (three columns: 12 or 24 bytes).
template <class T, int Cols>
inline constexpr std::size_t column_group_alignment =
    ((Cols * sizeof(T)) & (Cols * sizeof(T) - 1)) == 0 ? Cols * sizeof(T) : alignof(T);
template <class T, int Cols>
struct alignas(column_group_alignment<T, Cols>) column_group {
  T column[Cols];
};
template <class T>
using column_pair = column_group<T, 2>;

// The operator applied column by column.
template <class Op>
struct column_group_op {
  Op op;
  template <class T, int Cols>
  TALLY_HOST_DEVICE column_group<T, Cols> operator()(const column_group<T, Cols>& a,
                                                     const column_group<T, Cols>& b) const {
    column_group<T, Cols> r;
    for (int c = 0; c < Cols; ++c) r.column[c] = static_cast<T>(op(a.column[c], b.column[c]));
    return r;
  }
};
template <class Op>
using column_pair_op = column_group_op<Op>;

}  // namespace tally::detail::segmented
