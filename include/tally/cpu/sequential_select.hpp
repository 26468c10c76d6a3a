// tally/cpu/sequential_select.hpp -- the sequential selection family: stream compaction,
// partitions, run-length encoding and reduce-by-key. The test oracle of
// tally/cpu/select.hpp (and of any GPU form).
//
//   copy_if(first, last, d_first, pred)                      keep x[i] where pred(x[i])
//   copy_if(first, last, stencil_first, d_first, pred)       keep x[i] where pred(stencil[i])
//   copy_flagged(first, last, flags_first, d_first)          keep x[i] where bool(flags[i])
//   remove_if(first, last, d_first, pred)                    keep x[i] where !pred(x[i])
//   count_if(first, last, pred)                              -> std::int64_t
//   partition(first, last, d_first, pred)                    selected, then rejected
//   partition_three_way(first, last, first_out, second_out, rest_out, pred1, pred2)
//   unique(first, last, d_first, equal)                      the first of every run
//   unique_by_key(keys_first, keys_last, values_first, keys_out, values_out, equal)
//   run_length_encode(first, last, unique_out, counts_out, equal)
//   non_trivial_runs(first, last, offsets_out, lengths_out, equal)
//   reduce_by_key(keys_first, keys_last, values_first, keys_out, values_out, op, equal)
//
// Plain left-to-right loops on one thread. Every input may be a single-pass input
// iterator (each element is read once, and copied where a later step needs it), every
// output an output iterator (std::back_inserter works). All forms are stable: the
// elements of every output keep their input order.
//
// Runs are maximal ranges of consecutive equal elements: element i (> 0) starts a run
// when !equal(x[i-1], x[i]), the earlier element first. `equal` should be an equivalence
// relation; for one that is not transitive this adjacent comparison differs from
// std::unique, which compares with the first element of the run.
//
// Each element is read before anything at or after its position is written, so
// d_first == first (in place) works for copy_if, copy_flagged, remove_if and unique. No
// argument checks here (the parallel versions check). The semantics in full, with the
// return values: tally/cpu/select.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <utility>
#include <vector>

#include "tally/core/accumulator.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/select.hpp"

namespace tally::cpu {

using tally::three_way_result;

namespace detail {

// The type that counts, offsets and lengths are written as: the output iterator's value
// type, or std::int64_t for an output iterator without one (std::back_insert_iterator).
template <class It>
struct written_value {
  using type = std::int64_t;
};
template <class It>
  requires requires { typename std::iter_value_t<It>; }
struct written_value<It> {
  using type = std::iter_value_t<It>;
};
template <class It>
using written_t = typename written_value<It>::type;

}  // namespace detail

namespace sequential {

template <class InIt, class OutIt, class Pred>
OutIt copy_if(InIt first, InIt last, OutIt d_first, Pred pred) {
  for (; first != last; ++first) {
    auto&& x = *first;
    if (static_cast<bool>(pred(x))) {
      *d_first = x;
      ++d_first;
    }
  }
  return d_first;
}

template <class InIt, class StencilIt, class OutIt, class Pred>
OutIt copy_if(InIt first, InIt last, StencilIt stencil_first, OutIt d_first, Pred pred) {
  for (; first != last; ++first, ++stencil_first) {
    if (static_cast<bool>(pred(*stencil_first))) {
      *d_first = *first;
      ++d_first;
    }
  }
  return d_first;
}

template <class InIt, class FlagIt, class OutIt>
OutIt copy_flagged(InIt first, InIt last, FlagIt flags_first, OutIt d_first) {
  for (; first != last; ++first, ++flags_first) {
    if (static_cast<bool>(*flags_first)) {
      *d_first = *first;
      ++d_first;
    }
  }
  return d_first;
}

template <class InIt, class OutIt, class Pred>
OutIt remove_if(InIt first, InIt last, OutIt d_first, Pred pred) {
  for (; first != last; ++first) {
    auto&& x = *first;
    if (!static_cast<bool>(pred(x))) {
      *d_first = x;
      ++d_first;
    }
  }
  return d_first;
}

template <class InIt, class Pred>
std::int64_t count_if(InIt first, InIt last, Pred pred) {
  std::int64_t count = 0;
  for (; first != last; ++first) count += static_cast<bool>(pred(*first)) ? 1 : 0;
  return count;
}

// The selected elements, then the rejected ones, each in input order; returns the
// position of the first rejected element in the output. The rejected ones wait in a
// buffer so that the input is read once.
template <class InIt, class OutIt, class Pred>
OutIt partition(InIt first, InIt last, OutIt d_first, Pred pred) {
  std::vector<input_value_t<InIt>> rejected;
  for (; first != last; ++first) {
    auto&& x = *first;
    if (static_cast<bool>(pred(x))) {
      *d_first = x;
      ++d_first;
    } else {
      rejected.push_back(x);
    }
  }
  const OutIt first_rejected = d_first;
  for (const auto& x : rejected) {
    *d_first = x;
    ++d_first;
  }
  return first_rejected;
}

// x goes to first_out if pred1(x), else to second_out if pred2(x) (pred2 is only asked
// about elements pred1 rejects), else to rest_out.
template <class InIt, class Out1, class Out2, class Out3, class Pred1, class Pred2>
three_way_result partition_three_way(InIt first, InIt last, Out1 first_out, Out2 second_out,
                                     Out3 rest_out, Pred1 pred1, Pred2 pred2) {
  three_way_result counts;
  for (; first != last; ++first) {
    auto&& x = *first;
    if (static_cast<bool>(pred1(x))) {
      *first_out = x;
      ++first_out;
      ++counts.first;
    } else if (static_cast<bool>(pred2(x))) {
      *second_out = x;
      ++second_out;
      ++counts.second;
    } else {
      *rest_out = x;
      ++rest_out;
      ++counts.rest;
    }
  }
  return counts;
}

template <class InIt, class OutIt, class Equal = std::equal_to<>>
OutIt unique(InIt first, InIt last, OutIt d_first, Equal equal = {}) {
  using T = input_value_t<InIt>;
  if (first == last) return d_first;
  T prev = *first;
  *d_first = prev;
  ++d_first;
  for (++first; first != last; ++first) {
    T x = *first;  // a copy: in place, the write below may land on this element
    if (!static_cast<bool>(equal(std::as_const(prev), std::as_const(x)))) {
      *d_first = x;
      ++d_first;
    }
    prev = x;
  }
  return d_first;
}

// The first key of every run of equal keys, and the value at that key's position.
template <class KeyIt, class ValIt, class KeyOut, class ValOut, class Equal = std::equal_to<>>
std::pair<KeyOut, ValOut> unique_by_key(KeyIt keys_first, KeyIt keys_last, ValIt values_first,
                                        KeyOut keys_out, ValOut values_out, Equal equal = {}) {
  using K = input_value_t<KeyIt>;
  if (keys_first == keys_last) return {keys_out, values_out};
  K prev = *keys_first;
  *keys_out = prev;
  ++keys_out;
  *values_out = *values_first;
  ++values_out;
  for (++keys_first, ++values_first; keys_first != keys_last; ++keys_first, ++values_first) {
    K key = *keys_first;
    if (!static_cast<bool>(equal(std::as_const(prev), std::as_const(key)))) {
      *keys_out = key;
      ++keys_out;
      *values_out = *values_first;
      ++values_out;
    }
    prev = key;
  }
  return {keys_out, values_out};
}

// The first element of every run, and the run's length, written as the counts output's
// value type (std::int64_t where it has none).
template <class InIt, class UniqueOut, class CountOut, class Equal = std::equal_to<>>
std::pair<UniqueOut, CountOut> run_length_encode(InIt first, InIt last, UniqueOut unique_out,
                                                 CountOut counts_out, Equal equal = {}) {
  using T = input_value_t<InIt>;
  using C = tally::cpu::detail::written_t<CountOut>;
  if (first == last) return {unique_out, counts_out};
  T prev = *first;
  *unique_out = prev;
  ++unique_out;
  std::int64_t length = 1;
  for (++first; first != last; ++first) {
    T x = *first;
    if (static_cast<bool>(equal(std::as_const(prev), std::as_const(x)))) {
      ++length;
    } else {
      *counts_out = static_cast<C>(length);
      ++counts_out;
      *unique_out = x;
      ++unique_out;
      length = 1;
    }
    prev = x;
  }
  *counts_out = static_cast<C>(length);
  ++counts_out;
  return {unique_out, counts_out};
}

// The offset (index of the first element) and the length of every run longer than one
// element, written as the outputs' value types (std::int64_t where they have none).
template <class InIt, class OffsetOut, class LengthOut, class Equal = std::equal_to<>>
std::pair<OffsetOut, LengthOut> non_trivial_runs(InIt first, InIt last, OffsetOut offsets_out,
                                                 LengthOut lengths_out, Equal equal = {}) {
  using T = input_value_t<InIt>;
  using O = tally::cpu::detail::written_t<OffsetOut>;
  using L = tally::cpu::detail::written_t<LengthOut>;
  if (first == last) return {offsets_out, lengths_out};
  std::int64_t head = 0, i = 1;
  auto end_run = [&](std::int64_t end) {
    if (end - head > 1) {
      *offsets_out = static_cast<O>(head);
      ++offsets_out;
      *lengths_out = static_cast<L>(end - head);
      ++lengths_out;
    }
  };
  T prev = *first;
  for (++first; first != last; ++first, ++i) {
    T x = *first;
    if (!static_cast<bool>(equal(std::as_const(prev), std::as_const(x)))) {
      end_run(i);
      head = i;
    }
    prev = x;
  }
  end_run(i);
  return {offsets_out, lengths_out};
}

// One key per run (its first) and the fold of the run's values, left to right:
// v[s] op v[s+1] op ... op v[e-1], accumulated in inclusive_accumulator_t<Op, V>.
template <class KeyIt, class ValIt, class KeyOut, class ValOut, class Op = plus,
          class Equal = std::equal_to<>>
std::pair<KeyOut, ValOut> reduce_by_key(KeyIt keys_first, KeyIt keys_last, ValIt values_first,
                                        KeyOut keys_out, ValOut values_out, Op op = {},
                                        Equal equal = {}) {
  using K = input_value_t<KeyIt>;
  using V = input_value_t<ValIt>;
  using Acc = inclusive_accumulator_t<Op, V>;
  if (keys_first == keys_last) return {keys_out, values_out};
  K prev = *keys_first;
  *keys_out = prev;
  ++keys_out;
  Acc acc = static_cast<Acc>(static_cast<V>(*values_first));
  for (++keys_first, ++values_first; keys_first != keys_last; ++keys_first, ++values_first) {
    K key = *keys_first;
    V value = *values_first;
    if (static_cast<bool>(equal(std::as_const(prev), std::as_const(key)))) {
      acc = op(std::as_const(acc), std::as_const(value));
    } else {
      *values_out = acc;
      ++values_out;
      *keys_out = key;
      ++keys_out;
      acc = static_cast<Acc>(value);
    }
    prev = key;
  }
  *values_out = acc;
  ++values_out;
  return {keys_out, values_out};
}

}  // namespace sequential
}  // namespace tally::cpu
