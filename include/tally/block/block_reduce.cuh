// tally/block/block_reduce.cuh -- block reduction: thread-serial, warp shuffles, then a
// warp over the warp totals.
//
// Algorithm: the reduction counterpart of warp_scans.cuh (Harris, "Optimizing Parallel
// Reduction in CUDA", 2007, with shuffles in place of the shared-memory tree).
// Items are in the blocked arrangement and combined strictly in order, so
// non-commutative operators work: thread-serial (ItemsPerThread - 1 applications), a
// butterfly warp reduce, and warp 0 scans the warp totals and takes the last one (a scan
// rather than a reduce so that lanes past the last warp can hold padding).
// N - 1 applications for the first two levels. No identity needed.
#pragma once

#include "tally/block/detail/scan_interface.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 1>
class block_reduce {
 public:
  static constexpr int warps = BlockThreads / warp::warp_threads;
  static_assert(BlockThreads % warp::warp_threads == 0 && warps <= warp::warp_threads,
                "block_reduce: BlockThreads must be a multiple of 32, at most 1024");

  struct TempStorage {
    detail::uninitialized_array<T, warps> warp_totals;
    detail::uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit block_reduce(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()) {}

  // Returns x_0 op ... op x_{N-1} in every thread.
  template <class Op>
  TALLY_DEVICE T reduce(const T (&items)[ItemsPerThread], Op op) {
    T sum = items[0];
#pragma unroll
    for (int k = 1; k < ItemsPerThread; ++k) sum = static_cast<T>(op(sum, items[k]));
    sum = warp::reduce(sum, op);
    const int lane = warp::lane_id(), w = tid_ / warp::warp_threads;
    if (lane == 0) s_.warp_totals[w] = sum;
    __syncthreads();  // every warp total is stored before warp 0 reads them
    if (w == 0) {
      T v = s_.warp_totals[lane < warps ? lane : warps - 1];
      v = warp::inclusive_scan(v, op);
      if (lane == warps - 1) s_.total[0] = v;
    }
    __syncthreads();  // the total is stored before every thread reads it
    return s_.total[0];
  }

  template <class Op>
  TALLY_DEVICE T reduce(const T& item, Op op) {
    static_assert(ItemsPerThread == 1, "the single-item overload needs ItemsPerThread == 1");
    const T items[1] = {item};
    return reduce(items, op);
  }

 private:
  TempStorage& s_;
  int tid_;
};

}  // namespace tally::block
