// tally/device/batched/strided.cuh -- batched scans along an axis that is not the last:
// a contiguous (outer, len, inner) array, inner >= 2, every line x[o][0..len)[c] scanned.
//
// (Along the last axis, inner == 1, the lines are contiguous segments of equal length:
// segmented/pairs_scan.cuh with uniform heads.)
//
// Here consecutive elements in memory belong to different lines, so the lines are scanned
// side by side: a tile is `rows` consecutive rows x `width` consecutive columns of one
// outer slice, loaded and stored row by row (coalesced), and every column of the tile is
// one independent scan that continues the same column of the tile above it. Each column
// runs its own single-pass look-back (Merrill & Garland's protocol with one thread per
// column): the tile publishes its column aggregates, then each column's thread walks up
// through the tiles above, one at a time, until it meets an inclusive value.
// One pass over the data, one launch; every shape keeps all the GPU busy. Three kernels:
//   columns_kernel (below): 16-byte aligned 4- and 8-byte values in rows of
//     >= 128 bytes, e.g. (2^20, 32) and (16384, 4096) axis 0: tiles of 256 rows x 128
//     bytes in registers, a windowed look-back per column;
//   strided_kernel (the general path): any type, pointer or iterator: tiles
//     of rows x up to 256 columns staged in shared memory, described here;
//   short_lines_kernel: lines of at most `items` elements, e.g. (2, 2^20) axis 0: one
//     thread per line, no look-back; short_line_words_kernel, the same with four
//     4-byte lines a thread (16-byte accesses) for lines of at most 8 rows where there
//     are at least 2^16 such words.
// (Two 4-byte columns are scanned as 8-byte pairs by the caller, segmented.cuh.)
//
// The tile (per block):
//   0. a ticket, in chunk-major order: ticket t is row chunk t / chains of chain
//      t % chains (chain = (outer slice, column group)), so the tile above always holds
//      an earlier ticket: waiting for it cannot deadlock, whatever the scheduling order
//   1. load rows x width elements into shared memory, row by row (thread i takes elements
//      i, i + threads, ...: consecutive threads read consecutive addresses)
//   2. each thread scans `items` consecutive rows of one column serially (thread (c, l)
//      takes rows l * items .. l * items + items - 1 of column c: lanes = threads / width
//      runs per column), keeping them in registers
//   3. the runs' totals are scanned across each column's lanes in shared memory
//      (Kogge-Stone with stride `width`: log2(lanes) steps)
//   4. threads 0..width-1 (column c = thread) find their column's prefix by look-back
//      (deterministic: every thread, several per column, windowed_prefix below)
//   5. every run adds its prefix, the values go back to shared memory and out row by row
// The descriptors of tile t live at t * width + c (format of single_pass/tile_state.cuh: epoch tags,
// the per-stream buffer, no reset between calls), packed: a look-back reads `width`
// neighbouring descriptors in one load (single_pass/tile_state.cuh, spacing). Every tile writes all `width` of them,
// unused columns included, so that every descriptor below tiles * width carries this
// call's epoch (the clearing rule of single_pass/tile_state.cuh).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/math.hpp"
#include "tally/core/options.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"

namespace tally::detail::strided {

inline constexpr int threads = 256;
using single_pass::maybe;
using single_pass::then;
// the columns' descriptors, packed (the header)
inline constexpr single_pass::spacing columns_spacing = single_pass::spacing::packed;
template <class Acc>
using column_state = single_pass::tile_state<Acc, columns_spacing>;

// Rows per thread run: 32 4-byte values (a 32 KiB tile), 16 8-byte ones, ... at least 1.
template <class Acc>
constexpr int items() {
  constexpr int by_size = static_cast<int>(128 / sizeof(Acc));
  return by_size < 1 ? 1 : by_size > 32 ? 32 : by_size;
}

struct geometry {
  std::int64_t outer, len, inner;
  int width;           // columns per tile: min(inner, threads)
  int lanes;           // runs per column: threads / width
  std::int64_t rows;   // rows per tile: lanes * items
  std::int64_t groups; // column groups: ceil(inner / width)
  std::int64_t chains; // outer * groups: independent stacks of tiles
  std::int64_t chunks; // tiles per chain: ceil(len / rows)
  std::int64_t tiles;  // chains * chunks
};

template <class Acc>
geometry make_geometry(std::int64_t outer, std::int64_t len, std::int64_t inner) {
  geometry g{};
  g.outer = outer;
  g.len = len;
  g.inner = inner;
  g.width = static_cast<int>(std::min<std::int64_t>(inner, threads));
  g.lanes = threads / g.width;
  g.rows = std::int64_t{g.lanes} * items<Acc>();
  g.groups = ceil_div(inner, g.width);
  g.chains = outer * g.groups;
  g.chunks = ceil_div(len, g.rows);
  g.tiles = g.chains * g.chunks;
  return g;
}

// Skews shared-memory indices by one slot every 32, so that the column runs of step 2
// (stride items * width) do not all fall into one bank when width < 32.
TALLY_DEVICE TALLY_FORCEINLINE int skew(int e) { return e + (e >> 5); }

// Where a block's tile lies: its ticket (drawn in chunk-major order when the tiles look
// back: ticket t is row chunk t / chains of chain t % chains, so the tile above always
// holds an earlier ticket; otherwise blockIdx.x), and the row chunk, outer slice and
// column group it covers. One barrier when it draws.
struct tile_place {
  std::int64_t t;
  unsigned epoch;
  std::int64_t chunk, slice, group;
};

template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE tile_place place_tile(const column_state<Acc>& state,
                                                     bool lookback, std::int64_t tiles,
                                                     std::int64_t chains, std::int64_t groups,
                                                     std::int64_t& shared_tile,
                                                     unsigned& shared_epoch) {
  if (lookback) {
    if (threadIdx.x == 0) {
      const single_pass::ticket t = single_pass::draw_ticket(state.header, tiles);
      shared_tile = t.tile;
      shared_epoch = t.epoch;
    }
    __syncthreads();  // every thread needs the tile before it loads
  }
  tile_place p{};
  p.t = lookback ? shared_tile : static_cast<std::int64_t>(blockIdx.x);
  p.epoch = lookback ? shared_epoch : 0u;
  p.chunk = p.t / chains;
  const std::int64_t chain = p.t - p.chunk * chains;
  p.slice = chain / groups;
  p.group = chain - p.slice * groups;
  return p;
}

// Every 2^29 calls: zero the descriptors past this call's `used` (single_pass/tile_state.cuh).
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void clear_unused(const column_state<Acc>& state, bool lookback,
                                                 const tile_place& p, std::int64_t tiles,
                                                 std::int64_t used) {
  if (lookback && single_pass::is_clearing_epoch(p.epoch)) {
    for (std::int64_t i = used + p.t * threads + threadIdx.x; i < state.capacity; i += tiles * threads) {
      state.descriptors.clear(i);
    }
  }
}

// ---- the windowed look-back of a column ------------------------------------------------------
// Step 4 of columns_kernel below, and of strided_kernel in deterministic mode: the prefix
// of column c of tile t from the tiles above it (the same column, `chains` tiles apart),
// `slots` lanes per column. Every thread of the block calls it (the loops are
// warp-uniform: the shuffles need every lane): thread tid is slot j = tid % slots of
// column c = tid / slots, and slots is a power of two of at most 32, so that a column's
// slots lie in one warp. walks: this column looks back (a tile below chunk 0, a column of
// the array); prefix: what it has without (the seed of an exclusive chunk 0, else none).
// Returns the column's prefix (in every slot of the column).
// Deterministic (columns_kernel's banner below): every window is folded strictly left to right
// from its nearest inclusive tile, and the look-back never moves past a window without
// one; each slot reads column_deterministic_reads tiles a round.
inline constexpr int column_deterministic_reads = 4;

// (K, the tiles a slot reads a round, and MaxSlots, a bound on slots that keeps the
// unrolled fold short, are template parameters; tid is the
// thread's index among the threads that call it together: threadIdx.x in the kernels
// of this file, the lane in batched/pipelined_columns.cuh's look-back warp.)
template <bool Deterministic, int K = Deterministic ? column_deterministic_reads : 1, int MaxSlots = 32,
          class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE maybe<Acc> windowed_prefix(const column_state<Acc>& state, unsigned epoch,
                                                          std::int64_t t, std::int64_t chains, int W,
                                                          int slots, bool walks, const Acc& aggregate,
                                                          maybe<Acc> prefix, Op& op,
                                                          int tid = static_cast<int>(threadIdx.x)) {
  using single_pass::status_aggregate;
  using single_pass::status_inclusive;
  using single_pass::tile_status;
  static_assert(MaxSlots >= 1 && MaxSlots <= 32, "a column's slots lie in one warp");
  const int lane = tid % 32;
  const int c = tid / slots, j = tid % slots;  // column c of the tile, slot j
  const int group_lane = lane - j;  // the column's first lane
  // Slot j reads the K tiles at window positions j * K .. j * K + K - 1 (position p:
  // tile `next - p * chains`, nearest first), all loads in flight at once. A round takes
  // the positions up to the nearest inclusive value, or (not deterministic) up to the
  // first one not published yet, then reads on from there; a deterministic round takes
  // all of them or none (then reads the same window again).
  const int window = slots * K;
  bool done = !walks;
  std::int64_t next = t - chains;
  while (__any_sync(warp::full_mask, !done)) {  // warp-uniform: the shuffles need every lane
    Acc value[K];
    int my_inclusive = K, my_waiting = K;  // this slot's first of each (K: none)
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const std::int64_t above_tile = next - (std::int64_t{j} * K + i) * chains;
      value[i] = aggregate;
      tile_status s = single_pass::status_invalid;
      if (!done && above_tile >= 0) s = state.descriptors.load(above_tile * W + c, epoch, value[i]);
      if (s == status_inclusive && my_inclusive == K) my_inclusive = i;
      if (s != status_inclusive && s != status_aggregate && my_waiting == K) my_waiting = i;
    }
    const unsigned group_bits = (slots == 32 ? ~0u : (1u << slots) - 1u) << group_lane;
    const unsigned inclusive_slots =
        (__ballot_sync(warp::full_mask, !done && my_inclusive < K) & group_bits) >> group_lane;
    const unsigned waiting_slots =
        (__ballot_sync(warp::full_mask, !done && my_waiting < K) & group_bits) >> group_lane;
    const int inclusive_slot = inclusive_slots ? __ffs(static_cast<int>(inclusive_slots)) - 1 : 0;
    const int waiting_slot = waiting_slots ? __ffs(static_cast<int>(waiting_slots)) - 1 : 0;
    const int inclusive_at = __shfl_sync(warp::full_mask, my_inclusive, group_lane + inclusive_slot);
    const int waiting_at = __shfl_sync(warp::full_mask, my_waiting, group_lane + waiting_slot);
    const int first_inclusive = inclusive_slots ? inclusive_slot * K + inclusive_at : window;
    const int first_waiting = waiting_slots ? waiting_slot * K + waiting_at : window;
    const bool found = first_inclusive < first_waiting;  // an inclusive value, all before it ready
    Acc folded = value[0];
    int take = 0;
    if constexpr (Deterministic) {
      // strictly left to right from the inclusive position (columns_kernel's banner)
      take = found ? first_inclusive + 1 : 0;
      if (__any_sync(warp::full_mask, found && !done)) {
        // slots and their positions farthest first; unrolled, so that the shuffles do
        // not wait for the folds (only the operator chain is serial)
#pragma unroll
        for (int js = MaxSlots - 1; js >= 0; --js) {
          if (js < slots) {  // warp-uniform: every lane shuffles
#pragma unroll
            for (int i = K - 1; i >= 0; --i) {
              const Acc v = warp::shuffle_index(value[i], group_lane + js);
              const int q = js * K + i;
              if (q == first_inclusive) folded = v;
              if (q < first_inclusive) folded = static_cast<Acc>(op(folded, v));
            }
          }
        }
      }
    } else {
      // up to the first waiting position, or through the nearest inclusive one; folded
      // with the earlier (farther) operand first: each slot its own positions below take,
      // then the slots' folds pairwise, so that after the steps slot 0 holds
      // value[take - 1] op ... op value[0] (positions across the slots)
      take = found ? first_inclusive + 1 : first_waiting;
#pragma unroll
      for (int i = 1; i < K; ++i) {
        if (j * K + i < take) folded = static_cast<Acc>(op(value[i], folded));
      }
      for (int d = 1; d < slots; d *= 2) {
        const Acc farther = warp::detail::shuffle_words(
            folded, [d](unsigned w) { return __shfl_down_sync(warp::full_mask, w, d); });
        if ((j + d) * K < take) folded = static_cast<Acc>(op(farther, folded));
      }
      folded = warp::shuffle_index(folded, group_lane);
    }
    if (!done && take > 0) {
      prefix = {prefix.present ? static_cast<Acc>(op(folded, prefix.value)) : folded, true};
      next -= take * chains;
    }
    const bool waits = !done && (Deterministic ? !found : first_waiting < first_inclusive);
    done = done || found;
    if (__any_sync(warp::full_mask, waits)) __nanosleep(100);  // earlier tickets still run
  }
  return prefix;
}

// Step 4 of both kernels for column c = tid / slots of tile t (every thread calls it, as
// windowed_prefix): the column's prefix (the seed of an exclusive chunk 0, else what
// windowed_prefix finds above, if the column walks), then, in the column's first slot,
// its inclusive value published (with look-back: every column publishes, unused ones
// included; the clearing rule, see the top) and its prefix, if any, in col_prefix[c].
template <bool Deterministic, class Acc, bool Exclusive, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void column_prefix(const column_state<Acc>& state, unsigned epoch,
                                                  std::int64_t t, std::int64_t chunk,
                                                  std::int64_t chains, int W, int slots,
                                                  bool lookback, bool walks, const Acc& aggregate,
                                                  const seed_value<Acc, Exclusive>& seed, Op& op,
                                                  Acc* col_prefix) {
  const int tid = static_cast<int>(threadIdx.x);
  const int c = tid / slots, j = tid % slots;
  maybe<Acc> prefix{aggregate, false};
  if constexpr (Exclusive) {
    if (chunk == 0) prefix = {seed.value, true};
  }
  prefix = windowed_prefix<Deterministic>(state, epoch, t, chains, W, slots, walks, aggregate, prefix, op);
  if (c < W && j == 0) {
    if (lookback) {
      const Acc inclusive = prefix.present ? static_cast<Acc>(op(prefix.value, aggregate)) : aggregate;
      state.descriptors.store(t * W + c, single_pass::make_tag(epoch, single_pass::status_inclusive),
                              inclusive);
    }
    if (prefix.present) col_prefix[c] = prefix.value;
  }
}

// The look-back lanes of a column in strided_kernel's deterministic mode: the largest power
// of two of at most 32 and threads / W (windowed_prefix needs a column's slots in one warp).
TALLY_HOST_DEVICE constexpr int strided_slots(int W) {
  int slots = 32;
  while (slots > 1 && slots * W > threads) slots /= 2;
  return slots;
}

template <int Items, bool Exclusive, bool Deterministic, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(threads)
    strided_kernel(In in, Out out, geometry g, seed_value<Acc, Exclusive> seed, Op op,
                   column_state<Acc> state) {
  using single_pass::status_aggregate;
  using single_pass::status_inclusive;
  using single_pass::tile_status;
  using single_pass::make_tag;
  constexpr int capacity = threads * Items;
  __shared__ block::detail::uninitialized_array<Acc, capacity + capacity / 32> tile;
  __shared__ block::detail::uninitialized_array<Acc, threads> runs;        // run totals, scanned
  __shared__ block::detail::uninitialized_array<Acc, threads> col_prefix;  // per column
  __shared__ std::int64_t ticket_tile;
  __shared__ unsigned ticket_epoch;

  const int tid = static_cast<int>(threadIdx.x);
  const bool lookback = g.chunks > 1;

  // 0. the tile (without look-back, tiles are independent: blockIdx will do)
  const tile_place place = place_tile(state, lookback, g.tiles, g.chains, g.groups, ticket_tile, ticket_epoch);
  const std::int64_t t = place.t, chunk = place.chunk, slice = place.slice, group = place.group;
  const unsigned epoch = place.epoch;
  const std::int64_t col0 = group * g.width;
  const int cols_here = static_cast<int>(min_of<std::int64_t>(g.width, g.inner - col0));
  const std::int64_t row0 = chunk * g.rows;
  const int rows_here = static_cast<int>(min_of<std::int64_t>(g.rows, g.len - row0));
  const std::int64_t origin = (slice * g.len + row0) * g.inner + col0;  // element (0, 0)
  const int W = g.width;
  clear_unused(state, lookback, place, g.tiles, g.tiles * W);

  // 1. load, row by row. Element e of the tile is (row e / W, column e % W); thread tid
  // takes e = tid + q * threads, whose (row, column) advance by (threads / W, threads % W).
  // Positions outside the array (a partial last chunk, a partial last column group) load
  // a copy of an element inside the tile (defined padding, never stored; the scan is
  // causal, so padding rows after the valid ones change no valid result).
  // All Items loads go to registers first, then to shared memory: `in` is a generic
  // pointer, which the compiler must assume may alias the shared tile, so a loop that
  // stored each value to shared memory before the next load would wait for every load in
  // turn.
  const int row_step = threads / W, col_step = threads % W;
  const int tile_elements = static_cast<int>(g.rows) * W;  // element e is in the tile iff e < this
  Acc v[Items];
  {
    int r = tid / W, c = tid % W;
#pragma unroll
    for (int q = 0; q < Items; ++q) {
      if (r < g.rows) {
        const int rr = r < rows_here ? r : rows_here - 1;
        const int cc = c < cols_here ? c : cols_here - 1;
        v[q] = static_cast<Acc>(in[origin + std::int64_t{rr} * g.inner + cc]);
      }
      c += col_step;
      if (c >= W) {
        c -= W;
        ++r;
      }
      r += row_step;
    }
#pragma unroll
    for (int q = 0; q < Items; ++q) {
      if (q * threads + tid < tile_elements) tile[skew(q * threads + tid)] = v[q];
    }
  }
  __syncthreads();  // the tile is in shared memory before the column runs read it

  // 2. column runs: thread (c, l) = (tid % W, tid / W) scans rows l*Items .. +Items-1
  const int c = tid % W, l = tid / W;
  const bool has_run = l < g.lanes;
  if (has_run) {
#pragma unroll
    for (int j = 0; j < Items; ++j) {
      v[j] = tile[skew((l * Items + j) * W + c)];
      if (j > 0) v[j] = static_cast<Acc>(op(v[j - 1], v[j]));
    }
    runs[tid] = v[Items - 1];
  }
  __syncthreads();  // all run totals stored before the cross-lane scan reads them

  // 3. scan the run totals of each column across its lanes (inclusive): Kogge-Stone with
  // stride W, the temp + two barriers form (read everything, barrier, write, barrier)
  for (int d = 1; d < g.lanes; d *= 2) {
    const bool active = has_run && l >= d;
    Acc sum;
    if (active) sum = static_cast<Acc>(op(runs[tid - d * W], runs[tid]));
    __syncthreads();  // every read of this step is done before any write
    if (active) runs[tid] = sum;
    __syncthreads();  // the step's writes are visible before the next step reads
  }

  // 4. the column prefixes. A column has one when the scan is exclusive (chunk 0: the
  // seed) or the tile is below chunk 0 (look-back; columns past the array's last column
  // skip it and have none).
  const bool has_prefix = chunk == 0 ? Exclusive : c < cols_here;
  if constexpr (Deterministic) {
    // Deterministic (a kernel of its own, for values whose operator is not exact): the
    // windowed look-back of columns_kernel, strided_slots(W) lanes per column, each window
    // folded strictly left to right from its nearest inclusive tile (windowed_prefix): the
    // left fold of the tile aggregates, the same bits in every run. The window, not a wait
    // for the inclusive value right above, since that wait costs one round trip per tile
    // of a chain.
    const int slots = strided_slots(W);
    const int column = tid / slots, j = tid % slots;
    const bool in_window = column < W;
    const bool walks = in_window && chunk > 0 && column < cols_here;
    const Acc aggregate = runs[(g.lanes - 1) * W + (in_window ? column : 0)];
    // the aggregate first (the decoupling): the tiles below fold it
    if (walks && j == 0) state.descriptors.store(t * W + column, make_tag(epoch, status_aggregate), aggregate);
    column_prefix<true>(state, epoch, t, chunk, g.chains, W, slots, lookback, walks, aggregate, seed, op,
                        col_prefix.data());
  } else if (tid < W) {
    // threads 0..W-1: column tid
    const Acc aggregate = runs[(g.lanes - 1) * W + tid];
    maybe<Acc> prefix{aggregate, false};
    if (chunk == 0) {
      if constexpr (Exclusive) prefix = {seed.value, true};
    } else if (tid < cols_here) {
      // Publish the aggregate first (the decoupling), then walk up the column one tile at
      // a time (a window of several descriptors read together is slower here:
      // docs/performance.md, "What each path earns"), folding aggregates until an
      // inclusive value.
      const std::int64_t mine = t * W + tid;
      state.descriptors.store(mine, make_tag(epoch, status_aggregate), aggregate);
      std::int64_t above = t - g.chains;  // the same column of the tile above
      bool found = false;
      Acc acc = aggregate;  // reassigned before use
      while (true) {
        Acc value;
        const tile_status s = state.descriptors.load(above * W + tid, epoch, value);
        if (s == status_inclusive || s == status_aggregate) {
          acc = found ? static_cast<Acc>(op(value, acc)) : value;  // earlier operand first
          found = true;
          if (s == status_inclusive) break;
          above -= g.chains;  // an aggregate: keep walking up (chunk 0 is always inclusive)
        } else {
          __nanosleep(100);  // not published yet: that tile holds an earlier ticket and runs
        }
      }
      prefix = {acc, true};
    }
    if (lookback) {
      // Every column publishes, unused ones included (the clearing rule, see the top).
      const Acc inclusive = prefix.present ? static_cast<Acc>(op(prefix.value, aggregate)) : aggregate;
      state.descriptors.store(t * W + tid, make_tag(epoch, status_inclusive), inclusive);
    }
    if (prefix.present) col_prefix[tid] = prefix.value;
  }
  __syncthreads();  // the column prefixes are stored before the runs read them

  // 5. each run's prefix (column prefix, then the lanes above it), back to shared memory
  if (has_run) {
    maybe<Acc> p{v[0], false};
    if (has_prefix) p = {col_prefix[c], true};
    if (l > 0) p = then(p, runs[(l - 1) * W + c], op);
    if constexpr (Exclusive) {
#pragma unroll
      for (int j = Items - 1; j > 0; --j) v[j] = static_cast<Acc>(op(p.value, v[j - 1]));
      v[0] = p.value;
    } else if (p.present) {
#pragma unroll
      for (int j = 0; j < Items; ++j) v[j] = static_cast<Acc>(op(p.value, v[j]));
    }
#pragma unroll
    for (int j = 0; j < Items; ++j) tile[skew((l * Items + j) * W + c)] = v[j];
  }
  __syncthreads();  // the results are in shared memory before the row-by-row store

  // the same order as the load: every shared-memory read first, then the stores
#pragma unroll
  for (int q = 0; q < Items; ++q) {
    if (q * threads + tid < tile_elements) v[q] = tile[skew(q * threads + tid)];
  }
  {
    int r = tid / W, cc = tid % W;
#pragma unroll
    for (int q = 0; q < Items; ++q) {
      if (r < rows_here && cc < cols_here) out[origin + std::int64_t{r} * g.inner + cc] = v[q];
      cc += col_step;
      if (cc >= W) {
        cc -= W;
        ++r;
      }
      r += row_step;
    }
  }
}

// ---- columns_kernel: whole columns in registers (16-byte aligned 4- and 8-byte values) -----
// When the values allow 16-byte vectors (pointers to Acc itself, 16-byte aligned, inner a
// multiple of Vec = 16 / sizeof(Acc) and rows of at least 128 bytes), a thread owns Vec
// adjacent columns (one 16-byte "column word") over `column_rows` consecutive rows and
// keeps them in registers from the load to the store: no tile in shared memory, 8 vector
// loads in flight per thread, 3 blocks per SM (strided_kernel above holds 2 or 1 with its
// staged tile). A tile is `words` column words wide
// (column_words below) and 256 / words row groups of column_rows rows high:
//   (2^20, 32) and (16384, 4096) int32 axis 0: 8 words x 32 row groups = 256 rows x 32
//   columns; a chain of 4096 tiles, or 128 chains of 64.
// Steps per tile:
//   0. the ticket, chunk-major (as in strided_kernel: the tile above holds an earlier
//      ticket, so waiting for it cannot deadlock)
//   1. each thread loads its rows (a partial chunk repeats the last row, a partial column
//      group the last column word: defined padding, never stored) and scans them down,
//      column by column, in registers
//   2. its prefix within the tile: the totals of the row groups above (shuffles within a
//      warp, shared memory across warps; one barrier)
//   3. the last row group's threads hold the tile's column aggregates: to shared memory,
//      and published (one barrier)
//   4. every column's prefix by a windowed look-back: min(32, 256 / columns) lanes per
//      column read that many tiles above at once (one barrier)
//   5. every thread adds its column prefix and stores its rows
// Deterministic (options.deterministic, values whose operator is not exact: a kernel of
// its own; few long chains from 16 MiB on take the reduce-then-scan instead,
// batched/columns_reduce_then_scan.cuh): the window is folded strictly left to right from its
// nearest inclusive tile, and a look-back never moves past a window without one (single_pass/decoupled_lookback.cuh's
// banner: every inclusive value is then the left fold of the tile aggregates above it,
// the same operations in every run). So the window is what moves the frontier of
// inclusive tiles: each lane reads `column_deterministic_reads` tiles a round (a wait for
// the inclusive value right above each tile would cost one round trip per tile of a
// chain).
inline constexpr int column_rows = 8;

template <class Acc>
inline constexpr int column_vec = static_cast<int>(16 / sizeof(Acc));

struct column_geometry {
  std::int64_t outer, len, inner;
  int words;            // column words per tile (a power of two, at most threads)
  int row_groups;       // threads / words
  int width;            // columns per tile: words * Vec
  std::int64_t rows;    // rows per tile: row_groups * column_rows
  std::int64_t groups;  // column groups: ceil(inner / width)
  std::int64_t chains;  // outer * groups
  std::int64_t chunks;  // tiles per chain: ceil(len / rows)
  std::int64_t tiles;   // chains * chunks
};

// Column words per tile (inner / Vec >= 8): 8, a 128-byte line per row and 256 rows per
// tile, the most independent chains of tiles; wider only while the tile still covers a
// whole line (len <= rows), which saves the look-back; at most threads / Vec (one look-back
// lane per column). Fewer, wider chains lose more than the wider rows gain
// (docs/performance.md, "Plans and thresholds").
template <class Acc>
int column_words(std::int64_t len) {
  constexpr int vec = column_vec<Acc>;
  int words = 8;
  while (words < threads / vec && std::int64_t{threads / (2 * words)} * column_rows >= len) words *= 2;
  return words;
}

template <class Acc>
column_geometry make_column_geometry(std::int64_t outer, std::int64_t len, std::int64_t inner,
                                     int words) {
  column_geometry g{};
  g.outer = outer;
  g.len = len;
  g.inner = inner;
  g.words = words;
  g.row_groups = threads / g.words;
  g.width = g.words * column_vec<Acc>;
  g.rows = std::int64_t{g.row_groups} * column_rows;
  g.groups = ceil_div(inner, g.width);
  g.chains = outer * g.groups;
  g.chunks = ceil_div(len, g.rows);
  g.tiles = g.chains * g.chunks;
  return g;
}

// A thread's RUN of a column tile: column word `word` (Vec columns) in rows row_group *
// column_rows .. + column_rows - 1 of the tile (thread tid: word = tid % words, row_group
// = tid / words). Steps 1-2 of columns_kernel below, shared with the deterministic
// reduce-then-scan (batched/columns_reduce_then_scan.cuh).
struct run_place {
  int word, row_group;
  std::int64_t column;  // the run's first column
  bool column_valid;    // the word lies in the array (a partial last group has some that do not)
  std::int64_t row0;    // the run's first row in the line
};
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE run_place place_run(const column_geometry& g, std::int64_t chunk,
                                                   std::int64_t group) {
  run_place r{};
  const int tid = static_cast<int>(threadIdx.x);
  r.word = tid % g.words;
  r.row_group = tid / g.words;
  r.column = group * g.width + std::int64_t{r.word} * column_vec<Acc>;
  r.column_valid = r.column < g.inner;
  r.row0 = chunk * g.rows + std::int64_t{r.row_group} * column_rows;
  return r;
}
// (A kernel computes its run_place itself, first thing, and column_run holds values only:
// carrying the places in column_run, or computing them after the clear of the
// descriptors, makes ptxas give columns_kernel more registers, two blocks an SM instead
// of three.)
template <class Acc>
struct column_run {
  Acc x[column_rows][column_vec<Acc>];  // the rows, scanned down the column in place
  maybe<Acc> above[column_vec<Acc>];    // the prefix within the tile: the row groups above
};

// Step 1's loads for row chunk `chunk` of column group `group` of outer slice `slice`: the
// run's rows (a partial chunk repeats the last row, a partial column group the last column
// word: defined padding, never stored), all loads issued before any is used.
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void load_run(const Acc* in, const column_geometry& g, std::int64_t chunk,
                                             std::int64_t slice, std::int64_t group, column_run<Acc>& run) {
  constexpr int Vec = column_vec<Acc>;
  const run_place at = place_run<Acc>(g, chunk, group);
  const Acc* line_in = in + slice * g.len * g.inner + (at.column_valid ? at.column : g.inner - Vec);
#pragma unroll
  for (int r = 0; r < column_rows; ++r) {
    const std::int64_t row = at.row0 + r < g.len ? at.row0 + r : g.len - 1;
    single_pass::load_vector<Vec>(line_in, row * g.inner, run.x[r]);
  }
}

// The rest of steps 1-2, on the rows load_run loaded: scanned down column by column in
// registers, then the run's prefix within the tile. `totals`: shared, threads * Vec
// values. Every thread of the block calls it (one barrier).
template <class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void scan_loaded_run(const column_geometry& g, Acc* totals, column_run<Acc>& run,
                                                    Op& op) {
  constexpr int Vec = column_vec<Acc>;
  constexpr int Rows = column_rows;
  const int tid = static_cast<int>(threadIdx.x);
  const int word = tid % g.words, row_group = tid / g.words;
  auto& x = run.x;
#pragma unroll
  for (int r = 1; r < Rows; ++r) {
#pragma unroll
    for (int k = 0; k < Vec; ++k) x[r][k] = static_cast<Acc>(op(x[r - 1][k], x[r][k]));
  }

  // 2. this run's prefix within the tile: the totals of the row groups above, in order.
  // Narrow tiles (words < 32: 32 / words row groups in a warp) scan their runs across the
  // warp (Kogge-Stone over the lanes of the same column word, shuffles), then combine the
  // totals of the warps above (at most 7); wide ones (at most 8 row groups) combine the
  // totals of the row groups above directly.
  auto& above = run.above;
#pragma unroll
  for (int k = 0; k < Vec; ++k) above[k] = {x[0][k], false};
  const int lane = tid % 32, warp_id = tid / 32;
  const int W = g.width;
  if (g.words < 32) {
    const int runs_in_warp = 32 / g.words, r = lane / g.words;
    Acc inclusive[Vec];
#pragma unroll
    for (int k = 0; k < Vec; ++k) inclusive[k] = x[Rows - 1][k];
    for (int d = 1; d < runs_in_warp; d *= 2) {
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        const Acc earlier = warp::shuffle_up(inclusive[k], static_cast<unsigned>(g.words * d));
        if (r >= d) inclusive[k] = static_cast<Acc>(op(earlier, inclusive[k]));
      }
    }
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      const Acc earlier = warp::shuffle_up(inclusive[k], static_cast<unsigned>(g.words));
      if (r > 0) above[k] = {earlier, true};
      if (r == runs_in_warp - 1) totals[warp_id * W + word * Vec + k] = inclusive[k];  // the warp's
    }
    __syncthreads();  // every warp total is stored before any thread combines them
    for (int w = warp_id - 1; w >= 0; --w) {  // nearest first: each is earlier than the rest
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        const Acc total = totals[w * W + word * Vec + k];
        above[k] = {above[k].present ? static_cast<Acc>(op(total, above[k].value)) : total, true};
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) totals[tid * Vec + k] = x[Rows - 1][k];
    __syncthreads();  // every run total is stored before any thread combines them
    for (int q = 0; q < row_group; ++q) {
#pragma unroll
      for (int k = 0; k < Vec; ++k) above[k] = then(above[k], totals[(q * g.words + word) * Vec + k], op);
    }
  }
}

// Steps 1-2 for row chunk `chunk` of column group `group` of outer slice `slice`: the
// run's rows loaded, scanned down, and its prefix within the tile (load_run, then
// scan_loaded_run). Every thread of the block calls it (one barrier).
template <class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void scan_run(const Acc* in, const column_geometry& g, std::int64_t chunk,
                                             std::int64_t slice, std::int64_t group, Acc* totals,
                                             column_run<Acc>& run, Op& op) {
  load_run(in, g, chunk, slice, group, run);
  scan_loaded_run(g, totals, run, op);
}

template <bool Exclusive, bool Deterministic, class Acc, class Op>
__global__ void __launch_bounds__(threads)
    columns_kernel(const Acc* in, Acc* out, column_geometry g, seed_value<Acc, Exclusive> seed,
                   Op op, column_state<Acc> state) {
  using single_pass::status_aggregate;
  using single_pass::make_tag;
  constexpr int Vec = column_vec<Acc>;
  __shared__ block::detail::uninitialized_array<Acc, threads * Vec> totals;      // [row group][word][k]
  __shared__ block::detail::uninitialized_array<Acc, threads> aggregates;  // per column of the tile
  __shared__ block::detail::uninitialized_array<Acc, threads> col_prefix;  // per column of the tile
  __shared__ std::int64_t ticket_tile;
  __shared__ unsigned ticket_epoch;

  const int tid = static_cast<int>(threadIdx.x);
  const bool lookback = g.chunks > 1;

  // 0. the tile (without look-back, tiles are independent: blockIdx will do)
  const tile_place place = place_tile(state, lookback, g.tiles, g.chains, g.groups, ticket_tile, ticket_epoch);
  const std::int64_t t = place.t, chunk = place.chunk, slice = place.slice, group = place.group;
  const unsigned epoch = place.epoch;
  const run_place at = place_run<Acc>(g, chunk, group);
  clear_unused(state, lookback, place, g.tiles, g.tiles * g.width);

  // 1-2. the run's rows, scanned, and its prefix within the tile (scan_run above)
  column_run<Acc> run;
  scan_run(in, g, chunk, slice, group, totals.data(), run, op);
  auto& x = run.x;
  auto& above = run.above;
  const int W = g.width;

  // 3. the tile's column aggregates (the last row group's threads: their prefix within
  // the tile and their own total), to shared memory for the look-back and published at
  // once (the decoupling)
  if (at.row_group == g.row_groups - 1) {
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      const Acc aggregate = then(above[k], x[column_rows - 1][k], op).value;
      aggregates[at.word * Vec + k] = aggregate;
      if (chunk > 0 && at.column_valid) {
        state.descriptors.store(t * W + at.word * Vec + k, make_tag(epoch, status_aggregate), aggregate);
      }
    }
  }
  __syncthreads();  // the aggregates are in shared memory before the look-back reads them

  // 4. the column prefixes, by all threads (windowed_prefix above): `slots` = min(32,
  // threads / W) consecutive lanes per column (W is a power of two here), a window of that
  // many tiles above per round (deterministic: K = column_deterministic_reads times as
  // many, since a walk step per tile would cost a round trip per tile, and the chain of
  // tiles above bounds a thin shape; wider windows are slower where not deterministic:
  // docs/performance.md, "What each path earns"; column_prefix above). A column has a
  // prefix when the scan is exclusive (chunk 0: the seed) or the tile is below chunk 0
  // (columns past the array's last column skip the look-back and have none).
  {
    const int slots = min_of(32, threads / W);
    const int c = tid / slots;  // column c of the tile (slot tid % slots)
    const bool in_window = c < W;
    const bool walks = in_window && chunk > 0 && group * W + c < g.inner;
    const Acc aggregate = aggregates[in_window ? c : 0];
    column_prefix<Deterministic>(state, epoch, t, chunk, g.chains, W, slots, lookback, walks, aggregate,
                                 seed, op, col_prefix.data());
  }
  __syncthreads();  // the column prefixes are stored before the runs read them

  // 5. each run's prefix (the column's, then the row groups above), the results, the stores
  const bool has_column_prefix = chunk == 0 ? Exclusive : at.column_valid;
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    maybe<Acc> p{x[0][k], false};
    if (has_column_prefix) p = {col_prefix[at.word * Vec + k], true};
    if (above[k].present) p = then(p, above[k].value, op);
    if constexpr (Exclusive) {
#pragma unroll
      for (int r = column_rows - 1; r > 0; --r) x[r][k] = static_cast<Acc>(op(p.value, x[r - 1][k]));
      x[0][k] = p.value;
    } else if (p.present) {
#pragma unroll
      for (int r = 0; r < column_rows; ++r) x[r][k] = static_cast<Acc>(op(p.value, x[r][k]));
    }
  }
  if (at.column_valid) {
    Acc* line_out = out + slice * g.len * g.inner + at.column;
#pragma unroll
    for (int r = 0; r < column_rows; ++r) {
      if (at.row0 + r < g.len) single_pass::store_vector<Vec>(line_out, (at.row0 + r) * g.inner, x[r]);
    }
  }
}

// Lines of at most Items elements: one thread per line (a column of one outer slice),
// in chunks of `chunk` rows: the chunk's loads first, then its serial scan and its stores
// (in place stays safe: a line is read and written by its thread alone, each chunk read
// before it is written). Consecutive threads take consecutive columns: every row access
// of a warp is contiguous. (Chunks, rather than all Items rows unrolled under `j < len`,
// keep short lines near the time of an elementwise kernel.)
template <int Items, bool Exclusive, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(threads)
    short_lines_kernel(In in, Out out, std::int64_t outer, int len, std::int64_t inner,
                       seed_value<Acc, Exclusive> seed, Op op) {
  constexpr int chunk = 4;
  const std::int64_t line = static_cast<std::int64_t>(blockIdx.x) * threads + threadIdx.x;
  if (line >= outer * inner) return;
  const std::int64_t slice = line / inner;
  std::int64_t at = slice * len * inner + (line - slice * inner);  // the line's row j0
  // the running value (inclusive: none before row 0; its bits come from row 0 itself, a
  // cache hit, so Acc needs no default constructor; len >= 1)
  maybe<Acc> p = [&] {
    if constexpr (Exclusive) {
      return maybe<Acc>{seed.value, true};
    } else {
      return maybe<Acc>{static_cast<Acc>(in[at]), false};
    }
  }();
  for (int j0 = 0; j0 < len; j0 += chunk) {
    Acc v[chunk];
#pragma unroll
    for (int j = 0; j < chunk; ++j) {
      if (j0 + j < len) v[j] = static_cast<Acc>(in[at + j * inner]);
    }
#pragma unroll
    for (int j = 0; j < chunk; ++j) {
      if (j0 + j < len) {
        if constexpr (Exclusive) {
          out[at + j * inner] = p.value;
          p = then(p, v[j], op);
        } else {
          p = then(p, v[j], op);
          out[at + j * inner] = p.value;
        }
      }
    }
    at += chunk * inner;
  }
}

// short_lines_kernel for 16-byte aligned pointers to a 4-byte Acc and rows of a multiple
// of 16 bytes: each thread takes the 4 neighbouring lines of one 16-byte word (one
// 16-byte load and store a row instead of 4 narrow ones: the elementwise copy's
// accesses). A chunk's results are all computed before its stores (storing each row as it
// is scanned slows the scans, the exclusive one most). Same in-place argument. Not taken
// with fewer than 2^16 words (a quarter of the threads), for lines of more than 8 rows (a
// longer serial chain per thread), or for 8-byte values, whose scalar accesses are
// already 8 bytes (docs/performance.md, "Plans and thresholds").
inline constexpr std::int64_t min_short_line_words = thresholds.short_line_words_min;
inline constexpr std::int64_t max_short_line_word_rows = thresholds.short_line_word_rows_max;

template <bool Exclusive, class Acc, class Op>
__global__ void __launch_bounds__(threads)
    short_line_words_kernel(const Acc* in, Acc* out, std::int64_t outer, int len, std::int64_t inner,
                            seed_value<Acc, Exclusive> seed, Op op) {
  constexpr int chunk = 4;
  constexpr int Vec = 4;
  static_assert(sizeof(Acc) == 4, "four values a 16-byte word");
  const std::int64_t words = inner / Vec;  // 16-byte words a row
  const std::int64_t word = static_cast<std::int64_t>(blockIdx.x) * threads + threadIdx.x;
  if (word >= outer * words) return;
  const std::int64_t slice = word / words;
  std::int64_t at = slice * len * inner + (word - slice * words) * Vec;  // the word's row 0
  Acc p[Vec];  // the running values (inclusive: row 0's own, set at j = 0)
  for (int j0 = 0; j0 < len; j0 += chunk) {
    Acc v[chunk][Vec];
#pragma unroll
    for (int j = 0; j < chunk; ++j) {
      if (j0 + j < len) single_pass::load_vector<Vec>(in, at + j * inner, v[j]);
    }
#pragma unroll
    for (int j = 0; j < chunk; ++j) {
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        if constexpr (Exclusive) {
          const Acc before = j0 + j == 0 ? seed.value : p[k];
          p[k] = static_cast<Acc>(op(before, v[j][k]));
          v[j][k] = before;
        } else {
          p[k] = j0 + j == 0 ? v[j][k] : static_cast<Acc>(op(p[k], v[j][k]));
          v[j][k] = p[k];
        }
      }
    }
#pragma unroll
    for (int j = 0; j < chunk; ++j) {
      if (j0 + j < len) single_pass::store_vector<Vec>(out, at + j * inner, v[j]);
    }
    at += chunk * inner;
  }
}

// Whether columns_kernel may take In and Out: pointers to a 4- or 8-byte Acc itself
// (alignment and inner are checked at run time).
template <class Acc, class In, class Out>
inline constexpr bool columns_take_v =
    single_pass::vectorisable_v<Acc> && std::is_pointer_v<In> && std::is_pointer_v<Out> &&
    std::is_same_v<std::remove_cv_t<std::remove_pointer_t<In>>, Acc> &&
    std::is_same_v<std::remove_pointer_t<Out>, Acc>;

// One launch of columns_kernel (len > 0, inner a multiple of column_vec, aligned pointers).
template <bool Exclusive, class Acc, class Op>
void columns(const char* function, const Acc* in, Acc* out, std::int64_t outer, std::int64_t len,
             std::int64_t inner, seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  const column_geometry g = make_column_geometry<Acc>(outer, len, inner, column_words<Acc>(len));
  if (g.tiles > 0x7fffffff) throw_invalid(function, "shape", "needs more than 2^31 - 1 tiles");
  auto launch = [&](column_state<Acc> state) {
    // the deterministic kernel only where it differs (values whose operator is not exact)
    if constexpr (!single_pass::exact_values<Acc>::value) {
      if (o.deterministic) {
        columns_kernel<Exclusive, true, Acc><<<static_cast<unsigned>(g.tiles), threads, 0, o.stream>>>(
            in, out, g, seed, op, state);
        TALLY_CUDA_CHECK_LAUNCH("columns_kernel", function);
        return;
      }
    }
    columns_kernel<Exclusive, false, Acc><<<static_cast<unsigned>(g.tiles), threads, 0, o.stream>>>(
        in, out, g, seed, op, state);
    TALLY_CUDA_CHECK_LAUNCH("columns_kernel", function);
  };
  if (g.chunks == 1) {
    launch(column_state<Acc>{});  // no look-back: no descriptors
    return;
  }
  single_pass::with_tile_state<Acc, columns_spacing>(function, "(none: batched scans take no caller storage)",
                                    g.tiles * g.width, 0, o, launch);
}

template <bool Exclusive, class Acc, class In, class Out, class Op>
void scan(const char* function, In in, Out out, std::int64_t outer, std::int64_t len,
          std::int64_t inner, seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  static_assert(std::is_trivially_copyable_v<Acc>,
                "batched scans need a trivially copyable accumulator type");
  constexpr int Items = items<Acc>();
  if (outer == 0 || len == 0 || inner == 0) return;
  if (len <= Items) {
    if constexpr (columns_take_v<Acc, In, Out> && sizeof(Acc) == 4) {
      if (len <= max_short_line_word_rows && inner % 4 == 0 &&
          outer * (inner / 4) >= min_short_line_words && single_pass::aligned_16(in) &&
          single_pass::aligned_16(out)) {
        const std::int64_t blocks = ceil_div(outer * (inner / 4), threads);
        if (blocks > 0x7fffffff) throw_invalid(function, "shape", "has too many lines for one launch");
        short_line_words_kernel<Exclusive, Acc>
            <<<static_cast<unsigned>(blocks), threads, 0, o.stream>>>(in, out, outer, static_cast<int>(len),
                                                                      inner, seed, op);
        TALLY_CUDA_CHECK_LAUNCH("short_line_words_kernel", function);
        return;
      }
    }
    const std::int64_t blocks = ceil_div(outer * inner, threads);
    if (blocks > 0x7fffffff) throw_invalid(function, "shape", "has too many lines for one launch");
    short_lines_kernel<Items, Exclusive, Acc><<<static_cast<unsigned>(blocks), threads, 0, o.stream>>>(
        in, out, outer, static_cast<int>(len), inner, seed, op);
    TALLY_CUDA_CHECK_LAUNCH("short_lines_kernel", function);
    return;
  }
  if constexpr (columns_take_v<Acc, In, Out>) {
    // (narrower rows, less than 128 bytes, keep strided_kernel: its tiles are faster there
    // than tiles of 16-byte words, docs/performance.md, "What each path earns")
    if (inner % column_vec<Acc> == 0 && inner / column_vec<Acc> >= 8 && single_pass::aligned_16(in) &&
        single_pass::aligned_16(out)) {
      columns(function, in, out, outer, len, inner, seed, op, o);
      return;
    }
  }
  const geometry g = make_geometry<Acc>(outer, len, inner);
  if (g.tiles > 0x7fffffff) {
    throw_invalid(function, "shape", "needs more than 2^31 - 1 tiles");
  }
  const auto grid = static_cast<unsigned>(g.tiles);
  auto launch = [&](column_state<Acc> state) {
    // the deterministic kernel only where it differs (values whose operator is not exact)
    if constexpr (!single_pass::exact_values<Acc>::value) {
      if (o.deterministic) {
        strided_kernel<Items, Exclusive, true, Acc><<<grid, threads, 0, o.stream>>>(in, out, g, seed, op, state);
        TALLY_CUDA_CHECK_LAUNCH("strided_kernel", function);
        return;
      }
    }
    strided_kernel<Items, Exclusive, false, Acc><<<grid, threads, 0, o.stream>>>(in, out, g, seed, op, state);
    TALLY_CUDA_CHECK_LAUNCH("strided_kernel", function);
  };
  if (g.chunks == 1) {
    launch(column_state<Acc>{});  // no look-back: no descriptors
    return;
  }
  single_pass::with_tile_state<Acc, columns_spacing>(function, "(none: batched scans take no caller storage)",
                                                     g.tiles * g.width, 0, o, launch);
}

}  // namespace tally::detail::strided
