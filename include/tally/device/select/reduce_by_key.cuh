// tally/device/select/reduce_by_key.cuh -- reduce_by_key as a tile program (the public
// API: device/select.cuh).
//
// The runs of equal keys (select/runs.cuh) are segments, and the reduction of each is a
// segmented scan read at the segment's end (Blelloch 1990, sec. 1.5; Sengupta et al.
// 2007). The scan (select/program_scan.cuh) carries keyed<Acc>{runs so far, the
// reduction since the latest head} (the runs in 32 bits below 2^32 items); combining a later part b with an earlier part a
// keeps b's reduction where b holds a head (the run started inside b) and extends a's
// otherwise:
//   (a_runs, a) . (b_runs, b) = (a_runs + b_runs, b_runs > 0 ? b : a op b)
// which is associative for any associative op, commutative or not, and keeps the
// operands in input order. A head stores its key to keys_out[runs - 1], an end its
// reduction to values_out[runs - 1]. Floating-point folds depend on how far each tile
// looked back unless options.deterministic (single_pass/decoupled_lookback.cuh).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tally/core/accumulator.hpp"
#include "tally/core/macros.hpp"
#include "tally/device/select/program_scan.cuh"
#include "tally/device/select/runs.cuh"

namespace tally::detail::select {

// (runs in the call's count type: 32-bit below 2^32 items, with_count_type)
template <class Acc, class C = std::int64_t>
struct keyed {
  C runs;
  Acc value;
};

template <class Acc, class C, class Op>
struct keyed_op {
  Op op;
  TALLY_HOST_DEVICE keyed<Acc, C> operator()(const keyed<Acc, C>& a, const keyed<Acc, C>& b) const {
    return {static_cast<C>(a.runs + b.runs),
            b.runs > 0 ? b.value : static_cast<Acc>(op(a.value, b.value))};
  }
};

template <class K>
struct key_marks {
  K key;
  bool head;
  bool end;
};

template <class Acc, class C, class Keys, class Values, class Equal>
struct reduce_by_key_input {
  using key_type = std::remove_cvref_t<input_value_t<Keys>>;
  using payload_type = key_marks<key_type>;
  Keys keys;
  Values values;
  Equal equal;
  std::int64_t n;
  TALLY_DEVICE TALLY_FORCEINLINE payload_type payload(std::int64_t i) const {
    const key_type k = keys[i];
    return {k, i == 0 || !static_cast<bool>(equal(keys[i - 1], k)),
            i == n - 1 || !static_cast<bool>(equal(k, keys[i + 1]))};
  }
  TALLY_DEVICE TALLY_FORCEINLINE keyed<Acc, C> value(std::int64_t i, const payload_type& p) const {
    return {static_cast<C>(p.head ? 1 : 0), static_cast<Acc>(values[i])};
  }
};

template <class Acc, class KeysOut, class ValuesOut, class K>
struct reduce_by_key_output {
  KeysOut keys_out;
  ValuesOut values_out;
  std::int64_t* count;
  std::int64_t n;
  template <class C>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const key_marks<K>& p,
                                            const keyed<Acc, C>& s) const {
    if (p.head) keys_out[s.runs - 1] = p.key;
    if (p.end) values_out[s.runs - 1] = s.value;
    if (i == n - 1) *count = static_cast<std::int64_t>(s.runs);
  }
};

template <class Acc, class Keys, class Values, class KeysOut, class ValuesOut, class Op,
          class Equal, class Hook = single_pass::no_stall>
void reduce_by_key(const char* function, Keys keys, Values values, KeysOut keys_out,
                   ValuesOut values_out, std::int64_t n, Op op, Equal equal, std::int64_t* count,
                   const options& o, Hook hook = {}) {
  with_count_type(n, [&](auto c) {
    using C = decltype(c);
    using input = reduce_by_key_input<Acc, C, Keys, Values, Equal>;
    run<keyed<Acc, C>>(function, input{keys, values, equal, n},
                       reduce_by_key_output<Acc, KeysOut, ValuesOut, typename input::key_type>{
                           keys_out, values_out, count, n},
                       n, keyed_op<Acc, C, Op>{op}, o, hook);
  });
}

}  // namespace tally::detail::select

namespace tally::detail::single_pass {
// integer reductions are exact in any association
template <class Acc, class C>
struct exact_values<select::keyed<Acc, C>> : exact_values<Acc> {};
}  // namespace tally::detail::single_pass
