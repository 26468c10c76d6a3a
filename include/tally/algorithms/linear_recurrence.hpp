// tally/algorithms/linear_recurrence.hpp -- first-order linear recurrences
//     x[i] = a[i] * x[i-1] + b[i],   x[-1] = x0
// as a scan of affine maps (Blelloch 1990, "Prefix sums and their applications", 1.4;
// Kogge & Stone 1973 solved them this way): the map f_i(y) = a_i y + b_i composes
// associatively (core/affine.hpp), the inclusive scan of f_0, f_1, ... gives at i the map
// F_i = f_i o ... o f_0 = (A_i, B_i), and x_i = F_i(x0) = A_i x0 + B_i.
// The CPU backend's form (tally::cpu); the GPU form is linear_recurrence.cuh.
//
//   tally::cpu::linear_recurrence(a_first, a_last, b_first, x_first, x0) -> x_first + n
//   tally::cpu::linear_recurrence_batched(a_first, b_first, x_first, shape, axis, x0)
//       every line along `axis` of a row-major array of `shape` is its own recurrence;
//       x0 is one value for every line, or an iterator over one value per line (line
//       o * inner + j of the view (outer, len, inner), core/shape.hpp).
//
// Values: the maps are affine_map<V>, V = common_type of the a and b value types (x0 is
// converted to V); the results are converted to x's value type on store. Work: one read of
// a and b and one write of x; the scan applies 2 multiplies and 1 add per element and
// composition, about twice the sequential loop's work, spread over every thread.
// Rounding: the scan associates differently from the loop, so float results differ from
// it by rounding (and from run to run on the GPU unless options.deterministic). The scan
// forms products of the gates over spans of the input: where such a product overflows
// (|a| > 1 over long spans) a result can be inf or NaN where the loop is still finite;
// gates of magnitude at most 1, the decays of state-space models, are safe. With x0 == 0
// the result is B_i alone, so an overflowed product never reaches it through x0.
// In place: x may be a or b (the CPU form then runs on one thread).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <span>
#include <type_traits>

#include "tally/algorithms/support.hpp"
#include "tally/core/affine.hpp"
#include "tally/core/counting_iterator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/shape.hpp"
#include "tally/core/store_iterator.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/scan.hpp"
#include "tally/cpu/segmented.hpp"
#include "tally/cpu/sequential.hpp"
#include "tally/cpu/sequential_segmented.hpp"

namespace tally::algorithms_support {

template <class A, class B>
using gate_value_t = std::common_type_t<std::iter_value_t<A>, std::iter_value_t<B>>;

// i -> the map (a[i], b[i]): the scan's input, gathered from the two arrays.
template <class A, class B, class V>
struct gate_maps {
  A a{};
  B b{};
  TALLY_HOST_DEVICE affine_map<V> operator()(std::int64_t i) const {
    return {static_cast<V>(a[i]), static_cast<V>(b[i])};
  }
};

// The scan's output: x[i] = F_i(x0), the scanned map applied to the start value.
template <class X, class V>
struct start_at {
  X x{};
  V x0{};
  TALLY_HOST_DEVICE void operator()(std::int64_t i, const affine_map<V>& f) const {
    // x0 == 0: B_i alone (A_i * 0 would be NaN where the gate product overflowed)
    x[i] = static_cast<std::iter_value_t<X>>(x0 == V(0) ? f.b : f.a * x0 + f.b);
  }
};

// The same with one start value per line of the view (outer, len, inner).
template <class X, class X0, class V>
struct start_at_line {
  X x{};
  X0 x0{};
  std::int64_t len = 1;
  std::int64_t inner = 1;
  TALLY_HOST_DEVICE void operator()(std::int64_t i, const affine_map<V>& f) const {
    const std::int64_t line = i / (len * inner) * inner + i % inner;
    const V s = static_cast<V>(x0[line]);
    x[i] = static_cast<std::iter_value_t<X>>(s == V(0) ? f.b : f.a * s + f.b);
  }
};

template <class A, class B, class V>
auto gate_input(A a, B b) {
  return make_transform_iterator(counting_iterator<std::int64_t>(0), gate_maps<A, B, V>{a, b});
}

// Whether a start value argument is one value for every line (else an iterator over lines).
template <class X0, class V>
inline constexpr bool one_start_v = std::is_convertible_v<X0, V> && !std::is_pointer_v<X0>;

}  // namespace tally::algorithms_support

namespace tally::cpu {

template <std::random_access_iterator AIt, std::random_access_iterator BIt,
          std::random_access_iterator XIt, class T>
XIt linear_recurrence(AIt a_first, AIt a_last, BIt b_first, XIt x_first, T x0) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::linear_recurrence";
  using V = gate_value_t<AIt, BIt>;
  const std::int64_t n = static_cast<std::int64_t>(a_last - a_first);
  if (n < 0) throw_argument_error(function, "a_last", "is before a_first");
  require_pointer(function, "a_first", a_first, n);
  require_pointer(function, "b_first", b_first, n);
  require_pointer(function, "x_first", x_first, n);
  const auto maps = gate_input<AIt, BIt, V>(a_first, b_first);
  const auto x = make_store_iterator(start_at<XIt, V>{x_first, static_cast<V>(x0)});
  if (share_memory(x_first, n, a_first, n) || share_memory(x_first, n, b_first, n)) {
    // in place: one thread, left to right (each element is read before it is written)
    tally::cpu::sequential::inclusive_scan(maps, maps + n, x, affine{});
  } else {
    tally::cpu::inclusive_scan(maps, maps + n, x, affine{});
  }
  return x_first + n;
}

template <std::random_access_iterator AIt, std::random_access_iterator BIt,
          std::random_access_iterator XIt, class X0>
XIt linear_recurrence_batched(AIt a_first, BIt b_first, XIt x_first,
                              std::span<const std::int64_t> shape, int axis, X0 x0) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::linear_recurrence_batched";
  using V = gate_value_t<AIt, BIt>;
  const axis_view v = check_shape(function, shape, axis);
  const std::int64_t n = v.total();
  require_pointer(function, "a_first", a_first, n);
  require_pointer(function, "b_first", b_first, n);
  require_pointer(function, "x_first", x_first, n);
  const auto maps = gate_input<AIt, BIt, V>(a_first, b_first);
  if (n == 0) return x_first;
  const bool in_place = share_memory(x_first, n, a_first, n) || share_memory(x_first, n, b_first, n);
  auto scan = [&](auto x) {
    if (in_place) {  // one thread (each element is read before it is written)
      tally::cpu::sequential::inclusive_scan_batched(maps, x, shape, axis, affine{});
    } else {
      tally::cpu::inclusive_scan_batched(maps, x, shape, axis, affine{});
    }
  };
  if constexpr (one_start_v<X0, V>) {
    scan(make_store_iterator(start_at<XIt, V>{x_first, static_cast<V>(x0)}));
  } else {
    require_pointer(function, "x0", x0, v.outer * v.inner);
    scan(make_store_iterator(start_at_line<XIt, X0, V>{x_first, x0, v.len, v.inner}));
  }
  return x_first + n;
}

template <std::random_access_iterator AIt, std::random_access_iterator BIt,
          std::random_access_iterator XIt, class X0>
XIt linear_recurrence_batched(AIt a_first, BIt b_first, XIt x_first,
                              std::initializer_list<std::int64_t> shape, int axis, X0 x0) {
  return linear_recurrence_batched(a_first, b_first, x_first,
                                   std::span<const std::int64_t>(shape.begin(), shape.size()), axis,
                                   x0);
}

}  // namespace tally::cpu
