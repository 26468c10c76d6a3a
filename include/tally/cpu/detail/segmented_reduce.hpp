// tally/cpu/detail/segmented_reduce.hpp -- the parallel CPU segmented reduction (CSR
// offsets): one result per segment.
//
// Work is split by cost, not by segment: segment k costs its length plus one (its output),
// and its start on the combined "elements + segments" axis is offsets[k] - offsets[0] + k,
// strictly increasing in k (the merge-path coordinate of Green, McColl & Bader 2012 /
// Merrill & Garland 2016, here only used to find where chunks begin). The axis is cut into
// chunks of one tile each; a chunk reduces, one after the other, the segments that start
// in it. So a million empty or one-element segments are as balanced as a few long ones.
// A segment longer than a parallel scan's threshold is reduced by the parallel
// deterministic reduce (cpu/reduce.hpp) inside its chunk; the rest by the vectorised or
// scalar run kernel. The association depends on the segment lengths only: floating-point
// results are identical from run to run and for any number of threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "tally/cpu/detail/dispatch.hpp"
#include "tally/cpu/detail/segmented_scan.hpp"
#include "tally/cpu/reduce.hpp"

namespace tally::cpu::detail {

template <class Acc, class InIt, class OffIt, class OutIt, class Op>
void segmented_reduce_range(InIt first, OffIt offsets, std::int64_t segments, OutIt d_first,
                            const Acc& init, Op op) {
  using T = std::iter_value_t<InIt>;
  if (segments == 0) return;
  auto offset = [&](std::int64_t k) { return static_cast<std::int64_t>(offsets[k]); };
  const std::int64_t base = offset(0);
  const std::int64_t n = offset(segments) - base;

  auto reduce_segment = [&](std::int64_t k, bool nested) {
    const std::int64_t b = offset(k), e = offset(k + 1);
    if (b == e) {
      d_first[k] = init;
    } else if (nested && static_cast<std::size_t>(e - b) * sizeof(T) >= cpu_tuning::parallel_min_bytes) {
      d_first[k] = tally::cpu::reduce(first + b, first + e, init, op);
    } else if (e - b >= simd_run_min) {
      d_first[k] = reduce_run<Acc>(first, b, e, std::optional<Acc>(init), op);
    } else {
      Acc acc = init;
      for (InIt it = first + b, stop = first + e; it != stop; ++it) {
        acc = op(std::as_const(acc), static_cast<T>(*it));
      }
      d_first[k] = std::move(acc);
    }
  };

  const std::int64_t cost = n + segments;
  const std::int64_t chunk = cpu_tuning::tile_elements<T>();
  if (static_cast<std::size_t>(cost) * sizeof(T) < cpu_tuning::parallel_min_bytes) {
    for (std::int64_t k = 0; k < segments; ++k) reduce_segment(k, false);
    return;
  }
  // The first segment whose start on the combined axis is at or after p.
  auto first_segment_at = [&](std::int64_t p) {
    std::int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (offset(mid) - base + mid < p) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  };
  const std::int64_t chunks = (cost + chunk - 1) / chunk;
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, chunks, 1),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      const std::int64_t k0 = first_segment_at(r.begin() * chunk);
                      const std::int64_t k1 =
                          r.end() == chunks ? segments : first_segment_at(r.end() * chunk);
                      for (std::int64_t k = k0; k < k1; ++k) reduce_segment(k, true);
                    });
}

}  // namespace tally::cpu::detail
