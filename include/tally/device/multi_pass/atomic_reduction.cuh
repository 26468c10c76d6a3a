// tally/device/multi_pass/atomic_reduction.cuh -- the atomic reduction: every thread combines
// its element into one location with a hardware atomic.
//
// Algorithm: the fourth variant measured in the course notes on reduce and scan
// (Oancea & Henriksen): *out = init, then thread i performs atomic_op(out, x_i). One
// launch and one read of the input, but all n atomics go to the same address, where the
// L2 serialises them: the time is about n / (atomic throughput on one address), whatever
// the memory bandwidth (the course's point: atomics depend on contention).
//
// Only operators and types with a hardware atomic (CUDA atomicAdd/Min/Max/And/Or/Xor):
//   plus            4- and 8-byte integers, float, double
//   minimum/maximum 4- and 8-byte integers
//   bit_and/bit_or/bit_xor  4- and 8-byte integers
// and the result must go to an Acc* (the atomics work on it). tally::reduction::atomic
// fails to compile for anything else (static_assert); tally::reduction::run with
// algorithm::atomic throws std::invalid_argument instead.
//
// NOT deterministic for floating point: the additions happen in arrival order, so float
// sums differ in their last bits from run to run (tally::reduction::atomic throws
// std::invalid_argument when options.deterministic asks for identical bits with a
// floating-point accumulator). Needs no temporary storage.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/operators.hpp"
#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::atomic {

template <class Acc>
inline constexpr bool atomic_integer_v =
    std::is_integral_v<Acc> && !std::is_same_v<Acc, bool> && (sizeof(Acc) == 4 || sizeof(Acc) == 8);

template <class Op, class Acc>
inline constexpr bool supported_v =
    (std::is_same_v<Op, plus> &&
     (atomic_integer_v<Acc> || std::is_same_v<Acc, float> || std::is_same_v<Acc, double>)) ||
    ((std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum> || std::is_same_v<Op, bit_and> ||
      std::is_same_v<Op, bit_or> || std::is_same_v<Op, bit_xor>) &&
     atomic_integer_v<Acc>);

// *out = *out op x, atomically. Integers go through the unsigned (or signed, for
// min/max) CUDA type of their size: two's complement addition and bit operations give the
// same bits signed or unsigned.
template <class Op, class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void combine(Acc* out, Acc x) {
  static_assert(supported_v<Op, Acc>, "tally::reduction::atomic: no hardware atomic for this operator and type");
  using word = std::conditional_t<sizeof(Acc) == 4, unsigned, unsigned long long>;
  using signed_word = std::conditional_t<sizeof(Acc) == 4, int, long long>;
  using ordered = std::conditional_t<std::is_signed_v<Acc>, signed_word, word>;
  if constexpr (std::is_same_v<Op, plus>) {
    if constexpr (std::is_floating_point_v<Acc>) {
      atomicAdd(out, x);
    } else {
      atomicAdd(reinterpret_cast<word*>(out), static_cast<word>(x));
    }
  } else if constexpr (std::is_same_v<Op, minimum>) {
    atomicMin(reinterpret_cast<ordered*>(out), static_cast<ordered>(x));
  } else if constexpr (std::is_same_v<Op, maximum>) {
    atomicMax(reinterpret_cast<ordered*>(out), static_cast<ordered>(x));
  } else if constexpr (std::is_same_v<Op, bit_and>) {
    atomicAnd(reinterpret_cast<word*>(out), static_cast<word>(x));
  } else if constexpr (std::is_same_v<Op, bit_or>) {
    atomicOr(reinterpret_cast<word*>(out), static_cast<word>(x));
  } else {
    atomicXor(reinterpret_cast<word*>(out), static_cast<word>(x));
  }
}

// One element per thread (grid-stride beyond the largest grid).
template <class Op, class Acc, class In>
__global__ void __launch_bounds__(reduce_tuning::threads)
    atomic_kernel(In in, std::int64_t n, Acc* out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    combine<Op>(out, static_cast<Acc>(in[i]));
  }
}

// *out = init op x_0 op ... op x_{n-1} (in some order), n >= 1.
template <class Acc, class In, class Op>
void run(const char* function, In in, std::int64_t n, Acc* out, Acc init, Op, cudaStream_t stream) {
  constexpr int threads = reduce_tuning::threads;
  // The atomics start from init; the write is ordered before them by the stream.
  write_value_kernel<<<1, 1, 0, stream>>>(out, init);
  TALLY_CUDA_CHECK_LAUNCH("atomic::write_value_kernel", function);
  atomic_kernel<Op, Acc><<<grid_for(ceil_div(n, threads)), threads, 0, stream>>>(in, n, out);
  TALLY_CUDA_CHECK_LAUNCH("atomic::atomic_kernel", function);
}

}  // namespace tally::detail::reduction::atomic
