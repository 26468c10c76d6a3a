// tally/cpu/scan.hpp -- the CPU backend's inclusive and exclusive scans.
//
//   tally::cpu::inclusive_scan(first, last, d_first, op = plus{})        -> end of output
//   tally::cpu::exclusive_scan(first, last, d_first, init, op = plus{})  -> end of output
//
// Any associative operator (commutative or not) and any copyable type. Random-access
// ranges of more than cpu_tuning::parallel_min_bytes run the parallel chained scan
// (detail/chained_scan.hpp) on oneTBB's threads; contiguous arithmetic ranges with plus,
// minimum or maximum use the vectorised tile kernels (detail/simd.hpp). Other iterators
// run the sequential reference. d_first == first (in place) is allowed; other overlaps
// are not. The accumulator type follows tally/core/accumulator.hpp. Results for floating
// point are identical from run to run and for any thread count (the association depends
// on the tile size only), but differ from the sequential order by rounding.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <type_traits>

#include "tally/core/accumulator.hpp"
#include "tally/core/operators.hpp"
#include "tally/cpu/detail/chained_scan.hpp"
#include "tally/cpu/detail/dispatch.hpp"
#include "tally/cpu/sequential.hpp"

namespace tally::cpu {
namespace detail {

// Shared by the inclusive and exclusive scans: chooses sequential, vectorised and/or
// parallel execution. `seed` is empty for an inclusive scan and the init for an exclusive.
template <bool Exclusive, class Acc, class InIt, class OutIt, class Op>
void scan_range(InIt first, std::int64_t n, OutIt d_first, const std::optional<Acc>& seed,
                Op op) {
  using T = std::iter_value_t<InIt>;
  constexpr bool random_access = std::random_access_iterator<InIt> &&
                                 std::random_access_iterator<OutIt>;
  if (n == 0) return;

  if constexpr (vectorisable<InIt, OutIt, Op, Acc>()) {
    const T* in = raw(first);
    T* out = raw(d_first);
    constexpr simd_op vop = simd_op_of<Op>();
    constexpr Acc id = tally::identity<Op, Acc>();
    const auto bytes = static_cast<std::size_t>(n) * sizeof(T);
    const bool stream = bytes >= cpu_tuning::stream_min_bytes;
    auto scan_tile = [&](std::int64_t begin, std::int64_t count, const std::optional<Acc>& p) {
      const Acc carry = p ? *p : id;
      if constexpr (Exclusive) {
        simd_exclusive_scan(vop, in + begin, out + begin, static_cast<std::size_t>(count), carry,
                            stream);
      } else {
        simd_inclusive_scan(vop, in + begin, out + begin, static_cast<std::size_t>(count), carry,
                            stream);
      }
    };
    if (bytes < cpu_tuning::parallel_min_bytes) {
      scan_tile(0, n, seed);
    } else {
      const std::int64_t tile = cpu_tuning::tile_elements<T>();
      const std::int64_t tiles = (n + tile - 1) / tile;
      chained_scan<Acc>(
          tiles, seed,
          [&](std::int64_t t) {
            const std::int64_t begin = t * tile;
            return simd_reduce(vop, in + begin,
                               static_cast<std::size_t>(std::min(tile, n - begin)), id);
          },
          [&](std::int64_t t, const std::optional<Acc>& prefix) {
            const std::int64_t begin = t * tile;
            scan_tile(begin, std::min(tile, n - begin), prefix);
            // Non-temporal stores are weakly ordered: fence them before the thread
            // reports its work done.
            if (stream) simd_flush_streams();
          },
          op, input_survives_output(in, out));
    }
  } else if constexpr (random_access) {
    auto scan_tile = [&](std::int64_t begin, std::int64_t count, const std::optional<Acc>& p) {
      InIt in = first + begin;
      OutIt out = d_first + begin;
      if constexpr (Exclusive) {
        sequential::exclusive_scan(in, in + count, out, *p, op);
      } else if (p) {
        Acc acc = *p;
        for (std::int64_t j = 0; j < count; ++j) {
          acc = op(std::as_const(acc), static_cast<T>(in[j]));
          out[j] = acc;
        }
      } else {
        sequential::inclusive_scan(in, in + count, out, op);
      }
    };
    if (static_cast<std::size_t>(n) * sizeof(T) < cpu_tuning::parallel_min_bytes) {
      scan_tile(0, n, seed);
      return;
    }
    const std::int64_t tile = cpu_tuning::tile_elements<T>();
    const std::int64_t tiles = (n + tile - 1) / tile;
    chained_scan<Acc>(
        tiles, seed,
        [&](std::int64_t t) {
          const std::int64_t begin = t * tile;
          const std::int64_t end = std::min(n, begin + tile);
          Acc acc = static_cast<Acc>(first[begin]);
          for (std::int64_t j = begin + 1; j < end; ++j) {
            acc = op(std::as_const(acc), static_cast<T>(first[j]));
          }
          return acc;
        },
        [&](std::int64_t t, const std::optional<Acc>& prefix) {
          const std::int64_t begin = t * tile;
          scan_tile(begin, std::min(tile, n - begin), prefix);
        },
        op, input_survives_output(first, d_first));
  } else {
    auto last = std::ranges::next(first, n);
    if constexpr (Exclusive) {
      sequential::exclusive_scan(first, last, d_first, *seed, op);
    } else {
      sequential::inclusive_scan(first, last, d_first, op);
    }
  }
}

}  // namespace detail

template <class InIt, class OutIt, class Op = plus>
OutIt inclusive_scan(InIt first, InIt last, OutIt d_first, Op op = {}) {
  using Acc = inclusive_accumulator_t<Op, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::inclusive_scan";
  const std::int64_t n = detail::checked_distance(fn, first, last);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  detail::scan_range<false, Acc>(first, n, d_first, std::optional<Acc>{}, op);
  return std::ranges::next(d_first, n);
}

template <class InIt, class OutIt, class Init, class Op = plus>
OutIt exclusive_scan(InIt first, InIt last, OutIt d_first, Init init, Op op = {}) {
  using Acc = exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>>;
  constexpr const char* fn = "cpu::exclusive_scan";
  const std::int64_t n = detail::checked_distance(fn, first, last);
  tally::detail::check_pointer(fn, "d_first", d_first, n);
  detail::scan_range<true, Acc>(first, n, d_first, std::optional<Acc>(static_cast<Acc>(init)),
                                op);
  return std::ranges::next(d_first, n);
}

}  // namespace tally::cpu
