// tally/core/mssp.hpp -- the maximum segment sum problem (MSSP) as a reduction.
//
// The worked example of a non-commutative reduction in the course notes on reduce and
// scan (Oancea & Henriksen; the problem goes back to Bentley, "Programming Pearls",
// 1984). The largest sum of a contiguous segment of x (the empty segment, sum 0,
// included) is a map to 4-tuples followed by a reduce with an associative, NOT
// commutative operator:
//   map:    x -> (mss, mis, mcs, ts) = (max(x,0), max(x,0), max(x,0), x)
//   reduce: (a, b) -> ( max(a.mss, b.mss, a.mcs + b.mis),   best segment anywhere
//                       max(a.mis, a.ts + b.mis),           best prefix  (initial)
//                       max(a.mcs + b.ts, b.mcs),           best suffix  (concluding)
//                       a.ts + b.ts )                       total
// with identity (0, 0, 0, 0). The answer is the mss of the reduction.
//
//   tally::reduce(tally::make_transform_iterator(d_in, tally::mssp_map<long long>{}), n,
//                 tally::mssp_value<long long>{}, tally::mssp_op{}).mss
// or tally::max_segment_sum(d_in, n) (tally/device/reduce.cuh).
#pragma once

#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"

namespace tally {

template <class T>
struct mssp_value {
  T mss;  // maximum segment sum
  T mis;  // maximum initial (prefix) sum
  T mcs;  // maximum concluding (suffix) sum
  T ts;   // total sum
};

template <class T>
TALLY_HOST_DEVICE constexpr bool operator==(const mssp_value<T>& a, const mssp_value<T>& b) {
  return a.mss == b.mss && a.mis == b.mis && a.mcs == b.mcs && a.ts == b.ts;
}

struct mssp_op {
  template <class T>
  TALLY_HOST_DEVICE constexpr mssp_value<T> operator()(const mssp_value<T>& a,
                                                       const mssp_value<T>& b) const {
    return mssp_value<T>{larger(larger(a.mss, b.mss), a.mcs + b.mis), larger(a.mis, a.ts + b.mis),
                         larger(a.mcs + b.ts, b.mcs), a.ts + b.ts};
  }

 private:
  template <class T>
  TALLY_HOST_DEVICE static constexpr T larger(const T& a, const T& b) {
    return a < b ? b : a;
  }
};

// The map of one element; T is the type the sums are kept in (choose one wide enough:
// long long for int inputs, double for floats).
template <class T>
struct mssp_map {
  template <class X>
  TALLY_HOST_DEVICE constexpr mssp_value<T> operator()(const X& x) const {
    const T v = static_cast<T>(x);
    const T p = v > T(0) ? v : T(0);
    return mssp_value<T>{p, p, p, v};
  }
};

template <class T>
struct identity_of<mssp_op, mssp_value<T>> {
  TALLY_HOST_DEVICE static constexpr mssp_value<T> value() {
    return mssp_value<T>{T(0), T(0), T(0), T(0)};
  }
};

}  // namespace tally
