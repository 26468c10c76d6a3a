// tally/device/textbook.cuh -- every device-wide scan strategy x block algorithm, chosen at
// run time: the entry point for learners and for measuring the algorithms side by side.
//
//   tally::textbook::inclusive_scan(in, out, n, op = plus{}, options = {})
//   tally::textbook::exclusive_scan(in, out, n, init, op = plus{}, options = {})
//   tally::textbook::inclusive_scan_storage_bytes<In, Op>(n, options = {})
//   tally::textbook::exclusive_scan_storage_bytes<In, Init, Op>(n, options = {})
//       the semantics, accumulator, storage and errors of tally::inclusive_scan and
//       exclusive_scan (device/scan.cuh), with the algorithm named by options:
//   options.strategy: decoupled_lookback (Merrill & Garland 2016; the production plans),
//       chained (Yan, Long & Zhang 2013; PMPP 11.7), reduce_then_scan (the course notes of
//       Oancea & Henriksen; Merrill & Grimshaw 2009), scan_then_propagate (PMPP 11.6), or
//       automatic: decoupled_lookback with block automatic or warp_scans, reduce_then_scan
//       (the faster multi-pass strategy) with any other block algorithm.
//   options.block: the block algorithm of each tile (block/); the single-pass strategies
//       take automatic and warp_scans only (their tiles are scanned with warp shuffles).
//       Exclusive multi-pass scans use the shifted load (PMPP 11.1-11.2) with every block
//       algorithm but brent_kung, brent_kung_conflict_free and blelloch, which use
//       Blelloch's down-sweep (device/multi_pass/block_algorithms.cuh).
//   Teaching baselines, never chosen by automatic: options.strategy = naive (each output
//       sums its whole prefix by itself, O(n^2) work, one launch; options.block must be
//       automatic; multi_pass/naive_scan.cuh), and the block algorithms blelloch and
//       brent_kung_divergent under the multi-pass strategies.
//
//   tally::textbook::inclusive_scan_by_flags(in, flags, out, n, op = plus{}, options = {})
//   tally::textbook::exclusive_scan_by_flags(in, flags, out, n, init, op = plus{}, options = {})
//   tally::textbook::{inclusive,exclusive}_scan_by_flags_storage_bytes<...>(n, options = {})
//       teaching baseline: the semantics of tally::inclusive_scan_by_flags /
//       exclusive_scan_by_flags (device/segmented.cuh) computed by Blelloch's segmented
//       up-sweep/down-sweep in each tile (block/segmented_blelloch.cuh) and a
//       reduce-then-scan of the tiles' aggregates (multi_pass/segmented_blelloch_scan.cuh).
//       options.strategy: automatic or reduce_then_scan; options.block: automatic or
//       blelloch; caller storage as for the scans above.
//   The multi-pass strategies take two or three launches per level; without
//       options.storage they allocate stream-ordered from a memory pool of tally's own
//       (cudaMallocFromPoolAsync; detail/storage.cuh says why) and free with cudaFreeAsync
//       on options.stream; with caller storage, no allocation at all. scan_then_propagate
//       writes `out` twice and reads it back: `out` must be readable and hold the
//       accumulator exactly. Both are deterministic (fixed tiles and order of
//       combination), as is chained.
//
// Cost: a call of these compiles every pair (the choice is made at run time; 19 with the
// naive scan), about 19 times the kernels of a tally::inclusive_scan call. Production code calls device/scan.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tally/core/accumulator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/device/detail/dispatch.cuh"
#include "tally/device/detail/pointer_check.cuh"
#include "tally/device/multi_pass/block_algorithms.cuh"
#include "tally/device/multi_pass/naive_scan.cuh"
#include "tally/device/multi_pass/reduce_then_scan.cuh"
#include "tally/device/multi_pass/scan_then_propagate.cuh"
#include "tally/device/multi_pass/segmented_blelloch_scan.cuh"
#include "tally/device/single_pass/chained.cuh"
#include "tally/device/single_pass/decoupled_lookback.cuh"

namespace tally::detail {

// Calls f(Strategy{}, Selector{}) for the block algorithm the options name.
template <class Strategy, class F>
decltype(auto) dispatch_block(const char* function, const options& o, F&& f) {
  if constexpr (Strategy::single_pass) {
    if (o.block != block_scan::automatic && o.block != block_scan::warp_scans) {
      throw_invalid(function, "options.block",
                    "must be automatic or warp_scans with the chained and decoupled_lookback "
                    "strategies (their tiles are scanned with warp shuffles)");
    }
    return f(Strategy{}, warp_scans_selector{});
  } else {
    switch (o.block) {
      case block_scan::automatic:
      case block_scan::warp_scans: return f(Strategy{}, warp_scans_selector{});
      case block_scan::kogge_stone: return f(Strategy{}, kogge_stone_selector{});
      case block_scan::kogge_stone_double_buffered:
        return f(Strategy{}, kogge_stone_double_buffered_selector{});
      case block_scan::brent_kung: return f(Strategy{}, brent_kung_selector{});
      case block_scan::brent_kung_conflict_free:
        return f(Strategy{}, brent_kung_conflict_free_selector{});
      case block_scan::coarsened: return f(Strategy{}, coarsened_selector{});
      case block_scan::blelloch: return f(Strategy{}, blelloch_selector{});
      case block_scan::brent_kung_divergent: return f(Strategy{}, brent_kung_divergent_selector{});
    }
    throw_invalid(function, "options.block", "is not a block_scan value");
  }
}

// Calls f(Strategy{}, Selector{}) for the pair the options name. automatic takes the
// fastest strategy that runs the requested block algorithm: the decoupled look-back for
// automatic and warp_scans, reduce_then_scan (which writes the output once, where
// scan_then_propagate writes it twice) for the others.
template <class F>
decltype(auto) dispatch_textbook(const char* function, const options& o, F&& f) {
  switch (o.strategy) {
    case scan_strategy::automatic:
      if (o.block == block_scan::automatic || o.block == block_scan::warp_scans) {
        return dispatch_block<decoupled_lookback::strategy>(function, o, std::forward<F>(f));
      }
      return dispatch_block<reduce_then_scan::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::decoupled_lookback:
      return dispatch_block<decoupled_lookback::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::chained:
      return dispatch_block<chained::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::reduce_then_scan:
      return dispatch_block<reduce_then_scan::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::scan_then_propagate:
      return dispatch_block<scan_then_propagate::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::naive:
      if (o.block != block_scan::automatic) {
        throw_invalid(function, "options.block",
                      "must be automatic with the naive strategy (it has no block algorithm: "
                      "each thread scans its whole prefix)");
      }
      return f(naive_scan::strategy{}, warp_scans_selector{});
  }
  throw_invalid(function, "options.strategy", "is not a scan_strategy value");
}

// One textbook scan: the naive strategy, or scan_with's pairs (dispatch.cuh).
template <class Strategy, class Selector, bool Exclusive, class Acc, class In, class Out, class Op>
void textbook_scan(const char* function, const char* storage_query, In in, Out out, std::int64_t n,
                   seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  if constexpr (std::is_same_v<Strategy, naive_scan::strategy>) {
    if (n == 0) return;
    naive_scan::run<Exclusive, Acc>(function, storage_query, in, out, n, seed, op, o.storage.data,
                                    o.storage.bytes, o.stream);
  } else {
    scan_with<Strategy, Selector, Exclusive, Acc>(function, storage_query, in, out, n, seed, op, o);
  }
}

template <class Strategy, class Selector, class Acc>
std::size_t textbook_storage_bytes(std::int64_t n) {
  if constexpr (std::is_same_v<Strategy, naive_scan::strategy>) {
    return naive_scan::storage_bytes<Acc>(n);
  } else {
    return storage_bytes_with<Strategy, Selector, Acc>(n);
  }
}

// The options of the segmented Blelloch baseline (textbook::*_scan_by_flags).
inline void check_segmented_blelloch_options(const char* function, const options& o) {
  if (o.strategy != scan_strategy::automatic && o.strategy != scan_strategy::reduce_then_scan) {
    throw_invalid(function, "options.strategy",
                  "must be automatic or reduce_then_scan (the tiles' aggregates are joined by "
                  "a reduce-then-scan)");
  }
  if (o.block != block_scan::automatic && o.block != block_scan::blelloch) {
    throw_invalid(function, "options.block",
                  "must be automatic or blelloch (each tile is scanned by Blelloch's segmented "
                  "up-sweep/down-sweep)");
  }
}

template <bool Exclusive, class Acc, class In, class Flags, class Out, class Op>
void segmented_blelloch_scan(const char* function, const char* storage_query, In in, Flags flags,
                             Out out, std::int64_t n, seed_value<Acc, Exclusive> seed, Op op,
                             const options& o) {
  check_count(function, n);
  check_device_pointer(function, "in", in, n);
  check_device_pointer(function, "flags", flags, n);
  check_device_pointer(function, "out", out, n);
  check_segmented_blelloch_options(function, o);
  if (n == 0) return;
  scoped_storage storage(function, storage_query, o.storage.data, o.storage.bytes,
                         segmented_blelloch::storage_bytes<Acc>(n), o.stream);
  segmented_blelloch::run<Exclusive, Acc>(function, in, flags, out, n, seed, op, storage.aligned(),
                                          o.stream);
}

}  // namespace tally::detail

namespace tally::textbook {

template <class In, class Out, class Op = plus>
void inclusive_scan(In in, Out out, std::int64_t n, Op op = {}, const options& o = {}) {
  constexpr const char* function = "textbook::inclusive_scan";
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  detail::dispatch_textbook(function, o, [&](auto strategy, auto selector) {
    detail::textbook_scan<decltype(strategy), decltype(selector), false, acc_t>(
        function, "textbook::inclusive_scan_storage_bytes", in, out, n,
        detail::seed_value<acc_t, false>{}, op, o);
  });
}

template <class In, class Out, class Init, class Op = plus>
void exclusive_scan(In in, Out out, std::int64_t n, Init init, Op op = {}, const options& o = {}) {
  constexpr const char* function = "textbook::exclusive_scan";
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::dispatch_textbook(function, o, [&](auto strategy, auto selector) {
    detail::textbook_scan<decltype(strategy), decltype(selector), true, acc_t>(
        function, "textbook::exclusive_scan_storage_bytes", in, out, n,
        detail::seed_value<acc_t, true>{static_cast<acc_t>(init)}, op, o);
  });
}

// Bytes of caller storage a textbook::inclusive_scan(In, Out, n, Op, o) call needs (0: none).
template <class In, class Op = plus>
std::size_t inclusive_scan_storage_bytes(std::int64_t n, const options& o = {}) {
  detail::check_count("textbook::inclusive_scan_storage_bytes", n);
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  return detail::dispatch_textbook("textbook::inclusive_scan_storage_bytes", o,
                                   [&](auto strategy, auto selector) {
    return detail::textbook_storage_bytes<decltype(strategy), decltype(selector), acc_t>(n);
  });
}

// Bytes of caller storage a textbook::exclusive_scan(In, Out, n, Init, Op, o) call needs.
template <class In, class Init, class Op = plus>
std::size_t exclusive_scan_storage_bytes(std::int64_t n, const options& o = {}) {
  detail::check_count("textbook::exclusive_scan_storage_bytes", n);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  return detail::dispatch_textbook("textbook::exclusive_scan_storage_bytes", o,
                                   [&](auto strategy, auto selector) {
    return detail::textbook_storage_bytes<decltype(strategy), decltype(selector), acc_t>(n);
  });
}

// ---- teaching baseline: the segmented scan by Blelloch's flagged up-sweep/down-sweep ----
// flags[i] (i > 0) converting to true starts a segment at x_i; flags[0] is not read.
template <class In, class Flags, class Out, class Op = plus>
void inclusive_scan_by_flags(In in, Flags flags, Out out, std::int64_t n, Op op = {},
                             const options& o = {}) {
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  detail::segmented_blelloch_scan<false, acc_t>(
      "textbook::inclusive_scan_by_flags", "textbook::inclusive_scan_by_flags_storage_bytes", in,
      flags, out, n, detail::seed_value<acc_t, false>{}, op, o);
}

template <class In, class Flags, class Out, class Init, class Op = plus>
void exclusive_scan_by_flags(In in, Flags flags, Out out, std::int64_t n, Init init, Op op = {},
                             const options& o = {}) {
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::segmented_blelloch_scan<true, acc_t>(
      "textbook::exclusive_scan_by_flags", "textbook::exclusive_scan_by_flags_storage_bytes", in,
      flags, out, n, detail::seed_value<acc_t, true>{static_cast<acc_t>(init)}, op, o);
}

template <class In, class Op = plus>
std::size_t inclusive_scan_by_flags_storage_bytes(std::int64_t n, const options& o = {}) {
  constexpr const char* function = "textbook::inclusive_scan_by_flags_storage_bytes";
  detail::check_count(function, n);
  detail::check_segmented_blelloch_options(function, o);
  return detail::segmented_blelloch::storage_bytes<inclusive_accumulator_t<Op, input_value_t<In>>>(n);
}

template <class In, class Init, class Op = plus>
std::size_t exclusive_scan_by_flags_storage_bytes(std::int64_t n, const options& o = {}) {
  constexpr const char* function = "textbook::exclusive_scan_by_flags_storage_bytes";
  detail::check_count(function, n);
  detail::check_segmented_blelloch_options(function, o);
  return detail::segmented_blelloch::storage_bytes<
      exclusive_accumulator_t<Op, Init, input_value_t<In>>>(n);
}

}  // namespace tally::textbook
