// tally/device/select/compaction.cuh -- stream compaction as a tile program: copy_if (by
// value or by stencil), copy_flagged, remove_if (the public API: device/select.cuh).
//
// The textbook algorithm (Blelloch 1990; Harris, Sengupta & Owens, GPU Gems 3 ch. 39):
// flag each item, prefix-sum the flags, write each kept item to the position its sum
// gives. Here the prefix sum is the single-pass scan (select/program_scan.cuh) and the
// write is its store: item i, kept, with inclusive count c goes to out[c - 1]. Stable.
// The item's value is read once, in the load, and kept in registers until the store, so
// out may be the input itself (every tile has read its items before it publishes, and a
// kept item only moves to a lower index).
#pragma once

#include <cstdint>
#include <type_traits>

#include "tally/core/accumulator.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/device/select/program_scan.cuh"

namespace tally::detail::select {

// Which items stay: keep(i, x) for item i of value x.
template <class Pred>
struct by_value {
  Pred pred;
  template <class T>
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t, const T& x) const {
    return static_cast<bool>(pred(x));
  }
};
template <class Pred>
struct by_rejection {
  Pred pred;
  template <class T>
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t, const T& x) const {
    return !static_cast<bool>(pred(x));
  }
};
template <class Stencil, class Pred>
struct by_stencil {
  Stencil stencil;
  Pred pred;
  template <class T>
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i, const T&) const {
    return static_cast<bool>(pred(stencil[i]));
  }
};
template <class Flags>
struct by_flag {
  Flags flags;
  template <class T>
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i, const T&) const {
    return static_cast<bool>(flags[i]);
  }
};

template <class T>
struct kept_item {
  T x;
  bool keep;
};

// The input side: each item's value and whether it stays; the scan counts the kept ones.
template <class In, class Keep>
struct compaction_input {
  using value_type = std::remove_cvref_t<input_value_t<In>>;
  using payload_type = kept_item<value_type>;
  In in;
  Keep keep;
  TALLY_DEVICE TALLY_FORCEINLINE payload_type payload(std::int64_t i) const {
    const value_type x = in[i];
    return {x, keep(i, x)};
  }
  TALLY_DEVICE TALLY_FORCEINLINE int value(std::int64_t, const payload_type& p) const {
    return p.keep ? 1 : 0;
  }
};

// The output side: the kept item to its position; the last item writes the count.
template <class Out, class T>
struct compaction_output {
  Out out;
  std::int64_t* count;
  std::int64_t n;
  template <class Count>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const kept_item<T>& p,
                                            Count kept) const {
    if (p.keep) out[kept - 1] = p.x;
    if (i == n - 1) *count = static_cast<std::int64_t>(kept);
  }
};

// keep(i, x) over n >= 1 items of in, the kept ones to out, their number to *count.
// (The counts in 32 or 64 bits by n: with_count_type.)
template <class In, class Out, class Keep, class Hook = single_pass::no_stall>
void compact(const char* function, In in, Out out, std::int64_t n, Keep keep, std::int64_t* count,
             const options& o, Hook hook = {}) {
  using input = compaction_input<In, Keep>;
  with_count_type(n, [&](auto c) {
    run<decltype(c)>(function, input{in, keep},
                     compaction_output<Out, typename input::value_type>{out, count, n}, n, plus{},
                     o, hook);
  });
}

}  // namespace tally::detail::select
