// tally/device/detail/single_pass_reduction.cuh -- the single-pass reduction: the chunked
// reduction in one launch, finished by the last block to arrive.
//
// Algorithm: Brent's chunked reduction (chunked_reduction.cuh) with the second kernel
// folded into the first, as in the "threadfence reduction" of the CUDA programming guide
// (memory fence functions; NVIDIA CUDA samples, threadFenceReduction): every block
// writes its partial, fences, and takes a ticket from an atomic counter; the block that
// draws the last ticket knows every partial is written, reduces them in index order and
// writes init op total. It then sets the counter back to 0, so the next call needs no
// launch to zero it.
//
// Per block, as chunked_reduction.cuh:
//   - commutative operators with an identity (plus, min, max, bit ops on arithmetic
//     types) take the strided cut. Contiguous inputs of arithmetic types (a pointer; any
//     element size dividing 16) are read with 16-byte vector loads (__ldg of uint4),
//     `vectors_per_thread` in flight per thread and step, each lane of the vector kept in
//     its own accumulator; the elements before the first 16-byte boundary (a pointer
//     offset by one element) and after the last whole vector are read one by one by
//     block 0 and the last block. Iterators use scalar loads, `scalar_unroll` in flight.
//   - every other operator takes the consecutive cut (tiles through shared memory, in
//     order), correct for any associative operator.
// Small inputs (up to reduce_tuning::single_block_max_bytes) use one block, which writes
// the result itself: no partials, no counter, no finish.
//
// Deterministic: the cut of the input into blocks and threads depends on n and the
// device's resident grid only, and the last block combines the partials in block order,
// whichever block arrives last. Float results are identical run to run on a device.
//
// Memory ordering of the finish (see finish_in_last_block): the partial is stored, then
// __threadfence() (fence.sc.gpu: the store is visible device-wide before anything this
// thread does afterwards), then the atomicAdd on the counter. The thread that draws the
// last ticket has observed every other block's increment, each made after that block's
// fenced partial store; it fences again (acquire side) before __syncthreads() hands the
// news to its block, and the partials are then read with ld.global.cg (L2: no stale L1).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/block/block_reduce.cuh"
#include "tally/device/detail/chunked_reduction.cuh"
#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::single_pass {

// A contiguous input of arithmetic elements that 16-byte vectors can hold whole.
template <class In>
struct vector_input {
  static constexpr bool value = false;
};
template <class T>
struct vector_input<T*> {
  using element = std::remove_cv_t<T>;
  static constexpr bool value = std::is_arithmetic_v<element> && 16 % sizeof(element) == 0;
};

// ---- the vectorised strided body ---------------------------------------------------------
// This thread's partial over the 16-byte vectors of in[head, head + vectors * W), plus the
// unaligned head (block 0) and tail (the last block), starting from the identity.
template <int Threads, int Vectors, class Acc, class T, class Op>
TALLY_DEVICE Acc vector_thread_partial(const T* in, std::int64_t n, Op op) {
  using element = std::remove_cv_t<T>;
  constexpr int width = static_cast<int>(16 / sizeof(element));
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  std::int64_t head = static_cast<std::int64_t>(((16 - address % 16) % 16) / sizeof(element));
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / width;
  const std::int64_t tail_begin = head + vectors * width;
  const uint4* v = reinterpret_cast<const uint4*>(in + head);  // 16-byte aligned

  Acc acc[width];
#pragma unroll
  for (int w = 0; w < width; ++w) acc[w] = identity<Op, Acc>();
  auto combine = [&](const uint4& raw) {
    element x[width];
    memcpy(x, &raw, 16);
#pragma unroll
    for (int w = 0; w < width; ++w) acc[w] = static_cast<Acc>(op(acc[w], static_cast<Acc>(x[w])));
  };

  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * Threads * Vectors;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Threads * Vectors + threadIdx.x;
  for (; i + (Vectors - 1) * Threads < vectors; i += step) {
    uint4 raw[Vectors];
#pragma unroll
    for (int u = 0; u < Vectors; ++u) raw[u] = __ldg(v + i + u * Threads);  // all in flight
#pragma unroll
    for (int u = 0; u < Vectors; ++u) combine(raw[u]);
  }
#pragma unroll
  for (int u = 0; u < Vectors; ++u) {
    if (i + u * Threads < vectors) combine(__ldg(v + i + u * Threads));
  }

  Acc total = acc[0];
#pragma unroll
  for (int w = 1; w < width; ++w) total = static_cast<Acc>(op(total, acc[w]));
  // fewer than `width` elements each: one per thread
  if (blockIdx.x == 0 && threadIdx.x < head) {
    total = static_cast<Acc>(op(total, static_cast<Acc>(in[threadIdx.x])));
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n - tail_begin) {
    total = static_cast<Acc>(op(total, static_cast<Acc>(in[tail_begin + threadIdx.x])));
  }
  return total;
}

// ---- the finish ------------------------------------------------------------------------------
template <class Acc, int Threads>
struct finish_storage {
  in_order_storage<Acc, Threads> reduce;
  bool last;
};

// Called by every thread of every block with the block's total (in every thread). With one
// block it writes the result directly; otherwise the last block to arrive reduces the
// partials and writes the result. partials: gridDim.x accumulators; counter: 0 at launch,
// left 0.
template <int Threads, class Acc, class Out, class Op>
TALLY_DEVICE void finish_in_last_block(const Acc& block_total, const Acc& init, Op op, Out out,
                                       Acc* partials, unsigned* counter,
                                       finish_storage<Acc, Threads>& s) {
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = static_cast<Acc>(op(init, block_total));
    return;
  }
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = block_total;
    // Release: the partial store is visible to the whole device before the ticket below
    // (whoever sees the counter incremented sees the partial).
    __threadfence();
    const unsigned ticket = atomicAdd(counter, 1u);
    const bool last = ticket == gridDim.x - 1;
    // Acquire: this thread has seen all gridDim.x increments; the fence keeps the reads of
    // the partials (after the barrier below) from being satisfied before the ticket.
    if (last) __threadfence();
    s.last = last;
  }
  // Hands `last` to the block, and orders thread 0's ticket and fence before every other
  // thread's reads of the partials.
  __syncthreads();
  if (!s.last) return;  // uniform across the block
  const Acc total = reduce_in_order<true, Threads>(partials, gridDim.x, op, s.reduce);
  if (threadIdx.x == 0) {
    *out = static_cast<Acc>(op(init, total));
    // All tickets are drawn: nothing reads or writes the counter again in this launch.
    // Zero it for the next call that uses it (ordered after this kernel by its stream).
    *counter = 0u;
  }
}

// ---- the kernels ---------------------------------------------------------------------------
template <int Threads, int Vectors, int Unroll, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    strided_kernel(In in, std::int64_t n, Out out, Acc init, Op op, Acc* partials,
                   unsigned* counter) {
  __shared__ typename block::block_reduce<Acc, Threads, 1>::TempStorage reduce_storage;
  __shared__ finish_storage<Acc, Threads> finish;
  Acc mine;
  if constexpr (vector_input<In>::value) {
    mine = vector_thread_partial<Threads, Vectors, Acc>(in, n, op);
  } else {
    mine = chunked::strided_thread_partial<Threads, Unroll, Acc>(in, n, op);
  }
  const Acc total = block::block_reduce<Acc, Threads, 1>(reduce_storage).reduce(mine, op);
  finish_in_last_block<Threads>(total, init, op, out, partials, counter, finish);
}

template <int Threads, int Items, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    consecutive_kernel(In in, std::int64_t n, Out out, Acc init, Op op, Acc* partials,
                       unsigned* counter) {
  __shared__ chunked::consecutive_storage<Acc, Threads, Items> storage;
  __shared__ finish_storage<Acc, Threads> finish;
  const Acc total = chunked::consecutive_block_partial<Threads, Items, Acc>(in, n, op, storage);
  finish_in_last_block<Threads>(total, init, op, out, partials, counter, finish);
}

// ---- host side ------------------------------------------------------------------------------
inline constexpr int threads = reduce_tuning::threads;
inline constexpr int vectors = reduce_tuning::vectors_per_thread;
inline constexpr int unroll = reduce_tuning::scalar_unroll;

template <class Acc, class In, class Out, class Op>
constexpr auto kernel() {
  if constexpr (strided_ok_v<Op, Acc>) {
    return &strided_kernel<threads, vectors, unroll, Acc, In, Out, Op>;
  } else {
    return &consecutive_kernel<threads, consecutive_items<Acc>(), Acc, In, Out, Op>;
  }
}

// Elements one block reads per step (strided) or per tile (consecutive).
template <class Acc, class In, class Op>
constexpr std::int64_t elements_per_block_step() {
  if constexpr (strided_ok_v<Op, Acc>) {
    if constexpr (vector_input<In>::value) {
      return std::int64_t{threads} * vectors * (16 / sizeof(typename vector_input<In>::element));
    } else {
      return std::int64_t{threads} * unroll;
    }
  } else {
    return std::int64_t{threads} * consecutive_items<Acc>();
  }
}

// The grid for n >= 1 elements: 1 for small inputs, else no more blocks than the device
// runs at once nor than there are block steps (tiles) of work.
template <class Acc, class In, class Out, class Op>
int grid(const char* function, std::int64_t n) {
  using element = std::remove_cvref_t<std::iter_value_t<In>>;
  if (n * static_cast<std::int64_t>(sizeof(element)) <= reduce_tuning::single_block_max_bytes) {
    return 1;
  }
  const int resident = resident_grid<kernel<Acc, In, Out, Op>()>(threads, function);
  const std::int64_t work = ceil_div(n, elements_per_block_step<Acc, In, Op>());
  return static_cast<int>(work < resident ? work : resident);
}

// Reduces n >= 1 elements with `grid_size` blocks (from grid()). With grid_size > 1,
// partials holds grid_size accumulators and *counter is 0 (and is left 0).
template <class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, int grid_size,
         Acc* partials, unsigned* counter, cudaStream_t stream) {
  kernel<Acc, In, Out, Op>()<<<grid_size, threads, 0, stream>>>(in, n, out, init, op, partials,
                                                                counter);
  TALLY_CUDA_CHECK_LAUNCH("single_pass kernel", function);
}

}  // namespace tally::detail::reduction::single_pass
