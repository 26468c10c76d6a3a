// tally/device/multi_pass/reduce_then_scan.cuh -- strategy: reduce, scan the sums, scan.
//
// Algorithm: the reduce-then-scan of the course notes on reduce and scan (Oancea &
// Henriksen) and of Merrill & Grimshaw, "Parallel Scan for Stream Architectures" (2009),
// also Sengupta et al. (2008): the alternative to scan-then-propagate that writes the
// output once.
//
//   kernel 1 (reduce_kernel): each tile but the last is reduced to one sum
//   recursion:                the tile sums are scanned inclusively, in place, by this
//                             same strategy (one more level while they exceed a tile)
//   kernel 2 (scan_kernel):   each tile is scanned, seeded with the scanned sum of the
//                             tiles before it
// Memory traffic: n reads + n reads + n writes (the input is read twice); the output is
// written once and never read, so Out may be a write-only iterator.
//
// Seeding without an identity: an inclusive tile folds its prefix into its first item
// (prefix op x_first; the rest of the scan carries it along). An exclusive tile t has
// the seed s_t = init op (sums of tiles < t), which is either
//   - put in front by the shifted load (block/tile_io.cuh, PMPP 11.1-11.2) and the tile
//     scanned inclusively (the block algorithm's own inclusive scan), or
//   - passed to the block class's exclusive scan (Blelloch's down-sweep with the seed as
//     the root), for the Brent-Kung selectors (multi_pass/block_algorithms.cuh).
// Both read only the tile's own elements before writing them: in place is safe.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/block/block_reduce.cuh"
#include "tally/block/tile_io.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/multi_pass/block_algorithms.cuh"

namespace tally::detail::reduce_then_scan {

// sums[t] = x_{t*tile} op ... op x_{(t+1)*tile - 1} for the full tiles t < tiles.
template <int Threads, int Items, class Acc, class In, class Op>
__global__ void __launch_bounds__(Threads)
    reduce_kernel(In in, Acc* sums, std::int64_t tiles, Op op) {
  using io_t = block::tile_io<Acc, Threads, Items>;
  using reduce_t = block::block_reduce<Acc, Threads, Items>;
  __shared__ typename io_t::TempStorage io_storage;
  __shared__ typename reduce_t::TempStorage reduce_storage;
  io_t io(io_storage);
  reduce_t reducer(reduce_storage);
  constexpr std::int64_t tile = std::int64_t{Threads} * Items;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    Acc items[Items];
    io.load(in, t * tile, static_cast<int>(tile), items);
    const Acc total = reducer.reduce(items, op);
    if (threadIdx.x == 0) sums[t] = total;
  }
}

// Scans every tile seeded with its prefix. scanned_sums[t] = inclusive scan of the tile
// sums (unused when there is one tile).
template <class Selector, int Threads, int Items, bool Exclusive, class Acc, class In, class Out,
          class Op>
__global__ void __launch_bounds__(Threads)
    scan_kernel(In in, Out out, std::int64_t n, const Acc* scanned_sums,
                seed_value<Acc, Exclusive> seed, Op op) {
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
    if constexpr (!Exclusive) {
      io.load(in, base, valid, items);
      if (t > 0 && threadIdx.x == 0) items[0] = static_cast<Acc>(op(scanned_sums[t - 1], items[0]));
      scan.inclusive_scan(items, items, op);
    } else {
      const Acc tile_seed = t == 0 ? seed.value : static_cast<Acc>(op(seed.value, scanned_sums[t - 1]));
      if constexpr (Selector::exclusive_through_block) {
        io.load(in, base, valid, items);
        scan.exclusive_scan(items, items, tile_seed, op);
      } else {
        io.load_shifted(in, base, valid, tile_seed, items);
        scan.inclusive_scan(items, items, op);
      }
    }
    io.store(out, base, valid, items);
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
    Acc* sums = nullptr;
    if (tiles > 1) {
      sums = reinterpret_cast<Acc*>(storage);
      unsigned char* rest =
          storage + round_up_storage(static_cast<std::size_t>(tiles - 1) * sizeof(Acc));
      reduce_kernel<Threads, Items, Acc><<<grid_for(tiles - 1), Threads, 0, stream>>>(
          in, sums, tiles - 1, op);
      TALLY_CUDA_CHECK_LAUNCH("reduce_then_scan::reduce_kernel", function);
      run<Selector, Threads, Items, false, Acc>(function, sums, sums, tiles - 1,
                                                seed_value<Acc, false>{}, op, rest, stream);
    }
    scan_kernel<Selector, Threads, Items, Exclusive, Acc><<<grid_for(tiles), Threads, 0, stream>>>(
        in, out, n, sums, seed, op);
    TALLY_CUDA_CHECK_LAUNCH("reduce_then_scan::scan_kernel", function);
  }
};

}  // namespace tally::detail::reduce_then_scan
