// tally/device/detail/tuning.cuh -- threads per block and items per thread, in one place.
//
// A tuning is a constexpr value {block_threads, items_per_thread}; its tile is their
// product. The defaults depend on the block algorithm and the size of the accumulator
// type. Every strategy takes the tuning as a template parameter (`tuning Tune`), so a
// caller (the benchmark, a test) can override it; the bench prints `default_tuning`.
//
// Constraints: block_threads a multiple of 32, at most 1024; for the tree algorithms
// (Brent-Kung, Blelloch) the tile must be a power of two; the shared memory of the tile
// exchange plus the block algorithm must stay under 48 KiB (static shared memory):
// the defaults keep the exchange tile at 16 KiB.
//
// The defaults and why: docs/performance.md, "Plans and thresholds".
#pragma once

#include <cstddef>

#include "tally/core/options.hpp"

namespace tally::detail {

struct tuning {
  int block_threads;
  int items_per_thread;
  constexpr int tile_items() const { return block_threads * items_per_thread; }
};

// Grid sizes are capped; kernels loop over tiles (grid-stride, 64-bit tile index), so any
// number of tiles works.
inline constexpr long long max_grid_blocks = 1 << 20;

template <block_scan Block, class T>
constexpr tuning default_tuning() {
  constexpr std::size_t bytes = sizeof(T);
  if constexpr (Block == block_scan::coarsened || Block == block_scan::warp_scans ||
                Block == block_scan::automatic) {
    // 16 KiB tiles: 4096 items of 4 bytes, 2048 of 8, 1024 of 16 ...
    // Above 32 bytes (up to 64-byte user structs) 128 threads, to stay within 48 KiB of
    // static shared memory.
    constexpr int items = bytes <= 4 ? 16 : bytes <= 8 ? 8 : bytes <= 16 ? 4 : bytes <= 32 ? 2 : 1;
    return tuning{bytes <= 32 ? 256 : 128, items};
  } else {
    // Kogge-Stone, Brent-Kung, Blelloch: the whole tile also lives in the algorithm's
    // shared buffer (twice for the double-buffered Kogge-Stone). Power-of-two tiles.
    constexpr int items = bytes <= 4 ? 4 : bytes <= 8 ? 2 : 1;
    constexpr int threads = bytes <= 16 ? 256 : 128;
    return tuning{threads, items};
  }
}

}  // namespace tally::detail
