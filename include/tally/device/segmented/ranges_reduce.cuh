// tally/device/segmented/ranges_reduce.cuh -- the segmented reduce over CSR offsets, one
// long RANGE of elements a block, for 16-byte aligned pointers to 4- and 8-byte values.
//
// Why a kernel of its own. A reduce reads the values once and writes one value a segment:
// its floor is half a copy's bytes. The offsets tile kernel (segmented/tile_heads.cuh, mode
// reduce) pays, for every tile of 8192 values, a ticket, a search of the offsets and a
// look-back, and scans every element as a (head, value) pair, with no stores to hide
// behind. Here a block pays the ticket, the search and the look-back once a range of up
// to 48 sub-tiles, its copies are in flight while it works, and a thread folds its
// elements with one operation each where they hold no head. A range whose segments
// average 2 KiB or more, reduced with a commutative operator that has an identity, skips
// the sub-tiles: its pieces between boundaries are folded like a plain reduce, by warps
// ("The pieces" below). The public call takes this kernel for large inputs or long mean
// segments (segmented.cuh); below, the tile kernel is as fast or faster
// (docs/performance.md, "Plans and thresholds").
//
// Each block:
//   0. draws its range's ticket (single_pass/tile_state.cuh: ranges start in ticket order, so a range
//      looks back only at ranges that are running or done); one barrier.
//   1. starts the bulk copies of its first sub-tiles (the copy engine, into a ring of
//      `buffers` in shared memory) and, while they fly, finds the offsets that fall in its
//      range [base, end) (segmented_offsets::find_tile_offsets: offsets[j] in [base, end]
//      for j in [first, last)). With few enough of them (pieces_take) and a commutative
//      operator that has an identity, it folds the range's pieces instead of steps 1-2
//      (fold_pieces below) and goes on with step 3. Else it sets one bit per boundary offsets[j] in [base, end),
//      j <= S, in a bitmap of the range (offsets[S] is a boundary too: the elements after
//      the last segment start a run of their own that no result reads), and notes for
//      each sub-tile the first j whose segment ends in it (results_from).
//   2. for each sub-tile of 256 threads x 4 rows x 16 bytes (4096 4-byte or 2048 8-byte
//      values) in order:
//      a. the next copy is started into the buffer freed last; this sub-tile's is waited
//         for (its FULL mbarrier); each thread folds its I = 16 (4-byte) or 8 (8-byte)
//         consecutive elements into one (head, value) pair, seeded (a head's value is
//         init op x): a plain fold where the chunk has no head;
//      b. a warp scan of the pairs gives each thread its prefix where its warp holds a
//         segment's end (else a warp reduce gives the warp's total); the warps' totals,
//         behind the carry of the sub-tiles before, give the warps' prefixes and the
//         next carry (thread 0);
//      c. each thread that holds a segment's last element writes that element's scanned
//         value back in place;
//      d. the segments that END in the sub-tile are gathered: segment j - 1 for the
//         offsets[j] in (s, s + T] (block 0 also takes those equal to 0), init for an
//         empty segment. The one segment that began before the range needs the ranges
//         before it: its part in the range is kept for step 3. The offsets of d are
//         loaded before a (their latency hides behind a-c).
//   3. the range's aggregate pair (the carry after its last sub-tile) -> its prefix by the
//      look-back of the single-pass scans (ranges as tiles; the flag-augmented operator
//      ends the walk at the first range with a head); the kept segment's result is
//      prefix op its part. A range with a head and no kept segment publishes its
//      inclusive value at once and waits for nobody.
//
// Correct for any associative operator: every combination is in element order (the warp
// reduce keeps operand order). With options.deterministic the look-back folds strictly
// left to right (single_pass/decoupled_lookback.cuh), and the cut into ranges depends only on n and
// the device: float results identical run to run.
//
// Invalid offsets (decreasing, or beyond n) give unspecified results but no access
// outside [0, n) of the values, [0, S] of the offsets or [0, S) of out: every bit, staged
// index and segment index is checked.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/device/arch/mbarrier.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/occupancy.cuh"
#include "tally/device/detail/reduce_common.cuh"
#include "tally/device/segmented/tile_heads.cuh"
#include "tally/device/single_pass/pipelined.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::segmented_reduce {

using single_pass::maybe;

inline constexpr int block_threads = 256;
inline constexpr int sub_tile_rows = 4;
// The longest range, in sub-tiles: its bitmap (one bit an element) is 24 KiB for 4-byte
// values. Longer ranges pay the ticket, search and look-back less often; 48 sub-tiles
// make 2^26 4-byte values (or 2^25 8-byte ones) one wave of ranges rather than two
// (docs/performance.md, "Plans and thresholds").
inline constexpr int max_sub_tiles = 48;
// Offsets a thread loads per round of a sub-tile's gather (more rounds where segments are
// shorter than 4096 / 256 / gather_loads elements).
inline constexpr int gather_loads = 2;

// A ring of `buffers` staged sub-tiles (dynamic shared memory: 48 KiB), buffers - 1 of
// them in flight while one is worked on; three blocks an SM (with the bitmap, 73 KiB of
// shared memory and at most 85 registers a thread).
inline constexpr int buffers = 3;
inline constexpr int min_blocks = 3;

template <class Acc>
using layout = single_pass::layout<block_threads, sub_tile_rows, segmented_offsets::vec_of<Acc>, true>;

template <class Acc>
TALLY_HOST_DEVICE constexpr std::int64_t sub_tile_items() {
  return layout<Acc>::tile_items;
}
template <class Acc>
TALLY_HOST_DEVICE constexpr int bitmap_words() {
  return static_cast<int>(sub_tile_items<Acc>() * max_sub_tiles / 32);
}

// Whether this path takes a call: in is a 16-byte aligned pointer to a 4- or 8-byte Acc.
template <class Acc, class In>
bool takes(In in) {
  if constexpr (segmented_offsets::acc_pointer_v<Acc, In>) {
    return single_pass::aligned_16(in);
  } else {
    return false;
  }
}

// ---- a range with few boundaries: its pieces -----------------------------------------------
// Where the operator is commutative and has an identity (reduction::strided_ok_v: plus,
// minimum, maximum ... on arithmetic types) and a range holds few enough boundaries
// (segments of 2 KiB or more on average: pieces_take below), the range is cut at its c
// boundaries bounds[0..c) = offsets[first..last) (all in [base, end]) into c + 1 pieces,
// and each piece is reduced without the sub-tiles' machinery:
//   piece 0     = [base, bounds[0])        the end of a segment that began before the range
//                                          (the kept segment) or nothing (no segment there)
//   piece k     = [bounds[k-1], bounds[k]) segment first + k - 1, whole in the range
//   piece c     = [bounds[c-1], end)       the start of a segment that ends after it
//   (c = 0: the whole range is piece 0.)
// Since no order is needed, the block reads the range ROW by row as the plain reduce does:
// a row is 256 16-byte vectors, one a thread (piece_loads rows in flight a thread, no
// barrier per sub-tile); warp w's part of a row is its 32 consecutive vectors, a SPAN of
// 32 x Vec elements. Each thread keeps one accumulator a lane of its vector. A warp is in
// one piece k at a time (its positions only grow: first its rows of the sub-tiles already
// copied into the ring, then the strided rows after them, the input's partial last vector
// in its row); a span wholly before the next boundary is folded with one operation an
// element (most spans: a range holds at most one boundary a row or so). At a boundary the
// warp reduces its lanes into its SLOT (k, w) and goes on to piece k + 1: at the start of
// a span that begins at or after the boundary, or, where the boundary falls inside the
// span, after folding the span's elements before it (element by element, several times
// where a span holds several boundaries). So every warp passes every boundary of the
// range once; a slot is written once. After the rows, piece p is slot (p, 0) op ... op
// (p, 7), in that order. Nothing depends on timing, so float results are identical run to
// run (not equal, bit for bit, to the sub-tile path's: another grouping).
//
// The sub-tile path stays for the rest: non-commutative operators (element order), and
// ranges with many boundaries, where each one's cost to every warp outweighs the
// sub-tiles' work.
template <class Acc>
TALLY_HOST_DEVICE constexpr int max_pieces() {
  // the slots, warps x sizeof(Acc) bytes a piece, in a 16 KiB buffer of the ring: 512
  // pieces of 4-byte values, 256 of 8-byte ones
  return static_cast<int>(sizeof(single_pass::staged_tile<Acc, layout<Acc>>) / sizeof(Acc) /
                          layout<Acc>::warps);
}
// The shortest mean piece that the pieces take, in bytes: every boundary costs every warp a
// reduce of its lanes, and a boundary inside a span a fold element by element. Near 2 KiB
// the two paths cost about the same, above it the pieces win. The rule is per range and
// the ranges make one wave, so the slowest range sets the time: a higher rule sends some
// ranges of random lengths to the sub-tiles (docs/performance.md, "Plans and
// thresholds").
inline constexpr std::int64_t min_piece_bytes = 2048;
// Whether a range of `items` elements with c boundaries takes the pieces.
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE bool pieces_take(std::int64_t c, std::int64_t items) {
  return c < max_pieces<Acc>() && c * min_piece_bytes <= items * static_cast<std::int64_t>(sizeof(Acc));
}
// A warp's 32 values folded, for a commutative operator (no operand order to keep): the
// result in every lane, by a butterfly of shuffles. This is warp::reduce without its
// operand-order select, which a commutative operator does not need (warp::reduce gives
// the same result here).
template <class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE Acc fold_lanes(Acc v, Op op) {
#pragma unroll
  for (int m = 1; m < 32; m *= 2) v = static_cast<Acc>(op(v, warp::shuffle_xor(v, m)));
  return v;
}
// *slot = v in lane 0 only, by one predicated store instruction. Not `if (lane == 0)`: in
// the walk of fold_pieces the compiler hoists that test out of the loops, making one copy
// of the walk for lane 0 and one for the other lanes, so that the warp's shuffles run
// diverged, on their slow path. An asm statement has no branch to hoist. (No
// "memory" clobber, so that the compiler may still move the walk's loads across it: the
// barrier after the walk orders the store before any thread reads the slots.)
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void store_if_lane_0(Acc* slot, Acc v, int lane) {
  static_assert(sizeof(Acc) == 4 || sizeof(Acc) == 8, "4- and 8-byte values");
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(slot));
  if constexpr (sizeof(Acc) == 4) {
    unsigned bits;
    memcpy(&bits, &v, 4);
    asm volatile("{ .reg .pred p; setp.eq.s32 p, %0, 0; @p st.shared.b32 [%1], %2; }" ::"r"(lane),
                 "r"(address), "r"(bits));
  } else {
    unsigned long long bits;
    memcpy(&bits, &v, 8);
    asm volatile("{ .reg .pred p; setp.eq.s32 p, %0, 0; @p st.shared.b64 [%1], %2; }" ::"r"(lane),
                 "r"(address), "l"(bits));
  }
}
// Vectors a thread loads before it folds any (in flight together): with three blocks an SM,
// 72 KiB of loads an SM (more would spill registers for 8-byte values).
inline constexpr int piece_loads = 6;

// The pieces of range [base, end) (steps above), for the block; pieces_take(c = last -
// first, end - base). `staged` sub-tiles (from base) are in ring buffers 0 .. staged - 1,
// their copies started (full[b] completes them); ring buffer `buffers - 1` is free and
// holds the slots; `bounds` holds the c boundaries, relative to base. Writes the results of
// the segments that end in the range, and leaves the range's aggregate pair, the kept
// segment and its part for the look-back (step 3 of the kernel) in `aggregate`,
// `kept_segment` and `kept_part`; the caller's barrier orders them before that step.
template <class Acc, class Out, class Offsets, class Op>
TALLY_DEVICE void fold_pieces(const Acc* in, Out out, Offsets offsets, std::int64_t segments,
                              std::int64_t base, std::int64_t end, std::int64_t first, std::int64_t last,
                              Acc init, Op op, single_pass::staged_tile<Acc, layout<Acc>>* ring,
                              unsigned long long* full, int staged, int* bounds,
                              flagged<Acc>& aggregate, std::int64_t& kept_segment, Acc& kept_part) {
  using L = layout<Acc>;
  constexpr int Vec = L::vec;
  constexpr int T = static_cast<int>(L::tile_items);
  constexpr int span_items = 32 * Vec;                        // a warp's part of a row
  constexpr int rows_per_sub_tile = T / (block_threads * Vec);  // a staged sub-tile's rows
  constexpr int never = INT32_MAX;
  // Positions relative to base: a range holds at most max_sub_tiles x T elements.
  static_assert(std::int64_t{max_sub_tiles} * T < INT32_MAX / 2, "positions in a range fit an int");
  const int c = static_cast<int>(last - first);
  const int end_at = static_cast<int>(end - base);
  const int t = static_cast<int>(threadIdx.x);
  const int lane = warp::lane_id();
  const int warp_id = t / 32;
  for (int b = t; b < c; b += block_threads) {
    // (clamped: invalid offsets give unspecified results, not positions outside the range)
    const auto o = static_cast<std::int64_t>(offsets[first + b]) - base;
    bounds[b] = static_cast<int>(o < 0 ? 0 : o > end_at ? end_at : o);
  }
  __syncthreads();  // every bound is stored before any warp walks its rows

  // This warp's piece k, the position where piece k + 1 begins (never for the last piece)
  // and the end of the fast path (the sooner of that and the range's end).
  Acc* slots = reinterpret_cast<Acc*>(ring[buffers - 1].data());  // [piece][warp]
  int k = 0;
  int next = c > 0 ? bounds[0] : never;
  int limit = next < end_at ? next : end_at;
  Acc acc[Vec];
#pragma unroll
  for (int w = 0; w < Vec; ++w) acc[w] = identity<Op, Acc>();
  // piece k is done for this warp (every lane): its lanes reduced into slot (k, warp), on
  // to piece k + 1
  const auto advance = [&] {
    Acc v = acc[0];
#pragma unroll
    for (int w = 1; w < Vec; ++w) v = static_cast<Acc>(op(v, acc[w]));
    v = fold_lanes(v, op);
    store_if_lane_0(&slots[k * L::warps + warp_id], v, lane);
#pragma unroll
    for (int w = 0; w < Vec; ++w) acc[w] = identity<Op, Acc>();
    ++k;  // (k reaches c + 1 at most: next is never from c on)
    next = k < c ? bounds[k] : never;
    limit = next < end_at ? next : end_at;
  };
  // this lane's elements x at positions p .. p + Vec - 1 that lie in [from, to)
  const auto fold_between = [&](const Acc (&x)[Vec], bool valid, int p, int from, int to) {
#pragma unroll
    for (int w = 0; w < Vec; ++w) {
      if (valid && p + w >= from && p + w < to) acc[w] = static_cast<Acc>(op(acc[w], x[w]));
    }
  };
  // One span of the warp, from position `span` (every lane of the warp, together): this
  // lane's vector x at position p (`valid`: it holds elements; those at end or after are
  // padding).
  const auto take_span = [&](const Acc (&x)[Vec], bool valid, int p, int span) {
    // (every condition below is the same in every lane: the branches are the warp's)
    if (span + span_items > limit) {
      while (next <= span) advance();  // pieces that end before the span: nothing of it
      if (span + span_items > limit) {
        // a boundary, or the range's end, inside the span: element by element
        int from = span;
        while (next < span + span_items) {
          fold_between(x, valid, p, from, limit);
          from = next;
          advance();
        }
        fold_between(x, valid, p, from, end_at);
        return;
      }
    }
    if (valid) {  // the whole span in piece k (most spans)
#pragma unroll
      for (int w = 0; w < Vec; ++w) acc[w] = static_cast<Acc>(op(acc[w], x[w]));
    }
  };

  // the strided rows after the staged sub-tiles: vector q holds positions q * Vec ..
  // q * Vec + Vec - 1 (absolute); the input's last, partial vector (q_end, where end is not
  // a multiple of Vec) is read element by element, in its row like the others, so that
  // every warp's positions only grow
  const uint4* vectors = reinterpret_cast<const uint4*>(in);
  const std::int64_t q_end = end / Vec;                 // whole vectors before it
  const std::int64_t q_stop = (end + Vec - 1) / Vec;   // ... and the partial one
  constexpr std::int64_t stride = piece_loads * block_threads;
  std::int64_t q = (base + std::int64_t{staged} * T) / Vec + t;
  uint4 raw[piece_loads];
  const auto load = [&](std::int64_t from) {
#pragma unroll
    for (int u = 0; u < piece_loads; ++u) {
      if (from + u * block_threads < q_end) raw[u] = __ldg(vectors + from + u * block_threads);
    }
  };
  load(q);  // (in flight while the staged sub-tiles are folded)
  for (int b = 0; b < staged; ++b) {
    pipelined::mbarrier_wait(&full[b], 0u);  // landed (its first and only copy)
#pragma unroll
    for (int r = 0; r < rows_per_sub_tile; ++r) {
      const int v = r * block_threads + t;  // this thread's vector of the sub-tile's row r
      Acc x[Vec];
#pragma unroll
      for (int w = 0; w < Vec; ++w) x[w] = ring[b].data()[v].v[w];
      const int p = b * T + v * Vec;
      take_span(x, true, p, p - lane * Vec);
    }
  }
  // (the loop runs while the WARP's first vector is before q_stop, not each lane's: every
  // lane of a warp takes every span, since the warp reduces its lanes together)
  for (; q - lane < q_stop; q += stride) {
#pragma unroll
    for (int u = 0; u < piece_loads; ++u) {
      const std::int64_t at = q + u * block_threads;
      Acc x[Vec];
      memcpy(x, &raw[u], sizeof(x));
      if (at == q_end && q_end < q_stop) {  // the partial vector (one lane of the range)
#pragma unroll
        for (int w = 0; w < Vec; ++w) x[w] = at * Vec + w < end ? in[at * Vec + w] : identity<Op, Acc>();
      }
      const int p = static_cast<int>(at * Vec - base);
      take_span(x, at < q_stop, p, p - lane * Vec);
    }
    load(q + stride);  // the next round (the other warps' loads fly meanwhile)
  }
  advance();  // this warp's last piece; the ones after it got nothing from it
  for (int p = k; p <= c; ++p) {
    if (lane == 0) slots[p * L::warps + warp_id] = identity<Op, Acc>();
  }
  __syncthreads();  // every slot is stored before the pieces are summed

  // The pieces: thread t sums pieces t, t + 256, ... (the warps' slots in order).
  for (int p = t; p <= c; p += block_threads) {
    Acc r = slots[p * L::warps];
#pragma unroll
    for (int w = 1; w < L::warps; ++w) r = static_cast<Acc>(op(r, slots[p * L::warps + w]));
    // the range's aggregate: (no head, piece 0) if no boundary lies before end, else
    // (head, init op the piece after the last boundary before end)
    const bool before_end = p > 0 && bounds[p - 1] < end_at;
    if (p == 0 ? c == 0 || bounds[0] >= end_at : before_end && (p == c || bounds[p] >= end_at)) {
      aggregate = p > 0 ? flagged<Acc>{true, static_cast<Acc>(op(init, r))} : flagged<Acc>{false, r};
    }
    const std::int64_t j = first + p;  // piece p >= 1 ends at offsets[j]: segment j - 1
    if (p == 0) {
      // the end of a segment that began before the range, if one ends here (a boundary
      // at base belongs to the range before)
      if (c > 0 && first >= 1 && bounds[0] > 0) {
        kept_segment = first - 1;
        kept_part = r;
      }
    } else if (p < c && j <= segments && (bounds[p] > 0 || base == 0)) {
      out[j - 1] = bounds[p - 1] >= bounds[p] ? init : static_cast<Acc>(op(init, r));
    }
  }
}

template <class Protocol, bool Deterministic, class Acc, class Out, class Offsets, class Op>
__global__ void __launch_bounds__(block_threads, min_blocks)
    ranges_kernel(const Acc* in, Out out, std::int64_t n, Offsets offsets, std::int64_t segments,
                  std::int64_t range_items, std::int64_t ranges, Acc init, Op op,
                  single_pass::tile_state<flagged<Acc>> state) {
  using L = layout<Acc>;
  using pair = flagged<Acc>;
  constexpr int Vec = L::vec;
  constexpr std::int64_t T = L::tile_items;
  // the ring of `buffers` staged sub-tiles (dynamic shared memory: more than the 48 KiB a
  // kernel may declare statically), 128-byte aligned like the scans' staged tiles
  extern __shared__ __align__(128) unsigned char dynamic_shared[];
  auto* ring = reinterpret_cast<single_pass::staged_tile<Acc, L>*>(dynamic_shared);
  __shared__ unsigned bits[bitmap_words<Acc>()];  // (by pieces: the bounds)
  static_assert(max_pieces<Acc>() <= bitmap_words<Acc>(), "the bounds fit in the bitmap's words");
  __shared__ int counts[2][L::warps];
  __shared__ unsigned long long full[buffers];  // a phase per copy into the buffer
  __shared__ std::int64_t range_index;
  __shared__ unsigned range_epoch;
  __shared__ block::detail::uninitialized_array<pair, L::warps> warp_totals;
  __shared__ block::detail::uninitialized_array<pair, 2> carries;  // by sub-tile parity
  __shared__ std::int64_t results_from[max_sub_tiles + 1];
  __shared__ std::int64_t kept_segment;  // the segment that began before the range (-1: none)
  __shared__ block::detail::uninitialized_array<Acc, 1> kept_part;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  segmented_op<Op> pair_op{op};  // (the protocol takes it by reference)

  // 0. the range
  std::int64_t range = 0;
  unsigned epoch = 0u;
  if (ranges > 1) {
    if (threadIdx.x == 0) {
      const single_pass::ticket t = single_pass::draw_ticket(state.header, ranges);
      range_index = t.tile;
      range_epoch = t.epoch;
    }
    __syncthreads();  // every thread needs the range before it loads
    range = range_index;
    epoch = range_epoch;
  }
  const std::int64_t base = range * range_items;
  const std::int64_t end = base + range_items < n ? base + range_items : n;
  const int sub_tiles = static_cast<int>((end - base + T - 1) / T);

  // Starts sub-tile st's copy into its buffer of the ring: a whole one by ONE bulk copy
  // (cp.async.bulk, the copy engine; thread 0), which completes the phase of the buffer's
  // FULL mbarrier with its bytes; the input's last, partial one by plain loads of every
  // thread, padded with x_{n-1} (no head in the padding; no result reads it), which reach
  // the other threads through the barriers between this call and the sub-tile's turn (it
  // is issued at least one sub-tile ahead, or before the search); thread 0 then completes
  // the phase without bytes.
  const auto issue = [&](int st) {
    auto* values = ring[st % buffers].data();
    unsigned long long* bar = &full[st % buffers];
    const std::int64_t s = base + std::int64_t{st} * T;
    if (s + T <= n) {
      if (threadIdx.x == 0) {
        constexpr unsigned bytes = static_cast<unsigned>(T * sizeof(Acc));
        pipelined::mbarrier_expect(bar, bytes);
        pipelined::bulk_copy(values, in + s, bytes, bar);
        pipelined::mbarrier_arrive(bar);
      }
    } else {
      single_pass::stage_tile<L>(values, in, s, n, warp_id, lane);
      if (threadIdx.x == 0) pipelined::mbarrier_arrive(bar);
    }
  };
  if (threadIdx.x == 0) {
#pragma unroll
    for (int b = 0; b < buffers; ++b) pipelined::mbarrier_init(&full[b], 1);
    // the initialisations are visible to the copy engine before the first copy
    arch::fence_mbarrier_init();
  }
  for (int st = 0; st < buffers - 1 && st < sub_tiles; ++st) issue(st);

  // 1. the range's boundaries (the search's barriers order kept_segment's initialisation
  //    before any write of it)
  if (threadIdx.x == 0) kept_segment = -1;
  std::int64_t first = 0, last = 0;
  segmented_offsets::find_tile_offsets<block_threads>(offsets, segments, base, end, counts, first, last);
  // Few boundaries, and an operator that needs no element order: the pieces (above).
  bool by_pieces = false;  // (the same in every thread: first and last are)
  if constexpr (reduction::strided_ok_v<Op, Acc>) {
    by_pieces = pieces_take<Acc>(last - first, end - base);
    if (by_pieces) {
      fold_pieces(in, out, offsets, segments, base, end, first, last, init, op, ring, full,
                  sub_tiles < buffers - 1 ? sub_tiles : buffers - 1, reinterpret_cast<int*>(bits),
                  carries[sub_tiles & 1], kept_segment, kept_part[0]);
      __syncthreads();  // the aggregate and the kept segment are stored before step 3 reads them
    }
  }
  if (!by_pieces) {
    // A bitmap of the boundaries, cleared by each thread's words, and where each sub-tile's
    // results begin: results_from[st] = the first j whose boundary offsets[j] ends a
    // segment in sub-tile st or later (`last` is known only now).
    for (int w = static_cast<int>(threadIdx.x); w < bitmap_words<Acc>(); w += block_threads) bits[w] = 0u;
    for (int st = static_cast<int>(threadIdx.x); st <= max_sub_tiles; st += block_threads) {
      results_from[st] = last;
    }
    __syncthreads();  // the bitmap is clear and results_from holds `last` everywhere before
                      // any thread marks a bit or lowers an entry
    // The sub-tile in which offsets[j] (j >= 1) ends segment j - 1: its last element
    // offsets[j] - 1 lies there; -1 for a boundary at or before base (the range before
    // takes it), except that block 0 takes those at 0 (empty segments: init).
    const auto sub_tile_of = [&](std::int64_t j, std::int64_t e) -> int {
      if (j < 1) return -1;
      if (e > base) return static_cast<int>((e - 1 - base) / T);
      return base == 0 ? 0 : -1;
    };
    // Eight offsets in flight per thread (and the one before each, an L1 hit, for the
    // sub-tile of the previous boundary).
    for (std::int64_t j0 = first; j0 < last; j0 += 8 * block_threads) {
      std::int64_t o[8], before[8];
  #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const std::int64_t j = j0 + u * block_threads + threadIdx.x;
        const bool in = j < last && j <= segments;
        o[u] = in ? static_cast<std::int64_t>(offsets[j]) : -1;
        before[u] = in && j > first ? static_cast<std::int64_t>(offsets[j - 1]) : -1;
      }
  #pragma unroll
      for (int u = 0; u < 8; ++u) {
        const std::int64_t j = j0 + u * block_threads + threadIdx.x;
        if (j >= last || j > segments) continue;
        if (o[u] >= base && o[u] < end) {
          const auto i = static_cast<unsigned>(o[u] - base);
          atomicOr(&bits[i / 32], 1u << (i % 32));
        }
        // the sub-tiles whose results begin at j: those after the previous boundary's
        // (clamped: invalid offsets must not index outside results_from)
        int to = sub_tile_of(j, o[u]);
        int from = j > first ? sub_tile_of(j - 1, before[u]) : -1;
        to = to < sub_tiles ? to : sub_tiles - 1;
        from = from >= -1 ? from : -1;
        for (int st = from + 1; st <= to; ++st) results_from[st] = j;
      }
    }
    __syncthreads();  // every bit and every results_from set before any warp reads them

    // 2. the sub-tiles, in order. carries[st & 1]: the range's pair before sub-tile st
    //    (absent before the first: st == 0).
    constexpr int I = static_cast<int>(T / block_threads);  // a thread's consecutive elements
    constexpr int V = I / Vec;                               // ... in V vectors
    static_assert(32 % I == 0, "a thread's heads are I bits of one bitmap word");
    if (threadIdx.x == 0) carries[0] = pair{false, init};  // (defined bits; never combined)
    for (int st = 0; st < sub_tiles; ++st) {
      const std::int64_t s = base + std::int64_t{st} * T;
      const std::int64_t s_end = s + T < end ? s + T : end;
      // The next sub-tile's copies go into the other buffer (free since the last barrier
      // of the sub-tile before) and fly while this one is worked on.
      if (st + buffers - 1 < sub_tiles) issue(st + buffers - 1);
      // The first round of the gather's offsets, loaded now: their latency hides behind a-c.
      const std::int64_t j_from = results_from[st];
      const std::int64_t j_to = results_from[st + 1] > j_from ? results_from[st + 1] : j_from;
      std::int64_t e[gather_loads], start[gather_loads];
      const auto load_round = [&](std::int64_t j0) {
  #pragma unroll
        for (int u = 0; u < gather_loads; ++u) {
          const std::int64_t j = j0 + u * block_threads + threadIdx.x;
          const bool in = j < j_to && j >= 1 && j <= segments;
          e[u] = in ? static_cast<std::int64_t>(offsets[j]) : 0;
          start[u] = in ? static_cast<std::int64_t>(offsets[j - 1]) : 0;
        }
      };
      load_round(j_from);

      // a. this thread's I consecutive elements and their heads (bits c .. c + I - 1 of the
      //    range's bitmap), seeded (a head's value is init op x), folded into one pair
      auto* values = ring[st % buffers].data();
      pipelined::mbarrier_wait(&full[st % buffers], static_cast<unsigned>(st / buffers) & 1u);  // landed
      const unsigned c = static_cast<unsigned>(s - base) + threadIdx.x * I;
      const unsigned heads = (bits[c / 32] >> (c % 32)) & (I == 32 ? ~0u : (1u << (I % 32)) - 1u);
      // element k of the chunk, seeded (read from shared memory again in c: nothing of it
      // lives across the barrier)
      const auto element = [&](const single_pass::vector_of<Acc, Vec>(&w)[V], int k) {
        const Acc v = w[k / Vec].v[k % Vec];
        return (heads >> k) & 1u ? static_cast<Acc>(op(init, v)) : v;
      };
      const auto read_chunk = [&](single_pass::vector_of<Acc, Vec>(&w)[V]) {
  #pragma unroll
        for (int v = 0; v < V; ++v) w[v] = values[threadIdx.x * V + v];
      };
      // (fast path: a chunk without heads is a plain fold, 1 operation an element)
      pair mine;
      {
        single_pass::vector_of<Acc, Vec> w[V];
        read_chunk(w);
        if (heads == 0u) {
          Acc t = w[0].v[0];
  #pragma unroll
          for (int k = 1; k < I; ++k) t = static_cast<Acc>(op(t, w[k / Vec].v[k % Vec]));
          mine = pair{false, t};
        } else {
          mine = pair{(heads & 1u) != 0, element(w, 0)};
  #pragma unroll
          for (int k = 1; k < I; ++k) mine = pair_op(mine, pair{((heads >> k) & 1u) != 0, element(w, k)});
        }
      }
      // The elements that end a segment (a boundary after them) and the sub-tile's last
      // element: their scanned values are written back in c, for the gather.
      const unsigned after = c + I;  // the bit after the chunk (none past the bitmap)
      const unsigned next = after < 32u * bitmap_words<Acc>() ? (bits[after / 32] >> (after % 32)) & 1u : 0u;
      unsigned ends = (heads >> 1) | (next << (I - 1));
      const std::int64_t last_local = s_end - 1 - s - std::int64_t{threadIdx.x} * I;
      if (last_local >= 0 && last_local < I) ends |= 1u << last_local;

      // b. the warp's total, and each thread's exclusive prefix where its warp holds an end
      //    (a warp scan of the pairs, behind the carry and the warps before). A warp without
      //    ends needs only its total: without heads a plain warp reduce (operand order kept).
      const bool warp_ends = __any_sync(warp::full_mask, ends != 0u);
      const bool warp_heads = __any_sync(warp::full_mask, heads != 0u);
      pair lanes_before = mine;  // (defined bits; read only where warp_ends)
      if (warp_ends || warp_heads) {
        const pair inclusive = warp::inclusive_scan(mine, pair_op);
        lanes_before = warp::shuffle_up(inclusive, 1u);  // (unused in lane 0)
        if (lane == 31) warp_totals[warp_id] = inclusive;
      } else {
        const Acc total = warp::reduce(mine.value, op);
        if (lane == 0) warp_totals[warp_id] = pair{false, total};
      }
      const int slot = st & 1;  // the carry this sub-tile reads; it writes the other
      __syncthreads();  // every warp's total is stored before any thread folds them
      if (threadIdx.x == 0) {
        // the carry after this sub-tile (thread 0; read by all after the next barrier)
        maybe<pair> running{static_cast<pair>(carries[slot]), st > 0};
  #pragma unroll
        for (int w = 0; w < L::warps; ++w) {
          running = single_pass::then(running, static_cast<pair>(warp_totals[w]), pair_op);
        }
        carries[slot ^ 1] = running.value;
      }
      maybe<pair> prefix{mine, false};
      if (warp_ends) {
        maybe<pair> warp_prefix{static_cast<pair>(carries[slot]), st > 0};
        for (int w = 0; w < warp_id; ++w) {
          warp_prefix = single_pass::then(warp_prefix, static_cast<pair>(warp_totals[w]), pair_op);
        }
        prefix = lane == 0 ? warp_prefix : single_pass::then(warp_prefix, lanes_before, pair_op);
      }

      // c. the scanned values of the ends, written back in place (most threads hold none
      //    where segments are long, and skip this second fold)
      if (ends != 0u) {
        single_pass::vector_of<Acc, Vec> w[V];
        read_chunk(w);
        Acc* scanned = reinterpret_cast<Acc*>(values) + threadIdx.x * I;
        maybe<Acc> run{prefix.value.value, prefix.present};
  #pragma unroll
        for (int k = 0; k < I; ++k) {
          const Acc v = element(w, k);
          run = (heads >> k) & 1u ? maybe<Acc>{v, true} : single_pass::then(run, v, op);
          if ((ends >> k) & 1u) scanned[k] = run.value;
        }
      }
      __syncthreads();  // the scanned ends are written before the gather reads them

      // d. the results of the segments ending here
      const Acc* scanned = reinterpret_cast<const Acc*>(values);
      for (std::int64_t j0 = j_from; j0 < j_to; j0 += gather_loads * block_threads) {
        if (j0 != j_from) load_round(j0);
  #pragma unroll
        for (int u = 0; u < gather_loads; ++u) {
          const std::int64_t j = j0 + u * block_threads + threadIdx.x;
          if (j >= j_to || j < 1 || j > segments) continue;
          if (start[u] >= e[u]) {
            out[j - 1] = init;  // an empty segment
          } else if (e[u] > s && e[u] <= s_end) {
            const Acc r = scanned[e[u] - 1 - s];
            if (j == results_from[0] && start[u] < base) {
              kept_segment = j - 1;  // it began before the range: step 3
              kept_part[0] = r;
            } else {
              out[j - 1] = r;
            }
          }
        }
      }
      // This thread's accesses to the buffer (generic proxy) are ordered before the bulk copy
      // that refills it (async proxy) by this fence and the barrier after it.
      arch::fence_proxy_async_shared();
      __syncthreads();  // this buffer and the warp totals are free for the sub-tiles after
    }
  }

  // 3. the range's prefix (warp 0): the look-back of the single-pass scans over ranges
  if (warp_id == 0 && ranges > 1) {
    const pair aggregate = carries[sub_tiles & 1];
    const bool kept = kept_segment >= 0;
    maybe<pair> prefix{aggregate, false};
    if (range > 0 && (kept || !aggregate.head)) {
      prefix = {Protocol::template exclusive_prefix<Deterministic>(state.descriptors, epoch, range,
                                                                  aggregate, pair_op),
                true};
    }
    if (lane == 0) {
      const pair inclusive = prefix.present ? pair_op(prefix.value, aggregate) : aggregate;
      state.descriptors.store(range, single_pass::make_tag(epoch, single_pass::status_inclusive),
                              inclusive);
      if (kept) {
        const Acc part = kept_part[0];
        out[kept_segment] = prefix.present ? static_cast<Acc>(op(prefix.value.value, part)) : part;
      }
    }
  }

  // Every 2^29 calls: zero the descriptors past this call's ranges (single_pass/tile_state.cuh).
  if (ranges > 1 && single_pass::is_clearing_epoch(epoch)) {
    for (std::int64_t i = ranges + range * block_threads + threadIdx.x; i < state.capacity;
         i += ranges * block_threads) {
      state.descriptors.clear(i);
    }
  }
}

// ---- the host side ------------------------------------------------------------------------
// The range of a block: as many ranges as the device holds blocks at once (a whole number
// of such waves, so that no wave runs a few ranges alone), each a whole number of
// sub-tiles and at most max_sub_tiles of them.
inline std::int64_t range_items(std::int64_t n, std::int64_t resident, std::int64_t sub_tile) {
  const std::int64_t longest = sub_tile * max_sub_tiles;
  const std::int64_t waves = ceil_div(n, resident * longest);
  return ceil_div(ceil_div(n, resident * waves), sub_tile) * sub_tile;
}

template <class Protocol, bool Deterministic, class Acc, class Out, class Offsets, class Op>
void launch(const char* function, const Acc* in, Out out, std::int64_t n, Offsets offsets,
            std::int64_t segments, Acc init, Op op, const options& o, std::int64_t range) {
  constexpr auto kernel = &ranges_kernel<Protocol, Deterministic, Acc, Out, Offsets, Op>;
  constexpr std::size_t ring_bytes = buffers * sizeof(single_pass::staged_tile<Acc, layout<Acc>>);
  const std::int64_t items =
      range > 0 ? range
                : range_items(n, resident_grid<kernel>(block_threads, function, ring_bytes), sub_tile_items<Acc>());
  if (range > 0) resident_grid<kernel>(block_threads, function, ring_bytes);  // (sets the shared-memory limit)
  segmented_offsets::with_pair_state<Acc>(
      function, n, items, o, [&](std::int64_t ranges, single_pass::tile_state<flagged<Acc>> state) {
        kernel<<<static_cast<unsigned>(ranges), block_threads, ring_bytes, o.stream>>>(
            in, out, n, offsets, segments, items, ranges, init, op, state);
        TALLY_CUDA_CHECK_LAUNCH("segmented_reduce ranges_kernel", function);
      });
}

// One launch over [0, n), n >= 1 and segments >= 1; the caller checked the arguments and
// `takes`. `range`: the elements of a range, 0 for the automatic choice; else a multiple of
// sub_tile_items<Acc>() of at most max_sub_tiles of them (the tests force short and long
// ranges on small inputs with it).
template <class Protocol, class Acc, class Out, class Offsets, class Op>
void run(const char* function, const Acc* in, Out out, std::int64_t n, Offsets offsets,
         std::int64_t segments, Acc init, Op op, const options& o, std::int64_t range = 0) {
  constexpr std::int64_t t = sub_tile_items<Acc>();
  if (range < 0 || range % t != 0 || range > t * max_sub_tiles) {
    throw_invalid(function, "range", "must be 0 or a multiple of " + std::to_string(t) + " up to " +
                                         std::to_string(t * max_sub_tiles));
  }
  // the deterministic look-back only where it differs (single_pass::launch)
  if constexpr (Protocol::has_deterministic_mode && !single_pass::exact_values<Acc>::value) {
    if (o.deterministic) {
      launch<Protocol, true>(function, in, out, n, offsets, segments, init, op, o, range);
      return;
    }
  }
  launch<Protocol, false>(function, in, out, n, offsets, segments, init, op, o, range);
}

}  // namespace tally::detail::segmented_reduce
