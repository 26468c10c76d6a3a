// tally/block/brent_kung.cuh -- block scan: Brent-Kung (work-efficient tree).
//
// Algorithm: Brent & Kung, "A Regular Layout for Parallel Adders", IEEE Trans. Computers,
// 1982; the shared-memory form of PMPP (Hwu, Kirk & El Hajj) chapter 11.4.
//
// N = BlockThreads * ItemsPerThread items (a power of two) in one shared buffer.
//   up-sweep (reduction tree), stride s = 1, 2, ..., N/2: every position j with
//     (j + 1) a multiple of 2s becomes buf[j - s] op buf[j]             N - 1 applications
//   down-sweep (reverse tree), stride s = N/4, ..., 1: every position j with (j + 1) a
//     multiple of 2s and j + s < N makes buf[j + s] = buf[j] op buf[j + s]
//                                                                N - 1 - log2 N applications
// Total 2N - 2 - log2 N applications in 2 log2 N - 1 steps, each step one barrier.
//
// Two indexings of the same tree (PMPP 11.4), selected by brent_kung_indexing:
//   divergent:  each thread owns positions j = tid + k * BlockThreads and tests
//               (j + 1) % (2 * stride) == 0 -- active threads are spread over all warps,
//               so every warp stays busy with few active lanes (control divergence);
//   contiguous: thread t computes index = (t + 1) * 2 * stride - 1, so the active
//               threads are the first N / (2 * stride): whole warps retire early.
// Both apply exactly the same operations. block_scan::brent_kung uses the contiguous
// indexing; the divergent one has no block_scan value (tests and the bench reach it
// through brent_kung_divergent_selector).
//
// From the device API, block_scan::brent_kung's exclusive scan is Blelloch's down-sweep
// (blelloch.cuh); exclusive_scan_items below (the shifted load) serves direct block use.
//
// Partial tiles: causal (position j depends only on positions <= j): pad past the last
// valid item with any defined value. No identity needed; non-commutative operators work.
#pragma once

#include "tally/block/detail/scan_interface.cuh"

namespace tally::block {

enum class brent_kung_indexing { divergent, contiguous };

namespace detail {

// Shared-memory addresses of the tree: identity mapping here; the bank-conflict-free
// variant (brent_kung_conflict_free.cuh) pads.
struct linear_address {
  static constexpr int size(int n) { return n; }
  TALLY_DEVICE TALLY_FORCEINLINE static int at(int i) { return i; }
};

// Up-sweep over buf[0, N): afterwards buf[N - 1] holds the total and every position j
// holds the reduction of the largest aligned subtree ending at j.
// Begins with a barrier (the caller's writes to buf are visible) and ends with one.
template <int N, int BlockThreads, brent_kung_indexing Indexing, class Address, class T, class Op>
TALLY_DEVICE void brent_kung_up_sweep(T* buf, int tid, Op& op) {
  for (int stride = 1; stride < N; stride *= 2) {
    // Read-after-write: the previous level (or the caller's store) wrote what this level
    // reads. No write-after-read barrier is needed: a level writes positions j with
    // (j + 1) = m * 2s and reads j - s, which no other thread of the level writes.
    __syncthreads();
    if constexpr (Indexing == brent_kung_indexing::divergent) {
      for (int j = tid; j < N; j += BlockThreads) {
        if ((j + 1) % (2 * stride) == 0) {
          buf[Address::at(j)] = static_cast<T>(op(buf[Address::at(j - stride)], buf[Address::at(j)]));
        }
      }
    } else {
      for (int t = tid; (t + 1) * 2 * stride - 1 < N; t += BlockThreads) {
        const int index = (t + 1) * 2 * stride - 1;
        buf[Address::at(index)] =
            static_cast<T>(op(buf[Address::at(index - stride)], buf[Address::at(index)]));
      }
    }
  }
  __syncthreads();  // the root (and every subtree sum) is visible to all threads
}

// Down-sweep of PMPP: distributes the subtree sums to the positions in between.
// Begins with a barrier per level and ends with one; afterwards buf holds the inclusive
// scan.
template <int N, int BlockThreads, brent_kung_indexing Indexing, class Address, class T, class Op>
TALLY_DEVICE void brent_kung_down_sweep(T* buf, int tid, Op& op) {
  for (int stride = N / 4; stride > 0; stride /= 2) {
    // Read-after-write between levels. Within a level a thread writes j + s and reads
    // j (with (j + 1) a multiple of 2s), which no thread of the level writes.
    __syncthreads();
    if constexpr (Indexing == brent_kung_indexing::divergent) {
      for (int j = tid; j < N; j += BlockThreads) {
        if ((j + 1) % (2 * stride) == 0 && j + stride < N) {
          buf[Address::at(j + stride)] =
              static_cast<T>(op(buf[Address::at(j)], buf[Address::at(j + stride)]));
        }
      }
    } else {
      for (int t = tid; (t + 1) * 2 * stride - 1 + stride < N; t += BlockThreads) {
        const int index = (t + 1) * 2 * stride - 1;
        buf[Address::at(index + stride)] =
            static_cast<T>(op(buf[Address::at(index)], buf[Address::at(index + stride)]));
      }
    }
  }
  __syncthreads();  // the scanned buffer is visible to all threads
}

// The Brent-Kung scan for either address mapping (shared by brent_kung_conflict_free.cuh).
template <class Derived, class T, int BlockThreads, int ItemsPerThread, brent_kung_indexing Indexing,
          class Address>
class brent_kung_scan : public scan_interface<Derived, T, ItemsPerThread> {
 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static_assert(is_power_of_two_v<tile_items>,
                "Brent-Kung: BlockThreads * ItemsPerThread must be a power of two");

  struct TempStorage {
    uninitialized_array<T, Address::size(tile_items)> buffer;
    uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit brent_kung_scan(TempStorage& storage)
      : s_(storage), tid_(thread_rank()) {}

  template <class Op>
  TALLY_DEVICE T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    T* buf = s_.buffer.data();
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) buf[Address::at(tid_ * ItemsPerThread + k)] = items[k];
    brent_kung_up_sweep<tile_items, BlockThreads, Indexing, Address>(buf, tid_, op);
    brent_kung_down_sweep<tile_items, BlockThreads, Indexing, Address>(buf, tid_, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = buf[Address::at(tid_ * ItemsPerThread + k)];
    return buf[Address::at(tile_items - 1)];
  }

  // Shifted load (PMPP 11.1-11.2, applied to Brent-Kung): item i to position i + 1, the
  // seed to position 0; the last item is folded into the total by its thread.
  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op) {
    T* buf = s_.buffer.data();
    const T last = items[ItemsPerThread - 1];
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int position = tid_ * ItemsPerThread + k + 1;
      if (position < tile_items) buf[Address::at(position)] = items[k];
    }
    if (tid_ == 0) buf[Address::at(0)] = init;
    brent_kung_up_sweep<tile_items, BlockThreads, Indexing, Address>(buf, tid_, op);
    brent_kung_down_sweep<tile_items, BlockThreads, Indexing, Address>(buf, tid_, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = buf[Address::at(tid_ * ItemsPerThread + k)];
    if (tid_ == BlockThreads - 1) {
      s_.total[0] = static_cast<T>(op(buf[Address::at(tile_items - 1)], last));
    }
    __syncthreads();  // the total is written before every thread reads it
    return s_.total[0];
  }

 private:
  TempStorage& s_;
  int tid_;
};

}  // namespace detail

template <class T, int BlockThreads, int ItemsPerThread = 2,
          brent_kung_indexing Indexing = brent_kung_indexing::contiguous>
class block_scan_brent_kung
    : public detail::brent_kung_scan<block_scan_brent_kung<T, BlockThreads, ItemsPerThread, Indexing>,
                                     T, BlockThreads, ItemsPerThread, Indexing,
                                     detail::linear_address> {
  using base = detail::brent_kung_scan<block_scan_brent_kung, T, BlockThreads, ItemsPerThread,
                                       Indexing, detail::linear_address>;

 public:
  using typename base::TempStorage;
  TALLY_DEVICE explicit block_scan_brent_kung(TempStorage& storage) : base(storage) {}
};

}  // namespace tally::block
