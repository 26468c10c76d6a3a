// tally/algorithms/lexicographic_compare.cuh -- string comparison on the GPU (the two
// algorithms, the result and how elements compare: lexicographic_compare.hpp, which also
// has the CPU forms).
//
//   int tally::lexicographic_compare(s, s_len, t, t_len, options = {})
//       one minimum-reduction (tally::reduce) of (position, sign) keys: the first difference
//   int tally::lexicographic_compare_by_compaction(s, s_len, t, t_len, options = {})
//       the material's method: signs, compaction of the zeros (tally::copy_if into m bytes
//       of stream-ordered scratch), the first survivor
//   s, t: device pointers or random-access iterators; lengths 64-bit.
//
// Both return the answer, so they wait for it (as tally::reduce does) and are refused on
// a stream being captured into a graph. Errors: negative lengths or lengths of 2^61 and
// more, null or host pointers
// -> std::invalid_argument naming the function; CUDA failures -> tally::error.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/algorithms/lexicographic_compare.hpp"
#include "tally/algorithms/support.cuh"
#include "tally/core/options.hpp"
#include "tally/device/arguments.cuh"
#include "tally/device/reduce.cuh"
#include "tally/device/select.cuh"

namespace tally {

template <class S, class T>
int lexicographic_compare(S s, std::int64_t s_len, T t, std::int64_t t_len, const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "lexicographic_compare";
  check_length(function, "s_len", s_len);
  check_length(function, "t_len", t_len);
  require_device_pointer(function, "s", s, s_len);
  require_device_pointer(function, "t", t, t_len);
  const std::int64_t m = s_len < t_len ? s_len : t_len;
  if (m == 0) return compare_result(0, s_len, t_len);
  refuse_capture(function, o);  // (tally::reduce would refuse it too, naming itself)
  const std::int64_t first =
      tally::reduce(difference_input(s, t, m), m, difference_key(m, 0), minimum{}, o);
  return compare_result(key_sign(first), s_len, t_len);
}

template <class S, class T>
int lexicographic_compare_by_compaction(S s, std::int64_t s_len, T t, std::int64_t t_len,
                                        const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "lexicographic_compare_by_compaction";
  check_length(function, "s_len", s_len);
  check_length(function, "t_len", t_len);
  require_device_pointer(function, "s", s, s_len);
  require_device_pointer(function, "t", t, t_len);
  const std::int64_t m = s_len < t_len ? s_len : t_len;
  if (m == 0) return compare_result(0, s_len, t_len);
  refuse_capture(function, o);
  void* scratch = nullptr;
  cuda_check(cudaMallocAsync(&scratch, static_cast<std::size_t>(m), o.stream), function,
             "cudaMallocAsync");
  auto* survivors = static_cast<std::int8_t*>(scratch);
  std::int8_t first = 0;
  try {
    // copy_if's returning form waits for the count, so the first survivor is in place
    const std::int64_t count = tally::copy_if(sign_input(s, t), survivors, m, non_zero{}, o);
    if (count > 0) {
      cuda_check(cudaMemcpyAsync(&first, survivors, 1, cudaMemcpyDeviceToHost, o.stream), function,
                 "cudaMemcpyAsync");
    }
  } catch (...) {
    (void)cudaFreeAsync(scratch, o.stream);
    throw;
  }
  cuda_check(cudaFreeAsync(scratch, o.stream), function, "cudaFreeAsync");
  cuda_check(cudaStreamSynchronize(o.stream), function, "cudaStreamSynchronize");
  return compare_result(first, s_len, t_len);
}

}  // namespace tally
