// tally/block/kogge_stone_double_buffered.cuh -- block scan: Kogge-Stone, two buffers.
//
// Algorithm: Kogge & Stone 1973 (see kogge_stone.cuh); the double-buffered form of PMPP
// chapter 11.2 (exercise) and of Harris, Sengupta & Owens, GPU Gems 3 chapter 39.
//
// Each step reads one buffer and writes the other, then the roles swap. A position is
// never written in the step that reads it, so the write-after-read barrier of the single
// buffer goes away: one barrier per step instead of two, for twice the shared memory.
// Work as the single-buffer version: N log2 N - (N - 1) operator applications.
#pragma once

#include "tally/block/detail/scan_interface.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 1>
class block_scan_kogge_stone_double_buffered
    : public detail::scan_interface<
          block_scan_kogge_stone_double_buffered<T, BlockThreads, ItemsPerThread>, T,
          ItemsPerThread> {
 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;

  struct TempStorage {
    detail::uninitialized_array<T, 2 * tile_items> buffers;
    detail::uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit block_scan_kogge_stone_double_buffered(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()) {}

  template <class Op>
  TALLY_DEVICE T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    T* buf = s_.buffers.data();
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) buf[tid_ * ItemsPerThread + k] = items[k];
    const T* result = scan_buffers(op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = result[tid_ * ItemsPerThread + k];
    return result[tile_items - 1];
  }

  // Shifted load (see kogge_stone.cuh): the exclusive scan is the inclusive scan of
  // [init, x_0, ..., x_{N-2}]; x_{N-1} is folded into the total by its thread.
  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op) {
    T* buf = s_.buffers.data();
    const T last = items[ItemsPerThread - 1];
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int position = tid_ * ItemsPerThread + k + 1;
      if (position < tile_items) buf[position] = items[k];
    }
    if (tid_ == 0) buf[0] = init;
    const T* result = scan_buffers(op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = result[tid_ * ItemsPerThread + k];
    if (tid_ == BlockThreads - 1) s_.total[0] = static_cast<T>(op(result[tile_items - 1], last));
    __syncthreads();  // the total is written before every thread reads it
    return s_.total[0];
  }

 private:
  // Scans buffer 0 in place through the ping-pong; returns the buffer holding the result.
  template <class Op>
  TALLY_DEVICE const T* scan_buffers(Op& op) {
    T* source = s_.buffers.data();
    T* target = source + tile_items;
    __syncthreads();  // every thread's items are in buffer 0 before step 1 reads them
    for (int stride = 1; stride < tile_items; stride *= 2) {
#pragma unroll
      for (int k = 0; k < ItemsPerThread; ++k) {
        const int j = tid_ + k * BlockThreads;
        target[j] = j >= stride ? static_cast<T>(op(source[j - stride], source[j])) : source[j];
      }
      // Read-after-write only: the next step reads `target`. The next step writes into
      // `source`, whose readers (this step) have all passed this barrier, so no
      // write-after-read barrier is needed.
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
