// tally/algorithms/polynomial.hpp -- evaluating a polynomial
//     p(x) = c[0] + c[1] x + ... + c[d] x^d
// with a scan operator (Blelloch 1990, "Prefix sums and their applications", and the
// course's polynomial example). Two algorithms, here for the CPU (tally::cpu) and in
// polynomial.cuh for the GPU:
//   polynomial_evaluate             (the default) Horner's rule as a reduction of affine
//       maps: Horner's steps p <- p x + c[k], for k = d down to 0, are the maps
//       (x, c[k]), and their composition (core/affine.hpp), applied to 0, is p(x). One
//       read of the coefficients, 2 multiplies and 1 add per coefficient, no scratch; it
//       rounds like Horner's rule, step for step in a different association.
//   polynomial_evaluate_by_powers   the method as taught: the powers 1, x, x^2, ... by an
//       exclusive multiplies-scan of d + 1 copies of x (stored: d + 1 values of scratch),
//       then the sum of c[k] x^k by a transform-reduce. It rounds like the power sum,
//       which loses more than Horner's rule where terms cancel.
// And at many points: polynomial_evaluate(coeffs, degree, xs, m, ys) evaluates at every
// xs[j] by a segmented reduction of the maps, one segment of d + 1 maps per point (it
// divides each virtual element's index by d + 1 to find its point).
// Values: V = common_type of the coefficients' value type and x's. degree >= 0 (d + 1
// coefficients). The maps' first component is x^(d+1) in the end, which can overflow for
// |x| > 1 and a large degree (the value itself only where p(x) does); for signed integer
// types such an overflow is undefined behaviour, so evaluate integer polynomials at large
// x in an unsigned type (exact modulo 2^bits) or in floating point.
//
//   tally::cpu::polynomial_evaluate(c_first, c_last, x) -> V       (degree = length - 1)
//   tally::cpu::polynomial_evaluate_by_powers(c_first, c_last, x) -> V
//   tally::cpu::polynomial_evaluate(c_first, c_last, xs_first, xs_last, ys_first) -> ys end
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>
#include <vector>

#include "tally/core/affine.hpp"
#include "tally/core/counting_iterator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/store_iterator.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/reduce.hpp"
#include "tally/cpu/scan.hpp"
#include "tally/cpu/segmented.hpp"

namespace tally::algorithms_support {

// j -> Horner's step j: the map (x, c[d - j]) (the highest coefficient first).
template <class C, class V>
struct horner_step {
  C c{};
  std::int64_t degree = 0;
  V x{};
  TALLY_HOST_DEVICE affine_map<V> operator()(std::int64_t j) const {
    return {x, static_cast<V>(c[degree - j])};
  }
};

// i -> step i % (d + 1) of point i / (d + 1).
template <class C, class Xs, class V>
struct horner_step_at_point {
  C c{};
  std::int64_t degree = 0;
  Xs xs{};
  TALLY_HOST_DEVICE affine_map<V> operator()(std::int64_t i) const {
    const std::int64_t point = i / (degree + 1);
    const std::int64_t j = i - point * (degree + 1);
    return {static_cast<V>(xs[point]), static_cast<V>(c[degree - j])};
  }
};

// k -> k (d + 1): the segments of the many-points evaluation.
struct segment_start {
  std::int64_t length = 1;
  TALLY_HOST_DEVICE std::int64_t operator()(std::int64_t k) const { return k * length; }
};

// The reduction's output: the composed map applied to 0.
template <class Ys, class V>
struct value_at_zero {
  Ys ys{};
  TALLY_HOST_DEVICE void operator()(std::int64_t j, const affine_map<V>& f) const {
    ys[j] = static_cast<std::iter_value_t<Ys>>(f.b);
  }
};

template <class V>
struct constant {
  V value{};
  TALLY_HOST_DEVICE V operator()(std::int64_t) const { return value; }
};

// k -> c[k] * powers[k]
template <class C, class P, class V>
struct term {
  C c{};
  P powers{};
  TALLY_HOST_DEVICE V operator()(std::int64_t k) const {
    return static_cast<V>(c[k]) * static_cast<V>(powers[k]);
  }
};

template <class C, class X>
using polynomial_value_t = std::common_type_t<std::iter_value_t<C>, X>;

inline void check_points(const char* function, std::int64_t degree, std::int64_t m) {
  require_count(function, "degree", degree);
  require_count(function, "m", m);
  if (degree == INT64_MAX || (m > 0 && degree + 1 > INT64_MAX / m)) {
    throw_argument_error(function, "m", "times degree + 1 is more than an int64 can count");
  }
}

template <class C, class V>
auto horner_input(C c, std::int64_t degree, V x) {
  return make_transform_iterator(counting_iterator<std::int64_t>(0), horner_step<C, V>{c, degree, x});
}

}  // namespace tally::algorithms_support

namespace tally::cpu {

template <std::random_access_iterator CIt, class X>
auto polynomial_evaluate(CIt c_first, CIt c_last, X x) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::polynomial_evaluate";
  using V = polynomial_value_t<CIt, X>;
  const std::int64_t terms = static_cast<std::int64_t>(c_last - c_first);
  if (terms < 1) throw_argument_error(function, "c_last", "must be after c_first (degree >= 0)");
  require_pointer(function, "c_first", c_first, terms);
  const auto steps = horner_input(c_first, terms - 1, static_cast<V>(x));
  return tally::cpu::reduce(steps, steps + terms, identity<affine, affine_map<V>>(), affine{}).b;
}

template <std::random_access_iterator CIt, class X>
auto polynomial_evaluate_by_powers(CIt c_first, CIt c_last, X x) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::polynomial_evaluate_by_powers";
  using V = polynomial_value_t<CIt, X>;
  const std::int64_t terms = static_cast<std::int64_t>(c_last - c_first);
  if (terms < 1) throw_argument_error(function, "c_last", "must be after c_first (degree >= 0)");
  require_pointer(function, "c_first", c_first, terms);
  std::vector<V> powers(static_cast<std::size_t>(terms));
  const auto xs = make_transform_iterator(counting_iterator<std::int64_t>(0),
                                          constant<V>{static_cast<V>(x)});
  tally::cpu::exclusive_scan(xs, xs + terms, powers.begin(), V(1), multiplies{});
  const auto terms_in = make_transform_iterator(
      counting_iterator<std::int64_t>(0), term<CIt, const V*, V>{c_first, powers.data()});
  return tally::cpu::reduce(terms_in, terms_in + terms, V(0), plus{});
}

template <std::random_access_iterator CIt, std::random_access_iterator XsIt,
          std::random_access_iterator YsIt>
YsIt polynomial_evaluate(CIt c_first, CIt c_last, XsIt xs_first, XsIt xs_last, YsIt ys_first) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::polynomial_evaluate";
  using V = polynomial_value_t<CIt, std::iter_value_t<XsIt>>;
  const std::int64_t terms = static_cast<std::int64_t>(c_last - c_first);
  const std::int64_t m = static_cast<std::int64_t>(xs_last - xs_first);
  if (terms < 1) throw_argument_error(function, "c_last", "must be after c_first (degree >= 0)");
  if (m < 0) throw_argument_error(function, "xs_last", "is before xs_first");
  check_points(function, terms - 1, m);
  require_pointer(function, "c_first", c_first, terms);
  require_pointer(function, "xs_first", xs_first, m);
  require_pointer(function, "ys_first", ys_first, m);
  const auto steps = make_transform_iterator(
      counting_iterator<std::int64_t>(0), horner_step_at_point<CIt, XsIt, V>{c_first, terms - 1, xs_first});
  const auto starts =
      make_transform_iterator(counting_iterator<std::int64_t>(0), segment_start{terms});
  tally::cpu::segmented_reduce(steps, starts, starts + (m + 1),
                               make_store_iterator(value_at_zero<YsIt, V>{ys_first}),
                               identity<affine, affine_map<V>>(), affine{});
  return ys_first + m;
}

}  // namespace tally::cpu
