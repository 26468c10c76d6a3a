// tally/core/commutative.hpp -- which operators may combine their operands in any order.
//
// `tally::is_commutative<Op, T>` is true when op(a, b) == op(b, a) for all values of T, so
// that a reduction may give each thread a strided set of elements (coalesced loads, no
// shared-memory staging) and combine the partial results in any grouping. It is true for
// tally's plus, multiplies, minimum and maximum on arithmetic types and for bit_and,
// bit_or and bit_xor on integral types; false for everything else, so an operator that
// tally does not know is always reduced in order (consecutive chunks), which is correct
// for any associative operator.
//
// Floating point: plus is commutative (not associative: tally's reductions fix the
// grouping, so results are identical run to run). minimum/maximum are commutative except
// with NaN operands (a < b is false both ways): with NaN in the input, which value a
// reduction returns is unspecified.
//
// Users may specialise is_commutative for their own operators:
//   template <class T> struct tally::is_commutative<my_op, T> : std::true_type {};
// A commutative operator also needs a known identity (tally::identity_of) to take the
// strided path; without one it is reduced in order.
#pragma once

#include <type_traits>

#include "tally/core/operators.hpp"

namespace tally {

template <class Op, class T, class = void>
struct is_commutative : std::false_type {};

template <class T>
struct is_commutative<plus, T, std::enable_if_t<std::is_arithmetic_v<T>>> : std::true_type {};
template <class T>
struct is_commutative<multiplies, T, std::enable_if_t<std::is_arithmetic_v<T>>> : std::true_type {};
template <class T>
struct is_commutative<minimum, T, std::enable_if_t<std::is_arithmetic_v<T>>> : std::true_type {};
template <class T>
struct is_commutative<maximum, T, std::enable_if_t<std::is_arithmetic_v<T>>> : std::true_type {};
template <class T>
struct is_commutative<bit_and, T, std::enable_if_t<std::is_integral_v<T>>> : std::true_type {};
template <class T>
struct is_commutative<bit_or, T, std::enable_if_t<std::is_integral_v<T>>> : std::true_type {};
template <class T>
struct is_commutative<bit_xor, T, std::enable_if_t<std::is_integral_v<T>>> : std::true_type {};

template <class Op, class T>
inline constexpr bool is_commutative_v = is_commutative<Op, T>::value;

}  // namespace tally
