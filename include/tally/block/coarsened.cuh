// tally/block/coarsened.cuh -- block scan: the three-phase coarsened scan.
//
// Algorithm: PMPP (Hwu, Kirk & El Hajj) chapter 11.5, thread coarsening for more work
// efficiency (the coarsened three-phase scan over a Kogge-Stone scan of the totals).
//
// Each thread owns a contiguous subsection of ItemsPerThread items (the blocked
// arrangement; block/tile_io.cuh does PMPP's coalesced load through shared memory):
//   phase 1: each thread scans its subsection serially, in registers
//                                                  BlockThreads (ItemsPerThread - 1)
//   phase 2: a Kogge-Stone scan (double-buffered) of the BlockThreads subsection totals
//                                                  B log2 B - (B - 1)   (B = BlockThreads)
//   phase 3: each thread but the first adds its predecessor's scanned total to its items
//                                                  (BlockThreads - 1) ItemsPerThread
// The exclusive form reduces instead in phase 1, scans the totals shifted by one with the
// seed in front (the shifted load), and scans serially from that prefix in phase 3.
// No identity is needed: thread 0 simply has no predecessor.
#pragma once

#include "tally/block/detail/scan_interface.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 8>
class block_scan_coarsened
    : public detail::scan_interface<block_scan_coarsened<T, BlockThreads, ItemsPerThread>, T,
                                    ItemsPerThread> {
 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;

  struct TempStorage {
    detail::uninitialized_array<T, 2 * BlockThreads> totals;  // ping-pong of phase 2
    detail::uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit block_scan_coarsened(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()) {}

  template <class Op>
  TALLY_DEVICE T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    // phase 1: serial scan of the subsection
#pragma unroll
    for (int k = 1; k < ItemsPerThread; ++k) items[k] = static_cast<T>(op(items[k - 1], items[k]));
    // phase 2: scan of the subsection totals
    s_.totals[tid_] = items[ItemsPerThread - 1];
    const T* scanned = scan_totals(op);
    // phase 3: add the predecessor's total
    if (tid_ > 0) {
      const T prefix = scanned[tid_ - 1];
#pragma unroll
      for (int k = 0; k < ItemsPerThread; ++k) items[k] = static_cast<T>(op(prefix, items[k]));
    }
    return scanned[BlockThreads - 1];
  }

  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op) {
    // phase 1: serial reduction of the subsection
    T sum = items[0];
#pragma unroll
    for (int k = 1; k < ItemsPerThread; ++k) sum = static_cast<T>(op(sum, items[k]));
    // phase 2: shifted load of the totals (thread t's total to place t + 1, the seed to
    // place 0): the inclusive scan gives each thread the seeded prefix of its subsection
    if (tid_ + 1 < BlockThreads) s_.totals[tid_ + 1] = sum;
    if (tid_ == 0) s_.totals[0] = init;
    const T* scanned = scan_totals(op);
    // phase 3: serial exclusive scan from the prefix
    T running = scanned[tid_];
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const T x = items[k];
      items[k] = running;
      running = static_cast<T>(op(running, x));
    }
    if (tid_ == BlockThreads - 1) s_.total[0] = running;
    __syncthreads();  // the total is written before every thread reads it
    return s_.total[0];
  }

 private:
  // Double-buffered Kogge-Stone over totals[0, BlockThreads); returns the result buffer.
  template <class Op>
  TALLY_DEVICE const T* scan_totals(Op& op) {
    T* source = s_.totals.data();
    T* target = source + BlockThreads;
    __syncthreads();  // all totals are in place before they are read
    for (int stride = 1; stride < BlockThreads; stride *= 2) {
      target[tid_] = tid_ >= stride ? static_cast<T>(op(source[tid_ - stride], source[tid_]))
                                    : source[tid_];
      // Read-after-write for the next step; the next step writes the buffer read in this
      // one, whose readers have all passed this barrier (no write-after-read hazard).
      __syncthreads();
      T* t = source;
      source = target;
      target = t;
    }
    return source;
  }

  TempStorage& s_;
  int tid_;
};

}  // namespace tally::block
