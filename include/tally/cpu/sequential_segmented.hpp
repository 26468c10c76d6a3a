// tally/cpu/sequential_segmented.hpp -- the sequential segmented and batched scans and the
// segmented reduction: the test oracle of tally/cpu/segmented.hpp (and of the GPU ones).
//
// Plain left-to-right loops, one thread, any copyable value type and any associative
// operator, following the conventions of tally/core/segmented.hpp. Values and flags may be
// input iterators, keys and offsets forward iterators; the batched forms need random
// access.
//   inclusive_scan_by_flags(first, last, flags_first, d_first, op)
//   exclusive_scan_by_flags(first, last, flags_first, d_first, init, op)
//   inclusive_segmented_scan(first, offsets_first, offsets_last, d_first, op)
//   exclusive_segmented_scan(first, offsets_first, offsets_last, d_first, init, op)
//   inclusive_scan_by_key(keys_first, keys_last, values_first, d_first, op, equal)
//   exclusive_scan_by_key(keys_first, keys_last, values_first, d_first, init, op, equal)
//   segmented_reduce(first, offsets_first, offsets_last, d_first, init, op)
//   inclusive_scan_batched(first, d_first, shape, axis, op)          (random access)
//   exclusive_scan_batched(first, d_first, shape, axis, init, op)    (random access)
// Each value is read before its output is written, so d_first == first (values_first for
// the by-key scans) is allowed. No argument checks here (the parallel versions check).
// The scans return the end of the output (d_first + offsets[num_segments] for the offset
// forms, d_first + the element count for batched), segmented_reduce d_first + num_segments.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <utility>

#include "tally/core/accumulator.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/segmented.hpp"
#include "tally/cpu/sequential.hpp"

namespace tally::cpu::sequential {

namespace detail {

// The flag and key forms share one loop: `starts(i)` says whether element i (> 0) starts
// a segment. `starts` is called before anything of element i is written.
template <bool Exclusive, class Acc, class InIt, class OutIt, class Starts, class Op>
OutIt scan_by_heads(InIt first, InIt last, OutIt d_first, Starts starts,
                    const std::optional<Acc>& init, Op op) {
  using T = input_value_t<InIt>;
  std::optional<Acc> acc;
  for (std::int64_t i = 0; first != last; ++first, ++d_first, ++i) {
    const bool head = i == 0 || starts(i);
    T x = *first;  // read before the write: in place is allowed
    if constexpr (Exclusive) {
      if (head) acc = *init;
      *d_first = *acc;
      acc = op(std::as_const(*acc), x);
    } else {
      if (head) {
        acc = static_cast<Acc>(x);
      } else {
        acc = op(std::as_const(*acc), x);
      }
      *d_first = *acc;
    }
  }
  return d_first;
}

// starts(i) is called once for each i = 1, 2, ... in order: these read the flags or
// compare adjacent keys walking forward, so flags may be input iterators and keys forward
// iterators.
template <class FlagIt>
auto flag_reader(FlagIt flags) {
  return [it = flags](std::int64_t) mutable { return static_cast<bool>(*++it); };
}
template <class KeyIt, class Equal>
auto key_reader(KeyIt keys, Equal& equal) {
  return [it = keys, &equal](std::int64_t) mutable {
    KeyIt prev = it;
    ++it;
    return !static_cast<bool>(equal(*prev, *it));
  };
}

}  // namespace detail

template <class InIt, class FlagIt, class OutIt, class Op = plus>
OutIt inclusive_scan_by_flags(InIt first, InIt last, FlagIt flags_first, OutIt d_first,
                              Op op = {}) {
  using Acc = inclusive_accumulator_t<Op, input_value_t<InIt>>;
  return detail::scan_by_heads<false, Acc>(first, last, d_first, detail::flag_reader(flags_first),
                                            std::optional<Acc>{}, op);
}

template <class InIt, class FlagIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan_by_flags(InIt first, InIt last, FlagIt flags_first, OutIt d_first,
                              Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, input_value_t<InIt>>;
  return detail::scan_by_heads<true, Acc>(first, last, d_first, detail::flag_reader(flags_first),
                                           std::optional<Acc>(static_cast<Acc>(init)), op);
}

template <class KeyIt, class InIt, class OutIt, class Op = plus, class Equal = std::equal_to<>>
OutIt inclusive_scan_by_key(KeyIt keys_first, KeyIt keys_last, InIt values_first,
                            OutIt d_first, Op op = {}, Equal equal = {}) {
  using Acc = inclusive_accumulator_t<Op, input_value_t<InIt>>;
  const auto n = std::ranges::distance(keys_first, keys_last);
  return detail::scan_by_heads<false, Acc>(
      values_first, std::ranges::next(values_first, n), d_first,
      detail::key_reader(keys_first, equal),
      std::optional<Acc>{}, op);
}

template <class KeyIt, class InIt, class OutIt, class Init, class Op = plus,
          class Equal = std::equal_to<>>
OutIt exclusive_scan_by_key(KeyIt keys_first, KeyIt keys_last, InIt values_first,
                            OutIt d_first, Init init, Op op = {}, Equal equal = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, input_value_t<InIt>>;
  const auto n = std::ranges::distance(keys_first, keys_last);
  return detail::scan_by_heads<true, Acc>(
      values_first, std::ranges::next(values_first, n), d_first,
      detail::key_reader(keys_first, equal),
      std::optional<Acc>(static_cast<Acc>(init)), op);
}

// Offsets: segment k is [offsets[k], offsets[k+1]). Elements outside
// [offsets[0], offsets[num_segments]) are not touched.
template <class InIt, class OffIt, class OutIt, class Op = plus>
OutIt inclusive_segmented_scan(InIt first, OffIt offsets_first, OffIt offsets_last,
                               OutIt d_first, Op op = {}) {
  if (offsets_first == offsets_last) return d_first;
  std::int64_t end = 0;
  for (OffIt o = offsets_first; std::next(o) != offsets_last; ++o) {
    const auto b = static_cast<std::int64_t>(*o);
    end = static_cast<std::int64_t>(*std::next(o));
    tally::cpu::sequential::inclusive_scan(std::ranges::next(first, b),
                                           std::ranges::next(first, end),
                                           std::ranges::next(d_first, b), op);
  }
  return std::ranges::next(d_first, std::next(offsets_first) == offsets_last
                                        ? static_cast<std::int64_t>(*offsets_first)
                                        : end);
}

template <class InIt, class OffIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_segmented_scan(InIt first, OffIt offsets_first, OffIt offsets_last,
                               OutIt d_first, Init init, Op op = {}) {
  if (offsets_first == offsets_last) return d_first;
  std::int64_t end = 0;
  for (OffIt o = offsets_first; std::next(o) != offsets_last; ++o) {
    const auto b = static_cast<std::int64_t>(*o);
    end = static_cast<std::int64_t>(*std::next(o));
    tally::cpu::sequential::exclusive_scan(std::ranges::next(first, b),
                                           std::ranges::next(first, end),
                                           std::ranges::next(d_first, b), init, op);
  }
  return std::ranges::next(d_first, std::next(offsets_first) == offsets_last
                                        ? static_cast<std::int64_t>(*offsets_first)
                                        : end);
}

// One result per segment: init op x[offsets[k]] op ... op x[offsets[k+1]-1]; an empty
// segment gives init.
template <class InIt, class OffIt, class OutIt, class Init, class Op = plus>
OutIt segmented_reduce(InIt first, OffIt offsets_first, OffIt offsets_last, OutIt d_first,
                       Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, input_value_t<InIt>>;
  if (offsets_first == offsets_last) return d_first;
  for (OffIt o = offsets_first; std::next(o) != offsets_last; ++o, ++d_first) {
    const auto b = static_cast<std::int64_t>(*o);
    const auto e = static_cast<std::int64_t>(*std::next(o));
    Acc acc = static_cast<Acc>(init);
    auto it = std::ranges::next(first, b);
    for (std::int64_t j = b; j < e; ++j, ++it) acc = op(std::as_const(acc), *it);
    *d_first = acc;
  }
  return d_first;
}

// Batched: the row-major array of extents `shape` scanned along `axis`; every line along
// the axis is scanned independently (first and d_first random access).
template <class InIt, class OutIt, class Op = plus>
OutIt inclusive_scan_batched(InIt first, OutIt d_first, std::span<const std::int64_t> shape,
                             int axis, Op op = {}) {
  using T = input_value_t<InIt>;
  using Acc = inclusive_accumulator_t<Op, T>;
  std::int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= shape[a];
  for (std::size_t a = static_cast<std::size_t>(axis) + 1; a < shape.size(); ++a) inner *= shape[a];
  const std::int64_t len = shape[static_cast<std::size_t>(axis)];
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t j = 0; j < inner; ++j) {
      std::optional<Acc> acc;
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int64_t i = (o * len + k) * inner + j;
        T x = first[i];
        acc = acc ? static_cast<Acc>(op(std::as_const(*acc), x)) : static_cast<Acc>(x);
        d_first[i] = *acc;
      }
    }
  }
  return d_first + outer * len * inner;
}

template <class InIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan_batched(InIt first, OutIt d_first, std::span<const std::int64_t> shape,
                             int axis, Init init, Op op = {}) {
  using T = input_value_t<InIt>;
  using Acc = exclusive_accumulator_t<Op, Init, T>;
  std::int64_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= shape[a];
  for (std::size_t a = static_cast<std::size_t>(axis) + 1; a < shape.size(); ++a) inner *= shape[a];
  const std::int64_t len = shape[static_cast<std::size_t>(axis)];
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t j = 0; j < inner; ++j) {
      Acc acc = static_cast<Acc>(init);
      for (std::int64_t k = 0; k < len; ++k) {
        const std::int64_t i = (o * len + k) * inner + j;
        T x = first[i];
        d_first[i] = acc;
        acc = op(std::as_const(acc), x);
      }
    }
  }
  return d_first + outer * len * inner;
}

}  // namespace tally::cpu::sequential
