// tally/device/multi_pass/naive_scan.cuh -- teaching baseline: the naive O(n^2) scan, each
// output summing its whole prefix by itself.
//
// Algorithm: the "obvious" parallelisation that the scan material starts from (PMPP
// chapter 11's motivation; the course notes on reduce and scan): thread i computes
//   inclusive  out[i] = x_0 op x_1 op ... op x_i            i applications
//   exclusive  out[i] = init op x_0 op ... op x_{i-1}       i applications
// sequentially, independently of every other thread. No communication, no barrier, one
// launch; but the work is sum_i i = n (n - 1) / 2 applications (the sequential scan needs
// n - 1), and the last thread's chain is n - 1 applications long, so the time grows as
// n^2 / (threads in flight) and the critical path as n. It shows why the work-efficient
// algorithms matter: the parallel machine cannot make up for quadratic work.
// Operands are combined in order (op(earlier, later)): any associative operator works;
// no identity needed. 64-bit indices.
//
// In place (in == out as pointers): thread j would overwrite x_j while threads i > j
// still read it, so the results go to temporary storage of n accumulators first and a
// copy kernel moves them to out (two launches). The storage query promises those bytes
// whatever the pointers (the call cannot know them in advance).
//
// Reached through tally::textbook::inclusive_scan / exclusive_scan with
// options.strategy = scan_strategy::naive (options.block must be automatic). Never chosen
// by scan_strategy::automatic; for small n only (the bench runs it up to 2^16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"

namespace tally::detail::naive_scan {

inline constexpr int threads = 256;

// The tag textbook.cuh dispatches scan_strategy::naive to.
struct strategy {
  static constexpr bool single_pass = false;
};

// out[i] for every i < n, one thread per output (grid-stride over the outputs).
template <bool Exclusive, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(threads)
    scan_kernel(In in, Out out, std::int64_t n, seed_value<Acc, Exclusive> seed, Op op) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if constexpr (Exclusive) {
      Acc acc = seed.value;
      for (std::int64_t j = 0; j < i; ++j) acc = static_cast<Acc>(op(acc, static_cast<Acc>(in[j])));
      out[i] = acc;
    } else {
      Acc acc = static_cast<Acc>(in[0]);
      for (std::int64_t j = 1; j <= i; ++j) acc = static_cast<Acc>(op(acc, static_cast<Acc>(in[j])));
      out[i] = acc;
    }
  }
}

// out[i] = from[i]: the second launch of an in-place call.
template <class Acc, class Out>
__global__ void __launch_bounds__(threads) copy_kernel(const Acc* from, Out out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = from[i];
  }
}

// Bytes of caller storage a call needs: n accumulators (used by in-place calls only).
template <class Acc>
constexpr std::size_t storage_bytes(std::int64_t n) {
  return n <= 0 ? 0 : round_up_storage(static_cast<std::size_t>(n) * sizeof(Acc)) + storage_alignment;
}

// Whether in and out are the same pointer (an in-place call).
template <class In, class Out>
bool same_pointer(const In& in, const Out& out) {
  if constexpr (std::is_pointer_v<In> && std::is_pointer_v<Out>) {
    return static_cast<const void*>(in) == static_cast<const void*>(out);
  } else {
    (void)in, (void)out;
    return false;
  }
}

// Scans n >= 1 elements. `storage`: caller storage (data, bytes), checked against
// storage_bytes<Acc>(n); without it an in-place call allocates n accumulators stream-ordered.
template <bool Exclusive, class Acc, class In, class Out, class Op>
void run(const char* function, const char* storage_query, In in, Out out, std::int64_t n,
         seed_value<Acc, Exclusive> seed, Op op, void* caller_data, std::size_t caller_bytes,
         cudaStream_t stream) {
  const std::size_t promised = storage_bytes<Acc>(n);
  check_caller_storage(function, storage_query, caller_data, caller_bytes, promised);
  const unsigned grid = grid_for(ceil_div(n, threads));
  if (!same_pointer(in, out)) {
    scan_kernel<Exclusive, Acc><<<grid, threads, 0, stream>>>(in, out, n, seed, op);
    TALLY_CUDA_CHECK_LAUNCH("naive_scan::scan_kernel", function);
    return;
  }
  scoped_storage storage(function, storage_query, caller_data, caller_bytes, promised, stream);
  Acc* scratch = reinterpret_cast<Acc*>(storage.aligned());
  scan_kernel<Exclusive, Acc><<<grid, threads, 0, stream>>>(in, scratch, n, seed, op);
  TALLY_CUDA_CHECK_LAUNCH("naive_scan::scan_kernel", function);
  copy_kernel<Acc><<<grid, threads, 0, stream>>>(static_cast<const Acc*>(scratch), out, n);
  TALLY_CUDA_CHECK_LAUNCH("naive_scan::copy_kernel", function);
}

}  // namespace tally::detail::naive_scan
