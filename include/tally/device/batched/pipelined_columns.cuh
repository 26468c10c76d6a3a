// tally/device/batched/pipelined_columns.cuh -- the batched scan along a non-last axis of
// rows of one or a few 128-byte lines in few, long lines, e.g. (2^20, 32) int32 or
// (2^20, 32) int64 along axis 0: batched/strided.cuh's column tiles on single_pass/pipelined.cuh's
// pipeline.
//
// Why. columns_kernel (batched/strided.cuh) runs one block per tile: the block loads its
// tile, waits for every column's prefix, then stores, and holds the tile all the while,
// which on one long chain of tiles ((2^20, 32) int32 along axis 0: 4096 tiles of 256
// rows, each below the one before) leaves it far from a copy's time, as the plain scan's
// one-block-per-tile kernel is (docs/performance.md, "What each path earns"). Here the
// blocks are persistent and a block scans its next tile while its look-back warp finds
// the column prefixes of the one before. single_pass/pipelined.cuh's banner explains
// the pipeline (the producer, the compute warps' steps a-c, the look-back warp), its
// mbarriers, the memory ordering inside the block and why it cannot deadlock; this kernel
// runs the same steps, and this banner says only what differs.
//
// A tile's total is not one value but one per column: W = 128 bytes / sizeof(Acc)
// columns (32 4-byte or 16 8-byte ones), a row of the array being one 128-byte line.
//   - A tile is 256 consecutive rows of one column group (W columns, the row's 128-byte
//     line number `group`) of one outer slice, 32 KiB. In rows of exactly one line
//     (inner == W) it is contiguous in memory and the producer copies it with one bulk
//     copy, as in single_pass/pipelined.cuh; in rows of several lines (inner a multiple of W)
//     its lines lie a row pitch apart, and the producer copies it with one 2-D tensor
//     copy (arch/tensor_map.cuh: the TMA unit walks the rows), which lands the same dense
//     256 x 128-byte tile in the stage. Each column group is a chain of its own (chains =
//     outer x groups), with descriptors of its own, exactly as outer slices are. A partial last
//     chunk of a line (rows past its end) is loaded by the compute threads themselves,
//     the last row repeated (defined padding, never stored). Tiles are batched/strided.cuh's
//     column_geometry with 8 column words; tickets are chunk-major as there, so the tile
//     above a tile always holds an earlier ticket (the induction of single_pass/pipelined.cuh's
//     banner holds for the tiles of a chain as for those of a line).
//   - A compute thread owns one 16-byte column word of 8 consecutive rows (thread tid:
//     word tid % 8, run tid / 8; a warp holds four runs, 32 rows). Step a: it scans its
//     rows down, then the runs across the warp (shuffles), and writes the warp-local
//     values back to the stage (the write-back scan: nothing per row lives in registers
//     from a tile's scan to its store); the warp's column totals go to shared memory.
//   - Step b, warp 0: lane c folds column c's warp totals in warp order (the tile's
//     column aggregate, and each warp's exclusive prefix within the tile) and publishes
//     descriptor t * W + c (packed, as in batched/strided.cuh); chunk 0 publishes its
//     inclusive value at once. Every lane of warp 0 arrives on AGGREGATED (each lane
//     wrote its own column's slots).
//   - The look-back warp: batched/strided.cuh's windowed_prefix, 32 / W lanes per column,
//     each reading `lookback_reads` tiles above a round (a window of 4 tiles for 4-byte
//     values, 8 for 8-byte ones), walking on past aggregates (not deterministic: below).
//     It starts as soon as warp 0 hands it the tile, not when the block's next tile has
//     landed as in single_pass/pipelined.cuh (the look-back warp below says why). Every lane
//     arrives on PREFIXED (each wrote its column's prefix).
//   - Step c: each thread's prefix is its column's (from the look-back warp), then its
//     warp's within the tile; it reads its rows back, adds it and stores them.
// Descriptors: tiles * W, each written by every tile, so the clearing rule of
// single_pass/tile_state.cuh holds; every 2^29 calls the producers zero the rest of the capacity.
//
// Not deterministic for floats: where the walk stops depends on timing. With
// options.deterministic, values whose operator is not exact keep columns_kernel's
// deterministic mode, or, in few long chains, the reduce-then-scan
// (batched/columns_reduce_then_scan.cuh): a deterministic window here (a look-back that
// waits in a window until it holds an inclusive tile) is slower than both on one chain.
//
// Tiles of 4 column words instead of 8 (the kernel's Words): 64-byte tile rows, 512 rows
// a tile, W = 16 int32 or 8 int64 columns, a warp holding eight runs; the public call
// takes them for rows of a multiple of 64 bytes that is not one of 128 (narrow_words and
// words_for below): rows of exactly 64 bytes are one group, rows of 192, 320 ... bytes
// several (two tensor copies of 256 rows a tile). Tiles of 2 words (32-byte tile rows,
// 1024 rows, W = 8 int32 or 4 int64 columns, sixteen runs a warp, 4 or 8 look-back lanes
// a column) take rows of a multiple of 32 bytes that is not one of 64; tiles of 1 word
// (2048 rows x 16 bytes) rows of exactly 16 bytes. A tile of fewer than 8 words in rows of
// one group is copied swizzled where the slices allow it (Swizzle, above the kernel).
//
// Applies (takes, below) to 16-byte aligned pointers to 4- and 8-byte values in rows of
// whole 32-byte pieces (inner a multiple of 8 int32 or 4 int64 columns) or of exactly 16
// bytes in slices of whole 128-byte lines, lines longer than one tile, at most max_chains
// chains (outer x column groups) and at least min_bytes of data; anything else keeps
// batched/strided.cuh. Rows of several lines take one tensor copy a tile: copied row by
// row (16-byte cp.async copies, or a bulk copy a row) the tile is no faster than
// columns_kernel.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/device/arch/mbarrier.cuh"
#include "tally/device/arch/tensor_map.cuh"
#include "tally/device/batched/strided.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/occupancy.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/single_pass/pipelined.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::pipelined_columns {

using single_pass::maybe;
using single_pass::then;
using strided::column_state;

inline constexpr int compute_threads = strided::threads;  // 8 compute warps
inline constexpr int kernel_threads = compute_threads + 64;  // + the producer and look-back warps
inline constexpr int compute_warps = compute_threads / 32;
inline constexpr int words = 8;  // 16-byte column words per tile row: one 128-byte line
inline constexpr int run_rows = strided::column_rows;  // 8 rows a thread
template <int Words>
inline constexpr int rows_of = compute_threads / Words * run_rows;  // a tile's rows
inline constexpr int tile_rows = rows_of<words>;  // 256
// The rows of one tensor copy: a tile's, at most the 256 a box may have (arch/tensor_map.cuh);
// a tile of 512 rows (4 words) takes two copies, of 1024 rows (2 words) four.
template <int Words>
inline constexpr int box_rows_of = rows_of<Words> < 256 ? rows_of<Words> : 256;
inline constexpr int stages = 2;
inline constexpr unsigned stage_bytes = tile_rows * 128u;  // 32 KiB, whatever the words
// Rows of exactly 64 bytes (16 int32 or 8 int64 columns) take tiles of 4 column words, 512
// rows, and so do rows of 192-448 bytes (words_for below). Rows of 128 bytes keep 8
// words: cut into two groups of 4 words (two chains instead of one) they are slower (the
// stage's 64-byte tile rows, 512 bytes apart in a warp's reads, and two tensor copies a
// tile).
inline constexpr int narrow_words = 4;
// Rows of a multiple of 32 bytes that is not one of 64 take tiles of 2 words, 1024 rows x
// 32 bytes (words_for below); rows of exactly 16 bytes tiles of 1 word, 2048 rows, where
// their stage is swizzled (the kernel's Swizzle), which beats strided_kernel. Read as
// landed, 1-word tiles are slower than strided_kernel, so rows of 48, 80 ... bytes
// (several 1-word groups) keep it. The public call gives rows of 16 bytes in one slice to
// one scan of 16-byte column groups (segmented.cuh), so the 1-word tiles take them only
// in several slices.
inline constexpr int narrowest_words = 2;

template <class Acc>
inline constexpr int vec = static_cast<int>(16 / sizeof(Acc));
template <class Acc>
inline constexpr int width = words * vec<Acc>;  // W: columns per tile
// The tiles each look-back lane reads a round (the lanes: 32 / W a column): fewer leave
// the look-back of one long chain behind, more gain nothing there and cost in many lines
// (docs/performance.md, "Plans and thresholds").
inline constexpr int lookback_reads = 4;

// From this many bytes of data on: below, the gain over columns_kernel is small
// (docs/performance.md, "Plans and thresholds").
inline constexpr std::int64_t min_bytes = thresholds.pipelined_columns_min_bytes;
// Chains of tiles (outer slices x column groups) at most: about the most at which this
// kernel is known to beat columns_kernel (docs/performance.md, "Plans and thresholds").
inline constexpr std::int64_t max_chains = thresholds.pipelined_columns_max_chains;

// The column words of a row's tiles: the most of 8, 4 and 2 that cut the row into whole
// column groups (rows of a multiple of 128, 64 or 32 bytes), 0 where none does (the row
// is not a multiple of 32 bytes: batched/strided.cuh takes it). On such rows 4- and
// 2-word tiles beat columns_kernel and strided_kernel (docs/performance.md, "What each
// path earns"). Read as it lands, a stage of 2-word tiles meets 4-way bank conflicts and
// one of 4-word tiles 2-way; rows of one tile row take the swizzled stage instead (the
// kernel's Swizzle, swizzles below).
template <class Acc>
constexpr int words_for(std::int64_t inner) {
  for (const int w : {words, narrow_words, narrowest_words}) {
    if (inner % (w * vec<Acc>) == 0) return w;
  }
  return inner == vec<Acc> ? 1 : 0;  // rows of 16 bytes: 1 word, swizzled only (takes)
}

// Whether tiles of tile_row_bytes (Words x 16) take the swizzled stage (the kernel's
// Swizzle): rows of exactly one tile row narrower than a line, in slices of whole
// 128-byte lines (every tile then starts on a line of the tensor copy's map).
constexpr bool swizzles(std::int64_t outer, std::int64_t len, std::int64_t row_bytes, std::int64_t tile_row_bytes) {
  return row_bytes == tile_row_bytes && tile_row_bytes < 128 && (outer == 1 || len * row_bytes % 128 == 0);
}

// (Rows of several tile rows need the tensor copy: the driver's encoder found, and the
// rows of all slices, outer x len, below 2^31, the copy's coordinates; scan below may
// still find the map refused, and then launches nothing and returns false. Rows of
// exactly one tile row, 128 or 64 bytes, are one group: a bulk copy a tile.)
template <class Acc, class In, class Out>
bool takes(In in, Out out, std::int64_t outer, std::int64_t len, std::int64_t inner, const options& o) {
  if constexpr (strided::columns_take_v<Acc, In, Out>) {
    if (o.deterministic && !single_pass::exact_values<Acc>::value) return false;
    const int tile_words = words_for<Acc>(inner);
    if (tile_words == 0) return false;
    if (tile_words == 1 && !swizzles(outer, len, inner * static_cast<std::int64_t>(sizeof(Acc)), 16)) return false;
    const std::int64_t groups = inner / (tile_words * vec<Acc>);
    if (groups > max_chains || outer > max_chains / groups) return false;
    if (groups > 1 && (outer * len > 0x7fffffff || tensor_map::encoder() == nullptr)) return false;
    return len > compute_threads / tile_words * run_rows &&  // more than one tile (rows_of)
           outer * len * inner >= min_bytes / static_cast<std::int64_t>(sizeof(Acc)) &&
           single_pass::aligned_16(in) && single_pass::aligned_16(out);
  } else {
    (void)in, (void)out, (void)outer, (void)len, (void)inner, (void)o;
    return false;
  }
}

// Where tile t lies: row chunk t / chains of chain t % chains, which is column group
// chain % groups of outer slice chain / groups (batched/strided.cuh's order).
struct tile_place {
  std::int64_t chunk, slice, group;
};
TALLY_DEVICE TALLY_FORCEINLINE tile_place place_of(std::int64_t t, const strided::column_geometry& g) {
  const std::int64_t chunk = t / g.chains;
  const std::int64_t chain = t - chunk * g.chains;
  const std::int64_t slice = chain / g.groups;
  return {chunk, slice, chain - slice * g.groups};
}
// The tile's first row in the array seen as (outer x len) rows of inner values.
TALLY_DEVICE TALLY_FORCEINLINE std::int64_t tile_row(const tile_place& p, const strided::column_geometry& g) {
  return p.slice * g.len + p.chunk * g.rows;
}
// The tile's first element; its rows follow inner elements apart, W elements each.
TALLY_DEVICE TALLY_FORCEINLINE std::int64_t tile_origin(const tile_place& p, const strided::column_geometry& g) {
  return tile_row(p, g) * g.inner + p.group * g.width;
}

// Launch bounds: 3 blocks per SM, what shared memory allows (two 32 KiB stages a block),
// as for pipelined_kernel.
// Swizzle: the stage of a tile of fewer than 8 words in rows of one group (rows of 64, 32
// or 16 bytes) lands swizzled. Read as it lands, such a stage serves a quarter-warp's
// 16-byte reads of its runs' rows (512, 256 or 128 bytes apart) from the same 16, 8 or 4
// banks: 2, 4 or 8 wavefronts where 8-word tiles take 1, in step a's loads, its
// write-back and step c's loads. So the producer copies it with a tensor copy of 256
// lines of 128 bytes (rows_map: the whole array seen as lines) with the 128-byte swizzle,
// which lands chunk c of stage line l at chunk c ^ (l % 8), into stages aligned to 1024
// bytes (the launch gives 1 KiB more), and every access of the stage applies the same XOR
// (stage_slot): a quarter-warp's rows then fall on different banks.
template <bool Swizzle>
TALLY_DEVICE TALLY_FORCEINLINE int stage_slot(int e) {  // e: a 16-byte chunk's index in the tile
  if constexpr (Swizzle) {
    return e ^ ((e >> 3) & 7);  // chunk e % 8 of line e / 8
  } else {
    return e;
  }
}

template <bool Exclusive, int Reads, int Words, bool Swizzle, class Acc, class Op, class Hook>
__global__ void __launch_bounds__(kernel_threads, 3)
    pipelined_columns_kernel(const Acc* in, Acc* out, strided::column_geometry g,
                             seed_value<Acc, Exclusive> seed, Op op, column_state<Acc> state,
                             Hook hook, const __grid_constant__ CUtensorMap rows_map) {
  using pipelined::compute_barrier;
  using pipelined::mbarrier_arrive;
  using pipelined::mbarrier_wait;
  using single_pass::make_tag;
  using single_pass::status_aggregate;
  using single_pass::status_inclusive;
  constexpr int Vec = vec<Acc>, W = Words * Vec, Rows = run_rows, warps = compute_warps;
  constexpr int R = rows_of<Words>, box_rows = box_rows_of<Words>;  // R: g.rows
  using vector = single_pass::vector_of<Acc, Vec>;
  extern __shared__ __align__(128) unsigned char ring_base[];  // `stages` tiles, row-major
  // (with Swizzle from the first 1024-byte boundary, where the swizzle's pattern starts)
  unsigned char* const ring =
      Swizzle ? ring_base + ((1024u - (static_cast<unsigned>(__cvta_generic_to_shared(ring_base)) & 1023u)) & 1023u)
              : ring_base;
  __shared__ unsigned long long full[stages];        // a stage's tile has landed
  __shared__ unsigned long long empty[stages];       // the compute threads are done with it
  __shared__ unsigned long long aggregated[stages];  // warp 0 has the column aggregates
  __shared__ unsigned long long prefixed[stages];    // the look-back warp has the prefixes
  __shared__ std::int64_t stage_tile[stages];        // its tile index, -1: no more tiles
  __shared__ unsigned stage_epoch[stages];
  __shared__ std::int64_t lookback_tile[stages];     // warp 0 -> the look-back warp
  __shared__ unsigned lookback_epoch[stages];
  __shared__ block::detail::uninitialized_array<Acc, stages * W> stage_aggregate;  // [stage][column]
  __shared__ block::detail::uninitialized_array<Acc, stages * W> stage_prefix;     // [stage][column]
  __shared__ bool stage_has_prefix[stages];  // false: chunk 0 of an inclusive scan
  // [stage][warp][column]: a warp's column totals; the warps' before it within the tile
  __shared__ block::detail::uninitialized_array<Acc, stages * warps * W> warp_totals;
  __shared__ block::detail::uninitialized_array<Acc, stages * warps * W> warp_exclusive;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t tiles = g.tiles;
  const auto stage = [&](int s) {
    return reinterpret_cast<vector*>(ring + static_cast<std::size_t>(s) * stage_bytes);
  };
  const auto stage_of = [](std::int64_t k) { return static_cast<int>(k % stages); };
  const auto parity_of = [](std::int64_t k) { return static_cast<unsigned>((k / stages) & 1); };

  if (threadIdx.x == 0) {
    // AGGREGATED: every lane of warp 0; PREFIXED: every lane of the look-back warp
    pipelined::init_ring_barriers<stages>(full, empty, aggregated, prefixed, compute_threads, 32);
  }
  __syncthreads();  // nobody uses a barrier before it is initialised

  // ---- the producer: one lane (single_pass/pipelined.cuh's; descriptors: tiles * W) ----
  if (warp_id == warps) {
    const auto fill = [&](int s, std::int64_t tile) {
      hook(tile, blockIdx.x);
      const tile_place p = place_of(tile, g);
      // a full tile, one copy, its bytes announced before the copy can complete them (a
      // partial one: no copy): its rows are contiguous where inner == W (one bulk copy),
      // else a box of the rows map (one tensor copy; rows below 2^31, takes)
      if (p.chunk * R + R <= g.len) {
        pipelined::mbarrier_expect(&full[s], stage_bytes);
        if (Swizzle) {
          // 256 lines of rows_map (the array as 128-byte lines; the tile starts on a line)
          tensor_map::tensor_copy_2d(stage(s), &rows_map,
                                     static_cast<int>(tile_origin(p, g) * static_cast<std::int64_t>(sizeof(Acc)) / 128),
                                     0, &full[s]);
        } else if (g.groups == 1) {
          pipelined::bulk_copy(stage(s), in + tile_origin(p, g), stage_bytes, &full[s]);
        } else {
#pragma unroll
          for (int part = 0; part < R / box_rows; ++part) {
            tensor_map::tensor_copy_2d(reinterpret_cast<unsigned char*>(stage(s)) + part * box_rows * Words * 16,
                                       &rows_map, static_cast<int>(tile_row(p, g)) + part * box_rows,
                                       static_cast<int>(p.group * W), &full[s]);
          }
        }
      }
    };
    if (lane == 0) {
      pipelined::run_producer<stages>(state, tiles, tiles * W, full, empty, stage_tile, stage_epoch, fill);
    }
    return;
  }

  // ---- the look-back warp: lane = slot j of column c ----
  if (warp_id == warps + 1) {
    constexpr int S = 32 / W;
    const int c = lane / S, j = lane % S;
    for (std::int64_t k = 0;; ++k) {
      const int s = stage_of(k);
      mbarrier_wait(&aggregated[s], parity_of(k));
      const std::int64_t tile = lookback_tile[s];
      if (tile < 0) return;
      const unsigned epoch = lookback_epoch[s];
      const Acc aggregate = stage_aggregate[s * W + c];
      // At once, unlike pipelined_kernel's look-back warp, which first waits until the
      // block's next tile has landed (its predecessors have had that long to publish).
      // On one chain of tiles that wait would make the frontier of inclusive tiles lag:
      // the next tile lands long after the aggregate (its copy starts only when the tile
      // before this one is stored), and every look-back after would walk further.
      const std::int64_t chunk = tile / g.chains;
      maybe<Acc> prefix{aggregate, false};
      if constexpr (Exclusive) {
        if (chunk == 0) prefix = {seed.value, true};
      }
      // (chunk is the same in every lane: the loop inside is warp-uniform)
      prefix = strided::windowed_prefix<false, Reads, S>(
          state, epoch, tile, g.chains, W, S, chunk > 0, aggregate, prefix, op, lane);
      if (chunk > 0 && j == 0) {
        state.descriptors.store(tile * W + c, make_tag(epoch, status_inclusive),
                                static_cast<Acc>(op(prefix.value, aggregate)));
      }
      // the slots' previous values were read by every compute thread before it arrived
      // on the EMPTY barrier of tile k - stages
      if (k >= stages) mbarrier_wait(&empty[s], parity_of(k - stages));
      if (j == 0) stage_prefix[s * W + c] = prefix.value;
      if (lane == 0) stage_has_prefix[s] = prefix.present;
      mbarrier_arrive(&prefixed[s]);
    }
  }

  // ---- the compute warps ----
  const int tid = static_cast<int>(threadIdx.x);
  const int word = tid % Words, run = tid / Words;  // run: 8 rows from row run * 8
  const int run_in_warp = lane / Words;             // 0..32 / Words - 1

  // step c for the block's k-th tile
  const auto store_tile = [&](std::int64_t k, std::int64_t tile) {
    const int s = stage_of(k);
    mbarrier_wait(&prefixed[s], parity_of(k));
    const tile_place p = place_of(tile, g);
    maybe<Acc> prefix[Vec];
#pragma unroll
    for (int v = 0; v < Vec; ++v) {
      const int column = word * Vec + v;
      prefix[v] = {stage_prefix[s * W + column], stage_has_prefix[s]};
      if (warp_id > 0) prefix[v] = then(prefix[v], warp_exclusive[(s * warps + warp_id) * W + column], op);
    }
    const vector* staged = stage(s);
    Acc* to = out + tile_origin(p, g) + word * Vec;
    const std::int64_t rows_left = g.len - p.chunk * R - run * Rows;
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      const vector local = staged[stage_slot<Swizzle>((run * Rows + r) * Words + word)];
      Acc x[Vec];
#pragma unroll
      for (int v = 0; v < Vec; ++v) {
        x[v] = prefix[v].present ? static_cast<Acc>(op(prefix[v].value, local.v[v])) : local.v[v];
        if constexpr (Exclusive) {
          if (r == 0 && run_in_warp == 0) x[v] = prefix[v].value;  // the warp's first row: no local value
        }
      }
      if (r < rows_left) single_pass::store_vector<Vec>(to, (std::int64_t{run} * Rows + r) * g.inner, x);
    }
    // as in pipelined_kernel: the generic-proxy writes of the stage before the next bulk
    // copy into it (async proxy), then this thread's arrival
    arch::fence_proxy_async_shared();
    mbarrier_arrive(&empty[s]);
  };

  std::int64_t previous = -1;
  std::int64_t k = 0;
  for (;; ++k) {
    const int s = stage_of(k);
    mbarrier_wait(&full[s], parity_of(k));
    const std::int64_t tile = stage_tile[s];
    if (tile < 0) {
      if (warp_id == 0) {  // no more tiles: tell the look-back warp
        if (lane == 0) lookback_tile[s] = -1;
        mbarrier_arrive(&aggregated[s]);
      }
      break;
    }
    const unsigned epoch = stage_epoch[s];
    const tile_place p = place_of(tile, g);
    vector* staged = stage(s);

    // a. this thread's rows (from the stage, or, in a partial chunk, from memory with the
    //    last row repeated), scanned down, then across the warp's runs
    Acc x[Rows][Vec];
    const std::int64_t row0 = p.chunk * R + run * Rows;
    if (p.chunk * R + R <= g.len) {
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        const vector v = staged[stage_slot<Swizzle>((run * Rows + r) * Words + word)];
#pragma unroll
        for (int i = 0; i < Vec; ++i) x[r][i] = v.v[i];
      }
    } else {
      const Acc* from = in + p.slice * g.len * g.inner + p.group * W + word * Vec;
#pragma unroll
      for (int r = 0; r < Rows; ++r) {
        const std::int64_t row = row0 + r < g.len ? row0 + r : g.len - 1;
        single_pass::load_vector<Vec>(from, row * g.inner, x[r]);
      }
    }
#pragma unroll
    for (int r = 1; r < Rows; ++r) {
#pragma unroll
      for (int i = 0; i < Vec; ++i) x[r][i] = static_cast<Acc>(op(x[r - 1][i], x[r][i]));
    }
    // the runs' inclusive totals across the warp (Kogge-Stone over the 4 runs of this
    // column word, shuffles `words` lanes apart), then each run's exclusive one
    Acc run_total[Vec], run_exclusive[Vec];
#pragma unroll
    for (int i = 0; i < Vec; ++i) run_total[i] = x[Rows - 1][i];
#pragma unroll
    for (int d = 1; d < 32 / Words; d *= 2) {
#pragma unroll
      for (int i = 0; i < Vec; ++i) {
        const Acc earlier = warp::shuffle_up(run_total[i], static_cast<unsigned>(Words * d));
        if (run_in_warp >= d) run_total[i] = static_cast<Acc>(op(earlier, run_total[i]));
      }
    }
#pragma unroll
    for (int i = 0; i < Vec; ++i) run_exclusive[i] = warp::shuffle_up(run_total[i], static_cast<unsigned>(Words));
    // the warp's column totals: the last run's inclusive totals (this stage's slots:
    // written again for tile k + stages, after the barrier of tile k + 1, which warp 0
    // passes after reading these in its step b)
    if (run_in_warp == 32 / Words - 1) {
#pragma unroll
      for (int i = 0; i < Vec; ++i) warp_totals[(s * warps + warp_id) * W + word * Vec + i] = run_total[i];
    }
    // the warp-local values back to the stage: each row's inclusive value within the warp
    // (the runs above in the warp, then the run's rows up to it); exclusive: the one of the
    // row before, and in a run's first row the run's exclusive total (none in the warp's
    // very first row: store_tile puts the warp's prefix there)
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
#pragma unroll
      for (int i = 0; i < Vec; ++i) {
        if (run_in_warp > 0) x[r][i] = static_cast<Acc>(op(run_exclusive[i], x[r][i]));
      }
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
      vector v;
#pragma unroll
      for (int i = 0; i < Vec; ++i) {
        if constexpr (Exclusive) {
          v.v[i] = r > 0 ? x[r - 1][i] : run_exclusive[i];
        } else {
          v.v[i] = x[r][i];
        }
      }
      staged[stage_slot<Swizzle>((run * Rows + r) * Words + word)] = v;
    }
    compute_barrier<compute_threads>();  // the warp totals are stored before warp 0 reads them

    // b. warp 0, lane c: column c's aggregate and the warps' prefixes within the tile
    //    (this stage's slots: written again for tile k + stages, after that tile's
    //    barrier, which every warp passes after its step c for tile k)
    if (warp_id == 0) {
      if (lane < W) {
        Acc total[warps];
#pragma unroll
        for (int w = 0; w < warps; ++w) total[w] = warp_totals[(s * warps + w) * W + lane];
        Acc aggregate = total[0];
#pragma unroll
        for (int w = 1; w < warps; ++w) {
          warp_exclusive[(s * warps + w) * W + lane] = aggregate;
          aggregate = static_cast<Acc>(op(aggregate, total[w]));
        }
        if (p.chunk == 0) {
          Acc inclusive = aggregate;
          if constexpr (Exclusive) inclusive = static_cast<Acc>(op(seed.value, aggregate));
          state.descriptors.store(tile * W + lane, make_tag(epoch, status_inclusive), inclusive);
        } else {
          state.descriptors.store(tile * W + lane, make_tag(epoch, status_aggregate), aggregate);
        }
        // read by the look-back warp before it arrives on PREFIXED, which this thread's
        // step c for tile k waits for before the slot is written again (tile k + stages)
        stage_aggregate[s * W + lane] = aggregate;
      }
      if (lane == 0) {
        lookback_tile[s] = tile;
        lookback_epoch[s] = epoch;
      }
      mbarrier_arrive(&aggregated[s]);
    }

    // c. the previous tile
    if (previous >= 0) store_tile(k - 1, previous);
    previous = tile;
  }
  // the last tile's warp prefixes were written after the last barrier (pipelined_kernel)
  compute_barrier<compute_threads>();
  if (previous >= 0) store_tile(k - 1, previous);
}

// One scan of a (outer, len, inner) array along its middle axis (takes: checked by the
// caller; inner a multiple of W, len > 0): the descriptors in the stream's packed state (batched/strided.cuh's), one launch
// of persistent blocks, as many as the device holds at once, at most one a tile. Rows of
// several lines need the input's tensor map: where the driver refuses it, nothing is
// launched and the result is false (the caller takes batched/strided.cuh); else true.
template <bool Exclusive, class Acc, class Op, class Hook = single_pass::no_stall,
          int Reads = lookback_reads, int Words = words, bool Swizzle = false>
bool scan(const char* function, const Acc* in, Acc* out, std::int64_t outer, std::int64_t len,
          std::int64_t inner, seed_value<Acc, Exclusive> seed, Op op, const options& o, Hook hook = {}) {
  static_assert(single_pass::vectorisable_v<Acc>, "the pipelined columns take 4- and 8-byte values");
  constexpr int W = Words * vec<Acc>;
  if (inner % W != 0) throw_invalid(function, "shape", "has rows that are not whole column groups");
  const strided::column_geometry g = strided::make_column_geometry<Acc>(outer, len, inner, Words);
  if (g.tiles > 0x7fffffff) throw_invalid(function, "shape", "needs more than 2^31 - 1 tiles");
  CUtensorMap rows_map{};  // rows of one tile row: unused (a bulk copy a tile), unless swizzled
  if constexpr (Swizzle) {
    static_assert(Words < words, "8-word tiles read their stage without conflicts");
    if (!swizzles(outer, len, inner * static_cast<std::int64_t>(sizeof(Acc)), Words * 16)) {
      throw_invalid(function, "shape", "is not rows of one tile row in slices of whole 128-byte lines (swizzled stages)");
    }
    const std::int64_t lines = outer * len * inner * static_cast<std::int64_t>(sizeof(Acc)) / 128;
    if (!tensor_map::row_tensor_map<sizeof(Acc)>(rows_map, in, lines, 128 / sizeof(Acc), 256, 128 / sizeof(Acc),
                                                 CU_TENSOR_MAP_SWIZZLE_128B)) {
      return false;
    }
  }
  if (!Swizzle && g.groups > 1 &&
      !tensor_map::row_tensor_map<sizeof(Acc)>(rows_map, in, outer * len, inner, box_rows_of<Words>, W)) {
    return false;
  }
  constexpr auto kernel = pipelined_columns_kernel<Exclusive, Reads, Words, Swizzle, Acc, Op, Hook>;
  constexpr std::size_t ring = std::size_t{stages} * stage_bytes + (Swizzle ? 1024 : 0);
  single_pass::with_tile_state<Acc, strided::columns_spacing>(
      function, "(none: batched scans take no caller storage)", g.tiles * g.width, 0, o,
      [&](column_state<Acc> state) {
        const int resident = resident_grid<kernel>(kernel_threads, function, ring);
        const auto grid = static_cast<unsigned>(g.tiles < resident ? g.tiles : resident);
        kernel<<<grid, kernel_threads, ring, o.stream>>>(in, out, g, seed, op, state, hook, rows_map);
        TALLY_CUDA_CHECK_LAUNCH("pipelined_columns_kernel", function);
      });
  return true;
}

// The public call's scan (takes: checked by the caller): tiles of words_for(inner) column
// words, 8, 4, 2 or 1, with the swizzled stage where it applies (swizzles). Returns scan's
// result.
template <bool Exclusive, class Acc, class Op>
bool scan_rows(const char* function, const Acc* in, Acc* out, std::int64_t outer, std::int64_t len,
               std::int64_t inner, seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  using single_pass::no_stall;
  const int w = words_for<Acc>(inner);
  const bool swizzled = swizzles(outer, len, inner * static_cast<std::int64_t>(sizeof(Acc)), w * 16);
  const auto narrower = [&]<int Words>() {
    return swizzled ? scan<Exclusive, Acc, Op, no_stall, lookback_reads, Words, true>(function, in, out, outer, len,
                                                                                       inner, seed, op, o)
                    : scan<Exclusive, Acc, Op, no_stall, lookback_reads, Words, false>(function, in, out, outer, len,
                                                                                        inner, seed, op, o);
  };
  switch (w) {
    case words:
      return scan<Exclusive, Acc>(function, in, out, outer, len, inner, seed, op, o);
    case narrow_words:
      return narrower.template operator()<narrow_words>();
    case narrowest_words:
      return narrower.template operator()<narrowest_words>();
    default:  // 1 word: rows of 16 bytes, swizzled (takes)
      return scan<Exclusive, Acc, Op, no_stall, lookback_reads, 1, true>(function, in, out, outer, len, inner, seed,
                                                                         op, o);
  }
}

}  // namespace tally::detail::pipelined_columns
