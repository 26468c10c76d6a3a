// tally/device/multi_pass/block_reduction.cuh -- the block reduction: each kernel shrinks the
// array by the block size.
//
// Algorithm: the classic multi-launch reduction (Harris, "Optimizing Parallel Reduction
// in CUDA", NVIDIA 2007; the second variant measured in the course notes on reduce and
// scan, Oancea & Henriksen). Each block reduces B = 256 consecutive elements, one per
// thread (a coalesced load), to one value with a block reduce (warp shuffles, then a
// warp over the warp totals: block/block_reduce.cuh); the B-fold shorter array of block
// results is reduced the same way until one value is left: ceil(log_B n) launches (4 for
// n = 2^28), then one thread writes init op total.
//
// Work n - 1 applications; memory n reads + n/B writes + n/B reads ...: close to one pass,
// but each thread loads a single element (little memory parallelism per thread) and every
// level is a launch. The block reduce combines in thread order, so any associative
// operator works. Deterministic: the grouping depends on n only.
//
// Storage: two ping-pong buffers of ceil(n/B) and ceil(n/B^2) accumulators.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::block_level {

// out[b] = in[b*B] op ... op in[min((b+1)*B, m) - 1].
template <class Acc, class In, class Op>
__global__ void __launch_bounds__(reduce_tuning::threads)
    level_kernel(In in, std::int64_t m, Acc* out, Op op) {
  constexpr int threads = reduce_tuning::threads;
  using reduce_t = valid_block_reduce<Acc, threads, 1>;
  __shared__ typename reduce_t::TempStorage storage;
  reduce_t reducer(storage);
  const std::int64_t blocks = ceil_div(m, threads);
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const std::int64_t base = b * threads;
    const int valid = static_cast<int>(m - base < threads ? m - base : threads);
    // Threads past the end read the last valid element; valid_block_reduce ignores them.
    const int i = static_cast<int>(threadIdx.x) < valid ? static_cast<int>(threadIdx.x) : valid - 1;
    const Acc items[1] = {static_cast<Acc>(in[base + i])};
    const Acc total = reducer.reduce(items, valid, op);
    if (threadIdx.x == 0) out[b] = total;
    // The next iteration's block reduce writes its shared storage only after barriers
    // that every thread reaches after reading this total (block_reduce's contract).
  }
}

template <class Acc>
void carve(storage_carver& c, std::int64_t n, Acc*& a, Acc*& b) {
  constexpr std::int64_t threads = reduce_tuning::threads;
  const std::int64_t first = n >= 2 ? ceil_div(n, threads) : 0;
  const std::int64_t second = first >= 2 ? ceil_div(first, threads) : 0;
  a = c.take<Acc>(static_cast<std::size_t>(first));
  b = c.take<Acc>(static_cast<std::size_t>(second));
}

// Reduces n >= 1 elements: *out = init op x_0 op ... op x_{n-1}.
template <class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, Acc* a, Acc* b,
         cudaStream_t stream) {
  constexpr int threads = reduce_tuning::threads;
  if (n == 1) {
    finish_kernel<Acc><<<1, 1, 0, stream>>>(in, init, op, out);
    TALLY_CUDA_CHECK_LAUNCH("block::finish_kernel", function);
    return;
  }
  std::int64_t m = ceil_div(n, threads);
  level_kernel<Acc><<<grid_for(m), threads, 0, stream>>>(in, n, a, op);
  TALLY_CUDA_CHECK_LAUNCH("block::level_kernel", function);
  Acc* src = a;
  Acc* dst = b;
  while (m > 1) {
    const std::int64_t next = ceil_div(m, threads);
    level_kernel<Acc><<<grid_for(next), threads, 0, stream>>>(static_cast<const Acc*>(src), m,
                                                              dst, op);
    TALLY_CUDA_CHECK_LAUNCH("block::level_kernel", function);
    m = next;
    Acc* t = src;
    src = dst;
    dst = t;
  }
  finish_kernel<Acc><<<1, 1, 0, stream>>>(static_cast<const Acc*>(src), init, op, out);
  TALLY_CUDA_CHECK_LAUNCH("block::finish_kernel", function);
}

}  // namespace tally::detail::reduction::block_level
