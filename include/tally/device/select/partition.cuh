// tally/device/select/partition.cuh -- stable partitions as tile programs (the public
// API: device/select.cuh).
//
// Two-way: the selected items in order, then the rejected ones in order. A rejected item's
// position needs the number S of selected items in the whole input, which one pass cannot
// know before its last tile: so S is counted first (tally::transform_reduce_into, into the
// caller's count), and the scan (select/program_scan.cuh) then sends item i, with c
// selected items among 0..i, to out[c - 1] if selected and to out[S + i - c] if not.
// Two launches; the input is read twice. (CUB writes the rejected items from the end of
// the output backwards and so needs one pass; their order is then reversed.)
//
// Three-way: each item to the first output if pred1 holds, else to the second if pred2
// holds, else to the rest; three separate outputs, so one pass: the scan counts the first
// and the second (select::two_counts), and item i of the rest goes to
// rest[i - first - second].
#pragma once

#include <cstdint>
#include <type_traits>

#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/select.hpp"
#include "tally/device/reduce.cuh"
#include "tally/device/select/compaction.cuh"
#include "tally/device/select/program_scan.cuh"

namespace tally::detail::select {

template <class Pred>
struct selection_count {
  Pred pred;
  template <class T>
  TALLY_HOST_DEVICE std::int64_t operator()(const T& x) const {
    return static_cast<bool>(pred(x)) ? 1 : 0;
  }
};

template <class Out, class T>
struct partition_output {
  Out out;
  const std::int64_t* selected;  // S, counted before the scan
  template <class Count>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const kept_item<T>& p,
                                            Count kept) const {
    if (p.keep) {
      out[kept - 1] = p.x;
    } else {
      out[*selected + i - static_cast<std::int64_t>(kept)] = p.x;
    }
  }
};

template <class In, class Out, class Pred>
void partition_two_way(const char* function, In in, Out out, std::int64_t n, Pred pred,
                       std::int64_t* count, const options& o) {
  tally::transform_reduce_into(in, n, count, std::int64_t{0}, plus{}, selection_count<Pred>{pred},
                               o);
  using input = compaction_input<In, by_value<Pred>>;
  with_count_type(n, [&](auto c) {
    run<decltype(c)>(function, input{in, by_value<Pred>{pred}},
                     partition_output<Out, typename input::value_type>{out, count}, n, plus{}, o);
  });
}

template <class T>
struct sorted_item {
  T x;
  unsigned char bucket;  // 0: first, 1: second, 2: rest
};

template <class C, class In, class Pred1, class Pred2>
struct three_way_input {
  using value_type = std::remove_cvref_t<input_value_t<In>>;
  using payload_type = sorted_item<value_type>;
  In in;
  Pred1 pred1;
  Pred2 pred2;
  TALLY_DEVICE TALLY_FORCEINLINE payload_type payload(std::int64_t i) const {
    const value_type x = in[i];
    const unsigned char bucket =
        static_cast<bool>(pred1(x)) ? 0 : (static_cast<bool>(pred2(x)) ? 1 : 2);
    return {x, bucket};
  }
  TALLY_DEVICE TALLY_FORCEINLINE two_counts<C> value(std::int64_t, const payload_type& p) const {
    return {static_cast<C>(p.bucket == 0 ? 1 : 0), static_cast<C>(p.bucket == 1 ? 1 : 0)};
  }
};

template <class Out1, class Out2, class Out3, class T>
struct three_way_output {
  Out1 first;
  Out2 second;
  Out3 rest;
  three_way_result* count;
  std::int64_t n;
  template <class C>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const sorted_item<T>& p,
                                            const two_counts<C>& c) const {
    const auto f = static_cast<std::int64_t>(c.first);
    const auto s = static_cast<std::int64_t>(c.second);
    if (p.bucket == 0) {
      first[f - 1] = p.x;
    } else if (p.bucket == 1) {
      second[s - 1] = p.x;
    } else {
      rest[i - f - s] = p.x;
    }
    if (i == n - 1) *count = three_way_result{f, s, n - f - s};
  }
};

template <class In, class Out1, class Out2, class Out3, class Pred1, class Pred2>
void partition_three(const char* function, In in, Out1 first, Out2 second, Out3 rest,
                     std::int64_t n, Pred1 pred1, Pred2 pred2, three_way_result* count,
                     const options& o) {
  with_count_type(n, [&](auto c) {
    using C = decltype(c);
    using input = three_way_input<C, In, Pred1, Pred2>;
    run<two_counts<C>>(function, input{in, pred1, pred2},
                       three_way_output<Out1, Out2, Out3, typename input::value_type>{
                           first, second, rest, count, n},
                       n, two_counts_plus{}, o);
  });
}

}  // namespace tally::detail::select
