// tally/core/options.hpp -- the options every device-wide call takes.
#pragma once

#include <cstddef>

// cudaStream_t is `struct CUstream_st*`. Declaring the struct here lets this header (and
// the CPU-only part of tally) compile without the CUDA headers while `options::stream`
// is exactly a cudaStream_t.
struct CUstream_st;

namespace tally {

// How a device-wide scan is split across blocks.
enum class scan_strategy {
  automatic,            // the production plans, chosen by device/detail/dispatch.cuh
  scan_then_propagate,  // scan blocks, scan block sums, add them back (three kernels; PMPP 11.6)
  reduce_then_scan,     // reduce blocks, scan the sums, scan blocks seeded by their prefix
  chained,              // single pass, each tile waits for the one before (Yan 2013; PMPP 11.7)
  decoupled_lookback,   // single pass with a warp-wide look-back (Merrill & Garland 2016)
  naive,                // teaching baseline: thread i sums its whole prefix, O(n^2) work
                        // (tally::textbook only; never chosen by automatic)
};

// Which block-level algorithm scans one tile.
enum class block_scan {
  automatic,
  kogge_stone,
  kogge_stone_double_buffered,
  brent_kung,
  brent_kung_conflict_free,
  coarsened,
  warp_scans,
  // Teaching baselines (tally::textbook only; automatic never picks them):
  blelloch,              // Blelloch's up-sweep/down-sweep for inclusive and exclusive tiles
  brent_kung_divergent,  // Brent-Kung with PMPP's divergent (tid + 1) % (2 stride) indexing
};

// Caller-owned temporary storage. With `data != nullptr` a call performs no allocation
// at all (so it can be captured in a CUDA graph); `bytes` smaller than the call needs
// throws std::invalid_argument. The `*_storage_bytes` query functions say how much a
// call needs. The memory must stay valid until the call's work on the stream finishes.
struct temporary_storage {
  void* data = nullptr;
  std::size_t bytes = 0;
};

struct options {
  CUstream_st* stream = nullptr;  // a cudaStream_t; nullptr is the legacy default stream
  scan_strategy strategy = scan_strategy::automatic;
  block_scan block = block_scan::automatic;
  bool deterministic = false;  // floating point: identical bits from run to run
  temporary_storage storage{};
};

}  // namespace tally
