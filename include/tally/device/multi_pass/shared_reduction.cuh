// tally/device/multi_pass/shared_reduction.cuh -- teaching baselines: the shared-memory
// tree reductions of the material, with divergent and with convergent indexing.
//
// Algorithm: Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA, 2007), kernel 1
// (interleaved addressing, divergent branching) and kernel 3 (sequential addressing,
// convergent); PMPP chapter 10 (Figs. 10.6 and 10.9, the simple and the convergent
// kernels). Each block loads B = 256 consecutive elements, one per thread, into shared
// memory and reduces them by a tree of log2 B barrier-separated levels; thread 0 writes
// the block's result. As the block reduction (block_reduction.cuh) each launch shrinks the
// array B-fold: ceil(log_B n) launches, then one thread writes init op total.
//
//   divergent   for s = 1, 2, ..., B/2:  if (t % (2s) == 0)  sm[t] = sm[t] op sm[t + s]
//               the active threads are spread over every warp (one active lane in eight
//               at s = 4 ...): warps stay busy with few useful lanes, and the modulo is
//               slow. Adjacent subtrees are combined left then right: in order.
//   convergent  for s = B/2, ..., 2, 1:  if (t < s)  sm[t] = sm[t] op sm[t + s]
//               the active threads are the first s: whole warps retire, and a warp's
//               accesses are consecutive (no bank conflicts). It combines positions s
//               apart, so with elements in place it reduces x_t op x_{t+B/2} ...: the
//               textbook form, correct for commutative operators only. For every other
//               operator element j is stored at position rev(j) (its log2 B index bits
//               reversed): then position t < s always holds a run of consecutive elements
//               starting at rev(t), and sm[t + s] holds the run right after sm[t]'s, so
//               the same loop combines in order. (A run's first element is rev(its
//               position): a position t < s has its high bits clear.) The bit-reversed
//               store conflicts in shared memory once per element; the tree does not.
// Commutative here means tally::is_commutative_v (core/commutative.hpp).
//
// Partial blocks (the last one, `valid` < B elements): places past the end are never
// combined: a level combines position t with t + s only if the run at t + s starts before
// `valid` (t + s < valid in place, rev(t + s) < valid reversed); runs lie in order, so a
// run past the end is only ever a later operand. No identity needed.
//
// Work: n - 1 applications (+1 for init), as sequential; per block log2 B steps, each one
// barrier, and B/2 + B/4 + ... active threads in total against B log2 B thread-steps.
// Deterministic (the grouping depends on n only).
//
// Storage: two ping-pong buffers of ceil(n/B) and ceil(n/B^2) accumulators (as the block
// reduction).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/block/detail/scan_interface.cuh"
#include "tally/core/commutative.hpp"
#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::shared_tree {

enum class indexing { divergent, convergent };

inline constexpr int threads = reduce_tuning::threads;
inline constexpr int log2_threads = 8;
static_assert((1 << log2_threads) == threads, "the shared trees need B = 2^log2_threads threads");

// The shared-memory position of element j of a block (and the first element of the run a
// position holds): j itself, or its log2 B bits reversed for the convergent tree with a
// non-commutative operator.
template <bool Reversed>
TALLY_DEVICE TALLY_FORCEINLINE int position_of(int j) {
  if constexpr (Reversed) {
    return static_cast<int>(__brev(static_cast<unsigned>(j)) >> (32 - log2_threads));
  } else {
    return j;
  }
}

// out[b] = in[b*B] op ... op in[min((b+1)*B, m) - 1].
template <indexing Indexing, class Acc, class In, class Op>
__global__ void __launch_bounds__(threads) level_kernel(In in, std::int64_t m, Acc* out, Op op) {
  constexpr bool reversed = Indexing == indexing::convergent && !is_commutative_v<Op, Acc>;
  __shared__ block::detail::uninitialized_array<Acc, threads> storage;
  Acc* sm = storage.data();
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t blocks = ceil_div(m, threads);
  for (std::int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const std::int64_t base = b * threads;
    const int valid = static_cast<int>(m - base < threads ? m - base : threads);
    // Write-after-read: thread 0 of the previous block step has read sm[0] (its result)
    // before any thread stores this step's elements.
    __syncthreads();
    if (t < valid) sm[position_of<reversed>(t)] = static_cast<Acc>(in[base + t]);
    if constexpr (Indexing == indexing::divergent) {
      for (int s = 1; s < threads; s *= 2) {
        // Read-after-write: the stores above, or the previous level, are visible. Within
        // a level thread t writes sm[t] and reads sm[t + s], an odd multiple of s that no
        // thread of the level writes.
        __syncthreads();
        if (t % (2 * s) == 0 && t + s < valid) sm[t] = static_cast<Acc>(op(sm[t], sm[t + s]));
      }
    } else {
      for (int s = threads / 2; s > 0; s /= 2) {
        // Read-after-write as above. Within a level the writers are t < s and the places
        // read are t + s >= s: disjoint.
        __syncthreads();
        if (t < s && position_of<reversed>(t + s) < valid) {
          sm[t] = static_cast<Acc>(op(sm[t], sm[t + s]));
        }
      }
    }
    __syncthreads();  // the last level's write of sm[0] is visible to thread 0
    if (t == 0) out[b] = sm[0];
  }
}

template <class Acc>
void carve(storage_carver& c, std::int64_t n, Acc*& a, Acc*& b) {
  const std::int64_t first = n >= 2 ? ceil_div(n, threads) : 0;
  const std::int64_t second = first >= 2 ? ceil_div(first, threads) : 0;
  a = c.take<Acc>(static_cast<std::size_t>(first));
  b = c.take<Acc>(static_cast<std::size_t>(second));
}

// The number of launches for n >= 1 elements: ceil(log_B n) levels and the finish.
constexpr std::int64_t launches(std::int64_t n) {
  std::int64_t count = 1;
  for (std::int64_t m = n; m > 1; m = (m + threads - 1) / threads) ++count;
  return count;
}

// Reduces n >= 1 elements: *out = init op x_0 op ... op x_{n-1}.
template <indexing Indexing, class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, Acc* a, Acc* b,
         cudaStream_t stream) {
  if (n == 1) {
    finish_kernel<Acc><<<1, 1, 0, stream>>>(in, init, op, out);
    TALLY_CUDA_CHECK_LAUNCH("shared_tree::finish_kernel", function);
    return;
  }
  std::int64_t m = ceil_div(n, threads);
  level_kernel<Indexing, Acc><<<grid_for(m), threads, 0, stream>>>(in, n, a, op);
  TALLY_CUDA_CHECK_LAUNCH("shared_tree::level_kernel", function);
  Acc* src = a;
  Acc* dst = b;
  while (m > 1) {
    const std::int64_t next = ceil_div(m, threads);
    level_kernel<Indexing, Acc><<<grid_for(next), threads, 0, stream>>>(
        static_cast<const Acc*>(src), m, dst, op);
    TALLY_CUDA_CHECK_LAUNCH("shared_tree::level_kernel", function);
    m = next;
    Acc* t = src;
    src = dst;
    dst = t;
  }
  finish_kernel<Acc><<<1, 1, 0, stream>>>(static_cast<const Acc*>(src), init, op, out);
  TALLY_CUDA_CHECK_LAUNCH("shared_tree::finish_kernel", function);
}

}  // namespace tally::detail::reduction::shared_tree
