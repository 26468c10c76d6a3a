// tally/algorithms/linear_recurrence.cuh -- first-order linear recurrences on the GPU
//     x[i] = a[i] * x[i-1] + b[i],   x[-1] = x0
// as one inclusive scan of affine maps (the idea, values, rounding and overflow:
// linear_recurrence.hpp, which also has the CPU form).
//
//   tally::linear_recurrence(a, b, x, n, x0, options = {})
//   tally::linear_recurrence_batched(a, b, x, shape, axis, x0, options = {})
//       every line along `axis` of the row-major array of `shape` (a span, a braced list,
//       a vector) is its own recurrence: shapes (batch, channels, length) along the last
//       axis as the state-space sequence models use them, or along any other axis. x0 is
//       one value for every line, or a device pointer (iterator) to one value per line
//       (line o * inner + j of the view (outer, len, inner); that form divides the index
//       once per element to find its line, which costs time on long inputs).
//   a, b, x: device pointers or random-access iterators (x may be a or b: in place).
//
// One launch: the scan's input is a transform of the index that reads a[i] and b[i]; its
// output is a store_iterator that writes F_i(x0) (the map itself is never stored). The
// scan runs on tally::inclusive_scan (and inclusive_scan_batched), with their plans,
// options (deterministic for run-to-run identical floats) and errors. Asynchronous on
// options.stream. Errors: n < 0, null or host pointers, a bad shape or axis ->
// std::invalid_argument naming tally::linear_recurrence(_batched).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include "tally/algorithms/linear_recurrence.hpp"
#include "tally/core/options.hpp"
#include "tally/device/arguments.cuh"
#include "tally/device/scan.cuh"
#include "tally/device/segmented.cuh"

namespace tally {

template <class A, class B, class X, class T>
void linear_recurrence(A a, B b, X x, std::int64_t n, T x0, const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "linear_recurrence";
  using V = gate_value_t<A, B>;
  require_count(function, "n", n);
  require_device_pointer(function, "a", a, n);
  require_device_pointer(function, "b", b, n);
  require_device_pointer(function, "x", x, n);
  if (n == 0) return;
  tally::inclusive_scan(gate_input<A, B, V>(a, b),
                        make_store_iterator(start_at<X, V>{x, static_cast<V>(x0)}), n, affine{}, o);
}

template <class A, class B, class X, class X0>
void linear_recurrence_batched(A a, B b, X x, std::span<const std::int64_t> shape, int axis, X0 x0,
                               const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "linear_recurrence_batched";
  using V = gate_value_t<A, B>;
  const axis_view v = check_shape(function, shape, axis);
  const std::int64_t n = v.total();
  require_device_pointer(function, "a", a, n);
  require_device_pointer(function, "b", b, n);
  require_device_pointer(function, "x", x, n);
  if (n == 0) return;
  if constexpr (one_start_v<X0, V>) {
    tally::inclusive_scan_batched(gate_input<A, B, V>(a, b),
                                  make_store_iterator(start_at<X, V>{x, static_cast<V>(x0)}), shape,
                                  axis, affine{}, o);
  } else {
    require_device_pointer(function, "x0", x0, v.outer * v.inner);
    tally::inclusive_scan_batched(
        gate_input<A, B, V>(a, b),
        make_store_iterator(start_at_line<X, X0, V>{x, x0, v.len, v.inner}), shape, axis, affine{},
        o);
  }
}

template <class A, class B, class X, class X0>
void linear_recurrence_batched(A a, B b, X x, std::initializer_list<std::int64_t> shape, int axis,
                               X0 x0, const options& o = {}) {
  linear_recurrence_batched(a, b, x, std::span<const std::int64_t>(shape.begin(), shape.size()),
                            axis, x0, o);
}

}  // namespace tally
