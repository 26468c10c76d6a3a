// tally/core/affine.hpp -- affine maps x -> a x + b and their composition: the operator
// that turns a first-order linear recurrence into a scan.
//
//   tally::affine_map<T>{a, b}   the map x -> a x + b
//   tally::affine                the operator: affine{}(f, g) = g after f, the map that
//                                applies f first and then g:
//                                  (f.a, f.b), (g.a, g.b) -> (g.a f.a, g.a f.b + g.b)
//   tally::apply(f, x)           f.a x + f.b
//
// Composition of functions is associative and, in general, not commutative: a scan of
// maps f_0, f_1, ... gives at i the map f_i o ... o f_0, and applying it to x_{-1} gives
// x_i of the recurrence x_i = a_i x_{i-1} + b_i (Blelloch 1990, "Prefix sums and their
// applications", section 1.4; tally/algorithms/linear_recurrence.cuh). The identity is
// (1, 0) (identity_of is specialised below). With unsigned integers the maps compose
// modulo 2^bits exactly, which makes them a test operator with no rounding.
#pragma once

#include <type_traits>

#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"

namespace tally {

template <class T>
struct affine_map {
  T a;
  T b;
  friend constexpr bool operator==(const affine_map&, const affine_map&) = default;
};

struct affine {
  template <class T>
  TALLY_HOST_DEVICE constexpr affine_map<T> operator()(const affine_map<T>& f,
                                                       const affine_map<T>& g) const {
    // static_cast: a product of narrow integers is an int; the map keeps its type
    return {static_cast<T>(g.a * f.a), static_cast<T>(g.a * f.b + g.b)};
  }
};

template <class T>
TALLY_HOST_DEVICE constexpr T apply(const affine_map<T>& f, const T& x) {
  return static_cast<T>(f.a * x + f.b);
}

template <class T>
struct identity_of<affine, affine_map<T>> {
  TALLY_HOST_DEVICE static constexpr affine_map<T> value() { return {T(1), T(0)}; }
};

}  // namespace tally
