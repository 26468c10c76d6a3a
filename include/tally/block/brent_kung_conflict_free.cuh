// tally/block/brent_kung_conflict_free.cuh -- block scan: Brent-Kung with padded
// shared-memory addresses (no bank conflicts).
//
// Algorithm: Brent & Kung 1982 (see brent_kung.cuh), with the padding of Harris,
// Sengupta & Owens, "Parallel Prefix Sum (Scan) with CUDA", GPU Gems 3 chapter 39 (2007),
// also PMPP chapter 11 exercises.
//
// At tree level s the active threads touch positions 2s apart: for 2s >= 32 (4-byte
// words) they all fall in the same bank and serialise. Storing logical position i at
// address i + i / 32 (one padding word after every 32) spreads them over the banks.
// Same operations and barriers as brent_kung.cuh (contiguous indexing); 1/32 more memory.
// From the device API, block_scan::brent_kung_conflict_free's exclusive scan is Blelloch's
// down-sweep with the same padding (blelloch.cuh, ConflictFree = true).
#pragma once

#include "tally/block/brent_kung.cuh"

namespace tally::block {

namespace detail {
struct padded_address {
  static constexpr int size(int n) { return n + n / 32; }
  TALLY_DEVICE TALLY_FORCEINLINE static int at(int i) { return i + i / 32; }
};
}  // namespace detail

template <class T, int BlockThreads, int ItemsPerThread = 2>
class block_scan_brent_kung_conflict_free
    : public detail::brent_kung_scan<block_scan_brent_kung_conflict_free<T, BlockThreads, ItemsPerThread>,
                                     T, BlockThreads, ItemsPerThread,
                                     brent_kung_indexing::contiguous, detail::padded_address> {
  using base = detail::brent_kung_scan<block_scan_brent_kung_conflict_free, T, BlockThreads,
                                       ItemsPerThread, brent_kung_indexing::contiguous,
                                       detail::padded_address>;

 public:
  using typename base::TempStorage;
  TALLY_DEVICE explicit block_scan_brent_kung_conflict_free(TempStorage& storage) : base(storage) {}
};

}  // namespace tally::block
