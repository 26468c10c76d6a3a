// tally/block/kogge_stone.cuh -- block scan: Kogge-Stone, one shared buffer.
//
// Algorithm: Kogge & Stone, "A Parallel Algorithm for the Efficient Solution of a General
// Class of Recurrence Equations", IEEE Trans. Computers, 1973 (as a scan: Hillis & Steele
// 1986); the shared-memory form of PMPP (Hwu, Kirk & El Hajj), chapter 11.2.
//
// N = BlockThreads * ItemsPerThread items in one shared buffer. In step s = 1, 2, 4, ...
// every position j >= s becomes buf[j - s] op buf[j]. log2(N) steps (rounded up),
// N log2 N - (N - 1) operator applications for N a power of two (not work-efficient:
// a sequential scan needs N - 1).
//
// Partial tiles: the scan is causal (position j depends on positions <= j), so a caller
// pads the positions past the last valid item with any defined value and ignores them.
// The operator needs no identity and may be non-commutative (always op(earlier, later)).
#pragma once

#include "tally/block/detail/scan_interface.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 1>
class block_scan_kogge_stone
    : public detail::scan_interface<block_scan_kogge_stone<T, BlockThreads, ItemsPerThread>, T,
                                    ItemsPerThread> {
 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;

  struct TempStorage {
    detail::uninitialized_array<T, tile_items> buffer;
    detail::uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit block_scan_kogge_stone(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()) {}

  template <class Op>
  TALLY_DEVICE T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    T* buf = s_.buffer.data();
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) buf[tid_ * ItemsPerThread + k] = items[k];
    scan_buffer(buf, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = buf[tid_ * ItemsPerThread + k];
    return buf[tile_items - 1];  // written before scan_buffer's last barrier
  }

  // The shifted load of PMPP's exclusive Kogge-Stone (11.1-11.2): item i goes to position
  // i + 1 and the seed to position 0, so the inclusive scan of the buffer is the exclusive
  // scan of the items. The last item falls off the buffer; its thread folds it into the total.
  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op) {
    T* buf = s_.buffer.data();
    const T last = items[ItemsPerThread - 1];
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int position = tid_ * ItemsPerThread + k + 1;
      if (position < tile_items) buf[position] = items[k];
    }
    if (tid_ == 0) buf[0] = init;
    scan_buffer(buf, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = buf[tid_ * ItemsPerThread + k];
    if (tid_ == BlockThreads - 1) s_.total[0] = static_cast<T>(op(buf[tile_items - 1], last));
    __syncthreads();  // the total is written before every thread reads it
    return s_.total[0];
  }

 private:
  template <class Op>
  TALLY_DEVICE void scan_buffer(T* buf, Op& op) {
    __syncthreads();  // every thread's items are in the buffer before step 1 reads them
    for (int stride = 1; stride < tile_items; stride *= 2) {
      T sum[ItemsPerThread];
#pragma unroll
      for (int k = 0; k < ItemsPerThread; ++k) {
        const int j = tid_ + k * BlockThreads;
        if (j >= stride) sum[k] = static_cast<T>(op(buf[j - stride], buf[j]));
      }
      // Write-after-read: position j + stride reads buf[j] in this step, and position j
      // is about to be overwritten. Without this barrier a fast thread could overwrite
      // buf[j] before a slow one has read it, and the slow one would add a value that
      // already includes this step (double counting). Everybody reads, then everybody
      // writes: this barrier is what a single buffer costs (see the double-buffered
      // variant, which needs none).
      __syncthreads();
#pragma unroll
      for (int k = 0; k < ItemsPerThread; ++k) {
        const int j = tid_ + k * BlockThreads;
        if (j >= stride) buf[j] = sum[k];
      }
      // Read-after-write: the next step (or the caller) reads what this step wrote.
      __syncthreads();
    }
  }

  TempStorage& s_;
  int tid_;
};

}  // namespace tally::block
