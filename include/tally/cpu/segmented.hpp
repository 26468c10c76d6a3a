// tally/cpu/segmented.hpp -- the CPU backend's segmented and batched scans and its
// segmented reduction.
//
//   inclusive_scan_by_flags(first, last, flags_first, d_first, op = plus{})
//   exclusive_scan_by_flags(first, last, flags_first, d_first, init, op = plus{})
//   inclusive_segmented_scan(first, offsets_first, offsets_last, d_first, op = plus{})
//   exclusive_segmented_scan(first, offsets_first, offsets_last, d_first, init, op = plus{})
//   inclusive_scan_by_key(keys_first, keys_last, values_first, d_first, op = plus{},
//                         equal = std::equal_to<>{})
//   exclusive_scan_by_key(keys_first, keys_last, values_first, d_first, init, op = plus{},
//                         equal = std::equal_to<>{})
//   segmented_reduce(first, offsets_first, offsets_last, d_first, init, op = plus{})
//   inclusive_scan_batched(first, d_first, shape, axis, op = plus{})
//   exclusive_scan_batched(first, d_first, shape, axis, init, op = plus{})
//   inclusive_scan_batched(first, d_first, rows, cols, axis, op = plus{})       (2-d)
//   exclusive_scan_batched(first, d_first, rows, cols, axis, init, op = plus{}) (2-d)
//
// Semantics (segments, init, empty segments, keys, axes): tally/core/segmented.hpp.
// Scans return the end of the output: d_first + n (flags, keys), d_first +
// offsets[num_segments] (offsets; d_first if the offsets range is empty), d_first + the
// element count (batched); segmented_reduce returns d_first + num_segments.
//
// Execution: random-access ranges run the flag-augmented operator inside the chained tile
// scan (detail/segmented_scan.hpp): one pass, the same algorithm for every segment
// length, parallel on oneTBB's threads above cpu_tuning::parallel_min_bytes, vectorised
// runs for contiguous arithmetic data with plus/minimum/maximum. Batched scans along a
// non-last axis scan row vectors (detail/batched_scan.hpp). Other iterators run the
// sequential reference (cpu/sequential_segmented.hpp). Floating-point results depend on
// the tile size only (not on the thread count) but round differently from the
// sequential order.
//
// In place: d_first == first (values_first for the key forms) is allowed; d_first must
// not overlap the flags, keys or offsets, and no other overlap is allowed.
//
// Checked arguments (std::invalid_argument naming the function and the argument):
// `last` before `first` (and keys_last before keys_first), null pointers with elements,
// offsets: offsets_last before offsets_first, offsets[0] < 0, offsets decreasing anywhere
// (one extra read of the offsets, in parallel when there are many); batched: an empty
// shape, a negative extent, an element count beyond int64, axis outside [0, rank).
// Not checked: that offsets[num_segments] is within the input, that flags/keys ranges are
// as long as the values.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "tally/core/accumulator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/segmented.hpp"
#include "tally/core/shape.hpp"
#include "tally/cpu/detail/batched_scan.hpp"
#include "tally/cpu/detail/dispatch.hpp"
#include "tally/cpu/detail/segmented_reduce.hpp"
#include "tally/cpu/detail/segmented_scan.hpp"
#include "tally/cpu/sequential_segmented.hpp"

namespace tally::cpu {
namespace detail {

template <class... It>
inline constexpr bool all_random_access_v = (std::random_access_iterator<It> && ...);

// Checks a CSR offsets range; returns the number of segments (entries - 1, or 0 for an
// empty range).
template <class OffIt>
std::int64_t checked_offsets(const char* fn, OffIt offsets_first, OffIt offsets_last) {
  if constexpr (std::is_pointer_v<OffIt>) {
    if ((offsets_first == nullptr) != (offsets_last == nullptr)) {
      tally::detail::throw_invalid(fn, offsets_first == nullptr ? "offsets_first" : "offsets_last",
                                   "is a null pointer and the other end of the range is not");
    }
  }
  const auto entries = static_cast<std::int64_t>(std::ranges::distance(offsets_first, offsets_last));
  if (entries < 0) {
    tally::detail::throw_invalid(fn, "offsets_last", "comes before 'offsets_first' (distance " +
                                                         std::to_string(entries) + ")");
  }
  if (entries == 0) return 0;
  const auto first_offset = static_cast<std::int64_t>(*offsets_first);
  if (first_offset < 0) {
    tally::detail::throw_invalid(fn, "offsets_first",
                                 "holds a negative offset: offsets[0] = " + std::to_string(first_offset));
  }
  auto fail = [&](std::int64_t i, std::int64_t prev, std::int64_t cur) {
    tally::detail::throw_invalid(fn, "offsets_first",
                                 "is not non-decreasing: offsets[" + std::to_string(i) + "] = " +
                                     std::to_string(cur) + " < offsets[" + std::to_string(i - 1) +
                                     "] = " + std::to_string(prev));
  };
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  if constexpr (std::random_access_iterator<OffIt>) {
    auto at = [&](std::int64_t i) { return static_cast<std::int64_t>(offsets_first[i]); };
    auto scan_for_decrease = [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        if (at(i) < at(i - 1)) return i;
      }
      return none;
    };
    std::int64_t bad = none;
    if (entries < (std::int64_t{1} << 16)) {
      bad = scan_for_decrease(1, entries);
    } else {
      bad = tbb::parallel_reduce(
          tbb::blocked_range<std::int64_t>(1, entries, std::int64_t{1} << 14), none,
          [&](const tbb::blocked_range<std::int64_t>& r, std::int64_t found) {
            return std::min(found, scan_for_decrease(r.begin(), r.end()));
          },
          [](std::int64_t a, std::int64_t b) { return std::min(a, b); });
    }
    if (bad != none) fail(bad, at(bad - 1), at(bad));
  } else {
    std::int64_t prev = first_offset, i = 1;
    for (OffIt it = std::next(offsets_first); it != offsets_last; ++it, ++i) {
      const auto cur = static_cast<std::int64_t>(*it);
      if (cur < prev) fail(i, prev, cur);
      prev = cur;
    }
  }
  return entries - 1;
}

template <class OffIt>
std::int64_t offset_at(OffIt offsets_first, std::int64_t k) {
  return static_cast<std::int64_t>(*std::ranges::next(offsets_first, k));
}

// Shape checks (core/shape.hpp, shared with the GPU backend).
using tally::detail::axis_view;
using tally::detail::check_matrix;
using tally::detail::checked_shape;

template <bool Exclusive, class Acc, class InIt, class OutIt, class Op>
OutIt batched(const char* fn, InIt first, OutIt d_first, std::span<const std::int64_t> shape,
              int axis, const std::optional<Acc>& init, Op op) {
  static_assert(all_random_access_v<InIt, OutIt>,
                "tally::cpu batched scans need random-access input and output iterators");
  const axis_view v = checked_shape(fn, shape, axis);
  const std::int64_t n = v.total();
  tally::detail::check_pointer(fn, "first", first, n);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  scan_along_axis<Exclusive, Acc>(first, d_first, v.outer, v.len, v.inner, init, op,
                                  input_survives_output(first, d_first));
  return d_first + n;
}

}  // namespace detail

// ---- head flags -------------------------------------------------------------------------

template <class InIt, class FlagIt, class OutIt, class Op = plus>
OutIt inclusive_scan_by_flags(InIt first, InIt last, FlagIt flags_first, OutIt d_first,
                              Op op = {}) {
  using Acc = inclusive_accumulator_t<Op, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::inclusive_scan_by_flags";
  const std::int64_t n = detail::checked_distance(fn, first, last);
  tally::detail::check_pointer(fn, "flags_first", flags_first, n);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  if constexpr (detail::all_random_access_v<InIt, FlagIt, OutIt>) {
    detail::segmented_scan_range<false, Acc>(first, n, d_first, detail::make_flag_heads(flags_first),
                                             std::optional<Acc>{}, op,
                                             detail::input_survives_output(first, d_first));
    return d_first + n;
  } else {
    return sequential::inclusive_scan_by_flags(first, last, flags_first, d_first, op);
  }
}

template <class InIt, class FlagIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan_by_flags(InIt first, InIt last, FlagIt flags_first, OutIt d_first,
                              Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::exclusive_scan_by_flags";
  const std::int64_t n = detail::checked_distance(fn, first, last);
  tally::detail::check_pointer(fn, "flags_first", flags_first, n);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  if constexpr (detail::all_random_access_v<InIt, FlagIt, OutIt>) {
    detail::segmented_scan_range<true, Acc>(first, n, d_first, detail::make_flag_heads(flags_first),
                                            std::optional<Acc>(static_cast<Acc>(init)), op,
                                            detail::input_survives_output(first, d_first));
    return d_first + n;
  } else {
    return sequential::exclusive_scan_by_flags(first, last, flags_first, d_first, init, op);
  }
}

// ---- CSR offsets ----------------------------------------------------------------------------

template <class InIt, class OffIt, class OutIt, class Op = plus>
OutIt inclusive_segmented_scan(InIt first, OffIt offsets_first, OffIt offsets_last,
                               OutIt d_first, Op op = {}) {
  using Acc = inclusive_accumulator_t<Op, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::inclusive_segmented_scan";
  const std::int64_t segments = detail::checked_offsets(fn, offsets_first, offsets_last);
  if (offsets_first == offsets_last) return d_first;
  const std::int64_t base = detail::offset_at(offsets_first, 0);
  const std::int64_t end = detail::offset_at(offsets_first, segments);
  tally::detail::check_pointer(fn, "first", first, end);
  tally::detail::check_pointer(fn, "d_first", d_first, end);
  if constexpr (detail::all_random_access_v<InIt, OffIt, OutIt>) {
    detail::segmented_scan_range<false, Acc>(
        first + base, end - base, d_first + base,
        detail::offset_heads<OffIt>{offsets_first, segments, base, end - base},
        std::optional<Acc>{}, op, detail::input_survives_output(first, d_first));
    return d_first + end;
  } else {
    return sequential::inclusive_segmented_scan(first, offsets_first, offsets_last, d_first, op);
  }
}

template <class InIt, class OffIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_segmented_scan(InIt first, OffIt offsets_first, OffIt offsets_last,
                               OutIt d_first, Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::exclusive_segmented_scan";
  const std::int64_t segments = detail::checked_offsets(fn, offsets_first, offsets_last);
  if (offsets_first == offsets_last) return d_first;
  const std::int64_t base = detail::offset_at(offsets_first, 0);
  const std::int64_t end = detail::offset_at(offsets_first, segments);
  tally::detail::check_pointer(fn, "first", first, end);
  tally::detail::check_pointer(fn, "d_first", d_first, end);
  if constexpr (detail::all_random_access_v<InIt, OffIt, OutIt>) {
    detail::segmented_scan_range<true, Acc>(
        first + base, end - base, d_first + base,
        detail::offset_heads<OffIt>{offsets_first, segments, base, end - base},
        std::optional<Acc>(static_cast<Acc>(init)), op,
        detail::input_survives_output(first, d_first));
    return d_first + end;
  } else {
    return sequential::exclusive_segmented_scan(first, offsets_first, offsets_last, d_first, init,
                                                op);
  }
}

// One result per segment: d_first[k] = init op x[offsets[k]] op ... op x[offsets[k+1]-1]
// (init for an empty segment), accumulated in exclusive_accumulator_t<Op, Init, T>.
template <class InIt, class OffIt, class OutIt, class Init, class Op = plus>
OutIt segmented_reduce(InIt first, OffIt offsets_first, OffIt offsets_last, OutIt d_first,
                       Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::segmented_reduce";
  const std::int64_t segments = detail::checked_offsets(fn, offsets_first, offsets_last);
  if (segments == 0) return d_first;
  const std::int64_t end = detail::offset_at(offsets_first, segments);
  tally::detail::check_pointer(fn, "first", first, end);
  tally::detail::check_pointer(fn, "d_first", d_first, segments);
  if constexpr (detail::all_random_access_v<InIt, OffIt, OutIt>) {
    detail::segmented_reduce_range<Acc>(first, offsets_first, segments, d_first,
                                        static_cast<Acc>(init), op);
    return d_first + segments;
  } else {
    return sequential::segmented_reduce(first, offsets_first, offsets_last, d_first, init, op);
  }
}

// ---- keys -----------------------------------------------------------------------------------

template <class KeyIt, class InIt, class OutIt, class Op = plus, class Equal = std::equal_to<>>
OutIt inclusive_scan_by_key(KeyIt keys_first, KeyIt keys_last, InIt values_first,
                            OutIt d_first, Op op = {}, Equal equal = {}) {
  using Acc = inclusive_accumulator_t<Op, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::inclusive_scan_by_key";
  const std::int64_t n = detail::checked_distance(fn, keys_first, keys_last);
  tally::detail::check_pointer(fn, "values_first", values_first, n);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  if constexpr (detail::all_random_access_v<KeyIt, InIt, OutIt>) {
    detail::segmented_scan_range<false, Acc>(
        values_first, n, d_first, detail::make_key_heads(keys_first, equal),
        std::optional<Acc>{}, op, detail::input_survives_output(values_first, d_first));
    return d_first + n;
  } else {
    return sequential::inclusive_scan_by_key(keys_first, keys_last, values_first, d_first, op,
                                             equal);
  }
}

template <class KeyIt, class InIt, class OutIt, class Init, class Op = plus,
          class Equal = std::equal_to<>>
OutIt exclusive_scan_by_key(KeyIt keys_first, KeyIt keys_last, InIt values_first,
                            OutIt d_first, Init init, Op op = {}, Equal equal = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::exclusive_scan_by_key";
  const std::int64_t n = detail::checked_distance(fn, keys_first, keys_last);
  tally::detail::check_pointer(fn, "values_first", values_first, n);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  if constexpr (detail::all_random_access_v<KeyIt, InIt, OutIt>) {
    detail::segmented_scan_range<true, Acc>(
        values_first, n, d_first, detail::make_key_heads(keys_first, equal),
        std::optional<Acc>(static_cast<Acc>(init)), op,
        detail::input_survives_output(values_first, d_first));
    return d_first + n;
  } else {
    return sequential::exclusive_scan_by_key(keys_first, keys_last, values_first, d_first, init,
                                             op, equal);
  }
}

// ---- batched: along one axis of a contiguous row-major N-d array ---------------------------

template <class InIt, class OutIt, class Op = plus>
OutIt inclusive_scan_batched(InIt first, OutIt d_first, std::span<const std::int64_t> shape,
                             int axis, Op op = {}) {
  using Acc = inclusive_accumulator_t<Op, std::iter_value_t<InIt>>;
  return detail::batched<false, Acc>("cpu::inclusive_scan_batched", first, d_first, shape, axis,
                                     std::optional<Acc>{}, op);
}

template <class InIt, class OutIt, class Op = plus>
OutIt inclusive_scan_batched(InIt first, OutIt d_first, std::initializer_list<std::int64_t> shape,
                             int axis, Op op = {}) {
  return inclusive_scan_batched(first, d_first,
                                std::span<const std::int64_t>(shape.begin(), shape.size()), axis,
                                op);
}

template <class InIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan_batched(InIt first, OutIt d_first, std::span<const std::int64_t> shape,
                             int axis, Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>>;
  return detail::batched<true, Acc>("cpu::exclusive_scan_batched", first, d_first, shape, axis,
                                    std::optional<Acc>(static_cast<Acc>(init)), op);
}

template <class InIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan_batched(InIt first, OutIt d_first, std::initializer_list<std::int64_t> shape,
                             int axis, Init init, Op op = {}) {
  return exclusive_scan_batched(first, d_first,
                                std::span<const std::int64_t>(shape.begin(), shape.size()), axis,
                                init, op);
}

// 2-d: a rows x cols row-major matrix; axis 1 scans each row, axis 0 each column.
template <class InIt, class OutIt, class Op = plus>
OutIt inclusive_scan_batched(InIt first, OutIt d_first, std::int64_t rows, std::int64_t cols,
                             int axis, Op op = {}) {
  detail::check_matrix("cpu::inclusive_scan_batched", rows, cols, axis);
  const std::int64_t shape[2] = {rows, cols};
  return inclusive_scan_batched(first, d_first, std::span<const std::int64_t>(shape), axis, op);
}

template <class InIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan_batched(InIt first, OutIt d_first, std::int64_t rows, std::int64_t cols,
                             int axis, Init init, Op op = {}) {
  detail::check_matrix("cpu::exclusive_scan_batched", rows, cols, axis);
  const std::int64_t shape[2] = {rows, cols};
  return exclusive_scan_batched(first, d_first, std::span<const std::int64_t>(shape), axis, init,
                                op);
}

}  // namespace tally::cpu
