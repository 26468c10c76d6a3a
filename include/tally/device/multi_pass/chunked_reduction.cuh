// tally/device/multi_pass/chunked_reduction.cuh -- the chunked reduction (Brent's lemma): a
// fixed number of threads, each reducing a chunk sequentially, then a block reduce.
//
// Algorithm: Brent's scheduling principle (Brent, "The parallel evaluation of general
// arithmetic expressions", JACM 21(2), 1974): a reduction of n elements on p processors
// takes n/p sequential steps plus log p tree steps, optimal once n/p > log p. The third
// variant measured in the course notes on reduce and scan (Oancea & Henriksen), which
// also give the two ways of cutting the chunks that tally implements:
//
//   strided (commutative operators only): thread g of the G*B threads reduces elements
//     g, g + G*B, g + 2*G*B, ... (in steps that keep `unroll` loads in flight). Every
//     warp-wide load is one contiguous run (coalesced), and partials stay in registers;
//     but each thread's elements are not adjacent, so the operator must be commutative
//     (and have an identity, for threads that get nothing).
//   consecutive (any associative operator): each block gets a contiguous range of tiles
//     of B*I elements; a tile is loaded striped (coalesced) into shared memory and read
//     back blocked, so thread t reduces the I CONSECUTIVE items t*I .. t*I+I-1; a block
//     reduce combines the threads in order and the block combines its tiles in order.
//     This is the course's staging through shared memory for non-commutative operators
//     such as the MSSP operator (core/mssp.hpp).
//
// Kernel 1 writes one partial per block (G = SMs x occupancy blocks: a fixed number of
// threads, as Brent's lemma has it, fewer for small n); kernel 2, one block, reduces the
// G partials in order and writes init op total. Deterministic: the grouping depends on n
// and the device's resident grid only. single_pass/reduce.cuh is this algorithm with
// the second kernel folded into the first (the last block to finish reduces the partials).
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/block/block_reduce.cuh"
#include "tally/block/tile_io.cuh"
#include "tally/device/detail/reduce_common.cuh"

namespace tally::detail::reduction::chunked {

// ---- the bodies (also used by the single-pass kernels) -------------------------------------

// Strided: this thread's partial, starting from the identity. In step s, block b reads the
// Threads*Unroll consecutive elements at s*G*Threads*Unroll + b*Threads*Unroll; load u of
// thread t is element + u*Threads + t (each load instruction of a warp: 32 consecutive
// elements). All Unroll loads of a step are issued before they are combined.
template <int Threads, int Unroll, class Acc, class In, class Op>
TALLY_DEVICE Acc strided_thread_partial(In in, std::int64_t n, Op op) {
  Acc acc = identity<Op, Acc>();
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * Threads * Unroll;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Threads * Unroll + threadIdx.x;
  for (; i + (Unroll - 1) * Threads < n; i += step) {
    Acc x[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) x[u] = static_cast<Acc>(in[i + u * Threads]);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc = static_cast<Acc>(op(acc, x[u]));
  }
  // The one partial step left (later steps start past n: step > (Unroll - 1) * Threads).
#pragma unroll
  for (int u = 0; u < Unroll; ++u) {
    if (i + u * Threads < n) acc = static_cast<Acc>(op(acc, static_cast<Acc>(in[i + u * Threads])));
  }
  return acc;
}

template <class Acc, int Threads, int Items>
struct consecutive_storage {
  typename block::tile_io<Acc, Threads, Items>::TempStorage io;
  typename valid_block_reduce<Acc, Threads, Items>::TempStorage reduce;
};

// Consecutive: this block's total over its contiguous share of the tiles, in order, in
// every thread. Requires gridDim.x <= the number of tiles (every block gets >= 1 tile).
template <int Threads, int Items, class Acc, class In, class Op>
TALLY_DEVICE Acc consecutive_block_partial(In in, std::int64_t n, Op op,
                                           consecutive_storage<Acc, Threads, Items>& storage) {
  constexpr std::int64_t tile = std::int64_t{Threads} * Items;
  const std::int64_t tiles = ceil_div(n, tile);
  const std::int64_t first = tiles * blockIdx.x / gridDim.x;
  const std::int64_t end = tiles * (blockIdx.x + 1) / gridDim.x;
  block::tile_io<Acc, Threads, Items> io(storage.io);
  valid_block_reduce<Acc, Threads, Items> reducer(storage.reduce);
  auto tile_total = [&](std::int64_t t) -> Acc {
    const std::int64_t base = t * tile;
    const int valid = static_cast<int>(n - base < tile ? n - base : tile);
    Acc items[Items];
    // Striped global reads into shared memory, blocked reads back (tile_io starts with a
    // barrier, so the previous tile's readers are done with the shared buffer). Places
    // past `valid` hold padding that valid_block_reduce never combines.
    io.load(in, base, valid, items);
    return reducer.reduce(items, valid, op);
  };
  Acc running = tile_total(first);
  for (std::int64_t t = first + 1; t < end; ++t) running = static_cast<Acc>(op(running, tile_total(t)));
  return running;
}

// ---- the two kernels ---------------------------------------------------------------------
template <int Threads, int Unroll, class Acc, class In, class Op>
__global__ void __launch_bounds__(Threads)
    strided_kernel(In in, std::int64_t n, Acc* partials, Op op) {
  __shared__ typename block::block_reduce<Acc, Threads, 1>::TempStorage storage;
  const Acc mine = strided_thread_partial<Threads, Unroll, Acc>(in, n, op);
  const Acc total = block::block_reduce<Acc, Threads, 1>(storage).reduce(mine, op);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <int Threads, int Items, class Acc, class In, class Op>
__global__ void __launch_bounds__(Threads)
    consecutive_kernel(In in, std::int64_t n, Acc* partials, Op op) {
  __shared__ consecutive_storage<Acc, Threads, Items> storage;
  const Acc total = consecutive_block_partial<Threads, Items, Acc>(in, n, op, storage);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// One block: *out = init op partials[0] op ... op partials[count - 1].
template <int Threads, class Acc, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    partials_kernel(const Acc* partials, std::int64_t count, Acc init, Op op, Out out) {
  __shared__ in_order_storage<Acc, Threads> storage;
  // Written by the previous kernel: the launch boundary makes them visible, plain loads.
  const Acc total =
      reduce_in_order<Threads>(count, [&](std::int64_t i) { return partials[i]; }, op, storage);
  if (threadIdx.x == 0) *out = static_cast<Acc>(op(init, total));
}

// ---- host side ------------------------------------------------------------------------------
inline constexpr int threads = reduce_tuning::threads;
inline constexpr int unroll = reduce_tuning::scalar_unroll;

// Whether the strided cut can be used for Op on Acc (else consecutive).
template <bool Strided, class Op, class Acc>
inline constexpr bool strided_cut_v = Strided && strided_ok_v<Op, Acc>;

// The grid for n >= 1 elements: the device's resident grid (Brent: a fixed number of
// threads), no more blocks than there is work for.
template <bool Strided, class Acc, class In, class Op>
int grid(const char* function, std::int64_t n) {
  if constexpr (strided_cut_v<Strided, Op, Acc>) {
    const int resident = resident_grid<&strided_kernel<threads, unroll, Acc, In, Op>>(threads, function);
    const std::int64_t work = ceil_div(n, std::int64_t{threads} * unroll);
    return static_cast<int>(work < resident ? work : resident);
  } else {
    constexpr int items = consecutive_items<Acc>();
    const int resident = resident_grid<&consecutive_kernel<threads, items, Acc, In, Op>>(threads, function);
    const std::int64_t tiles = ceil_div(n, std::int64_t{threads} * items);
    return static_cast<int>(tiles < resident ? tiles : resident);
  }
}

// Reduces n >= 1 elements with `grid_size` blocks (from grid()); partials holds grid_size.
template <bool Strided, class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, int grid_size,
         Acc* partials, cudaStream_t stream) {
  if constexpr (strided_cut_v<Strided, Op, Acc>) {
    strided_kernel<threads, unroll, Acc><<<grid_size, threads, 0, stream>>>(in, n, partials, op);
    TALLY_CUDA_CHECK_LAUNCH("chunked::strided_kernel", function);
  } else {
    constexpr int items = consecutive_items<Acc>();
    consecutive_kernel<threads, items, Acc><<<grid_size, threads, 0, stream>>>(in, n, partials, op);
    TALLY_CUDA_CHECK_LAUNCH("chunked::consecutive_kernel", function);
  }
  partials_kernel<threads, Acc><<<1, threads, 0, stream>>>(static_cast<const Acc*>(partials),
                                                           static_cast<std::int64_t>(grid_size),
                                                           init, op, out);
  TALLY_CUDA_CHECK_LAUNCH("chunked::partials_kernel", function);
}

}  // namespace tally::detail::reduction::chunked
