// tally/device/detail/strided_scan.cuh -- batched scans along an axis that is not the last:
// a contiguous (outer, len, inner) array, inner >= 2, every line x[o][0..len)[c] scanned.
//
// (Along the last axis, inner == 1, the lines are contiguous segments of equal length:
// segmented_scan.cuh with uniform heads.)
//
// Here consecutive elements in memory belong to different lines, so the lines are scanned
// side by side: a tile is `rows` consecutive rows x `width` consecutive columns of one
// outer slice, loaded and stored row by row (coalesced), and every column of the tile is
// one independent scan that continues the same column of the tile above it. Each column
// runs its own single-pass look-back (Merrill & Garland's protocol with one thread per
// column): the tile publishes its column aggregates, then each column's thread walks up
// through the tiles above, one at a time, until it meets an inclusive value.
// One pass over the data, one launch; every shape keeps all the GPU busy:
//   (2^20, 32) axis 0: 32 columns, 4096 tiles of 256 rows stacked in one chain;
//   (16384, 4096) axis 0: 16 groups of 256 columns, 512 tiles of 32 rows in each chain;
//   (2, 2^20) axis 0: lines of two elements: short_lines_kernel below, no look-back.
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
//   5. every run adds its prefix, the values go back to shared memory and out row by row
// The descriptors of tile t live at t * width + c (format of tile_state.cuh: epoch tags,
// the per-stream buffer, no reset between calls). Every tile writes all `width` of them,
// unused columns included, so that every descriptor below tiles * width carries this
// call's epoch (the clearing rule of tile_state.cuh).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/single_pass_scan.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/tile_state.cuh"

namespace tally::detail::strided {

inline constexpr int threads = 256;
using single_pass::maybe;
using single_pass::then;

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

template <int Items, bool Exclusive, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(threads)
    strided_kernel(In in, Out out, geometry g, seed_value<Acc, Exclusive> seed, Op op,
                   single_pass::tile_state<Acc> state, bool deterministic) {
  using single_pass::status_aggregate;
  using single_pass::status_inclusive;
  using single_pass::ticket;
  using single_pass::tile_status;
  using single_pass::draw_ticket;
  using single_pass::make_tag;
  using single_pass::is_clearing_epoch;
  constexpr int capacity = threads * Items;
  __shared__ block::detail::uninitialized_array<Acc, capacity + capacity / 32> tile;
  __shared__ block::detail::uninitialized_array<Acc, threads> runs;        // run totals, scanned
  __shared__ block::detail::uninitialized_array<Acc, threads> col_prefix;  // per column
  __shared__ std::int64_t ticket_tile;
  __shared__ unsigned ticket_epoch;

  const int tid = static_cast<int>(threadIdx.x);
  const bool lookback = g.chunks > 1;

  // 0. the ticket (without look-back, tiles are independent: blockIdx will do)
  if (lookback) {
    if (tid == 0) {
      const ticket t = draw_ticket(state.header, g.tiles);
      ticket_tile = t.tile;
      ticket_epoch = t.epoch;
    }
    __syncthreads();  // every thread needs the tile before it loads
  }
  const std::int64_t t = lookback ? ticket_tile : static_cast<std::int64_t>(blockIdx.x);
  const unsigned epoch = lookback ? ticket_epoch : 0u;
  const std::int64_t chunk = t / g.chains;
  const std::int64_t chain = t - chunk * g.chains;
  const std::int64_t slice = chain / g.groups;
  const std::int64_t group = chain - slice * g.groups;
  const std::int64_t col0 = group * g.width;
  const int cols_here = static_cast<int>(std::min<std::int64_t>(g.width, g.inner - col0));
  const std::int64_t row0 = chunk * g.rows;
  const int rows_here = static_cast<int>(std::min<std::int64_t>(g.rows, g.len - row0));
  const std::int64_t origin = (slice * g.len + row0) * g.inner + col0;  // element (0, 0)
  const int W = g.width;

  // Every 2^29 calls: zero the descriptors past this call's (tile_state.cuh).
  if (lookback && is_clearing_epoch(epoch)) {
    for (std::int64_t i = g.tiles * W + t * threads + tid; i < state.capacity;
         i += g.tiles * threads) {
      state.descriptors.clear(i);
    }
  }

  // 1. load, row by row. Element e of the tile is (row e / W, column e % W); thread tid
  // takes e = tid + q * threads, whose (row, column) advance by (threads / W, threads % W).
  // Positions outside the array (a partial last chunk, a partial last column group) load
  // a copy of an element inside the tile (defined padding, never stored; the scan is
  // causal, so padding rows after the valid ones change no valid result).
  // All Items loads go to registers first, then to shared memory: `in` is a generic
  // pointer, which the compiler must assume may alias the shared tile, so a loop that
  // stored each value to shared memory before the next load would wait for every load in
  // turn (version 1 did: 3.35x the copy's time even with independent tiles).
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

  // 4. the column prefixes (threads 0..W-1: column tid, lane 0). A column has one when
  // the scan is exclusive (chunk 0: the seed) or the tile is below chunk 0 (look-back;
  // columns past the array's last column skip it and have none).
  const bool has_prefix = chunk == 0 ? Exclusive : c < cols_here;
  if (tid < W) {
    const Acc aggregate = runs[(g.lanes - 1) * W + tid];
    maybe<Acc> prefix{aggregate, false};
    if (chunk == 0) {
      if constexpr (Exclusive) prefix = {seed.value, true};
    } else if (tid < cols_here) {
      // Publish the aggregate first (the decoupling), unless deterministic: then every
      // tile waits for the inclusive value right above it, so each column is the same
      // left fold in every run.
      const std::int64_t mine = t * W + tid;
      if (!deterministic) state.descriptors.store(mine, make_tag(epoch, status_aggregate), aggregate);
      // Walk up the column one tile at a time (a window of several descriptors read
      // together measured slower: docs/perf-notes.md).
      std::int64_t above = t - g.chains;  // the same column of the tile above
      bool found = false;
      Acc acc = aggregate;  // reassigned before use
      while (true) {
        Acc value;
        const tile_status s = state.descriptors.load(above * W + tid, epoch, value);
        if (s == status_inclusive || (s == status_aggregate && !deterministic)) {
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

// Lines of at most Items elements: one thread per line (a column of one outer slice),
// all loads first (in place stays safe), then the serial scan and the stores. Consecutive
// threads take consecutive columns: every row access of a warp is contiguous.
template <int Items, bool Exclusive, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(threads)
    short_lines_kernel(In in, Out out, std::int64_t outer, int len, std::int64_t inner,
                       seed_value<Acc, Exclusive> seed, Op op) {
  const std::int64_t line = static_cast<std::int64_t>(blockIdx.x) * threads + threadIdx.x;
  if (line >= outer * inner) return;
  const std::int64_t slice = line / inner;
  const std::int64_t first = slice * len * inner + (line - slice * inner);
  Acc v[Items];
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    if (j < len) v[j] = static_cast<Acc>(in[first + j * inner]);
  }
  maybe<Acc> p{v[0], false};
  if constexpr (Exclusive) p = {seed.value, true};
#pragma unroll
  for (int j = 0; j < Items; ++j) {
    if (j < len) {
      const Acc x = v[j];
      if constexpr (Exclusive) {
        out[first + j * inner] = p.value;
        p = then(p, x, op);
      } else {
        p = then(p, x, op);
        out[first + j * inner] = p.value;
      }
    }
  }
}

template <bool Exclusive, class Acc, class In, class Out, class Op>
void scan(const char* function, In in, Out out, std::int64_t outer, std::int64_t len,
          std::int64_t inner, seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  static_assert(std::is_trivially_copyable_v<Acc>,
                "batched scans need a trivially copyable accumulator type");
  constexpr int Items = items<Acc>();
  if (outer == 0 || len == 0 || inner == 0) return;
  if (len <= Items) {
    const std::int64_t blocks = ceil_div(outer * inner, threads);
    if (blocks > 0x7fffffff) throw_invalid(function, "shape", "has too many lines for one launch");
    short_lines_kernel<Items, Exclusive, Acc><<<static_cast<unsigned>(blocks), threads, 0, o.stream>>>(
        in, out, outer, static_cast<int>(len), inner, seed, op);
    TALLY_CUDA_CHECK_LAUNCH("short_lines_kernel", function);
    return;
  }
  const geometry g = make_geometry<Acc>(outer, len, inner);
  if (g.tiles > 0x7fffffff) {
    throw_invalid(function, "shape", "needs more than 2^31 - 1 tiles");
  }
  const auto grid = static_cast<unsigned>(g.tiles);
  auto launch = [&](single_pass::tile_state<Acc> state) {
    strided_kernel<Items, Exclusive, Acc><<<grid, threads, 0, o.stream>>>(in, out, g, seed, op, state,
                                                                         o.deterministic);
    TALLY_CUDA_CHECK_LAUNCH("strided_kernel", function);
  };
  if (g.chunks == 1) {
    launch(single_pass::tile_state<Acc>{});
    return;
  }
  const std::int64_t descriptors = g.tiles * g.width;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TALLY_CUDA_CHECK(cudaStreamIsCapturing(o.stream, &capture), function);
  if (capture != cudaStreamCaptureStatusNone) {
    // While capturing a graph: a state of the call's own, zeroed, as single_pass::scan does.
    const std::size_t bytes = single_pass::state_bytes<Acc>(descriptors);
    scoped_storage storage(function, "", nullptr, 0, bytes + storage_alignment, o.stream);
    TALLY_CUDA_CHECK(cudaMemsetAsync(storage.aligned(), 0, bytes, o.stream), function);
    launch(single_pass::tile_state<Acc>::at(storage.aligned(), descriptors));
    return;
  }
  const auto lease = single_pass::tile_state_registry::instance().acquire(
      function, o.stream, descriptors, single_pass::descriptor_format<Acc>,
      [](std::int64_t capacity) { return single_pass::state_bytes<Acc>(capacity); });
  launch(single_pass::tile_state<Acc>::at(lease.data, lease.capacity));
}

}  // namespace tally::detail::strided
