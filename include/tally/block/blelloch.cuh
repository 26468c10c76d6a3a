// tally/block/blelloch.cuh -- block scan: Blelloch's work-efficient exclusive scan.
//
// Algorithm: Blelloch, "Prefix Sums and Their Applications", CMU-CS-90-190, 1990 (first
// as Blelloch 1989, "Scans as Primitive Parallel Operations"); the CUDA form of Harris,
// Sengupta & Owens, GPU Gems 3 chapter 39 (2007).
//
// N = BlockThreads * ItemsPerThread items (a power of two) in one shared buffer.
//   up-sweep: the reduction tree of Brent-Kung (brent_kung.cuh)      N - 1 applications
//   the root (the total) is replaced by the seed
//   down-sweep, stride s = N/2, ..., 1: for every node j with (j + 1) a multiple of 2s,
//     left = j - s:   t = buf[left]; buf[left] = buf[j]; buf[j] = buf[j] op t
//     (a node passes its prefix to its left child, and prefix op left-sum to its right
//     child: operand order is kept, so non-commutative operators work) N - 1 applications
// Total 2N - 2 applications in 2 log2 N steps, each one barrier.
//
// The identity. Blelloch's paper sets the root to the identity, which gives the exclusive
// scan without a seed. tally sets the root to the SEED instead, which gives the seeded
// exclusive scan init op x_0 op ... op x_{i-1} directly and needs no identity:
//   exclusive_scan(items, init, op)  root := init      any associative operator
//   exclusive_scan(items, op)        root := identity  needs has_identity_v<Op, T>
//                                                       (static_assert otherwise)
//   inclusive_scan(items, op)        the items shifted down one place, root := x_0, so
//                                    position i gets x_0 op x_1 ... op x_i: the inclusive
//                                    scan through the same down-sweep, without an identity
// So, unlike the textbook version, every use here but the unseeded exclusive scan works
// for operators without an identity.
//
// ConflictFree = true stores position i at i + i / 32 (see brent_kung_conflict_free.cuh).
//
// Blelloch has no block_scan value of its own: the device API reaches it only as the
// exclusive form of block_scan::brent_kung (ConflictFree = false) and
// block_scan::brent_kung_conflict_free (ConflictFree = true); see
// device/multi_pass/block_algorithms.cuh.
//
// Partial tiles: causal, as every scan here: pad past the last valid item with any
// defined value.
#pragma once

#include "tally/block/brent_kung.cuh"
#include "tally/block/brent_kung_conflict_free.cuh"
#include "tally/core/operators.hpp"

#include <type_traits>

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 2, bool ConflictFree = false>
class block_scan_blelloch
    : public detail::scan_interface<block_scan_blelloch<T, BlockThreads, ItemsPerThread, ConflictFree>,
                                    T, ItemsPerThread> {
  using address = std::conditional_t<ConflictFree, detail::padded_address, detail::linear_address>;

 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static_assert(detail::is_power_of_two_v<tile_items>,
                "Blelloch: BlockThreads * ItemsPerThread must be a power of two");

  struct TempStorage {
    detail::uninitialized_array<T, address::size(tile_items)> buffer;
    detail::uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit block_scan_blelloch(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()) {}

  // Seeded exclusive scan: root := init. Returns init op x_0 op ... op x_{N-1}.
  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op) {
    T* buf = s_.buffer.data();
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) buf[address::at(tid_ * ItemsPerThread + k)] = items[k];
    detail::brent_kung_up_sweep<tile_items, BlockThreads, brent_kung_indexing::contiguous, address>(
        buf, tid_, op);
    if (tid_ == 0) {
      // Only thread 0 reads the root and overwrites it, so no other thread can see a
      // half-updated root; the down-sweep's first barrier publishes both writes.
      s_.total[0] = static_cast<T>(op(init, buf[address::at(tile_items - 1)]));
      buf[address::at(tile_items - 1)] = init;
    }
    down_sweep(buf, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = buf[address::at(tid_ * ItemsPerThread + k)];
    return s_.total[0];  // written before the down-sweep's barriers
  }

  // Exclusive scan without a seed, as in Blelloch's paper: root := identity.
  template <class Op>
  TALLY_DEVICE T exclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    static_assert(has_identity_v<Op, T>,
                  "Blelloch's unseeded exclusive scan needs an identity of the operator: "
                  "specialise tally::identity_of, or pass a seed");
    return exclusive_scan_items(items, identity<Op, T>(), op);
  }

  // Inclusive scan through the down-sweep: the buffer holds x_1 ... x_{N-1} (and a copy
  // of x_{N-1} as padding in the last place), the root gets x_0: position i receives
  // x_0 op x_1 op ... op x_i. Returns the aggregate x_0 op ... op x_{N-1}.
  template <class Op>
  TALLY_DEVICE T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op) {
    T* buf = s_.buffer.data();
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int position = tid_ * ItemsPerThread + k - 1;
      if (position >= 0) buf[address::at(position)] = items[k];
    }
    if (tid_ == BlockThreads - 1) buf[address::at(tile_items - 1)] = items[ItemsPerThread - 1];
    detail::brent_kung_up_sweep<tile_items, BlockThreads, brent_kung_indexing::contiguous, address>(
        buf, tid_, op);
    // Thread 0 alone writes the root; nobody reads the old root (the padded total).
    if (tid_ == 0) buf[address::at(tile_items - 1)] = items[0];
    down_sweep(buf, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = buf[address::at(tid_ * ItemsPerThread + k)];
    return buf[address::at(tile_items - 1)];
  }

  // The unseeded exclusive overloads (not in the common interface).
  template <class Op>
  TALLY_DEVICE void exclusive_scan(const T (&input)[ItemsPerThread], T (&output)[ItemsPerThread],
                                   Op op) {
    T items[ItemsPerThread];
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = input[k];
    exclusive_scan_items(items, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) output[k] = items[k];
  }
  using detail::scan_interface<block_scan_blelloch, T, ItemsPerThread>::exclusive_scan;

 private:
  template <class Op>
  TALLY_DEVICE void down_sweep(T* buf, Op& op) {
    for (int stride = tile_items / 2; stride > 0; stride /= 2) {
      // Read-after-write between levels (and for the root set above). Within a level the
      // nodes j and their left children j - s are all distinct, so nobody reads what
      // another thread writes in the same level.
      __syncthreads();
      for (int t = tid_; (t + 1) * 2 * stride - 1 < tile_items; t += BlockThreads) {
        const int right = (t + 1) * 2 * stride - 1;
        const int left = right - stride;
        const T left_sum = buf[address::at(left)];
        const T prefix = buf[address::at(right)];
        buf[address::at(left)] = prefix;
        buf[address::at(right)] = static_cast<T>(op(prefix, left_sum));
      }
    }
    __syncthreads();  // the scan is visible to all threads
  }

  TempStorage& s_;
  int tid_;
};

}  // namespace tally::block
