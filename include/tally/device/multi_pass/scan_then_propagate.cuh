// tally/device/multi_pass/scan_then_propagate.cuh -- strategy: scan tiles, scan their sums,
// add them back (the hierarchical scan).
//
// Algorithm: the three-kernel hierarchical scan of PMPP (Hwu, Kirk & El Hajj, 4th ed.)
// section 11.6 ("segmented parallel scan for arbitrary-length inputs"), also Harris,
// Sengupta & Owens, GPU Gems 3 chapter 39.2.4.
//
//   kernel 1 (local_scan_kernel): each tile is scanned on its own and written to `out`;
//                                 its total goes to sums[tile] (all tiles but the last)
//   recursion:                    the sums are scanned inclusively, in place, by this
//                                 same strategy
//   kernel 3 (propagate_kernel):  each tile t > 0 combines sums[t - 1] into its outputs
// Memory traffic: n reads + n writes, then n reads + n writes of the output. So `out` is
// read back: Out must be readable, and its value type must hold the accumulator exactly
// (else use reduce_then_scan, which writes the output once).
//
// Exclusive scans (no identity needed): tile 0 folds the seed into its first item and
// writes it at place 0; every tile is scanned inclusively and stored ONE PLACE TO THE
// RIGHT (the shifted store: the last element's result becomes the tile total instead),
// and kernel 3 writes the tile's prefix at the tile's place 0. (The shifted LOAD of
// reduce_then_scan would read the previous tile's last element, which that tile
// overwrites in place: not safe here.) For the Brent-Kung selectors the exclusive form's
// tile scan is Blelloch's (its inclusive form through the down-sweep, block/blelloch.cuh).
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/block/tile_io.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/multi_pass/block_algorithms.cuh"

namespace tally::detail::scan_then_propagate {

template <class Selector, int Threads, int Items, bool Exclusive, class Acc, class In, class Out,
          class Op>
__global__ void __launch_bounds__(Threads)
    local_scan_kernel(In in, Out out, std::int64_t n, Acc* sums, seed_value<Acc, Exclusive> seed,
                      Op op) {
  using block_t = std::conditional_t<Exclusive,
                                     typename Selector::template exclusive_type<Acc, Threads, Items>,
                                     typename Selector::template inclusive_type<Acc, Threads, Items>>;
  using io_t = block::tile_io<Acc, Threads, Items>;
  __shared__ typename io_t::TempStorage io_storage;
  __shared__ typename block_t::TempStorage scan_storage;
  io_t io(io_storage);
  block_t scan(scan_storage);
  constexpr std::int64_t tile = std::int64_t{Threads} * Items;
  const std::int64_t tiles = ceil_div(n, tile);
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t base = t * tile;
    const int valid = static_cast<int>(n - base < tile ? n - base : tile);
    Acc items[Items];
    io.load(in, base, valid, items);
    if constexpr (Exclusive) {
      if (t == 0 && threadIdx.x == 0) items[0] = static_cast<Acc>(op(seed.value, items[0]));
    }
    Acc aggregate;
    scan.inclusive_scan(items, items, op, aggregate);
    if (threadIdx.x == 0 && t + 1 < tiles) sums[t] = aggregate;
    if constexpr (!Exclusive) {
      io.store(out, base, valid, items);
    } else {
      io.store(out, base, valid, items, 1);
      // after store's barriers: every read of this tile's input is done (in place)
      if (t == 0 && threadIdx.x == 0) out[0] = seed.value;
    }
  }
}

// out[i] = sums[t - 1] op out[i] for the elements of tile t >= 1 (exclusive: place 0 of
// the tile gets sums[t - 1] itself). Coalesced: consecutive threads, consecutive elements.
template <int Threads, int Items, bool Exclusive, class Acc, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    propagate_kernel(Out out, std::int64_t n, const Acc* scanned_sums, Op op) {
  constexpr std::int64_t tile = std::int64_t{Threads} * Items;
  const std::int64_t tiles = ceil_div(n, tile);
  for (std::int64_t t = blockIdx.x + 1; t < tiles; t += gridDim.x) {
    const std::int64_t base = t * tile;
    const int valid = static_cast<int>(n - base < tile ? n - base : tile);
    const Acc prefix = scanned_sums[t - 1];
    for (int i = threadIdx.x; i < valid; i += Threads) {
      if (Exclusive && i == 0) {
        out[base] = prefix;
      } else {
        out[base + i] = static_cast<Acc>(op(prefix, static_cast<Acc>(out[base + i])));
      }
    }
  }
}

struct strategy {
  static constexpr bool single_pass = false;  // multi-pass: tile sums in temporary storage
  // Scans n >= 1 elements; `storage` holds tile_sums_bytes<Acc>(n, tile) bytes, aligned.
  template <class Selector, int Threads, int Items, bool Exclusive, class Acc, class In, class Out,
            class Op>
  static void run(const char* function, In in, Out out, std::int64_t n,
                  seed_value<Acc, Exclusive> seed, Op op, unsigned char* storage,
                  cudaStream_t stream) {
    constexpr std::int64_t tile = std::int64_t{Threads} * Items;
    const std::int64_t tiles = ceil_div(n, tile);
    Acc* sums = tiles > 1 ? reinterpret_cast<Acc*>(storage) : nullptr;
    local_scan_kernel<Selector, Threads, Items, Exclusive, Acc>
        <<<grid_for(tiles), Threads, 0, stream>>>(in, out, n, sums, seed, op);
    TALLY_CUDA_CHECK_LAUNCH("scan_then_propagate::local_scan_kernel", function);
    if (tiles > 1) {
      unsigned char* rest =
          storage + round_up_storage(static_cast<std::size_t>(tiles - 1) * sizeof(Acc));
      run<Selector, Threads, Items, false, Acc>(function, sums, sums, tiles - 1,
                                                seed_value<Acc, false>{}, op, rest, stream);
      propagate_kernel<Threads, Items, Exclusive, Acc><<<grid_for(tiles - 1), Threads, 0, stream>>>(
          out, n, sums, op);
      TALLY_CUDA_CHECK_LAUNCH("scan_then_propagate::propagate_kernel", function);
    }
  }
};

}  // namespace tally::detail::scan_then_propagate
