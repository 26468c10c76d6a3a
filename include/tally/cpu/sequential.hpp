// tally/cpu/sequential.hpp -- the sequential scans and reduction: the test oracle.
//
// The plain left-to-right definitions, for any input iterator, any copyable value type
// (user structs included) and any associative operator, commutative or not:
//   inclusive: out[i] = x[0] op x[1] op ... op x[i]
//   exclusive: out[0] = init, out[i] = init op x[0] op ... op x[i-1]
//   reduce:    init op x[0] op ... op x[n-1]
// Each element is read before its output is written, so `d_first == first` (in place)
// is allowed. The accumulator types follow tally/core/accumulator.hpp.
#pragma once

#include <iterator>
#include <utility>

#include "tally/core/accumulator.hpp"
#include "tally/core/operators.hpp"

namespace tally::cpu::sequential {

template <class InIt, class OutIt, class Op = plus>
OutIt inclusive_scan(InIt first, InIt last, OutIt d_first, Op op = {}) {
  using T = input_value_t<InIt>;
  using Acc = inclusive_accumulator_t<Op, T>;
  if (first == last) return d_first;
  Acc acc = static_cast<Acc>(*first);
  *d_first = acc;
  ++d_first;
  for (++first; first != last; ++first, ++d_first) {
    acc = op(std::as_const(acc), static_cast<T>(*first));
    *d_first = acc;
  }
  return d_first;
}

template <class InIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan(InIt first, InIt last, OutIt d_first, Init init, Op op = {}) {
  using T = input_value_t<InIt>;
  using Acc = exclusive_accumulator_t<Op, Init, T>;
  Acc acc = static_cast<Acc>(init);
  for (; first != last; ++first, ++d_first) {
    T x = *first;  // read before the write: in place is allowed
    *d_first = acc;
    acc = op(std::as_const(acc), x);
  }
  return d_first;
}

template <class InIt, class Init, class Op = plus>
exclusive_accumulator_t<Op, Init, input_value_t<InIt>> reduce(InIt first, InIt last, Init init,
                                                              Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, input_value_t<InIt>>;
  Acc acc = static_cast<Acc>(init);
  for (; first != last; ++first) acc = op(std::as_const(acc), *first);
  return acc;
}

}  // namespace tally::cpu::sequential
