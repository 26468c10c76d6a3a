// tally/cpu/detail/simd.hpp -- the vectorised tile kernels of the CPU backend.
//
// Compiled once per SIMD instruction set in src/cpu/simd_kernels.cpp (Highway) and picked
// at run time for the CPU at hand (AVX-512, AVX2, SSE4, or portable scalar code), so the
// same binary runs correctly on CPUs without AVX-512. Declared here for the element types
// and operators that have a vector form; everything else takes the generic scalar path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tally/core/operators.hpp"

namespace tally::cpu::detail {

enum class simd_op : int { plus, minimum, maximum };

template <class Op>
inline constexpr bool is_simd_op_v =
    std::is_same_v<Op, tally::plus> || std::is_same_v<Op, tally::minimum> ||
    std::is_same_v<Op, tally::maximum>;

template <class T>
inline constexpr bool is_simd_type_v =
    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::uint32_t> ||
    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class Op>
constexpr simd_op simd_op_of() {
  if constexpr (std::is_same_v<Op, tally::plus>) {
    return simd_op::plus;
  } else if constexpr (std::is_same_v<Op, tally::minimum>) {
    return simd_op::minimum;
  } else {
    return simd_op::maximum;
  }
}

// Each kernel processes in[0, n) left to right with a carry:
//   simd_inclusive_scan: out[i] = carry op x[0] op ... op x[i]; returns carry op x[0..n)
//   simd_exclusive_scan: out[i] = carry op x[0] op ... op x[i-1]; returns the same total
//   simd_reduce:         returns carry op x[0] op ... op x[n-1]
// `stream` selects non-temporal stores for the output (for arrays far larger than the
// caches: the output then does not evict the input from the cache and is not read back
// before it is written). in == out is allowed.
// One overload per element type of is_simd_type_v.
std::int32_t simd_inclusive_scan(simd_op op, const std::int32_t* in, std::int32_t* out, std::size_t n, std::int32_t carry, bool stream);
std::int32_t simd_exclusive_scan(simd_op op, const std::int32_t* in, std::int32_t* out, std::size_t n, std::int32_t carry, bool stream);
std::int32_t simd_reduce(simd_op op, const std::int32_t* in, std::size_t n, std::int32_t carry);
std::uint32_t simd_inclusive_scan(simd_op op, const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t carry, bool stream);
std::uint32_t simd_exclusive_scan(simd_op op, const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t carry, bool stream);
std::uint32_t simd_reduce(simd_op op, const std::uint32_t* in, std::size_t n, std::uint32_t carry);
std::int64_t simd_inclusive_scan(simd_op op, const std::int64_t* in, std::int64_t* out, std::size_t n, std::int64_t carry, bool stream);
std::int64_t simd_exclusive_scan(simd_op op, const std::int64_t* in, std::int64_t* out, std::size_t n, std::int64_t carry, bool stream);
std::int64_t simd_reduce(simd_op op, const std::int64_t* in, std::size_t n, std::int64_t carry);
std::uint64_t simd_inclusive_scan(simd_op op, const std::uint64_t* in, std::uint64_t* out, std::size_t n, std::uint64_t carry, bool stream);
std::uint64_t simd_exclusive_scan(simd_op op, const std::uint64_t* in, std::uint64_t* out, std::size_t n, std::uint64_t carry, bool stream);
std::uint64_t simd_reduce(simd_op op, const std::uint64_t* in, std::size_t n, std::uint64_t carry);
float simd_inclusive_scan(simd_op op, const float* in, float* out, std::size_t n, float carry, bool stream);
float simd_exclusive_scan(simd_op op, const float* in, float* out, std::size_t n, float carry, bool stream);
float simd_reduce(simd_op op, const float* in, std::size_t n, float carry);
double simd_inclusive_scan(simd_op op, const double* in, double* out, std::size_t n, double carry, bool stream);
double simd_exclusive_scan(simd_op op, const double* in, double* out, std::size_t n, double carry, bool stream);
double simd_reduce(simd_op op, const double* in, std::size_t n, double carry);

// Orders this thread's non-temporal stores before its later stores (an sfence on x86).
// Needed before publishing that streamed data is complete.
void simd_flush_streams();

// The instruction set the dispatcher chose on this CPU (e.g. "AVX3", "AVX2").
const char* simd_target_name();

}  // namespace tally::cpu::detail
