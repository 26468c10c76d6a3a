// tally/block/warp_scans.cuh -- block scan: thread-serial scans, warp shuffle scans, and
// a warp scan of the warp totals (the "raking-free" three-level scan).
//
// Algorithm: the hierarchical scan of Sengupta, Harris, Garland & Owens, "Efficient
// Parallel Scan Algorithms for many-core GPUs" (2011) and Merrill & Grimshaw, "Parallel
// Scan for Stream Architectures" (2009): registers, then warps (shuffles, no shared
// memory, no barriers), then one warp over the warp totals.
//
//   1. each thread reduces its ItemsPerThread items serially            ItemsPerThread - 1
//   2. each warp scans its 32 thread totals with shuffles (warp/warp_scan.cuh)
//   3. lane 31 of each warp stores the warp total; one barrier; warp 0 scans the
//      BlockThreads / 32 warp totals with shuffles; one barrier
//   4. each thread combines its warp's prefix and its lane's prefix, and scans its items
//      serially from that prefix                                        ItemsPerThread
// Two barriers per tile, whatever the tile size. About 2N applications for N items plus
// O(BlockThreads) for the warp levels. No identity needed: the first thread of the block
// has no prefix, and the first lane of a warp takes only its warp's prefix.
#pragma once

#include "tally/block/detail/scan_interface.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 8>
class block_scan_warp_scans
    : public detail::scan_interface<block_scan_warp_scans<T, BlockThreads, ItemsPerThread>, T,
                                    ItemsPerThread> {
 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static constexpr int warps = BlockThreads / warp::warp_threads;
  static_assert(BlockThreads % warp::warp_threads == 0 && warps <= warp::warp_threads,
                "warp_scans: BlockThreads must be a multiple of 32, at most 1024");

  struct TempStorage {
    detail::uninitialized_array<T, warps> warp_totals;
    detail::uninitialized_array<T, warps> warp_prefixes;  // inclusive scan of warp_totals
  };

  TALLY_DEVICE explicit block_scan_warp_scans(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()), lane_(warp::lane_id()), warp_(tid_ / 32) {}

  template <class Op>
  TALLY_DEVICE T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    T lane_exclusive;
    const T aggregate = scan_thread_totals(reduce_items(items, op), op, lane_exclusive, nullptr);
    // the prefix of everything before this thread, if anything is
    if (warp_ > 0) {
      T prefix = s_.warp_prefixes[warp_ - 1];
      if (lane_ > 0) prefix = static_cast<T>(op(prefix, lane_exclusive));
      items[0] = static_cast<T>(op(prefix, items[0]));
    } else if (lane_ > 0) {
      items[0] = static_cast<T>(op(lane_exclusive, items[0]));
    }
#pragma unroll
    for (int k = 1; k < ItemsPerThread; ++k) items[k] = static_cast<T>(op(items[k - 1], items[k]));
    return aggregate;
  }

  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op) {
    T lane_exclusive;
    const T total = scan_thread_totals(reduce_items(items, op), op, lane_exclusive, &init);
    // warp_prefixes already include the seed
    T running = warp_ > 0 ? s_.warp_prefixes[warp_ - 1] : init;
    if (lane_ > 0) running = static_cast<T>(op(running, lane_exclusive));
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const T x = items[k];
      items[k] = running;
      running = static_cast<T>(op(running, x));
    }
    return total;
  }

 private:
  template <class Op>
  TALLY_DEVICE static T reduce_items(const T (&items)[ItemsPerThread], Op& op) {
    T sum = items[0];
#pragma unroll
    for (int k = 1; k < ItemsPerThread; ++k) sum = static_cast<T>(op(sum, items[k]));
    return sum;
  }

  // Levels 2 and 3. Leaves in lane_exclusive the exclusive scan of the thread totals
  // within the warp (unspecified in lane 0), fills warp_prefixes with the inclusive scan
  // of the warp totals (seeded with *init when given), and returns the block total.
  template <class Op>
  TALLY_DEVICE T scan_thread_totals(const T& thread_total, Op& op, T& lane_exclusive,
                                    const T* init) {
    const T lane_inclusive = warp::inclusive_scan(thread_total, op);
    lane_exclusive = warp::shuffle_up(lane_inclusive, 1u);
    if (lane_ == warp::warp_threads - 1) s_.warp_totals[warp_] = lane_inclusive;
    __syncthreads();  // every warp total is stored before warp 0 reads them
    if (warp_ == 0) {
      // lanes past the last warp read a copy of the last total: defined padding, and
      // harmless since the scan is causal
      T v = s_.warp_totals[lane_ < warps ? lane_ : warps - 1];
      if (init != nullptr && lane_ == 0) v = static_cast<T>(op(*init, v));
      v = warp::inclusive_scan(v, op);
      if (lane_ < warps) s_.warp_prefixes[lane_] = v;
    }
    __syncthreads();  // the warp prefixes are stored before any warp reads them
    return s_.warp_prefixes[warps - 1];
  }

  TempStorage& s_;
  int tid_;
  int lane_;
  int warp_;
};

}  // namespace tally::block
