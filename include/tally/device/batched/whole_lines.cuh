// tally/device/batched/whole_lines.cuh -- batched scans along the last axis when the lines
// are short: every tile holds whole lines, so no tile waits for another.
//
// Why. Along the last axis the lines are contiguous segments of equal length, and the
// general kernels (segmented/tile_heads.cuh's tile kernel, the pipelined kernel of
// segmented/pipelined.cuh) treat them as any segmented scan: tiles of a fixed size, a
// ticket, and a look-back for the line that crosses into the tile from the one before.
// When a tile can hold several lines, tiles can instead be cut AT line boundaries: a
// tile of `lines_per_tile` whole lines starts with a head, needs nothing from any other
// tile, and the kernel is a stream of independent blocks, load -> scan -> store, with no
// ticket, no descriptors and no wait. That matters most where a call is latency, e.g.
// (2^20, 2) along axis 1 (docs/performance.md, "What each path earns").
//
// The tile (per block, 256 threads, the tile kernel's layout: Rows rows of 16 bytes a
// lane; Rows below):
//   1. the tile's values to shared memory, 16 bytes a copy (cp.async); a tile holds
//      lines_per_tile whole lines and starts at a multiple of 16 bytes (lines_per_tile is
//      a multiple of vec / gcd(len, vec), vec = values per 16 bytes). The vectors past
//      the tile's last value are filled with that value (defined bits for the operator;
//      never stored).
//   2. each warp scans its rows as (head, value) pairs, a head where i % len == 0
//      (segmented_offsets::scan_pair_rows, the tile kernel's step 2);
//   3. the warps' pairs are scanned by warp 0 (segmented_op): each warp's prefix;
//   4. every value is finished and stored (segmented_offsets::finish_pair_row): the
//      warp's prefix in front of the items before its first head; exclusive scans are
//      seeded (each head's value is init op x) and shift by one.
// Element 0 of every tile is a head, so warp 0 needs no prefix and the tile none.
// Results are the same bits from run to run: the association is fixed by the tile.
// Lines that divide a 16-byte word (e.g. (2^20, 2) along axis 1) need no tile at all:
// lines_in_words_kernel below scans each word in a thread of its own.
//
// Applies to 16-byte aligned pointers to 4- and 8-byte values and lines that fill at
// least 3/4 of a tile (rows_for below; the caller, segmented.cuh): most lengths up to 2048
// values (not, e.g., 8-byte lines of 1500: two a large tile, 73% of it), and 4-byte
// lines of 4096 or 8192; other lines keep the general kernels, which beat tiles left
// much emptier (docs/performance.md, "Plans and thresholds").
#pragma once

#include <cstdint>
#include <numeric>

#include <cuda_runtime.h>

#include "tally/block/detail/scan_interface.cuh"
#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/device/arch/bulk_copy.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/segmented/tile_heads.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::whole_lines {

inline constexpr int block_threads = 256;

template <class Acc>
inline constexpr int vec_of = static_cast<int>(16 / sizeof(Acc));

// Two tile sizes (256 threads x Rows rows x 16 bytes): small tiles of 2048 values (2 rows
// of 4-byte values, 4 of 8-byte ones), and large ones of 8 rows (8192 4-byte or 4096
// 8-byte values, the tile kernel's). Small tiles finish sooner and spread a small call
// over more blocks; large ones hold longer lines (docs/performance.md, "Plans and
// thresholds").
template <class Acc>
inline constexpr int small_rows = 2048 / (block_threads * vec_of<Acc>);
inline constexpr int large_rows = 8;

template <class Acc>
constexpr std::int64_t tile_items(int rows) {
  return std::int64_t{block_threads} * rows * vec_of<Acc>;
}

// The lines a tile of `rows` holds: as many as fit, a multiple of vec / gcd(len, vec) so
// that every tile starts at a multiple of 16 bytes (0: not even that many fit).
template <class Acc>
constexpr std::int64_t lines_per_tile(std::int64_t len, int rows) {
  constexpr std::int64_t vec = vec_of<Acc>;
  const std::int64_t step = vec / std::gcd(len, vec);
  return tile_items<Acc>(rows) / len / step * step;
}

// The rows of the tiles for lines of len values: small tiles where their lines fill at
// least 3/4 of them, else large ones on the same condition, else 0: the kernel does not
// take the call (e.g. lines of 5000 4-byte values, one a large tile, 61% of it, where the
// general kernels are faster).
template <class Acc>
constexpr int rows_for(std::int64_t len) {
  if (!single_pass::vectorisable_v<Acc> || len < 1) return 0;
  for (const int rows : {small_rows<Acc>, large_rows}) {
    if (4 * lines_per_tile<Acc>(len, rows) * len >= 3 * tile_items<Acc>(rows)) return rows;
  }
  return 0;
}

// The heads of the lane's vector at tile index i (a multiple of Vec): i + k is a head
// where (i + k) % len == 0.
template <int Vec>
TALLY_DEVICE TALLY_FORCEINLINE void heads_at(int i, int len, bool (&h)[Vec]) {
  int m = i % len;  // the position of item i in its line
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    h[k] = m == 0;
    m = m + 1 == len ? 0 : m + 1;
  }
}

template <int Rows, int Vec, bool Exclusive, class Acc, class Op>
__global__ void __launch_bounds__(block_threads)
    whole_lines_kernel(const Acc* in, Acc* out, std::int64_t n, int len, int tile_items, Acc init, Op op) {
  using L = single_pass::layout<block_threads, Rows, Vec, true>;
  using pair = flagged<Acc>;
  __shared__ single_pass::staged_tile<Acc, L> staged;
  __shared__ block::detail::uninitialized_array<pair, L::warps> warp_totals;
  __shared__ block::detail::uninitialized_array<Acc, L::warps> warp_prefixes;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * tile_items;
  const int count = n - base < tile_items ? static_cast<int>(n - base) : tile_items;

  // 1. the tile to shared memory: whole vectors by cp.async, the one the tile's end cuts
  //    (the last tile of an n that is not a multiple of Vec) and the ones past it by
  //    plain loads, padded with the tile's last value. Each lane scans only the vectors it
  //    copied itself (step 2), so its own wait is enough: no barrier.
  auto* tile_values = staged.data();
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    const int v = single_pass::staged_index<L>(warp_id, lane, r);
    if (v * Vec + Vec <= count) {
      single_pass::copy_async_16(&tile_values[v], in + base + static_cast<std::int64_t>(v) * Vec);
    } else {
      const Acc last = in[base + count - 1];  // (only the last tile gets here)
      single_pass::vector_of<Acc, Vec> items;
#pragma unroll
      for (int k = 0; k < Vec; ++k) items.v[k] = v * Vec + k < count ? in[base + v * Vec + k] : last;
      tile_values[v] = items;
    }
  }
  arch::wait_async_copies();  // this lane's copies have landed

  // 2. each warp's rows of (head, value) pairs
  const auto heads_of = [&](int, int v, bool(&h)[Vec]) { heads_at<Vec>(v * Vec, len, h); };
  int first_head = L::warp_items;
  bool warp_head = false;
  const Acc warp_total = segmented_offsets::scan_pair_rows<L, Exclusive>(tile_values, warp_id, lane, heads_of,
                                                                          init, op, first_head, warp_head);
  if (lane == 0) warp_totals[warp_id] = pair{warp_head, warp_total};
  __syncthreads();  // the warp totals (and every warp's results in the tile) are stored

  // 3. each warp's prefix: the pairs of the warps before it (warp 0 starts with a head
  //    and has none)
  if (warp_id == 0) {
    segmented_op<Op> pair_op{op};
    const pair total = warp_totals[lane < L::warps ? lane : L::warps - 1];
    const pair inclusive = warp::inclusive_scan(total, pair_op);
    const pair exclusive = warp::shuffle_up(inclusive, 1u);  // (unused in lane 0)
    if (lane > 0 && lane < L::warps) warp_prefixes[lane] = exclusive.value;
  }
  __syncthreads();  // the warp prefixes are stored before any warp reads them

  // 4. results: whole vectors with one 16-byte store, the cut one item by item
  const bool has_prefix = warp_id > 0;
  const Acc warp_prefix = has_prefix ? warp_prefixes[warp_id] : warp_total;  // (defined bits)
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    const int v = single_pass::staged_index<L>(warp_id, lane, r);
    if (v * Vec >= count) continue;
    Acc x[Vec];
    segmented_offsets::finish_pair_row<L, Exclusive>(tile_values, warp_id, lane, r, heads_of, warp_prefix,
                                                     has_prefix, first_head, init, op, x);
    const std::int64_t at = base + static_cast<std::int64_t>(v) * Vec;
    if (v * Vec + Vec <= count) {
      single_pass::store_vector<Vec>(out, at, x);
    } else {
#pragma unroll
      for (int k = 0; k < Vec; ++k) {
        if (v * Vec + k < count) out[at + k] = x[k];
      }
    }
  }
}

// Lines of len values where len divides vec (1, 2 or 4 4-byte values, 1 or 2 8-byte
// ones): every 16-byte word holds whole lines, so each thread scans one word alone, with
// the accesses of an elementwise copy (no shared memory, no barrier). The last word of
// an n that is not a multiple of vec is read and written value by value.
template <int Vec, bool Exclusive, class Acc, class Op>
__global__ void __launch_bounds__(block_threads)
    lines_in_words_kernel(const Acc* in, Acc* out, std::int64_t n, int len, Acc init, Op op) {
  const std::int64_t at = (static_cast<std::int64_t>(blockIdx.x) * block_threads + threadIdx.x) * Vec;
  if (at >= n) return;
  const bool whole = at + Vec <= n;
  Acc x[Vec];
  if (whole) {
    single_pass::load_vector<Vec>(in, at, x);
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) x[k] = in[at + k < n ? at + k : n - 1];
  }
  // a head where k % len == 0 (len is a power of two dividing Vec, and `at` a multiple of it)
  Acc running = x[0];
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    const bool head = (k & (len - 1)) == 0;
    if constexpr (Exclusive) {
      const Acc before = head ? init : running;
      running = static_cast<Acc>(op(before, x[k]));
      x[k] = before;
    } else {
      running = head ? x[k] : static_cast<Acc>(op(running, x[k]));
      x[k] = running;
    }
  }
  if (whole) {
    single_pass::store_vector<Vec>(out, at, x);
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      if (at + k < n) out[at + k] = x[k];
    }
  }
}

// Whether lines of len values take lines_in_words_kernel.
template <class Acc>
constexpr bool lines_in_words(std::int64_t len) {
  return single_pass::vectorisable_v<Acc> && len >= 1 && vec_of<Acc> % len == 0;
}

// One launch over n = lines * len values (n >= 1, lines_in_words<Acc>(len) or
// rows_for<Acc>(len) > 0, 16-byte aligned pointers). init: the exclusive scans' (unused
// by inclusive ones).
template <bool Exclusive, class Acc, class Op>
void scan(const char* function, const Acc* in, Acc* out, std::int64_t n, std::int64_t len, Acc init, Op op,
          const options& o) {
  if (lines_in_words<Acc>(len)) {
    const std::int64_t blocks = ceil_div(ceil_div(n, vec_of<Acc>), block_threads);
    if (blocks > 0x7fffffff) throw_invalid(function, "shape", "has too many values for one launch");
    lines_in_words_kernel<vec_of<Acc>, Exclusive><<<static_cast<unsigned>(blocks), block_threads, 0, o.stream>>>(
        in, out, n, static_cast<int>(len), init, op);
    TALLY_CUDA_CHECK_LAUNCH("lines_in_words_kernel", function);
    return;
  }
  const int rows = rows_for<Acc>(len);
  const std::int64_t per_tile = lines_per_tile<Acc>(len, rows);
  const std::int64_t tiles = ceil_div(n / len, per_tile);
  if (tiles > 0x7fffffff) throw_invalid(function, "shape", "needs more than 2^31 - 1 tiles");
  const auto grid = static_cast<unsigned>(tiles);
  const int items = static_cast<int>(per_tile * len);
  if (rows == small_rows<Acc>) {
    whole_lines_kernel<small_rows<Acc>, vec_of<Acc>, Exclusive>
        <<<grid, block_threads, 0, o.stream>>>(in, out, n, static_cast<int>(len), items, init, op);
  } else {
    whole_lines_kernel<large_rows, vec_of<Acc>, Exclusive>
        <<<grid, block_threads, 0, o.stream>>>(in, out, n, static_cast<int>(len), items, init, op);
  }
  TALLY_CUDA_CHECK_LAUNCH("whole_lines_kernel", function);
}

}  // namespace tally::detail::whole_lines
