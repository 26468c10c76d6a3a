// tally/block/segmented_blelloch.cuh -- block segmented scan: Blelloch's work-efficient
// up-sweep/down-sweep carrying head flags (a teaching baseline).
//
// Algorithm: Blelloch, "Prefix Sums and Their Applications", CMU-CS-90-190, 1990 (the
// segmented scan by the tree with flags); the GPU form of Sengupta, Harris, Zhang & Owens,
// "Scan primitives for GPU computing" (2007) and GPU Gems 3 chapter 39.
//
// N = BlockThreads * ItemsPerThread items (a power of two) and their head flags (h_i: item
// i starts a segment) in shared memory: values x, the original flags h, and the swept
// flags f (f starts as h).
//   up-sweep, stride s = 1, 2, ..., N/2: every node j with (j + 1) a multiple of 2s and
//     its left child l = j - s:
//       if (!f[j]) x[j] = x[l] op x[j]        (a right subtree holding a head keeps its
//       f[j] = f[l] | f[j]                     own value: nothing before the head reaches it)
//     afterwards x[j] is the reduction of j's subtree from its last head (or all of it),
//     f[j] whether the subtree holds a head.
//   the root is replaced by the seed of the tile (below)
//   down-sweep, stride s = N/2, ..., 1: every node j, l = j - s, p = x[j] (the prefix of
//     j's subtree), t = x[l] (the left subtree's value from the up-sweep):
//       x[l] = p                               the left child starts where its parent does
//       x[j] = h[l + 1] ? reset                the right child begins with a head
//            : f[l]     ? seed op t            the left child holds a head: the right
//                                              child's segment began inside it
//            : p op t                          otherwise it continues the parent's prefix
//     The ORIGINAL flag h[l + 1] says whether the right subtree's first item is a head
//     (the up-sweep has replaced f[l + 1] by a subtree's flag where l + 1 is a node).
//     Operands stay in order (p op t: earlier first), so any associative operator works,
//     commutative or not.
// The result is the exclusive segmented scan: x[i] = seed op (items from i's segment head
// to i - 1).
//
// Without an identity. The textbook sets the root and every reset to the identity. Here:
//   exclusive, seeded with init:  reset := init, seed := init; the root := init (or the
//       prefix the tile continues from, where the tile does not start with a head). Every
//       segment gets init op x_head op ... op x_{i-1}; the first one, when continued, the
//       prefix op x_0 op ... op x_{i-1}.
//   inclusive:  out[i] = h[i] ? x_i : x[i] op x_i, with seed op t := t (no seed at all)
//       and the reset never read: a reset only reaches its head's own leaf (along a path
//       of left children, which pass their prefix down unchanged), and a head's inclusive
//       result is its own item. The tile's item 0 starts a segment unless the scan
//       continues a prefix (the root := prefix).
// So no identity is needed anywhere.
//
// Work (N a power of two; heads skip applications, so these are the most):
//   exclusive  up-sweep N - 1, down-sweep N - 1, +1 for the returned total: 2N - 1
//              (no heads; every item a head: 1)
//   inclusive  up-sweep N - 1, down-sweep N - 1 - log2 N (the left spine passes the first
//              segment's value down unchanged), N - 1 final applications: 3N - 3 - log2 N
//              (no heads; every item a head: 0); continuing a prefix: 3N - 2
// Steps: 2 log2 N + 2 barriers (+1 for the inclusive total).
//
// Partial tiles: causal, as every scan here: pad values and flags past the last valid
// item with any defined values (tile_io pads with copies of the last valid one).
//
// Interface (items and heads in the BLOCKED arrangement: thread t holds items
// t * ItemsPerThread ... + ItemsPerThread - 1):
//   inclusive_scan(items, heads, out, op[, aggregate])           item 0 starts a segment
//   inclusive_scan_with_prefix(items, heads, out, prefix, op, total)
//       items before the tile's first head continue a segment whose running value
//       (the inclusive result just before the tile) is `prefix`
//   exclusive_scan(items, heads, out, init, op[, total])          every segment from init
//   exclusive_scan_with_prefix(items, heads, out, init, prefix, op, total)
//       items before the tile's first head continue from `prefix` (the exclusive result
//       the tile's item 0 has if it is not a head)
// The totals are what the next tile continues from: inclusive, the result of the last
// item; exclusive, init op (the last segment's items) or, without a head in the tile,
// prefix op (all items). Every thread gets them. Reusing a TempStorage needs a
// __syncthreads() in between.
#pragma once

#include "tally/block/detail/scan_interface.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread = 2>
class block_segmented_scan_blelloch {
 public:
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static_assert(detail::is_power_of_two_v<tile_items>,
                "segmented Blelloch: BlockThreads * ItemsPerThread must be a power of two");

  struct TempStorage {
    detail::uninitialized_array<T, tile_items> values;
    unsigned char heads[tile_items];  // the original flags h
    unsigned char swept[tile_items];  // the flags of the up-sweep f
    detail::uninitialized_array<T, 1> total;
  };

  TALLY_DEVICE explicit block_segmented_scan_blelloch(TempStorage& storage)
      : s_(storage), tid_(detail::thread_rank()) {}

  // ---- inclusive ----
  template <class Op>
  TALLY_DEVICE void inclusive_scan(const T (&items)[ItemsPerThread],
                                   const bool (&heads)[ItemsPerThread], T (&out)[ItemsPerThread],
                                   Op op, T& aggregate) {
    aggregate = scan<false, false>(items, heads, out, nullptr, nullptr, op);
  }
  template <class Op>
  TALLY_DEVICE void inclusive_scan(const T (&items)[ItemsPerThread],
                                   const bool (&heads)[ItemsPerThread], T (&out)[ItemsPerThread],
                                   Op op) {
    (void)scan<false, false>(items, heads, out, nullptr, nullptr, op);
  }
  template <class Op>
  TALLY_DEVICE void inclusive_scan_with_prefix(const T (&items)[ItemsPerThread],
                                               const bool (&heads)[ItemsPerThread],
                                               T (&out)[ItemsPerThread], const T& prefix, Op op,
                                               T& total) {
    total = scan<false, true>(items, heads, out, nullptr, &prefix, op);
  }

  // ---- exclusive, every segment seeded with init ----
  template <class Op>
  TALLY_DEVICE void exclusive_scan(const T (&items)[ItemsPerThread],
                                   const bool (&heads)[ItemsPerThread], T (&out)[ItemsPerThread],
                                   const T& init, Op op, T& total) {
    total = scan<true, false>(items, heads, out, &init, &init, op);
  }
  template <class Op>
  TALLY_DEVICE void exclusive_scan(const T (&items)[ItemsPerThread],
                                   const bool (&heads)[ItemsPerThread], T (&out)[ItemsPerThread],
                                   const T& init, Op op) {
    (void)scan<true, false>(items, heads, out, &init, &init, op);
  }
  template <class Op>
  TALLY_DEVICE void exclusive_scan_with_prefix(const T (&items)[ItemsPerThread],
                                               const bool (&heads)[ItemsPerThread],
                                               T (&out)[ItemsPerThread], const T& init,
                                               const T& prefix, Op op, T& total) {
    total = scan<true, true>(items, heads, out, &init, &prefix, op);
  }

 private:
  // init: exclusive scans' reset value (null for inclusive); prefix: the value the tile
  // continues from (null for an inclusive scan that starts a segment at item 0; the
  // exclusive scan without a prefix passes init). `out` may alias `items`.
  template <bool Exclusive, bool Continued, class Op>
  TALLY_DEVICE T scan(const T (&items)[ItemsPerThread], const bool (&heads)[ItemsPerThread],
                      T (&out)[ItemsPerThread], const T* init, const T* prefix, Op& op) {
    T* x = s_.values.data();
    unsigned char* h = s_.heads;
    unsigned char* f = s_.swept;
    T own[ItemsPerThread];      // the items (out may alias items)
    bool own_head[ItemsPerThread];
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int i = tid_ * ItemsPerThread + k;
      own[k] = items[k];
      // an inclusive scan that continues no prefix starts a segment at item 0
      own_head[k] = heads[k] || (!Exclusive && !Continued && i == 0);
      x[i] = own[k];
      h[i] = own_head[k] ? 1 : 0;
      f[i] = h[i];
    }
    up_sweep(x, f, op);
    if (tid_ == 0) {
      // Thread 0 alone reads the root and replaces it; the down-sweep's first barrier
      // publishes both the root and the total.
      const T root = x[tile_items - 1];
      if constexpr (Exclusive) {
        s_.total[0] = static_cast<T>(op(f[tile_items - 1] ? *init : *prefix, root));
        x[tile_items - 1] = h[0] ? *init : *prefix;
      } else if constexpr (Continued) {
        x[tile_items - 1] = *prefix;  // never read where item 0 is a head
      }
      // (inclusive, not continued: item 0 is a head and the root is never read)
    }
    down_sweep<Exclusive>(x, h, f, init, op);
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const T p = x[tid_ * ItemsPerThread + k];
      if constexpr (Exclusive) {
        out[k] = p;
      } else {
        out[k] = own_head[k] ? own[k] : static_cast<T>(op(p, own[k]));
      }
    }
    if constexpr (Exclusive) {
      return s_.total[0];  // written before the down-sweep's barriers
    } else {
      // The last item's result is the total. Its thread writes it after the down-sweep's
      // last barrier, which every thread has passed after its last read of x; the barrier
      // below makes the total visible before anybody reads it.
      if (tid_ == BlockThreads - 1) s_.total[0] = out[ItemsPerThread - 1];
      __syncthreads();
      return s_.total[0];
    }
  }

  template <class Op>
  TALLY_DEVICE void up_sweep(T* x, unsigned char* f, Op& op) {
    for (int stride = 1; stride < tile_items; stride *= 2) {
      // Read-after-write: the previous level (or the stores above) wrote what this level
      // reads. Within a level, node j = m * 2s - 1 is written and read with its left
      // child j - s, which no node of the level is: no write-after-read hazard.
      __syncthreads();
      for (int t = tid_; (t + 1) * 2 * stride - 1 < tile_items; t += BlockThreads) {
        const int j = (t + 1) * 2 * stride - 1;
        const int l = j - stride;
        if (!f[j]) x[j] = static_cast<T>(op(x[l], x[j]));
        f[j] = f[j] | f[l];
      }
    }
    __syncthreads();  // the root and every subtree's value and flag are visible
  }

  template <bool Exclusive, class Op>
  TALLY_DEVICE void down_sweep(T* x, const unsigned char* h, const unsigned char* f, const T* init,
                               Op& op) {
    for (int stride = tile_items / 2; stride > 0; stride /= 2) {
      // Read-after-write between levels (and for the root set above). Within a level the
      // nodes j and their left children j - s are all distinct; h and f are only read.
      __syncthreads();
      for (int t = tid_; (t + 1) * 2 * stride - 1 < tile_items; t += BlockThreads) {
        const int j = (t + 1) * 2 * stride - 1;
        const int l = j - stride;
        const T left = x[l];
        const T p = x[j];
        x[l] = p;
        if (h[l + 1]) {
          // the right subtree begins a segment: the exclusive reset (inclusive: any
          // defined value; it reaches only that head's leaf, whose result is its item)
          if constexpr (Exclusive) {
            x[j] = *init;
          } else {
            x[j] = left;
          }
        } else if (f[l]) {
          // the segment of the right subtree's first item began inside the left subtree
          if constexpr (Exclusive) {
            x[j] = static_cast<T>(op(*init, left));
          } else {
            x[j] = left;
          }
        } else {
          x[j] = static_cast<T>(op(p, left));
        }
      }
    }
    __syncthreads();  // every prefix is visible to all threads
  }

  TempStorage& s_;
  int tid_;
};

}  // namespace tally::block
