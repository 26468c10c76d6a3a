// tally/device/single_pass/pipelined.cuh -- the single-pass scan of LARGE inputs:
// persistent blocks that hide the wait for a tile's prefix behind the next tile.
//
// Why. In the one-block-per-tile pipeline (single_pass/tile_pipeline.cuh) a block that waits for
// its prefix holds its tile and issues no loads, which costs the large scans much of the
// copy's bandwidth (docs/performance.md, "What each path earns"). Here a block does not
// wait with empty hands: it publishes a tile's
// aggregate as soon as the tile is scanned, scans its NEXT tile while a warp of its own
// looks back for the first one's prefix, and stores the first tile after that.
//
// The block: compute warps (8 by default: pipelined_tuning), one producer warp and one
// look-back warp, persistent (a grid of what the device holds at once, at most one block
// per tile), with a ring of `stages` tiles in shared memory.
//   - The producer (one lane) fills the ring in order. For each free stage it draws a
//     ticket (the tile index: single_pass/tile_state.cuh), and starts ONE bulk copy of the whole tile
//     (cp.async.bulk, the Hopper copy engine, TMA) that signals the stage's FULL mbarrier
//     when its bytes have landed. When the tickets are used up it marks the stage "no
//     tile" and stops.
//   - The compute warps take the stages in the same order. For tile i:
//       a. wait for its FULL barrier; scan it in place (each warp its rows: lane-serial,
//          across the warp, rows chained), writing each item's warp-local result back to
//          shared memory ("the write-back scan" below); warp totals to shared memory;
//          barrier;
//       b. warp 0: the tile's aggregate and the warps' exclusive prefixes within the tile
//          from the warp totals; publishes the aggregate (look-back) or, for tile 0 and
//          for an aggregate that absorbs every prefix (a segmented tile with a head), its
//          inclusive value; hands both to the look-back warp (the stage's AGGREGATED
//          mbarrier);
//       c. each warp: waits for the PREVIOUS tile i-1's prefix (its PREFIXED mbarrier),
//          stores its rows of tile i-1 behind it; each thread then arrives on that
//          stage's EMPTY mbarrier, which lets the producer refill it.
//     After the last tile, c once more for it.
//   - The look-back warp takes the tiles in the same order. For tile i: waits for its
//     index and aggregate (AGGREGATED; warp 0 sends "no tile" there when the compute warps
//     run out of tiles), then for the block's next tile to land (FULL of the next stage,
//     or its "no tile" mark); then the prefix (Protocol::prefix_after_aggregate: the
//     look-back, or the chained scan's wait for its predecessor); publishes the inclusive
//     value; hands the prefix to the compute warps (PREFIXED).
// So the look-back for tile i runs while the compute warps scan tile i+1 (a to b), and
// is mostly done when they ask for it (c). It waits for the next tile's data first
// because, started right after the tile's own aggregate, it would meet predecessors that
// have not published theirs yet; and it has a warp of its own because in warp 0, between
// b and c, every block would wait a round trip per tile (docs/performance.md, "What each
// path earns").
//
// Tickets and the end of a call. A block draws tickets until one is >= tiles, exactly
// once per block, so a call draws tiles + gridDim.x tickets: the block that draws the
// last of them (count tiles + gridDim.x - 1) opens the next epoch, as the last ticket
// does in single_pass/tile_pipeline.cuh. A tile index is drawn only when the producer can start
// the tile's copy at once; a ticket held while the block is busy elsewhere would make
// every later tile wait for this block.
//
// Deadlock freedom. Inside a block, by induction over its tiles: the look-back warp's
// waits for tile i need the compute warps to scan tile i and the producer to fill the
// next stage, and both need only tile i-1's store, which needs only tile i-1's prefix
// (with two stages the next stage is tile i-1's; with more, earlier tiles'). Between
// blocks, a look-back waits only for tiles drawn before its own, so by blocks that are
// running. Let m be the smallest tile whose aggregate (look-back) or inclusive value
// (chained) is not published yet. Its block has drawn it, so it is loading it (the copy
// lands by itself), or its compute warps wait in c for an earlier tile of their own,
// whose look-back needs only tiles < m (published) and the landing of a tile already
// drawn, or its look-back warp waits for m's predecessors (all published). So m is
// published eventually, for any number of resident blocks.
//
// Memory ordering inside the block: the mbarriers and the compute warps' barrier order
// it (arrive has release semantics at CTA scope, the wait acquires). The producer writes
// the stage's tile index (and the program's prepare its slots) before it arrives on FULL, and the bulk copy's bytes are visible
// to whoever sees the phase complete. Warp 0 writes the tile index and aggregate, then
// arrives on AGGREGATED; the look-back warp writes the prefix, then arrives on PREFIXED.
// The warps' prefixes within a tile, which warp 0 writes in b, are read by every compute
// warp after the next compute barrier (the next tile's, or one after the last tile). The
// compute threads arrive on EMPTY after their last shared-memory access to the stage,
// each after a fence.proxy.async: they wrote the stage through the generic proxy (the
// write-back scan), the next bulk copy writes it through the async proxy, and that fence
// orders the former before the latter; the producer waits on EMPTY before it starts the
// copy. Each per-stage slot is written again only after a barrier or mbarrier wait that
// directly follows every read of its previous value (the comments at the writes): an
// order that holds only through a third warp is reported as a race by racecheck.
// Between blocks: the descriptors of single_pass/tile_state.cuh.
//
// What a stage holds and how the compute warps scan and store it is the kernel's TILE
// PROGRAM ("tile programs" below): the plain scan's values here, (head, value) pairs of
// the segmented scans by flags and by equal lengths in segmented/pipelined.cuh; the
// pipeline above is the same for both.
//
// Applies to 16-byte aligned pointers to 4- and 8-byte values (bulk copies need 16-byte
// aligned addresses). A partial last tile is loaded by the compute threads themselves,
// padded with x_{n-1} as in single_pass/tile_pipeline.cuh. Tiles: 256 threads x 9 rows x 16 bytes
// = 36 KiB, two stages (72 KiB of dynamic shared memory), 3 blocks per SM on sm_90
// (default_tuning).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "tally/core/operators.hpp"  // absorbs_prefix
#include "tally/core/options.hpp"
#include "tally/device/arch/bulk_copy.cuh"
#include "tally/device/arch/mbarrier.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/occupancy.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::pipelined {

using single_pass::maybe;
using single_pass::then;

// ---- tuning ------------------------------------------------------------------------------------
// A block: `compute_threads` threads that scan (a multiple of 32) plus two warps;
// tiles of compute_threads x rows x 16 bytes; a ring of `stages` tiles.
struct pipelined_tuning {
  int compute_threads;
  int rows;
  int stages;
  // + the producer warp and the look-back warp
  constexpr int kernel_threads() const { return compute_threads + 64; }
};
// The default is 9 rows x 2 stages (docs/performance.md, "Plans and thresholds"): the
// look-back for a tile overlaps the scan of the block's next tile ("the look-back warp"
// above) and can outlast it; 9 rows give that scan longer for the same look-back. 3
// blocks of two 36 KiB stages still fit in an SM's 228 KiB of shared memory, leaving 3
// KiB a block for static shared memory: the kernel's own half KiB and the windows that
// the deterministic look-back of 8-byte values holds. So the public scans run this kernel
// with decoupled_lookback::pipelined_protocol, which holds 2 KiB of them (the other
// kernels' protocol holds 4 KiB, which leaves room for 2 blocks a SM). Fewer rows, 10 rows
// (2 blocks a SM) or more stages are slower.
inline constexpr pipelined_tuning default_tuning{256, 9, 2};

template <class Acc>
inline constexpr int vec = static_cast<int>(16 / sizeof(Acc));
// Values of 12 to 64 bytes other than 16 take wide_tiles below: a lane a run of
// wide_run<Acc>() consecutive values ("wide values" below says why).
template <class Acc>
inline constexpr bool wide_v = std::is_trivially_copyable_v<Acc> && sizeof(Acc) % 4 == 0 &&
                               sizeof(Acc) >= 12 && sizeof(Acc) <= 64 && sizeof(Acc) != 16;
template <class Acc>
inline constexpr int wide_access = sizeof(Acc) % 16 == 0 ? 16 : sizeof(Acc) % 8 == 0 ? 8 : 4;
template <class Acc>
constexpr int wide_run() {
  constexpr int k = static_cast<int>(144 / sizeof(Acc));
  return k % 2 == 0 && k > 2 ? k - 1 : k;
}

template <class Acc, pipelined_tuning Tune = default_tuning>
using layout = single_pass::layout<Tune.compute_threads, Tune.rows, vec<Acc>, true>;
// the same tiles as a single_pass_tuning (for the state's size)
template <class Acc, pipelined_tuning Tune = default_tuning>
constexpr single_pass::single_pass_tuning tuning() {
  if constexpr (wide_v<Acc>) {
    return {Tune.compute_threads, wide_run<Acc>(), 1};
  } else {
    return {Tune.compute_threads, Tune.rows, vec<Acc>};
  }
}

template <class Acc, pipelined_tuning Tune = default_tuning>
constexpr std::int64_t tile_items() {
  return tuning<Acc, Tune>().tile_items();
}
// The public scans' storage query counts the default tiles of single_pass/tile_pipeline.cuh
// (single_pass::public_storage_bytes); these tiles must need no more descriptors.
using sixteen_bytes = single_pass::vector_of<float, 4>;  // (any 16-byte type: the same tiles)
static_assert(tile_items<float>() >= single_pass::default_single_pass_tuning<float>().tile_items() &&
                  tile_items<double>() >= single_pass::default_single_pass_tuning<double>().tile_items() &&
                  tile_items<sixteen_bytes>() >=
                      single_pass::default_single_pass_tuning<sixteen_bytes>().tile_items(),
              "the storage query covers the pipelined scan's state");
template <class Acc, pipelined_tuning Tune = default_tuning>
constexpr unsigned tile_bytes() {
  return static_cast<unsigned>(layout<Acc, Tune>::tile_items * sizeof(Acc));
}
template <class Acc, pipelined_tuning Tune = default_tuning>
constexpr std::size_t ring_bytes() {
  return static_cast<std::size_t>(Tune.stages) * tile_bytes<Acc, Tune>();
}

// The public look-back and chained scans take this kernel for 16-byte aligned pointers to
// 4- and 8-byte values from this many bytes of data on (dispatch.cuh): below it the
// one-block-per-tile kernel is as fast or faster (docs/performance.md, "Plans and
// thresholds"). (The chained scan switches at the same size, so that the deterministic
// look-back keeps giving its bits: both kernels fold the same tiles.)
inline constexpr std::int64_t min_bytes = thresholds.pipelined_min_bytes;

// The values this kernel stages: 4 and 8 bytes (four or two a 16-byte vector), 16 bytes
// (one a vector, scanned by lane runs: plain_tiles below), and the wide values of 12 to
// 64 bytes (wide_tiles below).
template <class Acc>
inline constexpr bool stages_v =
    single_pass::vectorisable_v<Acc> || (std::is_trivially_copyable_v<Acc> && sizeof(Acc) == 16) || wide_v<Acc>;

// Where the public scans take this kernel for values of Acc: min_bytes above for 4- and
// 8-byte values; from 4 MiB for 16-byte ones, which the tiles by ticket scan one warp
// scan of four shuffled words a row while this kernel scans them by lane runs, and for
// values of 12 to 64 bytes (wide_tiles). Below 4 MiB the tiles by ticket are as fast or
// faster (docs/performance.md, "Plans and thresholds").
template <class Acc>
inline constexpr std::int64_t min_bytes_for =
    sizeof(Acc) == 16 || wide_v<Acc> ? thresholds.pipelined_wide_min_bytes : min_bytes;

// Both pointers to Acc itself, of a type this kernel stages.
template <class Acc, class In, class Out>
constexpr bool acc_pointers() {
  if constexpr (std::is_pointer_v<In> && std::is_pointer_v<Out>) {
    using in_t = std::remove_cv_t<std::remove_pointer_t<In>>;
    return stages_v<Acc> && std::is_same_v<in_t, Acc> && std::is_same_v<std::remove_pointer_t<Out>, Acc>;
  } else {
    return false;
  }
}

// Whether the public scans take this kernel: pointers to Acc itself of a 4-, 8- or 16-byte
// type, both 16-byte aligned, and at least min_bytes_for<Acc> of data.
template <class Acc, class In, class Out>
bool takes(In in, Out out, std::int64_t n) {
  if constexpr (acc_pointers<Acc, In, Out>()) {
    return n >= min_bytes_for<Acc> / static_cast<std::int64_t>(sizeof(Acc)) && single_pass::aligned_16(in) &&
           single_pass::aligned_16(out);
  } else {
    (void)in, (void)out, (void)n;
    return false;
  }
}

// ---- mbarriers and bulk copies (device/arch) ------------------------------------------------
using arch::bulk_copy;
using arch::mbarrier_arrive;
using arch::mbarrier_expect;
using arch::mbarrier_init;
using arch::mbarrier_test;
using arch::mbarrier_wait;
using arch::shared_address;
// The compute warps' own barrier (the producer warp takes no part in it).
template <int ComputeThreads>
TALLY_DEVICE TALLY_FORCEINLINE void compute_barrier() {
  arch::named_barrier_sync<1, ComputeThreads>();
}

// ---- the write-back scan of a staged tile -----------------------------------------------------
// A lane's Vec serially scanned items behind their prefix within the warp (has_prefix:
// all but the warp's very first lane and row). has_prefix depends on the lane, and
// written as a plain condition it becomes a branch that the compiler hoists out of the
// unrolled row loop, splitting every warp into two copies of all its shuffles, a heavy
// cost; so the choices are select_value (one selp instruction).
template <bool Exclusive, int Vec, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void with_local_prefix(const Acc& prefix, bool has_prefix,
                                                      Acc (&items)[Vec], Op& op) {
  using single_pass::select_value;
  if constexpr (Exclusive) {
#pragma unroll
    for (int k = Vec - 1; k > 0; --k) {
      items[k] = select_value(has_prefix, static_cast<Acc>(op(prefix, items[k - 1])), items[k - 1]);
    }
    items[0] = prefix;  // without a prefix: not a value (store_rows puts the warp's prefix there)
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      items[k] = select_value(has_prefix, static_cast<Acc>(op(prefix, items[k])), items[k]);
    }
  }
}

// Step a: each warp scans its rows of the staged tile and writes every item's warp-local
// result back in place (inclusive: the warp's items up to this one; exclusive: up to the
// one before), so that nothing per row lives in registers until the prefix is known.
// Returns the warp's total.
template <class L, bool Exclusive, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE Acc scan_rows(single_pass::vector_of<Acc, L::vec>* staged, int warp,
                                             int lane, Op& op) {
  Acc warp_total;
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    Acc row[L::vec];
    single_pass::read_staged_row<L>(staged, warp, lane, r, row);
    single_pass::lane_scan(row, op);
    Acc row_total;
    const Acc lane_inclusive = warp::inclusive_scan(row[L::vec - 1], op, row_total);
    const Acc lane_exclusive = warp::shuffle_up(lane_inclusive, 1u);  // lane 0: not used
    // the lane's prefix within the warp: the rows before r, then the lanes before it
    // (lane 0: the rows only; lane 0 of row 0: none)
    Acc prefix = lane_exclusive;
    if (r > 0) {
      prefix = single_pass::select_value(lane > 0, static_cast<Acc>(op(warp_total, lane_exclusive)),
                                         warp_total);
    }
    with_local_prefix<Exclusive>(prefix, r > 0 || lane > 0, row, op);
    single_pass::write_staged_row<L>(staged, warp, lane, r, row);
    warp_total = r == 0 ? row_total : static_cast<Acc>(op(warp_total, row_total));
  }
  return warp_total;
}

// Step a with lane runs (the same result in the stage as scan_rows): lane l of a warp
// takes the warp's vectors l x rows .. l x rows + rows - 1, consecutive in the stage (a
// warp's rows are one contiguous run of rows x 32 vectors), instead of vector l of every
// row. Then the warp needs ONE warp scan a tile (of the lanes' totals) instead of one a
// row: 7 shuffles of the value, where scan_rows takes 7 a row (9 rows: 63). A shuffle
// moves 4 bytes a lane, so 16-byte values take 4 each: 252 a warp and tile by rows, 28
// by lane runs. The price is a second pass over the lane's vectors (first their total,
// then, behind the lane's prefix, the write-back), rather than registers for all of them
// (rows x 16 bytes a lane) under the kernel's 64-register bound. Odd rows only: a
// quarter-warp's eight 16-byte reads are rows x 16 bytes apart, which with rows odd fall
// on eight different groups of 4 banks (with 8 rows: 128 bytes apart, the same 4 banks).
template <class L, bool Exclusive, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE Acc scan_lane_runs(single_pass::vector_of<Acc, L::vec>* staged, int warp,
                                                  int lane, Op& op) {
  static_assert(L::rows % 2 == 1, "lane runs read their stage without bank conflicts only with odd rows");
  using vector = single_pass::vector_of<Acc, L::vec>;
  vector* const run = staged + warp * (L::warp_items / L::vec) + lane * L::rows;
  // the lane's total: its rows x vec items in order
  Acc lane_total = run[0].v[0];
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    const vector v = run[r];
#pragma unroll
    for (int k = r == 0 ? 1 : 0; k < L::vec; ++k) lane_total = static_cast<Acc>(op(lane_total, v.v[k]));
  }
  Acc warp_total;
  const Acc lane_inclusive = warp::inclusive_scan(lane_total, op, warp_total);
  // the lanes before this one (lane 0: none, and the shuffle's value is not used)
  const Acc lane_exclusive = warp::shuffle_up(lane_inclusive, 1u);
  // the write-back: inclusive, each item behind everything before it in the warp;
  // exclusive, the value before it (the warp's very first item: not a value, as in
  // scan_rows; store_rows puts the warp's prefix there)
  Acc running = lane_exclusive;
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    vector v = run[r];
#pragma unroll
    for (int k = 0; k < L::vec; ++k) {
      const Acc x = v.v[k];
      // the lane's first item: behind a prefix in every lane but 0 (select_value, not a
      // branch: see with_local_prefix); every later item behind the running value
      const Acc through = r == 0 && k == 0 ? single_pass::select_value(lane > 0, static_cast<Acc>(op(running, x)), x)
                                           : static_cast<Acc>(op(running, x));
      v.v[k] = Exclusive ? running : through;
      running = through;
    }
    run[r] = v;
  }
  return warp_total;
}

// Step d: the warp-local values behind the warp's prefix (which an exclusive scan always
// has; there the warp's very first item, which has no local value, is the prefix itself),
// stored row by row.
template <class L, bool Exclusive, class Acc, class Out, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void store_rows(const single_pass::vector_of<Acc, L::vec>* staged,
                                               Out out, std::int64_t base, std::int64_t n, int warp,
                                               int lane, const maybe<Acc>& warp_prefix, Op& op) {
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    Acc row[L::vec];
    single_pass::read_staged_row<L>(staged, warp, lane, r, row);
    if (warp_prefix.present) {
#pragma unroll
      for (int k = 0; k < L::vec; ++k) row[k] = static_cast<Acc>(op(warp_prefix.value, row[k]));
    }
    if constexpr (Exclusive) {
      if (r == 0 && lane == 0) row[0] = warp_prefix.value;
    }
    single_pass::store_row<L>(out, base, n, warp, lane, r, row);
  }
}

// A partial last tile, by each compute thread: the vectors it scans, padded with x_{n-1}
// as in single_pass/tile_pipeline.cuh; each(v, j, e) is called for element j of vector v (global
// index e, possibly >= n) for what a program stages beside the values.
template <class L, class Acc, class Each>
TALLY_DEVICE TALLY_FORCEINLINE void load_partial_values(unsigned char* stage, const Acc* in,
                                                        std::int64_t base, std::int64_t n, int warp,
                                                        int lane, const Each& each) {
  auto* staged = reinterpret_cast<single_pass::vector_of<Acc, L::vec>*>(stage);
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    const int v = single_pass::staged_index<L>(warp, lane, r);
    single_pass::vector_of<Acc, L::vec> items;
#pragma unroll
    for (int j = 0; j < L::vec; ++j) {
      const std::int64_t e = base + static_cast<std::int64_t>(v) * L::vec + j;
      items.v[j] = in[e < n ? e : n - 1];
      each(v, j, e);
    }
    staged[v] = items;
  }
}

// ---- tile programs ------------------------------------------------------------------------------
// The kernel below runs the pipeline (the producer, the look-back warp, the barriers);
// a TILE PROGRAM says what a stage holds and how the compute warps scan and store it, so
// that the segmented scans (segmented/pipelined.cuh) run the same pipeline. Members:
//   total               the type of a tile's aggregate and of its descriptors
//   L                   the compute warps' layout (single_pass::layout)
//   stage_bytes         one stage in shared memory (a multiple of 128)
//   carry               what a warp keeps from its scan of a tile (a) to its store (c)
//   n                   the number of elements
//   combine()           the operator on totals
//   first_prefix(t)     tile 0's prefix: an exclusive scan's seed, or none (t: defined bits)
//   copy(stage, base, bar)          a full tile, by the producer: expect its bytes on the
//                                   stage's FULL barrier and start its bulk copies (the
//                                   producer arrives on it after prepare)
//   prepare(stage, tile)            by the producer for every tile, after copy: what the
//                                   stage holds besides copied bytes (the offsets' write
//                                   range: segmented/pipelined.cuh)
//   lookback_deadline_cycles        the look-back warp starts a tile's look-back at most
//                                   this many SM cycles after taking its aggregate (0: when
//                                   the block's next tile has landed; the kernel's comment)
//   load_partial(stage, base, w, l) the partial last tile, by each compute thread: what it
//                                   reads itself in scan and store (partial_barrier: and
//                                   what others read, after a barrier that the kernel passes)
//   scan(stage, tile, w, l, carry)  step a: warp w's rows, write-back; returns its total
//   store(stage, tile, w, l, p, carry)  step c: warp w's rows behind its prefix p
//
// The plain scan's two programs (plain_tiles, wide_tiles below), whose stage is the tile's
// values, share the input and output values, n, an exclusive scan's seed and the operator
// (initialised in that order: `program{in, out, n, seed, op}`), tile 0's prefix, and a
// full tile's one bulk copy of StageBytes; nothing else is prepared.
template <bool Exclusive, class Acc, class Op, unsigned StageBytes>
struct values_program {
  const Acc* in;
  Acc* out;
  std::int64_t n;
  seed_value<Acc, Exclusive> seed;
  Op op;

  TALLY_DEVICE TALLY_FORCEINLINE Op combine() const { return op; }
  TALLY_DEVICE TALLY_FORCEINLINE maybe<Acc> first_prefix(const Acc& defined) const {
    if constexpr (Exclusive) {
      return {seed.value, true};
    } else {
      return {defined, false};
    }
  }
  TALLY_DEVICE TALLY_FORCEINLINE void copy(unsigned char* stage, std::int64_t base,
                                           unsigned long long* full) const {
    mbarrier_expect(full, StageBytes);
    bulk_copy(stage, in + base, StageBytes, full);
  }
  TALLY_DEVICE TALLY_FORCEINLINE void prepare(unsigned char*, std::int64_t) const {}
};

// The program of 4-, 8- and 16-byte values: rows of 16-byte vectors.
//
// Step a by rows (scan_rows) or by lane runs (scan_lane_runs): lane runs for 16-byte
// values (one a vector), where a row's warp scan shuffles four words a step and lane
// runs are markedly faster (docs/performance.md, "What each path earns"). 4- and 8-byte
// values keep rows: they shuffle a quarter or half the words a row, and lane runs show no
// consistent gain for them (the second, dependent pass over the stage may cost about
// what they save).
template <class Acc>
inline constexpr bool lane_runs_v = vec<Acc> == 1;
template <bool Exclusive, class Acc, class Op, int ComputeThreads, int Rows, int Stages,
          bool LaneRuns = lane_runs_v<Acc> && Rows % 2 == 1>
struct plain_tiles
    : values_program<Exclusive, Acc, Op, tile_bytes<Acc, pipelined_tuning{ComputeThreads, Rows, Stages}>()> {
  static constexpr pipelined_tuning tune{ComputeThreads, Rows, Stages};
  using total = Acc;
  using L = layout<Acc, tune>;
  using vector = single_pass::vector_of<Acc, L::vec>;
  static constexpr unsigned stage_bytes = tile_bytes<Acc, tune>();
  // load_partial fills the stage by rows, each lane the vectors that scan_rows gives it;
  // lane runs then read vectors that other lanes loaded, so the partial tile (the last
  // of a call, at most one) takes a barrier between the two
  static constexpr bool partial_barrier = LaneRuns;
  // 9-row tiles: the next tile lands well after the aggregate, and a look-back started
  // at the deadline instead gains a little for 4- and 8-byte values, inclusive and
  // exclusive; a deadline as late as the landing gains nothing (docs/performance.md,
  // "Plans and thresholds").
  static constexpr long long lookback_deadline_cycles =
      Rows >= 8 ? thresholds.lookback_deadline_cycles : 0;
  struct carry {};

  using values = values_program<Exclusive, Acc, Op, stage_bytes>;  // (the base class)
  using values::in, values::out, values::n, values::op;
  // each thread loads its vectors of the rows, padded with x_{n-1} (by rows: the vectors
  // it scans; by lane runs: partial_barrier above)
  TALLY_DEVICE TALLY_FORCEINLINE void load_partial(unsigned char* stage, std::int64_t base, int warp,
                                                   int lane) const {
    load_partial_values<L>(stage, in, base, n, warp, lane, [](int, int, std::int64_t) {});
  }
  TALLY_DEVICE TALLY_FORCEINLINE Acc scan(unsigned char* stage, std::int64_t, int warp, int lane,
                                          carry&) const {
    Op o = op;
    if constexpr (LaneRuns) {
      return scan_lane_runs<L, Exclusive>(reinterpret_cast<vector*>(stage), warp, lane, o);
    } else {
      return scan_rows<L, Exclusive>(reinterpret_cast<vector*>(stage), warp, lane, o);
    }
  }
  TALLY_DEVICE TALLY_FORCEINLINE void store(const unsigned char* stage, std::int64_t tile, int warp,
                                            int lane, const maybe<Acc>& warp_prefix,
                                            const carry&) const {
    Op o = op;
    store_rows<L, Exclusive>(reinterpret_cast<const vector*>(stage), out, tile * L::tile_items, n,
                             warp, lane, warp_prefix, o);
  }
};

// ---- wide values: 12 to 64 bytes --------------------------------------------------------------
// Values of 12 to 64 bytes (a multiple of 4, other than 16: a struct of 3 ints, rows of
// three columns as one element (segmented.cuh's column groups), 4x4 matrices) do not fit
// the rows of 16-byte vectors above. Their tiles by ticket (single_pass/tile_pipeline.cuh) hold 4, 2
// or 1 values a thread in registers (up to 16, 32, 64 bytes), loaded value by value: a
// warp's load of one 4-byte word of 32 values 24 or 48 bytes apart. The loads, not the
// look-back, are their limit (docs/performance.md, "What each path earns").
//
// Here the stage is the tile's bytes as they are in memory (one bulk copy, as for the
// other values), and each lane takes a RUN of K consecutive values of its warp's 32 K
// (wide_tiles below):
//   a. the lane folds its run's K values into its total, one warp scan of the totals
//      gives each lane the reduction of the lanes before it (kept in `carry` until c);
//   c. behind the warp's prefix and that of its lanes before it, the lane scans its run
//      again, writing each result back over the value in the stage, and then the warp
//      copies its 32 K values out as 16-byte vectors, coalesced (a warp's run is 32 K x
//      sizeof(Acc) bytes, a multiple of 128).
// A partial last tile is loaded and stored by each warp's lanes together, 4 bytes a lane
// and access (load_partial, store).
// A lane reads its values with the widest access (4, 8 or 16 bytes) that the value's size
// allows, and K (wide_run) is odd where the value is an odd number of such accesses (12,
// 20, 24, 28, 36, 40, 44, 48 ... bytes): then a quarter-warp's 16-byte (half-warp's 8-byte,
// warp's 4-byte) accesses, K x sizeof(Acc) bytes apart, fall on different banks. Values
// of 32 and 64 bytes are 2 and 4 accesses of 16, and share banks whatever K: K = 3 for 32
// bytes (2-way conflicts, where K = 4 is 8-way and slower), K = 2 for 64 (8-way, and
// still faster than K = 1, 4-way in tiles of 16 KiB). K is about 144 / sizeof(Acc): a
// warp's run about 4.5 KiB, as the 9 rows of 16-byte vectors of the other tiles (tiles of
// 24-36 KiB). Faster than the tiles by ticket at every width from 4 MiB on, not below
// (min_bytes_for; docs/performance.md, "What each path earns"). ptxas spills for 48 and
// 64 bytes under the kernel's 64 registers.
//
// A value of the stage at p (aligned to wide_access<Acc>), by wide_access<Acc>-byte
// accesses; and its store.
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE Acc read_wide(const unsigned char* p) {
  using word = std::conditional_t<wide_access<Acc> == 16, uint4, std::conditional_t<wide_access<Acc> == 8, uint2, unsigned>>;
  constexpr int words = static_cast<int>(sizeof(Acc) / sizeof(word));
  word w[words];
#pragma unroll
  for (int i = 0; i < words; ++i) w[i] = reinterpret_cast<const word*>(p)[i];
  Acc value;
  memcpy(&value, w, sizeof(Acc));
  return value;
}
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void write_wide(unsigned char* p, const Acc& value) {
  using word = std::conditional_t<wide_access<Acc> == 16, uint4, std::conditional_t<wide_access<Acc> == 8, uint2, unsigned>>;
  constexpr int words = static_cast<int>(sizeof(Acc) / sizeof(word));
  word w[words];
  memcpy(w, &value, sizeof(Acc));
#pragma unroll
  for (int i = 0; i < words; ++i) reinterpret_cast<word*>(p)[i] = w[i];
}

// The compute warps' layout as the kernel sees it (warps, tile_items).
template <int Warps, int Run>
struct wide_layout {
  static constexpr int warps = Warps;
  static constexpr int run = Run;  // K: values a lane
  static constexpr int warp_items = 32 * Run;
  static constexpr int tile_items = Warps * warp_items;
};

// A stage of the wide tiles: the tile's values.
template <class Acc, int ComputeThreads>
constexpr unsigned wide_stage_bytes() {
  return static_cast<unsigned>(wide_layout<ComputeThreads / 32, wide_run<Acc>()>::tile_items * sizeof(Acc));
}

template <bool Exclusive, class Acc, class Op, int ComputeThreads, int Stages>
struct wide_tiles : values_program<Exclusive, Acc, Op, wide_stage_bytes<Acc, ComputeThreads>()> {
  static_assert(wide_v<Acc>, "wide tiles take values of 12 to 64 bytes, a multiple of 4, other than 16");
  static constexpr pipelined_tuning tune{ComputeThreads, wide_run<Acc>(), Stages};
  using total = Acc;
  using L = wide_layout<ComputeThreads / 32, wide_run<Acc>()>;
  static constexpr int value_bytes = static_cast<int>(sizeof(Acc));
  static constexpr int warp_bytes = L::warp_items * value_bytes;  // a multiple of 128
  static constexpr unsigned stage_bytes = wide_stage_bytes<Acc, ComputeThreads>();
  static_assert(stage_bytes % 128 == 0 && stage_bytes <= 9 * 256 * 16, "at most the 16-byte values' 36 KiB stage");
  static_assert(L::tile_items >= single_pass::default_single_pass_tuning<Acc>().tile_items(),
                "the storage query covers the pipelined scan's state");
  // load_partial fills the warp's part of the stage with its lanes together: the lanes
  // read each other's loads in scan, after the kernel's barrier
  static constexpr bool partial_barrier = true;
  // as plain_tiles' 9 rows: the tiles are as long (24-36 KiB)
  static constexpr long long lookback_deadline_cycles = thresholds.lookback_deadline_cycles;
  struct carry {
    Acc lanes_before;  // the reduction of the warp's lanes before this one (lane 0: not a value)
  };

  using values = values_program<Exclusive, Acc, Op, stage_bytes>;  // (the base class)
  using values::in, values::out, values::n, values::op;
  // The partial last tile: the warp's part of the stage, 4 bytes a lane and access
  // (coalesced: the bytes as in memory), past n padded with copies of x_{n-1}'s words
  // (defined padding, as in single_pass/tile_pipeline.cuh; the tile starts at a value, so word w
  // of the stage is word w % (sizeof(Acc) / 4) of its value).
  TALLY_DEVICE TALLY_FORCEINLINE void load_partial(unsigned char* stage, std::int64_t base, int warp,
                                                   int lane) const {
    constexpr int value_words = value_bytes / 4;
    const auto* from = reinterpret_cast<const unsigned*>(in + base);
    const auto* last = reinterpret_cast<const unsigned*>(in + (n - 1));
    const std::int64_t valid = (n - base) * value_words;  // the tile's words within the input
    auto* to = reinterpret_cast<unsigned*>(stage);
    for (int w = warp * (warp_bytes / 4) + lane; w < (warp + 1) * (warp_bytes / 4); w += 32) {
      to[w] = w < valid ? from[w] : last[w % value_words];
    }
  }
  // a: the lane's total, then the lanes' scan; returns the warp's total
  TALLY_DEVICE TALLY_FORCEINLINE Acc scan(unsigned char* stage, std::int64_t, int warp, int lane,
                                          carry& c) const {
    Op o = op;
    const unsigned char* run = stage + (warp * L::warp_items + lane * L::run) * value_bytes;
    Acc lane_total = read_wide<Acc>(run);
#pragma unroll
    for (int k = 1; k < L::run; ++k) lane_total = static_cast<Acc>(o(lane_total, read_wide<Acc>(run + k * value_bytes)));
    Acc warp_total;
    const Acc lane_inclusive = warp::inclusive_scan(lane_total, o, warp_total);
    c.lanes_before = warp::shuffle_up(lane_inclusive, 1u);  // lane 0: not used
    return warp_total;
  }
  // c: the run behind the lane's prefix, written back in place; then the warp's values out
  TALLY_DEVICE TALLY_FORCEINLINE void store(unsigned char* stage, std::int64_t tile, int warp, int lane,
                                            const maybe<Acc>& warp_prefix, const carry& c) const {
    Op o = op;
    const std::int64_t base = tile * L::tile_items;
    unsigned char* run = stage + (warp * L::warp_items + lane * L::run) * value_bytes;
    // the lane's prefix: the warp's, then the lanes before it (lane 0 of warp 0 of an
    // inclusive scan's tile 0: none)
    maybe<Acc> running = lane == 0 ? warp_prefix : then(warp_prefix, c.lanes_before, o);
#pragma unroll
    for (int k = 0; k < L::run; ++k) {
      const Acc x = read_wide<Acc>(run + k * value_bytes);
      const Acc through = running.present ? static_cast<Acc>(o(running.value, x)) : x;
      write_wide(run + k * value_bytes, Exclusive ? running.value : through);  // (exclusive: always present)
      running = {through, true};
    }
    // the warp's results out, as the lanes wrote them above: 16 bytes a lane and access,
    // or in the partial last tile 4 bytes, those within the input
    __syncwarp();
    if (base + L::tile_items <= n) {
      const auto* from = reinterpret_cast<const uint4*>(stage + warp * warp_bytes);
      auto* to = reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(out + base) + warp * warp_bytes);
      for (int i = lane; i < warp_bytes / 16; i += 32) to[i] = from[i];
    } else {
      const auto* from = reinterpret_cast<const unsigned*>(stage);
      auto* to = reinterpret_cast<unsigned*>(out + base);
      const std::int64_t valid = (n - base) * (value_bytes / 4);
      for (int w = warp * (warp_bytes / 4) + lane; w < (warp + 1) * (warp_bytes / 4) && w < valid; w += 32) {
        to[w] = from[w];
      }
    }
  }
};

// The plain scan's tile program for values of Acc.
template <bool Exclusive, class Acc, class Op, bool Wide>
struct tile_program {
  using type = plain_tiles<Exclusive, Acc, Op, default_tuning.compute_threads, default_tuning.rows,
                           default_tuning.stages>;
};
template <bool Exclusive, class Acc, class Op>
struct tile_program<Exclusive, Acc, Op, true> {
  using type = wide_tiles<Exclusive, Acc, Op, default_tuning.compute_threads, default_tuning.stages>;
};

// ---- the kernel --------------------------------------------------------------------------------
// A persistent block's next ticket (the banner's "Tickets and the end of a call"): its
// count is a tile, or >= tiles when they are used up. A block draws until it meets the
// latter, exactly once, so a call draws tiles + gridDim.x tickets, and the draw of the last
// of them opens the next epoch (the other draws precede it in the header's coherence
// order; single_pass/tile_state.cuh). Drawn by run_producer below.
TALLY_DEVICE inline single_pass::ticket draw_persistent_ticket(unsigned long long* header,
                                                              std::int64_t tiles) {
  const unsigned long long word = single_pass::take_ticket(header);
  const single_pass::ticket t{static_cast<unsigned>(word >> 32),
                              static_cast<std::int64_t>(word & 0xffffffffull)};
  if (t.tile >= tiles) {
    const std::int64_t last = tiles + gridDim.x - 1;  // every block's one ticket too many
    if (t.tile > last) __trap();  // more draws than blocks + tiles: corrupted state, stop
    if (t.tile == last) single_pass::store_relaxed(header, static_cast<unsigned long long>(t.epoch + 1u) << 32);
  }
  return t;
}

// The ring's four barriers per stage, initialised by thread 0 (the caller then passes
// a __syncthreads before anyone uses them): FULL completes on the producer's arrival plus
// the bytes of the stage's bulk copies, EMPTY on every compute thread's, AGGREGATED on
// `handover_arrivals` of warp 0 (its lane 0 here, every lane in batched/pipelined_columns.cuh),
// PREFIXED on as many of the look-back warp. Also batched/pipelined_columns.cuh's.
template <int Stages>
TALLY_DEVICE TALLY_FORCEINLINE void init_ring_barriers(unsigned long long* full, unsigned long long* empty,
                                                       unsigned long long* aggregated,
                                                       unsigned long long* prefixed,
                                                       unsigned compute_threads,
                                                       unsigned handover_arrivals) {
  for (int s = 0; s < Stages; ++s) {
    mbarrier_init(&full[s], 1);
    mbarrier_init(&empty[s], compute_threads);
    mbarrier_init(&aggregated[s], handover_arrivals);
    mbarrier_init(&prefixed[s], handover_arrivals);
  }
  // the initialised barriers are visible to the other threads (and the copy engine)
  arch::fence_mbarrier_init();
}

// The producer of a persistent block, one lane. The block's k-th tile (k = 0, 1, ...)
// uses stage k % Stages: the producer waits until the compute threads stored the stage's
// previous tile (EMPTY), draws a ticket, writes the tile's index and epoch to the stage's
// slots, calls fill(stage, tile) (the tile's copy, what else the stage holds) and arrives
// on FULL. When the tickets are used up it writes -1 (no more tiles) instead, arrives,
// and returns; every 2^29 calls it zeroes, before it returns, its share of the
// descriptors from `used` to the state's capacity (single_pass/tile_state.cuh): this call reads only
// those below `used`, so nobody reads these concurrently, and the next call on the state
// starts after this kernel ends. A single tile draws no ticket (its state is not used).
// Also batched/pipelined_columns.cuh's.
template <int Stages, class State, class Fill>
TALLY_DEVICE TALLY_FORCEINLINE void run_producer(const State& state, std::int64_t tiles, std::int64_t used,
                                                 unsigned long long* full, unsigned long long* empty,
                                                 std::int64_t* stage_tile, unsigned* stage_epoch,
                                                 Fill fill) {
  for (std::int64_t k = 0;; ++k) {
    const int s = static_cast<int>(k % Stages);
    // stage s again: its previous tile (k - Stages) is stored
    if (k >= Stages) mbarrier_wait(&empty[s], static_cast<unsigned>(((k - Stages) / Stages) & 1));
    std::int64_t tile = 0;
    unsigned epoch = 0;
    if (tiles > 1) {
      const single_pass::ticket t = draw_persistent_ticket(state.header, tiles);
      epoch = t.epoch;
      tile = t.tile;
    } else if (k > 0) {
      tile = tiles;  // a single tile: no state, no tickets
    }
    if (tile >= tiles) {
      stage_tile[s] = -1;
      mbarrier_arrive(&full[s]);
      if (tiles > 1 && single_pass::is_clearing_epoch(epoch)) {
        for (std::int64_t i = used + blockIdx.x; i < state.capacity; i += gridDim.x) {
          state.descriptors.clear(i);
        }
      }
      return;
    }
    stage_tile[s] = tile;
    stage_epoch[s] = epoch;
    fill(s, tile);
    mbarrier_arrive(&full[s]);  // after the slots, the copies' start and the program's writes
  }
}

// Protocol: decoupled_lookback's or chained's (publishes_aggregate, prefix_after_aggregate).
// Tiles: the tile program (above). Hook: single_pass/tile_pipeline.cuh's test hook, called by the
// producer right after it drew a tile's ticket (before the tile's copy starts).
// Launch bounds: at least 3 blocks per SM, which is what shared memory allows anyway
// for the plain scan (two 36 KiB stages a block); without the second number ptxas holds
// every instantiation to 48 registers (room for 4 blocks) and the exclusive double scans
// spill, behind the inclusive ones; with it they take 64 and none spills.
template <class Protocol, bool Deterministic, class Tiles, class Hook>
__global__ void __launch_bounds__(Tiles::tune.kernel_threads(), 3)
    pipelined_kernel(Tiles program, std::int64_t tiles,
                     single_pass::tile_state<typename Tiles::total> state, Hook hook) {
  constexpr pipelined_tuning Tune = Tiles::tune;
  using L = typename Tiles::L;
  using Acc = typename Tiles::total;
  using carry = typename Tiles::carry;
  constexpr int stages = Tune.stages;
  constexpr int warps = L::warps;  // compute warps
  const std::int64_t n = program.n;
  auto op = program.combine();  // (the protocol takes it by reference)
  using single_pass::make_tag;
  using single_pass::status_aggregate;
  using single_pass::status_inclusive;
  extern __shared__ __align__(128) unsigned char ring[];  // `stages` tiles
  __shared__ unsigned long long full[stages];        // a stage's tile has landed
  __shared__ unsigned long long empty[stages];       // the compute threads are done with it
  __shared__ unsigned long long aggregated[stages];  // warp 0 has its aggregate
  __shared__ unsigned long long prefixed[stages];    // the look-back warp has its prefix
  __shared__ std::int64_t stage_tile[stages];        // its tile index, -1: no more tiles
  __shared__ unsigned stage_epoch[stages];           // the call's epoch, from the ticket
  // warp 0 -> the look-back warp: the tile (-1: no more tiles), its epoch and aggregate
  __shared__ std::int64_t lookback_tile[stages];
  __shared__ unsigned lookback_epoch[stages];
  __shared__ block::detail::uninitialized_array<Acc, stages> stage_aggregate;
  // the look-back warp -> the compute warps: the tile's prefix
  __shared__ block::detail::uninitialized_array<Acc, stages> stage_prefix;
  __shared__ bool stage_has_prefix[stages];  // false: tile 0 of an inclusive scan
  // per stage and compute warp: the warp's total, and the reduction of the warps before
  // it in the tile (warp 0's slot unused)
  __shared__ block::detail::uninitialized_array<Acc, stages * warps> warp_totals;
  __shared__ block::detail::uninitialized_array<Acc, stages * warps> warp_exclusive;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  const auto stage = [&](int s) { return ring + static_cast<std::size_t>(s) * Tiles::stage_bytes; };
  // The k-th tile of the block (k = 0, 1, ...) uses stage k % stages, in the (k /
  // stages)-th phase of its barriers.
  const auto stage_of = [](std::int64_t k) { return static_cast<int>(k % stages); };
  const auto parity_of = [](std::int64_t k) { return static_cast<unsigned>((k / stages) & 1); };

  if (threadIdx.x == 0) {
    // AGGREGATED: warp 0's lane 0 (also at the end); PREFIXED: the look-back warp's lane 0
    init_ring_barriers<stages>(full, empty, aggregated, prefixed, Tune.compute_threads, 1);
  }
  __syncthreads();  // nobody uses a barrier before it is initialised
  // Launched as the programmatic dependent of the kernel before it (launch's `dependent`:
  // the offsets forms' head bitmap, which the tiles read, or the clear of a state that
  // held anything, scan below), every thread waits here for that grid, before the
  // producer's first ticket and any descriptor; in a plain launch this returns at once.
  wait_for_prerequisite_grid();

  // ---- the producer: one lane (run_producer above) ----
  if (warp_id == warps) {
    const auto fill = [&](int s, std::int64_t tile) {
      hook(tile, blockIdx.x);
      const std::int64_t base = tile * L::tile_items;
      // (a partial tile: no copy, the compute threads load it)
      if (base + L::tile_items <= n) program.copy(stage(s), base, &full[s]);
      program.prepare(stage(s), tile);
    };
    if (lane == 0) run_producer<stages>(state, tiles, tiles, full, empty, stage_tile, stage_epoch, fill);
    return;
  }

  // ---- the look-back warp ----
  // It reads only what warp 0 hands it (not the producer's stage_tile, which the producer
  // writes again once the compute warps are done with a stage: this warp's read of it
  // would be ordered before that only through the compute warps, a chain that
  // compute-sanitizer's racecheck reports as a race).
  if (warp_id == warps + 1) {
    for (std::int64_t k = 0;; ++k) {
      const int s = stage_of(k);
      mbarrier_wait(&aggregated[s], parity_of(k));
      const std::int64_t tile = lookback_tile[s];
      if (tile < 0) return;
      const unsigned epoch = lookback_epoch[s];
      const Acc aggregate = stage_aggregate[s];
      // The look-back starts when the block's next tile has landed (or there is none: the
      // compute warps scan it while this warp looks back, and the predecessors have had
      // that long to publish), or Tiles::lookback_deadline_cycles after this warp took the
      // aggregate, whichever is first. A short tile's scan does not hide a look-back
      // that starts at the landing; started earlier it takes longer (its predecessors
      // have not all published), so the deadline is a trade, set by tile program (0:
      // none; docs/performance.md, "Plans and thresholds"). The barrier's phase is only
      // tested here: the compute warps wait for it themselves. Not for the deterministic
      // look-back, which is slower with it (it re-reads windows without an inclusive
      // tile).
      if constexpr (Tiles::lookback_deadline_cycles > 0 && !Deterministic) {
        const long long taken = clock64();
        while (!mbarrier_test(&full[stage_of(k + 1)], parity_of(k + 1)) &&
               clock64() - taken < Tiles::lookback_deadline_cycles) {
        }
      } else {
        mbarrier_wait(&full[stage_of(k + 1)], parity_of(k + 1));
      }
      maybe<Acc> prefix{aggregate, false};
      if (tile == 0) {
        prefix = program.first_prefix(aggregate);
      } else {
        prefix = {Protocol::template prefix_after_aggregate<Deterministic>(state.descriptors, epoch,
                                                                           tile, aggregate, op),
                  true};
        // (an aggregate that absorbs every prefix was published as the inclusive value in
        // b: this would be the same)
        if (lane == 0 && !absorbs_prefix(op, aggregate)) {
          state.descriptors.store(tile, make_tag(epoch, status_inclusive),
                                  static_cast<Acc>(op(prefix.value, aggregate)));
        }
      }
      // The slot's previous prefix (tile k - stages) has been read by every compute
      // thread once that tile's EMPTY phase is complete (they arrive after reading).
      if (k >= stages) mbarrier_wait(&empty[s], parity_of(k - stages));
      if (lane == 0) {
        stage_prefix[s] = prefix.value;
        stage_has_prefix[s] = prefix.present;
        mbarrier_arrive(&prefixed[s]);
      }
    }
  }

  // ---- the compute warps ----
  // step c for the block's k-th tile: its prefix, then the warp's rows behind it
  const auto store_tile = [&](std::int64_t k, std::int64_t tile, const carry& c) {
    const int s = stage_of(k);
    mbarrier_wait(&prefixed[s], parity_of(k));
    const maybe<Acc> prefix{stage_prefix[s], stage_has_prefix[s]};
    const maybe<Acc> warp_prefix =
        warp_id == 0 ? prefix : then(prefix, warp_exclusive[s * warps + warp_id], op);
    program.store(stage(s), tile, warp_id, lane, warp_prefix, c);
    // This thread is done with the stage. It wrote it through the generic proxy (the
    // write-back scan), the next bulk copy writes it through the async proxy: the proxy
    // fence, by the writing thread before the release (the arrival), orders the two.
    arch::fence_proxy_async_shared();
    mbarrier_arrive(&empty[s]);
  };

  std::int64_t previous = -1;  // the previous tile, waiting for its prefix
  carry previous_carry{};      // and what this warp kept from its scan
  std::int64_t k = 0;
  for (;; ++k) {
    const int s = stage_of(k);
    mbarrier_wait(&full[s], parity_of(k));
    const std::int64_t tile = stage_tile[s];
    if (tile < 0) {
      // no more tiles: tell the look-back warp
      if (threadIdx.x == 0) {
        lookback_tile[s] = -1;
        mbarrier_arrive(&aggregated[s]);
      }
      break;
    }
    const unsigned epoch = stage_epoch[s];
    unsigned char* staged = stage(s);
    const std::int64_t base = tile * L::tile_items;
    // the partial last tile: each thread loads what it scans (the program pads it), and
    // where the program reads other threads' data in its scan, a barrier before it (the
    // condition is the same in every compute thread)
    if (base + L::tile_items > n) {
      program.load_partial(staged, base, warp_id, lane);
      if constexpr (Tiles::partial_barrier) compute_barrier<Tune.compute_threads>();
    }

    // a. the write-back scan; warp totals (this stage's slots: written again for tile k +
    //    stages, after the barrier of tile k + 1, which warp 0 passes after reading these)
    carry c{};
    const Acc warp_total = program.scan(staged, tile, warp_id, lane, c);
    if (lane == 0) warp_totals[s * warps + warp_id] = warp_total;
    compute_barrier<Tune.compute_threads>();  // the warp totals are stored before warp 0 reads them

    // b. the aggregate, published at once; the warps' prefixes within the tile (written
    //    again for tile k + stages, after the barrier of that tile, which every warp
    //    passes after its c for tile k)
    if (warp_id == 0) {
      // lanes past the last warp scan copies of the last total (defined padding)
      const Acc total = warp_totals[s * warps + (lane < warps ? lane : warps - 1)];
      const Acc warp_inclusive = warp::inclusive_scan(total, op);
      const Acc aggregate = warp::shuffle_index(warp_inclusive, warps - 1);
      const Acc before = warp::shuffle_up(warp_inclusive, 1u);
      if (lane > 0 && lane < warps) warp_exclusive[s * warps + lane] = before;
      if (lane == 0) {
        if (tiles > 1) {
          if (tile == 0) {
            const maybe<Acc> first = program.first_prefix(aggregate);
            const Acc inclusive = first.present ? static_cast<Acc>(op(first.value, aggregate)) : aggregate;
            state.descriptors.store(0, make_tag(epoch, status_inclusive), inclusive);
          } else if (absorbs_prefix(op, aggregate)) {
            // an aggregate that absorbs every prefix (a segmented tile with a head:
            // core/operators.hpp) is the tile's inclusive value already, the same bits
            // (p op aggregate) would give: published as such at once, and not again after
            // the look-back, which the tile's items before its head still need. The
            // look-back treats an absorbing aggregate as inclusive too; publishing the
            // inclusive status here as well, with no second store, is faster than that
            // alone on the segmented scans (docs/performance.md, "What each path earns").
            state.descriptors.store(tile, make_tag(epoch, status_inclusive), aggregate);
          } else if constexpr (Protocol::publishes_aggregate) {
            state.descriptors.store(tile, make_tag(epoch, status_aggregate), aggregate);
          }
        }
        // written again for tile k + stages, after this thread's c for tile k, which waits
        // until the look-back warp has read them
        lookback_tile[s] = tile;
        lookback_epoch[s] = epoch;
        stage_aggregate[s] = aggregate;
        mbarrier_arrive(&aggregated[s]);
      }
    }

    // c. the previous tile (its warp prefixes were written in its b, before this tile's
    //    barrier)
    if (previous >= 0) store_tile(k - 1, previous, previous_carry);
    previous = tile;
    previous_carry = c;
  }
  // The last tile's warp prefixes were written after the last barrier: one more, before
  // the warps read them. (They are also ordered through the look-back warp, AGGREGATED
  // then PREFIXED, but compute-sanitizer's racecheck does not follow that chain and
  // reports it as a race.)
  compute_barrier<Tune.compute_threads>();
  if (previous >= 0) store_tile(k - 1, previous, previous_carry);
}

// ---- the host side ---------------------------------------------------------------------------
// One launch of a tile program over `tiles` tiles: persistent blocks, as many as the
// device holds at once, at most one a tile. `dependent`: launched as the programmatic
// dependent of the kernel before it in the stream (dependent_launch.cuh), whose output
// the tiles or the state need (its blocks start while that one ends, and wait for it
// first thing).
template <class Protocol, bool Deterministic, class Tiles, class Hook>
void launch(const char* function, const Tiles& program, std::int64_t tiles,
            single_pass::tile_state<typename Tiles::total> state, Hook hook, cudaStream_t stream,
            bool dependent = false) {
  constexpr auto kernel = pipelined_kernel<Protocol, Deterministic, Tiles, Hook>;
  constexpr int threads = Tiles::tune.kernel_threads();
  constexpr std::size_t ring = static_cast<std::size_t>(Tiles::tune.stages) * Tiles::stage_bytes;
  const int resident = resident_grid<kernel>(threads, function, ring);
  const auto grid = static_cast<unsigned>(tiles < resident ? tiles : resident);
  if (dependent) {
    launch_dependent(function, "pipelined_kernel", dim3(grid), dim3(threads), ring, stream, kernel, program,
                     tiles, state, hook);
    return;
  }
  kernel<<<grid, threads, ring, stream>>>(program, tiles, state, hook);
  TALLY_CUDA_CHECK_LAUNCH("pipelined_kernel", function);
}

// One pipelined scan of n >= 1 elements of 16-byte aligned pointers to Acc (checked by
// the caller: takes): the tile state as for the other single-pass scans
// (single_pass::with_call_state), then one launch.
//
// A state that holds anything (caller storage, or a graph's call-owned allocation:
// state.unzeroed) is zeroed by clear_kernel, and the kernel is launched as its
// programmatic dependent (dependent_launch.cuh): its blocks start while the clear runs,
// and every thread waits for the clear (wait_for_prerequisite_grid, first thing in the
// kernel) before the producer draws a ticket or anyone reads a descriptor. A memset
// instead would be a second launch that this one queues behind, a few percent of a scan
// at the sizes where the pipelined kernel starts (docs/performance.md, "What each path
// earns").
template <class Protocol, bool Exclusive, class Acc, class Op, class Hook = single_pass::no_stall>
void scan(const char* function, const char* storage_query, const Acc* in, Acc* out, std::int64_t n,
          seed_value<Acc, Exclusive> seed, Op op, const options& o, Hook hook = {},
          std::size_t promised_storage = 0) {
  static_assert(stages_v<Acc>, "the pipelined scan takes 4-, 8- and 16-byte values, and 12 to 64 bytes");
  if (n == 0) return;
  using program = typename tile_program<Exclusive, Acc, Op, wide_v<Acc>>::type;
  single_pass::with_call_state<Acc, tuning<Acc>()>(
      function, storage_query, n, o, promised_storage,
      [&](std::int64_t tiles, single_pass::tile_state<Acc> state) {
        const bool after_clear = state.unzeroed;
        if (after_clear) {
          launch_clear(function, state.header, single_pass::state_bytes<Acc>(tiles), o.stream);
          state.unzeroed = false;  // zeroed by the time the kernel's wait returns
        }
        single_pass::with_determinism<Protocol, Acc>(o.deterministic, [&](auto mode) {
          launch<Protocol, decltype(mode)::value>(function, program{in, out, n, seed, op}, tiles,
                                                  state, hook, o.stream, after_clear);
        });
      },
      /*launch_zeroes=*/true);
}

}  // namespace tally::detail::pipelined
