// tally/cpu/detail/batched_scan.hpp -- scans along one axis of a row-major N-d array.
//
// The array is viewed as (outer, len, inner): `len` is the extent of the scanned axis,
// `outer` the product of the extents before it, `inner` the product of those after it.
//   inner == 1   every line is contiguous: a segmented scan with segments of length
//                `len` (detail/segmented_scan.hpp), one pass whatever len is.
//   inner > 1    a scan of row vectors: row k of a line block is combined elementwise
//                with the running row of rows 0..k-1, out[o][k][j] = acc[j] op
//                in[o][k][j]. The innermost loop runs over j, contiguous in memory (and
//                vectorised by the compiler for arithmetic types); a block of columns
//                [j0, j1) of at most `block_bytes` keeps its running row in L1.
//                Work units are (outer index, column block). With enough units they run
//                in parallel, each scanning its rows in order; with few units and long
//                lines (a tall, narrow array such as (2^20, 2) along axis 0), each unit
//                is itself split along len into tiles scanned by the chained tile scan
//                (detail/chained_scan.hpp) on row-vector values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "tally/cpu/detail/chained_scan.hpp"
#include "tally/cpu/detail/dispatch.hpp"
#include "tally/cpu/detail/segmented_scan.hpp"

namespace tally::cpu::detail {

// Bytes of running row per column block.
inline constexpr std::size_t batched_block_bytes = std::size_t{8} << 10;
inline constexpr std::size_t batched_min_block_bytes = 512;

// Scans rows [k0, k1) of one column block: element (k, j) is at index k * stride + j,
// j in [0, w). `acc` is the running row (empty at an inclusive line's start, where it is
// filled from the first row). `Write`: false only reduces (no output).
template <bool Exclusive, bool Write, class Acc, class InIt, class OutIt, class Op>
void scan_rows(InIt in, OutIt out, std::int64_t stride, std::int64_t w, std::int64_t k0,
               std::int64_t k1, std::vector<Acc>& acc, Op& op) {
  using T = std::iter_value_t<InIt>;
  std::int64_t k = k0;
  if (acc.empty() && k < k1) {
    acc.reserve(static_cast<std::size_t>(w));
    const InIt row = in + k * stride;
    for (std::int64_t j = 0; j < w; ++j) acc.push_back(static_cast<Acc>(static_cast<T>(row[j])));
    if constexpr (Write) {
      const OutIt orow = out + k * stride;
      for (std::int64_t j = 0; j < w; ++j) orow[j] = acc[static_cast<std::size_t>(j)];
    }
    ++k;
  }
  Acc* a = acc.data();
  for (; k < k1; ++k) {
    const InIt row = in + k * stride;
    if constexpr (!Write) {
      for (std::int64_t j = 0; j < w; ++j) a[j] = op(std::as_const(a[j]), static_cast<T>(row[j]));
    } else {
      const OutIt orow = out + k * stride;
      if constexpr (Exclusive) {
        for (std::int64_t j = 0; j < w; ++j) {
          T x = row[j];  // read before the write: in place is allowed
          orow[j] = a[j];
          a[j] = op(std::as_const(a[j]), x);
        }
      } else {
        for (std::int64_t j = 0; j < w; ++j) {
          a[j] = op(std::as_const(a[j]), static_cast<T>(row[j]));
          orow[j] = a[j];
        }
      }
    }
  }
}

template <bool Exclusive, class Acc, class InIt, class OutIt, class Op>
void scan_along_axis(InIt first, OutIt d_first, std::int64_t outer, std::int64_t len,
                     std::int64_t inner, const std::optional<Acc>& init, Op op, bool may_help) {
  using T = std::iter_value_t<InIt>;
  const std::int64_t total = outer * len * inner;
  if (total == 0) return;
  if (inner == 1) {
    segmented_scan_range<Exclusive, Acc>(first, total, d_first, uniform_heads{len}, init, op,
                                         may_help);
    return;
  }

  // Column blocks: at most batched_block_bytes of running row, and narrow enough that
  // there are about four units per thread when the lines are few (but no narrower than
  // batched_min_block_bytes, a few cache lines per row).
  const std::int64_t threads = tbb::this_task_arena::max_concurrency();
  const auto elem = static_cast<std::int64_t>(std::max(sizeof(T), sizeof(Acc)));
  const std::int64_t max_block =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(batched_block_bytes) / elem);
  const std::int64_t min_block =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(batched_min_block_bytes) / elem);
  const std::int64_t wanted_blocks = (4 * threads + outer - 1) / outer;
  const std::int64_t block =
      std::clamp<std::int64_t>((inner + wanted_blocks - 1) / wanted_blocks, min_block, max_block);
  const std::int64_t blocks_per_line = (inner + block - 1) / block;
  const std::int64_t units = outer * blocks_per_line;
  auto unit_origin = [&](std::int64_t u, std::int64_t& offset, std::int64_t& w) {
    const std::int64_t o = u / blocks_per_line;
    const std::int64_t j0 = (u % blocks_per_line) * block;
    offset = o * len * inner + j0;
    w = std::min(block, inner - j0);
  };
  auto seed_row = [&](std::int64_t w) {
    std::vector<Acc> acc;
    if constexpr (Exclusive) acc.assign(static_cast<std::size_t>(w), *init);
    return acc;
  };
  // One unit from its first row to its last, in order.
  auto scan_unit = [&](std::int64_t u) {
    std::int64_t offset = 0, w = 0;
    unit_origin(u, offset, w);
    std::vector<Acc> acc = seed_row(w);
    scan_rows<Exclusive, true, Acc>(first + offset, d_first + offset, inner, w, 0, len, acc, op);
  };

  const std::size_t bytes = static_cast<std::size_t>(total) * sizeof(T);
  const std::size_t unit_bytes = static_cast<std::size_t>(len) *
                                 static_cast<std::size_t>(std::min(block, inner)) * sizeof(T);
  if (bytes < cpu_tuning::parallel_min_bytes) {
    for (std::int64_t u = 0; u < units; ++u) scan_unit(u);
    return;
  }
  if (units >= 2 * threads || unit_bytes < cpu_tuning::parallel_min_bytes) {
    // Enough independent lines: each runs start to end on one thread.
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, units),
                      [&](const tbb::blocked_range<std::int64_t>& r) {
                        for (std::int64_t u = r.begin(); u != r.end(); ++u) scan_unit(u);
                      });
    return;
  }
  // Few, long units: each is split along len into tiles of rows, chained.
  using Row = std::vector<Acc>;
  for (std::int64_t u = 0; u < units; ++u) {
    std::int64_t offset = 0, w = 0;
    unit_origin(u, offset, w);
    const InIt in = first + offset;
    const OutIt out = d_first + offset;
    const std::int64_t rows_per_tile = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(cpu_tuning::tile_bytes /
                                     (static_cast<std::size_t>(w) * sizeof(T))));
    const std::int64_t tiles = (len + rows_per_tile - 1) / rows_per_tile;
    chained_scan<Row>(
        tiles, Exclusive ? std::optional<Row>(seed_row(w)) : std::optional<Row>{},
        [&](std::int64_t t) -> Row {
          const std::int64_t k0 = t * rows_per_tile;
          Row acc;
          scan_rows<Exclusive, false, Acc>(in, out, inner, w, k0,
                                           std::min(len, k0 + rows_per_tile), acc, op);
          return acc;
        },
        [&](std::int64_t t, const std::optional<Row>& prefix) {
          const std::int64_t k0 = t * rows_per_tile;
          Row acc = prefix ? *prefix : Row();
          scan_rows<Exclusive, true, Acc>(in, out, inner, w, k0,
                                          std::min(len, k0 + rows_per_tile), acc, op);
        },
        [&](const Row& a, const Row& b) {
          Row r(a);
          for (std::size_t j = 0; j < r.size(); ++j) r[j] = op(std::as_const(r[j]), b[j]);
          return r;
        },
        may_help);
  }
}

}  // namespace tally::cpu::detail
