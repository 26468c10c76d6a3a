// tally/device/batched/columns_reduce_then_scan.cuh -- the deterministic batched scan along
// a non-last axis for few, long chains of column tiles: reduce, scan the sums, scan again.
//
// Where. columns_kernel (batched/strided.cuh) scans the column tiles of 16-byte aligned 4- and
// 8-byte values in one pass, each tile looking back over the tiles above it. With
// options.deterministic on floats its look-back may not move past a window of tiles
// without an inclusive value (so that every prefix is the same left fold in every run),
// and the frontier of inclusive tiles advances by at most a window (32 tiles) per round
// trip, which makes a single long chain, e.g. (2^20, 32) float along axis 0, slow
// (docs/performance.md, "What each path earns"). Many chains side by side ((16384, 4096):
// 128) advance together and do not feel it.
//
// The algorithm (reduce-then-scan, after Merrill & Grimshaw 2009 and Oancea & Henriksen's
// course notes, over the same tiles; three launches). A
// chain's tiles are taken in groups of group_tiles consecutive ones:
//   1. totals_kernel: a block per group scans each of its tiles in registers
//      (strided::scan_loaded_run, the same code and association as columns_kernel), folds
//      their column aggregates in order, and stores for each tile after the first the fold
//      of the tiles before it in the group (E_k), then the group's total (T_q).
//   2. prefixes_kernel: a block per chain replaces each column's group totals, in order,
//      by their inclusive left fold S_q (behind the seed, for an exclusive scan): `parts`
//      threads a column each fold a consecutive part, the parts' totals are folded in
//      order, then each part folds again from its start, writing.
//   3. scan_kernel: every tile loads and scans its rows again, takes its column prefix
//      S_{q-1} op E_k (two loads), adds it and stores.
// Every combination is in a fixed order that depends only on the shape: float results
// are identical from run to run, with no wait on another block anywhere. The data is read
// twice and written once (1.5 copies' bytes, against the look-back's one copy), which
// beats the window-bound look-back on few long chains.
//
// The launches overlap (dependent_launch.cuh): step 1 lets step 2 launch at once, step 2
// waits for step 1's grid before it reads a sum and lets step 3 launch at once, and step
// 3's tiles load their rows before they wait for step 2's grid (so for step 1's too: each
// thread of step 2 waited for it). Nothing is stored to `out` before that wait, so the
// scan may run in place: step 1 has read all of `in` by then.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tally/core/options.hpp"
#include "tally/device/batched/strided.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/dependent_launch.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/thresholds.cuh"

namespace tally::detail::columns_reduce_then_scan {

using single_pass::maybe;
using single_pass::then;
using strided::column_geometry;
using strided::column_run;
using strided::column_vec;
using strided::threads;

// The tiles of a chain are taken in GROUPS of group_tiles consecutive tiles, so that step
// 2 scans a chain's group totals, 8 times fewer values than its tiles (one block a chain
// folding every tile aggregate of a column would make long chains of dependent loads a
// thread, twice). Step 1 folds a group's tiles in order and stores,
// for each tile after the first, the fold of the tiles before it in the group (its
// in-group prefix E_k); a tile's prefix is then S_{q-1} op E_k, two loads.
inline constexpr int group_tiles = 8;

// Where the sums live (values; W = g.width columns a tile). The m = chunks - 1 first
// chunks of a chain make groups = ceil(m / group_tiles) groups (the last chunk's aggregate
// is nobody's prefix, and its tiles are in no group):
//   E_k, column c, chunk k of chain ch (k % group_tiles > 0): sums[(k * chains + ch) * W + c]
//   T_q, group q's total, then S_q, its prefix:             sums[((m + q) * chains + ch) * W + c]
struct sums_layout {
  std::int64_t m, groups, chains, W;
  TALLY_HOST_DEVICE explicit sums_layout(const column_geometry& g)
      : m(g.chunks - 1), groups((g.chunks - 1 + group_tiles - 1) / group_tiles), chains(g.chains), W(g.width) {}
  TALLY_HOST_DEVICE std::int64_t in_group(std::int64_t k, std::int64_t chain) const { return (k * chains + chain) * W; }
  TALLY_HOST_DEVICE std::int64_t group(std::int64_t q, std::int64_t chain) const {
    return ((m + q) * chains + chain) * W;
  }
  TALLY_HOST_DEVICE std::int64_t values() const { return (m + groups) * chains * W; }
};

// The outer slice and column group of chain ch.
struct chain_place {
  std::int64_t slice, group;
  TALLY_DEVICE chain_place(const column_geometry& g, std::int64_t chain)
      : slice(chain / g.groups), group(chain % g.groups) {}
};

// 1. Block b: group q = b / chains of chain b % chains (the tiles of chunks q * group_tiles
//    .. below m). For each tile in order: its rows scanned down (strided::scan_loaded_run:
//    the same code and association as columns_kernel), the next tile's rows loading
//    meanwhile; its column aggregates folded into the group's running total, which is
//    stored before as the tile's E_k; the group's total stored after the last. (Columns
//    past the array's last column hold the padding's sums, never read for a result.)
template <class Acc, class Op>
__global__ void __launch_bounds__(threads) totals_kernel(const Acc* in, column_geometry g, Acc* sums, Op op) {
  constexpr int Vec = column_vec<Acc>;
  allow_dependent_launch();  // step 2's blocks may start; they wait for this grid
  __shared__ block::detail::uninitialized_array<Acc, threads * Vec> totals;
  const sums_layout layout(g);
  const std::int64_t q = static_cast<std::int64_t>(blockIdx.x) / g.chains;
  const std::int64_t chain = static_cast<std::int64_t>(blockIdx.x) - q * g.chains;
  const chain_place place(g, chain);
  const std::int64_t first = q * group_tiles;
  const int tiles = static_cast<int>(layout.m - first < group_tiles ? layout.m - first : group_tiles);
  const strided::run_place at = strided::place_run<Acc>(g, first, place.group);  // (its word and row group)
  const bool holds_total = at.row_group == g.row_groups - 1;  // the threads of the last row group
  const std::int64_t word = std::int64_t{at.word} * Vec;
  Acc total[Vec];
  column_run<Acc> run, next;
  strided::load_run(in, g, first, place.slice, place.group, run);
  for (int i = 0; i < tiles; ++i) {
    if (i + 1 < tiles) strided::load_run(in, g, first + i + 1, place.slice, place.group, next);
    strided::scan_loaded_run(g, totals.data(), run, op);
    if (holds_total) {
      if (i > 0) single_pass::store_vector<Vec>(sums, layout.in_group(first + i, chain) + word, total);
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        const Acc aggregate = then(run.above[k], run.x[strided::column_rows - 1][k], op).value;
        total[k] = i == 0 ? aggregate : static_cast<Acc>(op(total[k], aggregate));
      }
    }
    __syncthreads();  // every thread has read `totals` (scan_loaded_run) before the next tile writes it
    run = next;
  }
  if (holds_total) single_pass::store_vector<Vec>(sums, layout.group(q, chain) + word, total);
}

// 2. The threads of a block, and the group totals a thread holds at once (64 bytes: 16
//    4-byte or 8 8-byte values, loaded together). parts = prefix_threads / W (W <= 256):
//    32 for 4-byte values (W = 32), 64 for 8-byte ones (W = 16); a chain of 4096 tiles
//    (512 groups) is 16 or 8 totals a thread: one round of loads, kept in registers for
//    the second sweep. Longer chains load again.
inline constexpr int prefix_threads = 1024;
template <class Acc>
inline constexpr int prefix_loads = static_cast<int>(64 / sizeof(Acc));

// Chain blockIdx.x: its group totals T_0 .. T_{groups-1} of column c become the inclusive
// prefixes S_q = seed op T_0 op ... op T_q (inclusive scans: no seed), folded left to
// right: each part's total, the parts before it folded in order, then the part's values
// again. Thread tid is part tid / W of column tid % W.
template <bool Exclusive, class Acc, class Op>
__global__ void __launch_bounds__(prefix_threads)
    prefixes_kernel(Acc* sums, column_geometry g, seed_value<Acc, Exclusive> seed, Op op) {
  constexpr int L = prefix_loads<Acc>;
  allow_dependent_launch();  // step 3's blocks may start loading; they wait for this grid
  __shared__ block::detail::uninitialized_array<Acc, prefix_threads> part_totals;
  __shared__ bool part_present[prefix_threads];
  const sums_layout layout(g);
  const int W = g.width;
  const int tid = static_cast<int>(threadIdx.x);
  const int parts = prefix_threads / W;
  const int c = tid % W, part = tid / W;
  const std::int64_t m = layout.groups;
  const std::int64_t per = ceil_div(m, parts);
  const std::int64_t lo = part * per < m ? part * per : m;
  const std::int64_t hi = lo + per < m ? lo + per : m;
  const std::int64_t stride = g.chains * W;
  Acc* column = sums + layout.group(0, blockIdx.x) + c;  // T_q at column[q * stride]
  Acc a[L];
  const auto load_round = [&](std::int64_t k0) {
#pragma unroll
    for (int u = 0; u < L; ++u) {
      if (k0 + u < hi) a[u] = column[(k0 + u) * stride];
    }
  };

  wait_for_prerequisite_grid();  // step 1 has completed and its sums are visible

  // the part's total (none for an empty part)
  maybe<Acc> total{Acc{}, false};
  for (std::int64_t k0 = lo; k0 < hi; k0 += L) {
    load_round(k0);
#pragma unroll
    for (int u = 0; u < L; ++u) {
      if (k0 + u < hi) total = then(total, a[u], op);
    }
  }
  part_totals[tid] = total.value;
  part_present[tid] = total.present;
  __syncthreads();  // every part's total is stored before any part folds those before it

  // the part's start: the seed, then the parts before it in order
  maybe<Acc> running{total.value, false};
  if constexpr (Exclusive) running = {seed.value, true};
  for (int p = 0; p < part; ++p) {
    if (part_present[p * W + c]) running = then(running, static_cast<Acc>(part_totals[p * W + c]), op);
  }
  // the part's inclusive prefixes, each in place of its total (this thread's alone; a part
  // of one round still holds its values)
  for (std::int64_t k0 = lo; k0 < hi; k0 += L) {
    if (hi - lo > L) load_round(k0);
#pragma unroll
    for (int u = 0; u < L; ++u) {
      if (k0 + u < hi) {
        running = then(running, a[u], op);
        column[(k0 + u) * stride] = running.value;
      }
    }
  }
}

// Three blocks an SM: without the bound ptxas takes enough registers for only two, which
// costs more than the few bytes of spills the bound brings.
inline constexpr int scan_min_blocks = 3;

// 3. Every tile (block b: row chunk k = b / chains of chain b % chains, in group q = k /
//    group_tiles): its rows scanned as in step 1, its column prefix S_{q-1} op E_k (S_{-1}:
//    the seed of an exclusive scan, else nothing; E_k only past the group's first tile;
//    the last chunk, k = m, in no group: S of the last group), its results stored.
template <bool Exclusive, class Acc, class Op>
__global__ void __launch_bounds__(threads, scan_min_blocks) scan_kernel(const Acc* in, Acc* out, column_geometry g,
                                                      const Acc* sums, seed_value<Acc, Exclusive> seed,
                                                      Op op) {
  constexpr int Vec = column_vec<Acc>;
  __shared__ block::detail::uninitialized_array<Acc, threads * Vec> totals;
  const std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) / g.chains;
  const std::int64_t chain = static_cast<std::int64_t>(blockIdx.x) - chunk * g.chains;
  const chain_place place(g, chain);
  const strided::run_place at = strided::place_run<Acc>(g, chunk, place.group);
  column_run<Acc> run;
  strided::scan_run(in, g, chunk, place.slice, place.group, totals.data(), run, op);
  wait_for_prerequisite_grid();  // step 2 (so step 1) has completed: the sums are there, and
                                 // nothing of `in` is read after this point

  // the column's prefix (both loads in flight together), then the row groups above (as
  // columns_kernel's step 5)
  // (the last chunk, k = m, is in no group: its prefix is S of the chain's last group,
  // the same operations as S_{q-1} op E_m had E_m been stored)
  const sums_layout layout(g);
  const bool last = chunk == layout.m;
  const std::int64_t q = last ? layout.groups : chunk / group_tiles;
  const bool in_group = !last && chunk % group_tiles > 0;
  const std::int64_t word = std::int64_t{at.word} * Vec;
  Acc before[Vec], within[Vec];
  if (q > 0) single_pass::load_vector<Vec>(sums, layout.group(q - 1, chain) + word, before);
  if (in_group) single_pass::load_vector<Vec>(sums, layout.in_group(chunk, chain) + word, within);
  auto& x = run.x;
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    maybe<Acc> p{x[0][k], false};
    if (q > 0) {
      p = {before[k], true};
    } else if constexpr (Exclusive) {
      p = {seed.value, true};
    }
    if (in_group) p = then(p, within[k], op);
    if (run.above[k].present) p = then(p, run.above[k].value, op);
    if constexpr (Exclusive) {
#pragma unroll
      for (int r = strided::column_rows - 1; r > 0; --r) x[r][k] = static_cast<Acc>(op(p.value, x[r - 1][k]));
      x[0][k] = p.value;
    } else if (p.present) {
#pragma unroll
      for (int r = 0; r < strided::column_rows; ++r) x[r][k] = static_cast<Acc>(op(p.value, x[r][k]));
    }
  }
  if (at.column_valid) {
    Acc* line_out = out + place.slice * g.len * g.inner + at.column;
#pragma unroll
    for (int r = 0; r < strided::column_rows; ++r) {
      if (at.row0 + r < g.len) single_pass::store_vector<Vec>(line_out, (at.row0 + r) * g.inner, x[r]);
    }
  }
}

// Where it pays: from min_bytes on (below, three launches cost more than the window-bound
// look-back), for 8-byte values at any number of chains, for 4-byte values up to 2 chains
// (from 4 chains on the look-back's window of 32 tiles keeps up) (docs/performance.md,
// "Plans and thresholds").
inline constexpr std::int64_t min_bytes = thresholds.columns_reduce_then_scan_min_bytes;
template <class Acc>
inline constexpr std::int64_t max_chains = sizeof(Acc) == 4 ? 2 : std::int64_t{1} << 40;

// Whether the public batched scans take this path: options.deterministic on values whose
// operator is not exact, where columns_kernel would scan (16-byte aligned pointers to a
// 4- or 8-byte Acc, rows of whole 16-byte words, at least 8 of them) with a look-back
// (two row chunks or more), in at most max_chains chains.
template <class Acc, class In, class Out>
bool takes(In in, Out out, std::int64_t outer, std::int64_t len, std::int64_t inner, const options& o) {
  if constexpr (strided::columns_take_v<Acc, In, Out> && !single_pass::exact_values<Acc>::value) {
    constexpr int Vec = column_vec<Acc>;
    if (!o.deterministic || inner % Vec != 0 || inner / Vec < 8 || !single_pass::aligned_16(in) ||
        !single_pass::aligned_16(out)) {
      return false;
    }
    const column_geometry g = strided::make_column_geometry<Acc>(outer, len, inner, strided::column_words<Acc>(len));
    return g.chunks >= 2 && g.chains <= max_chains<Acc> && g.tiles <= 0x7fffffff &&
           outer * len * inner >= min_bytes / static_cast<std::int64_t>(sizeof(Acc));
  } else {
    (void)in, (void)out, (void)outer, (void)len, (void)inner, (void)o;
    return false;
  }
}

// The three launches for geometry g (g.chunks >= 2, g.tiles < 2^31; 16-byte aligned
// pointers, inner a multiple of Vec): sums in a stream-ordered allocation from tally's
// pool (sums_layout::values(): about 9 / 8 of a value per tile column), freed behind step 3.
template <bool Exclusive, class Acc, class Op>
void scan(const char* function, const Acc* in, Acc* out, const column_geometry& g,
          seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  const sums_layout layout(g);
  const scoped_storage storage(function, "(none: batched scans take no caller storage)", nullptr, 0,
                               static_cast<std::size_t>(layout.values()) * sizeof(Acc), o.stream);
  Acc* sums = reinterpret_cast<Acc*>(storage.aligned());
  totals_kernel<Acc><<<static_cast<unsigned>(layout.groups * g.chains), threads, 0, o.stream>>>(in, g, sums, op);
  TALLY_CUDA_CHECK_LAUNCH("columns_reduce_then_scan::totals_kernel", function);
  launch_dependent(function, "columns_reduce_then_scan::prefixes_kernel", dim3(static_cast<unsigned>(g.chains)),
                   dim3(prefix_threads), 0, o.stream, prefixes_kernel<Exclusive, Acc, Op>, sums, g, seed, op);
  launch_dependent(function, "columns_reduce_then_scan::scan_kernel", dim3(static_cast<unsigned>(g.tiles)),
                   dim3(threads), 0, o.stream, scan_kernel<Exclusive, Acc, Op>, in, out, g,
                   static_cast<const Acc*>(sums), seed, op);
}

}  // namespace tally::detail::columns_reduce_then_scan
