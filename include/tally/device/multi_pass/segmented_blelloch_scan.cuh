// tally/device/multi_pass/segmented_blelloch_scan.cuh -- teaching baseline: the device-wide
// segmented scan by head flags with Blelloch's segmented up-sweep/down-sweep in each tile.
//
// Algorithm: each tile is scanned by block/segmented_blelloch.cuh (Blelloch 1990: the
// tree carrying head flags); tiles are joined by a reduce-then-scan over the tiles'
// (head, value) aggregates under the flag-augmented operator (core/segmented.hpp;
// Schwartz 1980, Sengupta et al. 2007):
//   kernel 1 (reduce_kernel): each tile but the last is reduced to its aggregate
//       (whether it holds a head, the reduction from its last head to its end)
//   recursion: the aggregates are scanned inclusively, in place, under segmented_op by
//       the multi-pass reduce_then_scan strategy (multi_pass/reduce_then_scan.cuh)
//   kernel 2 (scan_kernel): each tile is scanned by the segmented Blelloch tree,
//       continuing the value of the segment that runs into it (the scanned aggregate of
//       the tiles before it: inclusive, that value; exclusive, init op that value)
// Memory traffic: values and flags read twice, the output written once; 2 launches per
// level. Work per tile as in block/segmented_blelloch.cuh (at most 3N - 2 applications for
// N items), plus the aggregates. Deterministic (fixed tiles and order).
//
// Semantics: those of tally::inclusive_scan_by_flags / exclusive_scan_by_flags
// (device/segmented.cuh, core/segmented.hpp): flags[0] is not read, every segment of an
// exclusive scan starts at init. In place (in == out) is safe: each tile reads its
// elements before it writes them, and kernel 1 has finished before kernel 2 starts.
// Tiles: default_tuning<block_scan::blelloch, Acc> (a power of two, as the tree needs).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "tally/block/block_reduce.cuh"
#include "tally/block/segmented_blelloch.cuh"
#include "tally/block/tile_io.cuh"
#include "tally/core/segmented.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/tuning.cuh"
#include "tally/device/multi_pass/block_algorithms.cuh"
#include "tally/device/multi_pass/reduce_then_scan.cuh"

namespace tally::detail::segmented_blelloch {

// The head flags as bools, with element 0 never read (it starts a segment anyway).
template <class Flags>
struct heads_from_one {
  Flags flags;
  TALLY_DEVICE bool operator[](std::int64_t i) const { return i != 0 && static_cast<bool>(flags[i]); }
};

template <class Acc>
constexpr tuning tile_tuning() {
  return default_tuning<block_scan::blelloch, Acc>();
}

// The tuning of the recursive scan of the tile aggregates (warp scans).
template <class Acc>
constexpr tuning sums_tuning() {
  return default_tuning<block_scan::warp_scans, flagged<Acc>>();
}

// aggregates[t] = the (head, value) reduction of the full tiles t < tiles.
template <int Threads, int Items, class Acc, class In, class Flags, class Op>
__global__ void __launch_bounds__(Threads)
    reduce_kernel(In in, heads_from_one<Flags> heads, flagged<Acc>* aggregates, std::int64_t tiles,
                  Op op) {
  using value_io_t = block::tile_io<Acc, Threads, Items>;
  using head_io_t = block::tile_io<bool, Threads, Items>;
  using reduce_t = block::block_reduce<flagged<Acc>, Threads, Items>;
  __shared__ typename value_io_t::TempStorage value_storage;
  __shared__ typename head_io_t::TempStorage head_storage;
  __shared__ typename reduce_t::TempStorage reduce_storage;
  value_io_t value_io(value_storage);
  head_io_t head_io(head_storage);
  reduce_t reducer(reduce_storage);
  constexpr std::int64_t tile = std::int64_t{Threads} * Items;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    Acc values[Items];
    bool flags[Items];
    value_io.load(in, t * tile, static_cast<int>(tile), values);
    head_io.load(heads, t * tile, static_cast<int>(tile), flags);
    flagged<Acc> items[Items];
#pragma unroll
    for (int k = 0; k < Items; ++k) items[k] = flagged<Acc>{flags[k], values[k]};
    const flagged<Acc> total = reducer.reduce(items, segmented_op<Op>{op});
    if (threadIdx.x == 0) aggregates[t] = total;
  }
}

// Scans every tile; scanned[t] = the inclusive scan of the aggregates of tiles <= t.
template <bool Exclusive, int Threads, int Items, class Acc, class In, class Flags, class Out,
          class Op>
__global__ void __launch_bounds__(Threads)
    scan_kernel(In in, heads_from_one<Flags> heads, Out out, std::int64_t n,
                const flagged<Acc>* scanned, seed_value<Acc, Exclusive> seed, Op op) {
  using value_io_t = block::tile_io<Acc, Threads, Items>;
  using head_io_t = block::tile_io<bool, Threads, Items>;
  using scan_t = block::block_segmented_scan_blelloch<Acc, Threads, Items>;
  __shared__ typename value_io_t::TempStorage value_storage;
  __shared__ typename head_io_t::TempStorage head_storage;
  __shared__ typename scan_t::TempStorage scan_storage;
  value_io_t value_io(value_storage);
  head_io_t head_io(head_storage);
  constexpr std::int64_t tile = std::int64_t{Threads} * Items;
  const std::int64_t tiles = ceil_div(n, tile);
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t base = t * tile;
    const int valid = static_cast<int>(n - base < tile ? n - base : tile);
    Acc items[Items];
    bool flags[Items];
    value_io.load(in, base, valid, items);
    head_io.load(heads, base, valid, flags);
    // (the loads' barriers also order this tile's use of scan_storage after the previous
    // tile's last reads of it)
    scan_t scan(scan_storage);
    Acc total;
    if constexpr (Exclusive) {
      if (t == 0) {
        scan.exclusive_scan(items, flags, items, seed.value, op, total);
      } else {
        const Acc prefix = static_cast<Acc>(op(seed.value, scanned[t - 1].value));
        scan.exclusive_scan_with_prefix(items, flags, items, seed.value, prefix, op, total);
      }
    } else {
      if (t == 0) {
        scan.inclusive_scan(items, flags, items, op, total);
      } else {
        scan.inclusive_scan_with_prefix(items, flags, items, scanned[t - 1].value, op, total);
      }
    }
    value_io.store(out, base, valid, items);
  }
}

// Bytes of storage for n elements: the tile aggregates and their recursive scan.
template <class Acc>
std::size_t storage_bytes(std::int64_t n) {
  constexpr std::int64_t tile = tile_tuning<Acc>().tile_items();
  const std::int64_t tiles = ceil_div(n, tile);
  if (tiles <= 1) return 0;
  return round_up_storage(static_cast<std::size_t>(tiles - 1) * sizeof(flagged<Acc>)) +
         required_storage_bytes<flagged<Acc>>(tiles - 1, sums_tuning<Acc>().tile_items()) +
         storage_alignment;
}

// Scans n >= 1 elements; `storage` holds storage_bytes<Acc>(n) bytes, aligned.
template <bool Exclusive, class Acc, class In, class Flags, class Out, class Op>
void run(const char* function, In in, Flags flags, Out out, std::int64_t n,
         seed_value<Acc, Exclusive> seed, Op op, unsigned char* storage, cudaStream_t stream) {
  constexpr tuning tune = tile_tuning<Acc>();
  constexpr int threads = tune.block_threads;
  constexpr int items = tune.items_per_thread;
  constexpr std::int64_t tile = tune.tile_items();
  const std::int64_t tiles = ceil_div(n, tile);
  const heads_from_one<Flags> heads{flags};
  flagged<Acc>* aggregates = nullptr;
  if (tiles > 1) {
    aggregates = reinterpret_cast<flagged<Acc>*>(storage);
    unsigned char* rest =
        storage + round_up_storage(static_cast<std::size_t>(tiles - 1) * sizeof(flagged<Acc>));
    reduce_kernel<threads, items, Acc><<<grid_for(tiles - 1), threads, 0, stream>>>(
        in, heads, aggregates, tiles - 1, op);
    TALLY_CUDA_CHECK_LAUNCH("segmented_blelloch::reduce_kernel", function);
    constexpr tuning sums = sums_tuning<Acc>();
    reduce_then_scan::strategy::run<warp_scans_selector, sums.block_threads, sums.items_per_thread,
                                    false, flagged<Acc>>(
        function, aggregates, aggregates, tiles - 1, seed_value<flagged<Acc>, false>{},
        segmented_op<Op>{op}, rest, stream);
  }
  scan_kernel<Exclusive, threads, items, Acc><<<grid_for(tiles), threads, 0, stream>>>(
      in, heads, out, n, static_cast<const flagged<Acc>*>(aggregates), seed, op);
  TALLY_CUDA_CHECK_LAUNCH("segmented_blelloch::scan_kernel", function);
}

}  // namespace tally::detail::segmented_blelloch
