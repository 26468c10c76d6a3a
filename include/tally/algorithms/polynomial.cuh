// tally/algorithms/polynomial.cuh -- polynomial evaluation on the GPU (the two algorithms,
// values and rounding: polynomial.hpp, which also has the CPU forms).
//
//   V tally::polynomial_evaluate(coeffs, degree, x, options = {})
//       Horner's rule as one reduction of affine maps (tally::reduce): waits for the value
//   V tally::polynomial_evaluate_by_powers(coeffs, degree, x, options = {})
//       the taught method: an exclusive multiplies-scan of the powers into degree + 1
//       values of stream-ordered scratch, then a transform-reduce of c[k] x^k
//   void tally::polynomial_evaluate(coeffs, degree, xs, m, ys, options = {})
//       ys[j] = p(xs[j]) for j < m: one segmented reduction (tally::segmented_reduce) of
//       m segments of degree + 1 maps; asynchronous
//   coeffs: degree + 1 coefficients, c[k] multiplies x^k; device pointers or iterators.
//
// The forms that return the value wait for it and are refused on a stream being captured
// into a graph. Errors: degree < 0, m < 0, m (degree + 1) beyond int64, null or host
// pointers -> std::invalid_argument naming the function; CUDA failures -> tally::error.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/algorithms/polynomial.hpp"
#include "tally/algorithms/support.cuh"
#include "tally/core/options.hpp"
#include "tally/device/arguments.cuh"
#include "tally/device/reduce.cuh"
#include "tally/device/scan.cuh"
#include "tally/device/segmented.cuh"

namespace tally {

template <class C, class X>
auto polynomial_evaluate(C coeffs, std::int64_t degree, X x, const options& o = {})
    -> algorithms_support::polynomial_value_t<C, X> {
  using namespace algorithms_support;
  constexpr const char* function = "polynomial_evaluate";
  using V = polynomial_value_t<C, X>;
  require_count(function, "degree", degree);
  if (degree == INT64_MAX) throw_argument_error(function, "degree", "must be < 2^63 - 1");
  require_device_pointer(function, "coeffs", coeffs, degree + 1);
  refuse_capture(function, o);  // (tally::reduce would refuse it too, naming itself)
  return tally::reduce(horner_input(coeffs, degree, static_cast<V>(x)), degree + 1,
                       identity<affine, affine_map<V>>(), affine{}, o)
      .b;
}

template <class C, class X>
auto polynomial_evaluate_by_powers(C coeffs, std::int64_t degree, X x, const options& o = {})
    -> algorithms_support::polynomial_value_t<C, X> {
  using namespace algorithms_support;
  constexpr const char* function = "polynomial_evaluate_by_powers";
  using V = polynomial_value_t<C, X>;
  require_count(function, "degree", degree);
  if (degree == INT64_MAX) throw_argument_error(function, "degree", "must be < 2^63 - 1");
  require_device_pointer(function, "coeffs", coeffs, degree + 1);
  refuse_capture(function, o);
  const std::int64_t terms = degree + 1;
  void* scratch = nullptr;
  cuda_check(cudaMallocAsync(&scratch, static_cast<std::size_t>(terms) * sizeof(V), o.stream),
             function, "cudaMallocAsync");
  V result{};
  try {
    auto* powers = static_cast<V*>(scratch);
    tally::exclusive_scan(make_transform_iterator(counting_iterator<std::int64_t>(0),
                                                  constant<V>{static_cast<V>(x)}),
                          powers, terms, V(1), multiplies{}, o);
    // reduce waits for its value, after which the scratch may be freed
    result = tally::reduce(make_transform_iterator(counting_iterator<std::int64_t>(0),
                                                   term<C, const V*, V>{coeffs, powers}),
                           terms, V(0), plus{}, o);
  } catch (...) {
    (void)cudaFreeAsync(scratch, o.stream);
    throw;
  }
  cuda_check(cudaFreeAsync(scratch, o.stream), function, "cudaFreeAsync");
  return result;
}

template <class C, class Xs, class Ys>
void polynomial_evaluate(C coeffs, std::int64_t degree, Xs xs, std::int64_t m, Ys ys,
                         const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "polynomial_evaluate";
  using V = polynomial_value_t<C, std::iter_value_t<Xs>>;
  check_points(function, degree, m);
  require_device_pointer(function, "coeffs", coeffs, degree + 1);
  require_device_pointer(function, "xs", xs, m);
  require_device_pointer(function, "ys", ys, m);
  if (m == 0) return;
  const std::int64_t terms = degree + 1;
  tally::segmented_reduce(
      make_transform_iterator(counting_iterator<std::int64_t>(0),
                              horner_step_at_point<C, Xs, V>{coeffs, degree, xs}),
      m * terms, make_transform_iterator(counting_iterator<std::int64_t>(0), segment_start{terms}), m,
      make_store_iterator(value_at_zero<Ys, V>{ys}), identity<affine, affine_map<V>>(), affine{}, o);
}

}  // namespace tally
