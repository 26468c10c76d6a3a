// tally/device/segmented/tile_heads.cuh -- the segmented scans and the segmented reduce
// over CSR offsets, tile by tile: each tile finds its own segment heads in the offsets.
// The same kernel serves the scans by one-byte head flags (the flags are copied to the
// tile's head bytes instead of searched: flags_source below), by keys, and by equal
// lengths; large inputs of the scans take the pipelined kernel instead
// (segmented/pipelined.cuh), which uses this file's warp functions scan_pair_rows and
// finish_pair_row.
//
// The general path (segmented/pairs_scan.cuh) first turns the offsets into a head bitmap (a
// memset and a kernel over all offsets), then scans (head, value) pairs with the
// single-pass kernel, and the segmented reduce scans into a scratch array of n values
// and gathers the segment ends. This file does the same work in ONE kernel, for 16-byte
// aligned pointers to 4- or 8-byte values (the common case):
//
//   0. thread 0 draws the tile's ticket (single_pass/tile_state.cuh); one barrier.
//   1. the tile's values are copied to shared memory with cp.async (the staged tiles of
//      single_pass/tile_pipeline.cuh), and while they are in flight the block finds, by a search
//      over the offsets, the offsets that fall in the tile: j_first = the first j with
//      offsets[j] >= base, j_last = the first j with offsets[j] > end ([base, end) is the
//      tile). Those offsets are read (coalesced) and mark the tile's HEADS, one byte per
//      element in shared memory.
//   2. each warp scans its rows of (head, value) pairs (the flag-augmented operator of
//      core/segmented.hpp) and writes its warp-local results back to the staged tile
//      (the write-back scan of single_pass/pipelined.cuh: nothing per row lives across
//      the wait).
//   3. the warps' (head, value) totals -> the tile's aggregate (warp 0).
//   4. the tile's prefix from its predecessors by the Protocol (decoupled look-back or
//      chained), exactly as for an ordinary single-pass scan of pairs. (The decoupled
//      look-back ends at the nearest tile whose aggregate holds a head, as at an inclusive
//      one: such a pair absorbs every prefix, core/segmented.hpp's absorbs_prefix.)
//   5. a scan stores every element: the warp's prefix goes in front of the elements
//      before the warp's first head. The reduce instead finishes the tile in shared
//      memory and writes one value per segment that ENDS in the tile (and init for an
//      empty segment whose position is in the tile): n values read, num_segments written.
//
// The search. 256 threads probe 2 x 128 offsets at once (the two bounds side by side): a
// 129-way split per round, so 2^26 offsets take 4 rounds of one load each, where a binary
// search would take 26 dependent loads. The rounds overlap the values' copies, and the
// first round's probes are the same in every tile (cache hits).
//
// Which tile writes a segment's result (reduce): segment k = [offsets[k], offsets[k+1])
// belongs to the tile with offsets[k+1] in (base, end] (its last element is in the
// tile; an empty one sits at offsets[k]), and tile 0 also takes offsets[k+1] == 0.
//
// Elements outside [offsets[0], offsets[S]) are never written; they are read (the tile's
// 16-byte copies cover them) but never reach a result: offsets[0] is a head, so nothing
// before it flows into segment 0, and nothing after offsets[S] is stored or gathered.
// Invalid offsets (decreasing, or beyond n) give unspecified results but no access
// outside [0, n) of in and out, or [0, num_segments] of offsets: every head position and
// gathered index is checked against the tile.
//
// Exclusive scans and the reduce are seeded (segmented/pairs_scan.cuh): each head's value is
// init op x. The exclusive result at a non-head element is the seeded inclusive value of
// the element before it, at a head init.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/device/arch/bulk_copy.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/segmented/pairs_scan.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::segmented_offsets {

using single_pass::maybe;
using single_pass::select_value;

enum class mode { inclusive, exclusive, reduce };

// Tiles of 256 threads x 8 rows x 16 bytes (8192 4-byte or 4096 8-byte values, 32 KiB),
// plus one head byte per element (8 or 4 KiB). Eight rows pay a tile's fixed latencies
// (the ticket, the search rounds and the look-back) half as often as four. The kernel
// sets no minimum of blocks per SM: holding its registers down makes the float exclusive
// kernels spill (docs/performance.md, "Plans and thresholds").
inline constexpr int block_threads = 256;
inline constexpr int tile_rows = 8;

template <class Acc>
inline constexpr int vec_of = static_cast<int>(16 / sizeof(Acc));

template <class Acc>
constexpr std::int64_t tile_items() {
  return std::int64_t{block_threads} * tile_rows * vec_of<Acc>;
}

// Whether this path takes a call: pointers to a 4- or 8-byte Acc itself (in, and out for
// the scans), 16-byte aligned.
template <class Acc, class P>
constexpr bool acc_pointer_v = std::is_pointer_v<P> && single_pass::vectorisable_v<Acc> &&
                               std::is_same_v<std::remove_cv_t<std::remove_pointer_t<P>>, Acc>;

// ---- the search ---------------------------------------------------------------------------
// Both bounds at once: the first half of the block looks for the first j in [0, S] with
// offsets[j] >= base (lower), the second half for the first j with offsets[j] > end
// (upper); S + 1 when there is none. Each round, a half's 128 threads probe 128 evenly
// spaced candidates of its interval [lo, hi) and count with a ballot those still before
// the bound; the counts of both halves are shared through `counts` (two sets, by round
// parity, so one barrier a round suffices), and every thread narrows both intervals
// alike, so all threads run the same number of rounds (the barrier needs them all).
// With non-monotone (invalid) offsets the counts mean nothing, but every interval still
// shrinks each round: the search ends, inside [0, S + 1].
template <int Threads, class Offsets>
TALLY_DEVICE TALLY_FORCEINLINE void find_tile_offsets(const Offsets& offsets, std::int64_t segments,
                                                      std::int64_t base, std::int64_t end,
                                                      int (&counts)[2][Threads / 32],
                                                      std::int64_t& first, std::int64_t& last) {
  constexpr int half = Threads / 2;
  constexpr int half_warps = half / 32;
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  const bool upper = static_cast<int>(threadIdx.x) >= half;
  const std::int64_t probe = static_cast<int>(threadIdx.x) - (upper ? half : 0);
  std::int64_t lo[2] = {0, 0};
  std::int64_t hi[2] = {segments + 1, segments + 1};
  // the m-th candidate of an interval of length len > half
  auto candidate = [](std::int64_t from, std::int64_t len, std::int64_t m) {
    return from + (m + 1) * len / (half + 1);
  };
  for (int round = 0; lo[0] < hi[0] || lo[1] < hi[1]; round ^= 1) {
    // (selects, not lo[upper]: an index known only at run time would put lo and hi in
    // local memory)
    const std::int64_t from = upper ? lo[1] : lo[0];
    const std::int64_t to = upper ? hi[1] : hi[0];
    const std::int64_t len = to - from;
    const std::int64_t p = len > half ? candidate(from, len, probe) : from + probe;
    bool before = false;  // offsets[p] is before the bound: the answer lies after p
    if (p < to) {
      const auto o = static_cast<std::int64_t>(offsets[p]);
      before = upper ? o <= end : o < base;
    }
    const unsigned ballot = __ballot_sync(warp::full_mask, before);
    if (warp::lane_id() == 0) counts[round][warp_id] = __popc(ballot);
    __syncthreads();  // every warp's count is stored before any thread sums them
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      int c = 0;
#pragma unroll
      for (int w = 0; w < half_warps; ++w) c += counts[round][s * half_warps + w];
      const std::int64_t f = lo[s], l = hi[s] - f;
      if (l > half) {
        lo[s] = c == 0 ? f : candidate(f, l, c - 1) + 1;
        hi[s] = c == half ? hi[s] : candidate(f, l, c);
      } else {
        lo[s] = hi[s] = f + c;  // every candidate was probed
      }
    }
  }
  first = lo[0];
  last = lo[1];
}

// ---- head sources -----------------------------------------------------------------------------
// Where a tile's heads come from:
//  - CSR offsets (found by the search above);
//  - uniform_offsets: segments of `len` elements, offsets[j] = j * len computed, not read
//    (the batched scans along the last axis): the tile's offsets follow by division, no
//    search;
//  - head flags of one byte (bool, int8, uint8: a head where the byte is not zero) copied
//    into the head bytes with cp.async, 16-byte aligned (the flag forms, segmented.cuh);
//  - keys: a head where equal(keys[i - 1], keys[i]) is false, any random-access iterator
//    and equality (the by-key forms).
template <class Offsets>
struct offsets_source {
  Offsets offsets;
  std::int64_t segments;
};
struct uniform_offsets {
  std::int64_t len;  // >= 1
  TALLY_DEVICE TALLY_FORCEINLINE std::int64_t operator[](std::int64_t j) const { return j * len; }
};
struct flags_source {
  const unsigned char* flags;
};
template <class Keys, class Equal>
struct keys_source {
  Keys keys;
  Equal equal;
  bool runs;  // the keys of 4 consecutive elements are read with one access (run_ready)
};
template <class Source>
struct is_offsets : std::false_type {};
template <class Offsets>
struct is_offsets<offsets_source<Offsets>> : std::true_type {};
template <class Source>
inline constexpr bool is_offsets_v = is_offsets<Source>::value;
template <class Source>
inline constexpr bool is_uniform_v = std::is_same_v<Source, offsets_source<uniform_offsets>>;
template <class Source>
inline constexpr bool is_keys_v = false;
template <class Keys, class Equal>
inline constexpr bool is_keys_v<keys_source<Keys, Equal>> = true;

template <class Flags>
inline constexpr bool byte_flags_v = [] {
  if constexpr (std::is_pointer_v<Flags>) {
    using f = std::remove_cv_t<std::remove_pointer_t<Flags>>;
    return std::is_integral_v<f> && sizeof(f) == 1;
  } else {
    return false;
  }
}();

TALLY_DEVICE TALLY_FORCEINLINE void copy_bytes_async_16(unsigned char* to, const unsigned char* from) {
  arch::copy_async_16(to, from);
}

// ---- per-element heads in shared memory ------------------------------------------------------
template <int Vec>
TALLY_DEVICE TALLY_FORCEINLINE void read_heads(const unsigned char* heads, int at, bool (&h)[Vec]) {
  if constexpr (Vec == 4) {
    const unsigned w = *reinterpret_cast<const unsigned*>(heads + at);
#pragma unroll
    for (int k = 0; k < 4; ++k) h[k] = ((w >> (8 * k)) & 0xffu) != 0;
  } else {
    static_assert(Vec == 2, "4- or 8-byte values: 4 or 2 per 16 bytes");
    const unsigned short w = *reinterpret_cast<const unsigned short*>(heads + at);
    h[0] = (w & 0xffu) != 0;
    h[1] = (w >> 8) != 0;
  }
}

// ---- a warp's rows of (head, value) pairs ----------------------------------------------------
// Step 2 of the kernel below, and step a of the pipelined segmented scan
// (segmented/pipelined.cuh): warp `warp_id` scans its rows of the staged tile as (head,
// value) pairs (the flag-augmented operator of core/segmented.hpp) within the lane,
// across the warp (a segmented log-step scan of the lane totals: lane l takes lane
// l - d's value only when no lane in between starts a segment), then rows chained, and
// writes its warp-local inclusive results back to the staged tile. Seeded: each head's
// value is init op x first (exclusive scans and the reduce). heads_of(r, v, h): the
// heads of the lane's vector v in row r. Returns the warp's reduction since its last head
// (of all its items if it has none); warp_head: whether it has a head; first_head: the
// warp-local index of its first head (L::warp_items if none): only the items before it
// take the warp's prefix.
template <class L, bool Seeded, class Acc, class Op, class HeadsOf>
TALLY_DEVICE TALLY_FORCEINLINE Acc scan_pair_rows(single_pass::vector_of<Acc, L::vec>* tile_values,
                                                  int warp_id, int lane, const HeadsOf& heads_of,
                                                  const Acc& init, Op& op, int& first_head,
                                                  bool& warp_head) {
  constexpr int Vec = L::vec;
  Acc warp_total;
  first_head = L::warp_items;
  warp_head = false;
  const unsigned lanes_before = (1u << lane) - 1u;
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    const int v = single_pass::staged_index<L>(warp_id, lane, r);
    Acc x[Vec];
    single_pass::read_staged_row<L>(tile_values, warp_id, lane, r, x);
    bool h[Vec];
    heads_of(r, v, h);
    if constexpr (Seeded) {
#pragma unroll
      for (int k = 0; k < Vec; ++k) x[k] = select_value(h[k], static_cast<Acc>(op(init, x[k])), x[k]);
    }
    bool lane_head = h[0];
    int lane_first = h[0] ? 0 : Vec;  // the lane's first head (Vec: none)
#pragma unroll
    for (int k = 1; k < Vec; ++k) {
      x[k] = select_value(h[k], x[k], static_cast<Acc>(op(x[k - 1], x[k])));
      lane_first = lane_first == Vec && h[k] ? k : lane_first;
      lane_head = lane_head || h[k];
    }
    const unsigned head_lanes = __ballot_sync(warp::full_mask, lane_head);
    // the last lane at or before this one that holds a head (-1: none)
    const int start = 31 - __clz(head_lanes & (lanes_before | (1u << lane)));
    Acc running = x[Vec - 1];
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const Acc earlier = warp::shuffle_up(running, static_cast<unsigned>(d));
      running = select_value(lane - d >= (start > 0 ? start : 0),
                             static_cast<Acc>(op(earlier, running)), running);
    }
    const Acc row_total = warp::shuffle_index(running, 31);
    const Acc before = warp::shuffle_up(running, 1u);  // lane l - 1's result (unused in lane 0)
    // this lane's prefix within the warp, for its elements before its first head: the
    // lanes before it (back to their segment's head), behind the rows before r if no
    // lane before it in this row has a head
    Acc prefix = before;
    bool has_prefix = lane > 0;
    if (r > 0) {
      const bool carry = (head_lanes & lanes_before) == 0;
      prefix = select_value(lane > 0,
                            select_value(carry, static_cast<Acc>(op(warp_total, before)), before),
                            warp_total);
      has_prefix = true;
    }
    bool seen = false;
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      seen = seen || h[k];
      x[k] = select_value(has_prefix && !seen, static_cast<Acc>(op(prefix, x[k])), x[k]);
    }
    single_pass::write_staged_row<L>(tile_values, warp_id, lane, r, x);
    if (r == 0) {
      warp_total = row_total;
    } else {
      warp_total = select_value(head_lanes != 0, row_total, static_cast<Acc>(op(warp_total, row_total)));
    }
    if (first_head == L::warp_items && head_lanes != 0) {  // warp-uniform
      const int head_lane = __ffs(static_cast<int>(head_lanes)) - 1;
      first_head = r * L::row_items + head_lane * Vec + __shfl_sync(warp::full_mask, lane_first, head_lane);
    }
    warp_head = warp_head || head_lanes != 0;
  }
  return warp_total;
}

// A scan's results for the lane's vector in row r, from the warp-local results that
// scan_pair_rows wrote back (after a barrier or __syncwarp: an exclusive scan reads the
// element before, another lane's): the warp's prefix goes in front of the items before
// its first head (has_prefix: there is one). Exclusive: the seeded inclusive value of the
// element before (the warp's prefix for the warp's first element), init at a head.
template <class L, bool Exclusive, class Acc, class Op, class HeadsOf>
TALLY_DEVICE TALLY_FORCEINLINE void finish_pair_row(const single_pass::vector_of<Acc, L::vec>* tile_values,
                                                    int warp_id, int lane, int r,
                                                    const HeadsOf& heads_of, const Acc& warp_prefix,
                                                    bool has_prefix, int first_head, const Acc& init,
                                                    Op& op, Acc (&x)[L::vec]) {
  constexpr int Vec = L::vec;
  const int v = single_pass::staged_index<L>(warp_id, lane, r);
  single_pass::read_staged_row<L>(tile_values, warp_id, lane, r, x);
  const int first_i = r * L::row_items + lane * Vec;  // warp-local index of x[0]
  if constexpr (!Exclusive) {
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      x[k] = select_value(has_prefix && first_i + k < first_head, static_cast<Acc>(op(warp_prefix, x[k])),
                          x[k]);
    }
  } else {
    bool h[Vec];
    heads_of(r, v, h);
    const Acc* values = reinterpret_cast<const Acc*>(tile_values);
    Acc earlier = first_i > 0 ? values[v * Vec - 1] : warp_prefix;
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      const int i = first_i + k;
      const Acc local = earlier;
      earlier = x[k];
      const Acc with_prefix =
          i > 0 && i - 1 < first_head && has_prefix ? static_cast<Acc>(op(warp_prefix, local)) : local;
      x[k] = select_value(h[k], init, with_prefix);
    }
  }
}

// ---- the kernel ----------------------------------------------------------------------------
// In: const Acc*, 16-byte aligned. Out: Acc* (16-byte aligned) for the scans; for the
// reduce any output iterator of num_segments results. init: the seed of the exclusive
// scans and of the reduce (unused by inclusive scans).
template <class Protocol, int Rows, int Vec, bool Deterministic, mode Mode, class Acc, class Out,
          class Source, class Op>
__global__ void __launch_bounds__(block_threads)
    offsets_kernel(const Acc* in, Out out, std::int64_t n, Source source, std::int64_t tiles,
                   Acc init, Op op, single_pass::tile_state<flagged<Acc>> state) {
  using L = single_pass::layout<block_threads, Rows, Vec, true>;
  using pair = flagged<Acc>;
  constexpr bool Seeded = Mode != mode::inclusive;
  static_assert(Mode != mode::reduce || is_offsets_v<Source>, "the reduce takes offsets");
  __shared__ single_pass::staged_tile<Acc, L> staged;
  __shared__ alignas(16) unsigned char heads[L::tile_items];
  __shared__ int counts[2][L::warps];
  __shared__ std::int64_t tile_index;
  __shared__ unsigned tile_epoch;
  __shared__ block::detail::uninitialized_array<pair, L::warps> warp_totals;
  __shared__ block::detail::uninitialized_array<Acc, L::warps> warp_prefixes;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  segmented_op<Op> pair_op{op};  // (the protocol takes it by reference)

  // 0. the tile
  std::int64_t tile = 0;
  unsigned epoch = 0u;
  if (tiles > 1) {
    if (threadIdx.x == 0) {
      const single_pass::ticket t = single_pass::draw_ticket(state.header, tiles);
      tile_index = t.tile;
      tile_epoch = t.epoch;
    }
    __syncthreads();  // every thread needs the tile index before it loads
    tile = tile_index;
    epoch = tile_epoch;
  }
  const std::int64_t base = tile * L::tile_items;
  const std::int64_t end = base + L::tile_items < n ? base + L::tile_items : n;
  const bool full = base + L::tile_items <= n;

  // 1. values to shared memory (a full tile by cp.async, not waited for yet: the search
  //    below overlaps the copies; a partial tile by plain loads, padded with x_{n-1})
  auto* tile_values = staged.data();
  if (full) {
#pragma unroll
    for (int r = 0; r < L::rows; ++r) {
      const int v = single_pass::staged_index<L>(warp_id, lane, r);
      single_pass::copy_async_16(&tile_values[v], in + base + static_cast<std::int64_t>(v) * Vec);
    }
  } else {
    single_pass::stage_tile<L>(tile_values, in, base, n, warp_id, lane);
  }
  std::int64_t first = 0, last = 0;  // (offsets) the offsets in the tile: [first, last)
  if constexpr (is_uniform_v<Source>) {
    // segments of len: each thread writes whole 16-byte words of head bytes, a head where
    // (base + i) % len == 0 (one division a word; no clearing, so no barrier before it)
    const std::int64_t len = source.offsets.len;
    for (int c = static_cast<int>(threadIdx.x); c < L::tile_items / 16; c += block_threads) {
      const std::int64_t at = base + 16 * c;
      std::int64_t m = at % len;  // position of `at` in its segment
      unsigned w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        if (m == 0 && at + k < end) w[k / 4] |= 1u << (8 * (k % 4));
        m = m + 1 == len ? 0 : m + 1;
      }
      reinterpret_cast<uint4*>(heads)[c] = make_uint4(w[0], w[1], w[2], w[3]);
    }
    // the offsets in the tile, for the reduce: j * len >= base from j = ceil(base / len),
    // j * len > end from j = end / len + 1
    const std::int64_t bound = source.segments + 1;
    first = (base + len - 1) / len;
    last = end / len + 1;
    first = first < bound ? first : bound;
    last = last < bound ? last : bound;
  } else if constexpr (is_offsets_v<Source>) {
    // no heads yet (each thread clears its 16-byte words; the search's barriers order
    // this before the marking below)
    static_assert(L::tile_items % 16 == 0, "the head bytes clear as 16-byte words");
    for (int i = static_cast<int>(threadIdx.x); i < L::tile_items / 16; i += block_threads) {
      reinterpret_cast<uint4*>(heads)[i] = make_uint4(0, 0, 0, 0);
    }
    find_tile_offsets<block_threads>(source.offsets, source.segments, base, end, counts, first, last);
    // mark the heads: offsets[j] for j in [first, last) lie in [base, end]; those < end and
    // j < S (offsets[S] ends the last segment) are heads. Eight loads in flight per thread.
    for (std::int64_t j0 = first; j0 < last; j0 += 8 * block_threads) {
      std::int64_t o[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const std::int64_t j = j0 + u * block_threads + threadIdx.x;
        o[u] = j < last && j < source.segments ? static_cast<std::int64_t>(source.offsets[j]) : -1;
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (o[u] >= base && o[u] < end) heads[o[u] - base] = 1;
      }
    }
  } else if constexpr (is_keys_v<Source>) {
    // a head where the key differs from the one before (element 0: step 2). Each thread
    // takes runs of 4 consecutive elements, consecutive threads consecutive runs
    // (coalesced): the run's keys in one access where the pointer allows it
    // (segmented/pairs_scan.cuh's runs), the key before it from the neighbour's run, read
    // again (an L1 hit); four runs are loaded before any is compared (loads in flight;
    // more would cost registers), and each run's 4 head bytes are stored as one word.
    using key_t = segmented::element_t<decltype(source.keys)>;
    constexpr int run = 4, runs_in_flight = 4;
    static_assert(L::tile_items % (run * runs_in_flight * block_threads) == 0, "whole rounds");
#pragma unroll 1
    for (int r0 = 0; r0 < L::tile_items / run; r0 += runs_in_flight * block_threads) {
      key_t k[runs_in_flight][run], before[runs_in_flight];
#pragma unroll
      for (int u = 0; u < runs_in_flight; ++u) {
        const std::int64_t i = base + run * (r0 + u * block_threads + static_cast<std::int64_t>(threadIdx.x));
        if (full && source.runs) {
          segmented::read_run<run>(source.keys, i, k[u]);
        } else {
#pragma unroll
          for (int e = 0; e < run; ++e) {
            if (i + e < end) k[u][e] = source.keys[i + e];
          }
        }
        if (i > 0 && i < end) before[u] = source.keys[i - 1];
      }
#pragma unroll
      for (int u = 0; u < runs_in_flight; ++u) {
        const int q = r0 + u * block_threads + static_cast<int>(threadIdx.x);  // the run
        const std::int64_t i = base + run * q;
        unsigned w = 0u;
#pragma unroll
        for (int e = 0; e < run; ++e) {
          const bool h = i + e > 0 && i + e < end &&
                         !static_cast<bool>(source.equal(e == 0 ? before[u] : k[u][e - 1], k[u][e]));
          w |= (h ? 1u : 0u) << (8 * e);
        }
        reinterpret_cast<unsigned*>(heads)[q] = w;
      }
    }
  } else {
    // the tile's flag bytes, copied like its values (a partial tile: byte loads, no head
    // past n)
    if (full) {
      for (int c = static_cast<int>(threadIdx.x); c < L::tile_items / 16; c += block_threads) {
        copy_bytes_async_16(heads + 16 * c, source.flags + base + 16 * c);
      }
    } else {
      for (int i = static_cast<int>(threadIdx.x); i < L::tile_items; i += block_threads) {
        heads[i] = base + i < n ? source.flags[base + i] : 0;
      }
    }
  }
  if (full) arch::wait_async_copies();  // this thread's copies landed
  __syncthreads();  // every head is marked (or copied) before any warp reads them

  // 2. each warp's rows (scan_pair_rows above). Element 0 starts a segment whatever its
  //    flag (the flag forms do not read flags[0]; with offsets[0] > 0 it is outside the
  //    segments, where an extra head changes nothing): written back for step 5, which this
  //    same thread runs for this vector.
  if (tile == 0 && threadIdx.x == 0) heads[0] = 1;
  int first_head = L::warp_items;
  bool warp_head = false;
  const auto heads_of = [&](int, int v, bool(&h)[Vec]) { read_heads<Vec>(heads, v * Vec, h); };
  const Acc warp_total = scan_pair_rows<L, Seeded>(tile_values, warp_id, lane, heads_of, init, op,
                                                   first_head, warp_head);

  // 3. the tile's aggregate pair
  if (lane == 0) warp_totals[warp_id] = pair{warp_head, warp_total};
  __syncthreads();  // the warp totals are stored before warp 0 reads them

  // 4. the tile's prefix (warp 0), as in the single-pass scan, on pairs
  if (warp_id == 0) {
    const pair total = warp_totals[lane < L::warps ? lane : L::warps - 1];
    const pair warp_inclusive = warp::inclusive_scan(total, pair_op);
    const pair aggregate = warp::shuffle_index(warp_inclusive, L::warps - 1);
    const pair warp_exclusive = warp::shuffle_up(warp_inclusive, 1u);  // unused in lane 0
    maybe<pair> prefix{aggregate, false};
    if (tile > 0) {
      prefix = {Protocol::template exclusive_prefix<Deterministic>(state.descriptors, epoch, tile,
                                                                  aggregate, pair_op),
                true};
    }
    if (tiles > 1 && lane == 0) {
      const pair inclusive = prefix.present ? pair_op(prefix.value, aggregate) : aggregate;
      state.descriptors.store(tile, single_pass::make_tag(epoch, single_pass::status_inclusive),
                              inclusive);
    }
    if (lane < L::warps) {
      // warp `lane`'s prefix value (present for every warp but tile 0's first): it reaches
      // only the warp's elements before its first head, which continue the prefix's segment
      const maybe<pair> p = lane == 0 ? prefix : single_pass::then(prefix, warp_exclusive, pair_op);
      if (p.present) warp_prefixes[lane] = p.value.value;
    }
  }
  __syncthreads();  // the warp prefixes are stored before any warp reads them

  // 5. results
  const bool has_prefix = tile > 0 || warp_id > 0;
  const Acc warp_prefix = has_prefix ? warp_prefixes[warp_id] : warp_total;  // (defined bits)
  if constexpr (Mode == mode::reduce) {
    // finish the elements before the warp's first head in shared memory ...
#pragma unroll
    for (int r = 0; r < L::rows; ++r) {
      if (has_prefix && r * L::row_items < first_head) {
        Acc x[Vec];
        single_pass::read_staged_row<L>(tile_values, warp_id, lane, r, x);
#pragma unroll
        for (int k = 0; k < Vec; ++k) {
          const int i = r * L::row_items + lane * Vec + k;
          x[k] = select_value(i < first_head, static_cast<Acc>(op(warp_prefix, x[k])), x[k]);
        }
        single_pass::write_staged_row<L>(tile_values, warp_id, lane, r, x);
      }
    }
    __syncthreads();  // ... and every element is final before any thread gathers
    // ... then one result per segment ending in the tile: segment k = j - 1 for the
    // offsets[j] in (base, end] (tile 0: [0, end]); init if it is empty
    // (four j per thread in flight: one segment per element would otherwise be a chain of
    // dependent loads; eight would cost registers, and so blocks per SM)
    const Acc* values = reinterpret_cast<const Acc*>(tile_values);
    const std::int64_t from = first > 1 ? first : 1;
    const std::int64_t to = last <= source.segments ? last : source.segments + 1;
    for (std::int64_t j0 = from; j0 < to; j0 += 4 * block_threads) {
      std::int64_t o[4], start[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const std::int64_t j = j0 + u * block_threads + threadIdx.x;
        o[u] = j < to ? static_cast<std::int64_t>(source.offsets[j]) : -1;
        start[u] = j < to ? static_cast<std::int64_t>(source.offsets[j - 1]) : 0;
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const std::int64_t j = j0 + u * block_threads + threadIdx.x;
        if (j >= to || o[u] > end || (o[u] <= base && tile > 0)) continue;
        out[j - 1] = start[u] < o[u] && o[u] > base ? values[o[u] - 1 - base] : init;
      }
    }
  } else {
    // the range a scan may write: the offsets' [offsets[0], offsets[S]) within [0, n)
    std::int64_t write_from = 0, write_to = n;
    if constexpr (is_offsets_v<Source>) {
      write_from = static_cast<std::int64_t>(source.offsets[0]);
      const auto to = static_cast<std::int64_t>(source.offsets[source.segments]);
      write_to = to < n ? to : n;
    }
    const bool inside = full && base >= write_from && base + L::tile_items <= write_to;
#pragma unroll
    for (int r = 0; r < L::rows; ++r) {
      const int v = single_pass::staged_index<L>(warp_id, lane, r);
      Acc x[Vec];
      finish_pair_row<L, Mode == mode::exclusive>(tile_values, warp_id, lane, r, heads_of,
                                                  warp_prefix, has_prefix, first_head, init, op, x);
      const std::int64_t at = base + static_cast<std::int64_t>(v) * Vec;
      if (inside) {
        single_pass::store_vector<Vec>(out, at, x);
      } else {
#pragma unroll
        for (int k = 0; k < Vec; ++k) {
          if (at + k >= write_from && at + k < write_to) out[at + k] = x[k];
        }
      }
    }
  }

  // Every 2^29 calls: zero the descriptors past this call's tiles (single_pass/tile_state.cuh).
  if (tiles > 1 && single_pass::is_clearing_epoch(epoch)) {
    for (std::int64_t i = tiles + tile * block_threads + threadIdx.x; i < state.capacity;
         i += tiles * block_threads) {
      state.descriptors.clear(i);
    }
  }
}

// ---- the host side ------------------------------------------------------------------------
// Calls launch(tiles, state) for a segmented call of n >= 1 elements in tiles of `items`:
// checks the tile count (descriptors index tiles in 32 bits) and takes the state of
// (head, value) pairs (no caller storage). For this file's kernel and the pipelined one
// (segmented/pipelined.cuh).
template <class Acc, class Launch>
void with_pair_state(const char* function, std::int64_t n, std::int64_t items, const options& o,
                     Launch&& launch) {
  const std::int64_t tiles = ceil_div(n, items);
  if (tiles > 0x7fffffff) {
    throw_invalid(function, "n", "needs more than 2^31 - 1 tiles of " + std::to_string(items) +
                                     " elements");
  }
  single_pass::with_tile_state<flagged<Acc>>(
      function, "(none: segmented scans take no caller storage)", tiles, 0, o,
      [&](single_pass::tile_state<flagged<Acc>> state) { launch(tiles, state); });
}

// One launch over [0, n), n >= 1 (and segments >= 1 for offsets); the caller checked the
// arguments and the pointers (acc_pointer_v, 16-byte alignment; flags: byte_flags_v).
template <mode Mode, class Protocol, int Rows = tile_rows, class Acc, class Out, class Source, class Op>
void run(const char* function, const Acc* in, Out out, std::int64_t n, Source source, Acc init,
         Op op, const options& o) {
  using pair = flagged<Acc>;
  constexpr int vec = vec_of<Acc>;
  constexpr std::int64_t items = std::int64_t{block_threads} * Rows * vec;
  with_pair_state<Acc>(
      function, n, items, o, [&](std::int64_t tiles, single_pass::tile_state<pair> state) {
        const auto grid = static_cast<unsigned>(tiles);
        // the deterministic look-back only where it differs (single_pass::launch)
        if constexpr (Protocol::has_deterministic_mode && !single_pass::exact_values<Acc>::value) {
          if (o.deterministic) {
            offsets_kernel<Protocol, Rows, vec, true, Mode>
                <<<grid, block_threads, 0, o.stream>>>(in, out, n, source, tiles, init, op, state);
            TALLY_CUDA_CHECK_LAUNCH("offsets_kernel", function);
            return;
          }
        }
        offsets_kernel<Protocol, Rows, vec, false, Mode>
            <<<grid, block_threads, 0, o.stream>>>(in, out, n, source, tiles, init, op, state);
        TALLY_CUDA_CHECK_LAUNCH("offsets_kernel", function);
      });
}

}  // namespace tally::detail::segmented_offsets
