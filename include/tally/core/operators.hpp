// tally/core/operators.hpp -- the binary operators of the public API and their identities.
//
// Every operator is a stateless, host+device callable object. Any other associative
// callable works with every tally algorithm as well; commutativity is never assumed
// (algorithms always combine `op(earlier, later)`).
//
// An identity e of an operator satisfies op(e, x) == x == op(x, e). Algorithms that need
// one (Blelloch's unseeded exclusive scan, the strided reductions of commutative
// operators) ask `has_identity_v<Op, T>`; for an operator without a known identity they
// use an algorithm that does not need one.
#pragma once

#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda/std/limits>
#endif

#include "tally/core/macros.hpp"

namespace tally {

namespace detail {
// numeric_limits whose members device code may call: libcu++'s under nvcc (the CUDA
// toolkit's), the standard library's otherwise; the same values.
#if defined(__CUDACC__)
template <class T>
using numeric_limits = cuda::std::numeric_limits<T>;
#else
template <class T>
using numeric_limits = std::numeric_limits<T>;
#endif
}  // namespace detail

struct plus {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr auto operator()(const T& a, const U& b) const -> decltype(a + b) {
    return a + b;
  }
};

struct multiplies {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr auto operator()(const T& a, const U& b) const -> decltype(a * b) {
    return a * b;
  }
};

// minimum/maximum return the common type of their operands (not the promoted type), so
// a maximum scan of int8 stays int8. When the operands compare equal the first one is
// returned, as std::min does.
struct minimum {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr std::common_type_t<T, U> operator()(const T& a, const U& b) const {
    return b < a ? b : a;
  }
};

struct maximum {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr std::common_type_t<T, U> operator()(const T& a, const U& b) const {
    return a < b ? b : a;
  }
};

struct bit_and {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr auto operator()(const T& a, const U& b) const -> decltype(a & b) {
    return a & b;
  }
};

struct bit_or {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr auto operator()(const T& a, const U& b) const -> decltype(a | b) {
    return a | b;
  }
};

struct bit_xor {
  template <class T, class U>
  TALLY_HOST_DEVICE constexpr auto operator()(const T& a, const U& b) const -> decltype(a ^ b) {
    return a ^ b;
  }
};

// ---- identities -------------------------------------------------------------------------
// A value z that absorbs everything before it: op(x, z) == z, bit for bit, for every x
// (a right zero of op). A look-back that meets such a tile's aggregate has the prefix it
// needs there, as if the tile were inclusive (single_pass/decoupled_lookback.cuh). None for most
// operators; segmented_op's pairs with a head are (core/segmented.hpp). Found by
// argument-dependent lookup: an overload for other operators goes in their namespace.
template <class Op, class T>
TALLY_HOST_DEVICE constexpr bool absorbs_prefix(const Op&, const T&) {
  return false;
}

// `identity_of<Op, T>::value()` exists exactly when the identity is known. Users may
// specialise identity_of for their own operators and types.
template <class Op, class T, class = void>
struct identity_of {};

template <class T>
struct identity_of<plus, T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  TALLY_HOST_DEVICE static constexpr T value() { return T(0); }
};
template <class T>
struct identity_of<multiplies, T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  TALLY_HOST_DEVICE static constexpr T value() { return T(1); }
};
template <class T>
struct identity_of<minimum, T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  // +infinity for floating point (so a NaN-free minimum of any finite values is exact),
  // the largest value otherwise.
  TALLY_HOST_DEVICE static constexpr T value() {
    if constexpr (detail::numeric_limits<T>::has_infinity) {
      return detail::numeric_limits<T>::infinity();
    } else {
      return detail::numeric_limits<T>::max();
    }
  }
};
template <class T>
struct identity_of<maximum, T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  TALLY_HOST_DEVICE static constexpr T value() {
    if constexpr (detail::numeric_limits<T>::has_infinity) {
      return -detail::numeric_limits<T>::infinity();
    } else {
      return detail::numeric_limits<T>::lowest();
    }
  }
};
template <class T>
struct identity_of<bit_and, T, std::enable_if_t<std::is_integral_v<T>>> {
  TALLY_HOST_DEVICE static constexpr T value() { return static_cast<T>(~T(0)); }
};
template <class T>
struct identity_of<bit_or, T, std::enable_if_t<std::is_integral_v<T>>> {
  TALLY_HOST_DEVICE static constexpr T value() { return T(0); }
};
template <class T>
struct identity_of<bit_xor, T, std::enable_if_t<std::is_integral_v<T>>> {
  TALLY_HOST_DEVICE static constexpr T value() { return T(0); }
};

template <class Op, class T, class = void>
inline constexpr bool has_identity_v = false;
template <class Op, class T>
inline constexpr bool has_identity_v<Op, T, std::void_t<decltype(identity_of<Op, T>::value())>> =
    true;

template <class Op, class T>
TALLY_HOST_DEVICE constexpr T identity() {
  static_assert(has_identity_v<Op, T>, "tally: this operator has no known identity for T");
  return identity_of<Op, T>::value();
}

}  // namespace tally
