// tally/device/multi_pass/tree_reduction.cuh -- the tree reduction: one kernel per level, one
// thread per pair.
//
// Algorithm: the balanced binary tree of a reduction, one level at a time (Blelloch,
// "Prefix Sums and Their Applications", 1990, the up-sweep; the first variant measured in
// the course notes on reduce and scan, Oancea & Henriksen). Level l turns m elements into
// ceil(m / 2): thread i computes out[i] = in[2i] op in[2i+1] (an odd last element is
// copied up). ceil(log2 n) launches, then one thread writes init op total.
//
// Work n - 1 applications (as sequential); depth log2 n; but every level is a launch and
// a full read and write of its array through memory: n * (1/2 + 1/4 + ...) writes and as
// many reads again, and log2 n launch latencies. Pairs are adjacent and combined left
// then right, so any associative operator works (commutative or not). Deterministic: the
// tree depends on n only.
//
// Storage: two ping-pong buffers of ceil(n/2) and ceil(n/4) accumulators.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::tree {

// out[i] = in[2i] op in[2i+1] for i < m/2; out[m/2] = in[m-1] when m is odd.
template <class Acc, class In, class Op>
__global__ void __launch_bounds__(reduce_tuning::threads)
    level_kernel(In in, std::int64_t m, Acc* out, Op op) {
  const std::int64_t outputs = (m + 1) / 2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < outputs; i += stride) {
    const Acc left = static_cast<Acc>(in[2 * i]);
    out[i] = 2 * i + 1 < m ? static_cast<Acc>(op(left, static_cast<Acc>(in[2 * i + 1]))) : left;
  }
}

// Accumulators of storage the reduction of n elements needs (0 for n < 2).
template <class Acc>
void carve(storage_carver& c, std::int64_t n, Acc*& a, Acc*& b) {
  a = c.take<Acc>(n >= 2 ? static_cast<std::size_t>((n + 1) / 2) : 0);
  b = c.take<Acc>(n >= 3 ? static_cast<std::size_t>((n + 3) / 4) : 0);
}

// Reduces n >= 1 elements: *out = init op x_0 op ... op x_{n-1}.
template <class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, Acc* a, Acc* b,
         cudaStream_t stream) {
  constexpr int threads = reduce_tuning::threads;
  if (n == 1) {
    finish_kernel<Acc><<<1, 1, 0, stream>>>(in, init, op, out);
    TALLY_CUDA_CHECK_LAUNCH("tree::finish_kernel", function);
    return;
  }
  // level 0 reads the input; later levels ping-pong between a and b
  std::int64_t m = (n + 1) / 2;
  level_kernel<Acc><<<grid_for(ceil_div(m, threads)), threads, 0, stream>>>(in, n, a, op);
  TALLY_CUDA_CHECK_LAUNCH("tree::level_kernel", function);
  Acc* src = a;
  Acc* dst = b;
  while (m > 1) {
    const std::int64_t next = (m + 1) / 2;
    level_kernel<Acc><<<grid_for(ceil_div(next, threads)), threads, 0, stream>>>(
        static_cast<const Acc*>(src), m, dst, op);
    TALLY_CUDA_CHECK_LAUNCH("tree::level_kernel", function);
    m = next;
    Acc* t = src;
    src = dst;
    dst = t;
  }
  finish_kernel<Acc><<<1, 1, 0, stream>>>(static_cast<const Acc*>(src), init, op, out);
  TALLY_CUDA_CHECK_LAUNCH("tree::finish_kernel", function);
}

}  // namespace tally::detail::reduction::tree
