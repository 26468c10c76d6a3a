// tally/device/detail/dispatch.cuh -- from options (run-time enums) to the compiled
// strategy x block-algorithm pair, and the common driver of every device-wide scan.
#pragma once

#include <cstdint>
#include <utility>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/device/multi_pass/block_algorithms.cuh"
#include "tally/device/single_pass/chained.cuh"
#include "tally/device/single_pass/decoupled_lookback.cuh"
#include "tally/device/single_pass/one_block.cuh"
#include "tally/device/single_pass/pipelined.cuh"
#include "tally/device/multi_pass/reduce_then_scan.cuh"
#include "tally/device/multi_pass/scan_then_propagate.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/tuning.cuh"

namespace tally::detail {

// Calls f(Strategy{}, Selector{}) for the pair the options name.
//   strategy: automatic -> decoupled_lookback (the fastest at every measured size and
//             type: docs/perf-notes.md).
//   block:    automatic -> warp_scans. The single-pass strategies have one tile
//             pipeline of their own, built from warp shuffle scans (single_pass/tile_pipeline.cuh):
//             they accept automatic and warp_scans, and throw std::invalid_argument for
//             the other block algorithms rather than silently ignoring the choice.
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
    }
    throw_invalid(function, "options.block", "is not a block_scan value");
  }
}

template <class F>
decltype(auto) dispatch(const char* function, const options& o, F&& f) {
  switch (o.strategy) {
    case scan_strategy::automatic:
    case scan_strategy::decoupled_lookback:
      return dispatch_block<decoupled_lookback::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::chained:
      return dispatch_block<chained::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::reduce_then_scan:
      return dispatch_block<reduce_then_scan::strategy>(function, o, std::forward<F>(f));
    case scan_strategy::scan_then_propagate:
      return dispatch_block<scan_then_propagate::strategy>(function, o, std::forward<F>(f));
  }
  throw_invalid(function, "options.strategy", "is not a scan_strategy value");
}

// The tile of a selector for accumulator Acc under its default tuning.
template <class Selector, class Acc>
constexpr std::int64_t default_tile() {
  return default_tuning<Selector::tuning_key, Acc>().tile_items();
}

// The bytes of caller storage a strategy x selector needs for n elements (0: none).
template <class Strategy, class Selector, class Acc>
std::size_t storage_bytes_with(std::int64_t n) {
  if constexpr (Strategy::single_pass) {
    return single_pass::public_storage_bytes<Acc>(n);
  } else {
    return required_storage_bytes<Acc>(n, default_tile<Selector, Acc>());
  }
}

// Runs one device-wide scan with a given strategy, selector and tuning: storage (the
// caller's or stream-ordered), then the strategy's kernels. The public functions call
// this through dispatch(); tests and the bench may call it directly to instantiate one
// pair only. Arguments are checked by the caller. Threads and Items apply to the
// multi-pass strategies. The single-pass ones run the pipelined kernel for large scans of
// 16-byte aligned pointers to 4-, 8- and 16-byte Acc (pipelined::takes), and otherwise
// single_pass/tile_pipeline.cuh's kernel with single_pass::default_single_pass_tuning (call
// single_pass::scan to override it); the look-back takes the one-block scan where one
// block holds the whole input (single_pass/one_block.cuh), the small-n path where it applies,
// and runs its tiles by block where they fit on the device at once
// (single_pass/tile_pipeline.cuh).
template <class Strategy, class Selector, bool Exclusive, class Acc,
          int Threads = default_tuning<Selector::tuning_key, Acc>().block_threads,
          int Items = default_tuning<Selector::tuning_key, Acc>().items_per_thread, class In,
          class Out, class Op>
void scan_with(const char* function, const char* storage_query, In in, Out out, std::int64_t n,
               seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  if (n == 0) return;
  if constexpr (Strategy::single_pass) {
    using protocol = typename Strategy::protocol_type;
    // caller storage is held to what the storage query said, whichever tiles run
    const std::size_t promised = single_pass::public_storage_bytes<Acc>(n);
    if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
      if (one_block::takes<Acc>(in, out, n)) {
        // no state at all; caller storage is still held to the storage query's answer
        check_caller_storage(function, storage_query, o.storage.data, o.storage.bytes, promised);
        one_block::scan<Exclusive, Acc>(function, in, out, n, seed, op, o.stream);
        return;
      }
      if (single_pass::small_path_takes<Acc>(in, out, n, o, function)) {
        single_pass::scan<protocol, Exclusive, Acc, single_pass::small_single_pass_tuning<Acc>(),
                          true>(function, storage_query, in, out, n, seed, op, o, {}, promised);
        return;
      }
    }
    if constexpr (pipelined::acc_pointers<Acc, In, Out>()) {
      // large scans: persistent blocks that hide the wait for a prefix (single_pass/pipelined.cuh)
      if (pipelined::takes<Acc>(in, out, n)) {
        pipelined::scan<typename Strategy::pipelined_protocol_type, Exclusive, Acc>(
            function, storage_query, in, out, n, seed, op, o, {}, promised);
        return;
      }
    }
    if constexpr (single_pass::acc_pointers<Acc, In, Out>()) {
      if constexpr (Strategy::by_block) {
        // the default tiles by block where the device holds them all at once
        single_pass::scan<protocol, Exclusive, Acc, single_pass::default_single_pass_tuning<Acc>(),
                          true>(function, storage_query, in, out, n, seed, op, o, {}, promised);
        return;
      }
    }
    single_pass::scan<protocol, Exclusive, Acc>(function, storage_query, in, out, n, seed, op, o,
                                                {}, promised);
  } else {
    const std::size_t needed = required_storage_bytes<Acc>(n, std::int64_t{Threads} * Items);
    scoped_storage storage(function, storage_query, o.storage.data, o.storage.bytes, needed,
                           o.stream);
    Strategy::template run<Selector, Threads, Items, Exclusive, Acc>(
        function, in, out, n, seed, op, storage.aligned(), o.stream);
  }
}

}  // namespace tally::detail
