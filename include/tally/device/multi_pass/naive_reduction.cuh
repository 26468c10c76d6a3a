// tally/device/multi_pass/naive_reduction.cuh -- teaching baseline: the naive n-thread
// reduction, one launch per level of a pairwise tree in global memory.
//
// Algorithm: the first reduction kernel of the material (PMPP chapter 10's simple
// reduction, here across the whole grid; the interleaved tree of Harris, "Optimizing
// Parallel Reduction in CUDA", 2007, kernel 1, with global memory in place of shared
// memory and a launch in place of each barrier). A buffer of n accumulators; level
// l = 0, 1, ..., ceil(log2 n) - 1 with stride s = 2^l launches one thread per ELEMENT
// (n threads, grid-stride beyond the grid cap), and thread i computes
//     buf[i] = buf[i] op buf[i + s]    if i is a multiple of 2s and i + s < n
// (level 0 reads the input: buf[i] = x_i op x_{i+1}, or x_i for an odd last element).
// Then one thread writes init op buf[0].
//
// Cost: n - 1 applications (work-efficient), depth and launches ceil(log2 n) (+1 for the
// finish); but every level launches all n threads of which n / 2^(l+1) do anything (the
// rest test their index and retire: n ceil(log2 n) thread slots for n - 1 additions), the
// active threads are spread over all warps (divergence: a warp of level l >= 5 has one
// active lane), and level l reads elements 2^l apart (uncoalesced). The tree reduction
// (tree_reduction.cuh) launches one thread per PAIR of a halved array instead.
// Pairs are adjacent subtrees combined left then right, so any associative operator
// works (commutative or not); no identity. Deterministic (the tree depends on n only).
// Within a level, thread i writes buf[i] and reads buf[i + s], an odd multiple of s that
// no thread of the level writes: in place is safe; the launches order the levels.
//
// Storage: n accumulators (positions 2m only are used; the index arithmetic of the
// material is kept).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::naive {

// Level 0: buf[i] = x_i op x_{i+1} for even i (x_i alone for an odd last element).
template <class Acc, class In, class Op>
__global__ void __launch_bounds__(reduce_tuning::threads)
    first_level_kernel(In in, std::int64_t n, Acc* buf, Op op) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (i % 2 == 0) {
      const Acc left = static_cast<Acc>(in[i]);
      buf[i] = i + 1 < n ? static_cast<Acc>(op(left, static_cast<Acc>(in[i + 1]))) : left;
    }
  }
}

// Level with stride s >= 2: buf[i] = buf[i] op buf[i + s] for i a multiple of 2s.
template <class Acc, class Op>
__global__ void __launch_bounds__(reduce_tuning::threads)
    level_kernel(Acc* buf, std::int64_t n, std::int64_t s, Op op) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if (i % (2 * s) == 0 && i + s < n) buf[i] = static_cast<Acc>(op(buf[i], buf[i + s]));
  }
}

template <class Acc>
void carve(storage_carver& c, std::int64_t n, Acc*& a) {
  a = c.take<Acc>(n >= 2 ? static_cast<std::size_t>(n) : 0);
}

// The number of launches for n >= 1 elements: ceil(log2 n) levels and the finish.
constexpr std::int64_t launches(std::int64_t n) {
  std::int64_t levels = 0;
  while ((std::int64_t{1} << levels) < n) ++levels;
  return levels + 1;
}

// Reduces n >= 1 elements: *out = init op x_0 op ... op x_{n-1}.
template <class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, Acc* buf,
         cudaStream_t stream) {
  constexpr int threads = reduce_tuning::threads;
  if (n == 1) {
    finish_kernel<Acc><<<1, 1, 0, stream>>>(in, init, op, out);
    TALLY_CUDA_CHECK_LAUNCH("naive::finish_kernel", function);
    return;
  }
  const unsigned grid = grid_for(ceil_div(n, threads));  // n threads at every level
  first_level_kernel<Acc><<<grid, threads, 0, stream>>>(in, n, buf, op);
  TALLY_CUDA_CHECK_LAUNCH("naive::first_level_kernel", function);
  for (std::int64_t s = 2; s < n; s *= 2) {
    level_kernel<Acc><<<grid, threads, 0, stream>>>(buf, n, s, op);
    TALLY_CUDA_CHECK_LAUNCH("naive::level_kernel", function);
  }
  finish_kernel<Acc><<<1, 1, 0, stream>>>(static_cast<const Acc*>(buf), init, op, out);
  TALLY_CUDA_CHECK_LAUNCH("naive::finish_kernel", function);
}

}  // namespace tally::detail::reduction::naive
