// tally/warp/warp_scan.cuh -- warp-level scans and reduction with register shuffles.
//
// Algorithm: the log-step (Hillis & Steele 1986 / Kogge & Stone 1973) scan over the 32
// lanes of a warp, with __shfl_up_sync moving values between lanes instead of shared
// memory: in step d = 1, 2, 4, 8, 16 every lane l >= d combines the value of lane l - d
// with its own. 5 steps, 32 * 5 - (1 + 2 + 4 + 8 + 16) = 129 operator applications.
//
// Contract of every function here:
//   - all 32 lanes of the warp call it together (convergent, full mask); a partial warp
//     pads its missing lanes with any defined value (a scan is causal: lane l's result
//     depends on lanes 0..l only, so padding after the last real lane is harmless);
//   - T is any trivially copyable type. Arithmetic types of 4 or 8 bytes use the
//     hardware shuffle directly; anything else (int8, int16, structs ...) is shuffled as
//     a sequence of 32-bit words;
//   - op is any associative callable, commutative or not: it is always applied as
//     op(earlier lanes, later lanes).
#pragma once

#include <cstring>
#include <type_traits>

#include "tally/core/macros.hpp"

namespace tally::warp {

inline constexpr int warp_threads = 32;
inline constexpr unsigned full_mask = 0xffffffffu;

// The lane of the calling thread, whatever the shape of the block.
TALLY_DEVICE TALLY_FORCEINLINE int lane_id() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return static_cast<int>(lane);
}

namespace detail {

template <class T>
inline constexpr bool native_shuffle_v =
    std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 4 || sizeof(T) == 8);

// Shuffles a trivially copyable value of any size as ceil(sizeof(T) / 4) 32-bit words.
template <class T, class ShuffleWord>
TALLY_DEVICE TALLY_FORCEINLINE T shuffle_words(const T& value, ShuffleWord shuffle_word) {
  static_assert(std::is_trivially_copyable_v<T>,
                "tally::warp: shuffled types must be trivially copyable");
  constexpr int words = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned w[words] = {};  // zero-filled: the bytes past sizeof(T) in the last word are defined
  memcpy(w, &value, sizeof(T));
#pragma unroll
  for (int i = 0; i < words; ++i) w[i] = shuffle_word(w[i]);
  T result = value;  // T need not be default constructible
  memcpy(&result, w, sizeof(T));
  return result;
}

}  // namespace detail

// The value of lane (lane_id() - delta); lanes below delta get their own value back.
template <class T>
TALLY_DEVICE TALLY_FORCEINLINE T shuffle_up(const T& value, unsigned delta) {
  if constexpr (detail::native_shuffle_v<T>) {
    return __shfl_up_sync(full_mask, value, delta);
  } else {
    return detail::shuffle_words(value,
                                 [delta](unsigned w) { return __shfl_up_sync(full_mask, w, delta); });
  }
}

// The value of lane `source`.
template <class T>
TALLY_DEVICE TALLY_FORCEINLINE T shuffle_index(const T& value, int source) {
  if constexpr (detail::native_shuffle_v<T>) {
    return __shfl_sync(full_mask, value, source);
  } else {
    return detail::shuffle_words(value,
                                 [source](unsigned w) { return __shfl_sync(full_mask, w, source); });
  }
}

// The value of lane (lane_id() ^ mask).
template <class T>
TALLY_DEVICE TALLY_FORCEINLINE T shuffle_xor(const T& value, int mask) {
  if constexpr (detail::native_shuffle_v<T>) {
    return __shfl_xor_sync(full_mask, value, mask);
  } else {
    return detail::shuffle_words(value,
                                 [mask](unsigned w) { return __shfl_xor_sync(full_mask, w, mask); });
  }
}

// Inclusive scan: lane l gets x_0 op x_1 op ... op x_l.
template <class T, class Op>
TALLY_DEVICE TALLY_FORCEINLINE T inclusive_scan(T x, Op op) {
  const int lane = lane_id();
#pragma unroll
  for (int d = 1; d < warp_threads; d *= 2) {
    const T earlier = shuffle_up(x, static_cast<unsigned>(d));
    if (lane >= d) x = static_cast<T>(op(earlier, x));
  }
  return x;
}

// Inclusive scan; `aggregate` receives x_0 op ... op x_31 in every lane.
template <class T, class Op>
TALLY_DEVICE TALLY_FORCEINLINE T inclusive_scan(T x, Op op, T& aggregate) {
  x = inclusive_scan(x, op);
  aggregate = shuffle_index(x, warp_threads - 1);
  return x;
}

// Exclusive scan seeded with `init`: lane 0 gets init, lane l > 0 gets
// init op x_0 op ... op x_{l-1}. The seed is folded into lane 0's value before the
// inclusive scan, so it costs one operator application, and no identity is needed.
template <class T, class Op>
TALLY_DEVICE TALLY_FORCEINLINE T exclusive_scan(T x, T init, Op op) {
  const int lane = lane_id();
  if (lane == 0) x = static_cast<T>(op(init, x));
  const T inclusive = inclusive_scan(x, op);
  const T shifted = shuffle_up(inclusive, 1u);
  return lane == 0 ? init : shifted;
}

// Exclusive scan without a seed: the inclusive result shifted up one lane. Lane l > 0
// gets x_0 op ... op x_{l-1}; lane 0's result is UNSPECIFIED (there is nothing before
// it, and an operator need not have an identity). Callers ignore lane 0's value.
template <class T, class Op>
TALLY_DEVICE TALLY_FORCEINLINE T exclusive_scan(T x, Op op) {
  return shuffle_up(inclusive_scan(x, op), 1u);
}

// Reduction: every lane gets x_0 op ... op x_31 (bitwise the same value in every lane).
// Butterfly (xor) exchange; the lane whose bit is set holds the later half, so it
// applies op(partner, own) and its partner op(own, partner): operand order is kept.
template <class T, class Op>
TALLY_DEVICE TALLY_FORCEINLINE T reduce(T x, Op op) {
  const int lane = lane_id();
#pragma unroll
  for (int m = 1; m < warp_threads; m *= 2) {
    const T other = shuffle_xor(x, m);
    x = (lane & m) ? static_cast<T>(op(other, x)) : static_cast<T>(op(x, other));
  }
  return x;
}

}  // namespace tally::warp
