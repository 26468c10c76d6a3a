// tally/device/detail/dispatch.cuh -- the plan chooser of the device-wide scans and their
// common driver: from n, the accumulator, the pointers and the options to one kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/tuning.cuh"
#include "tally/device/multi_pass/block_algorithms.cuh"
#include "tally/device/single_pass/decoupled_lookback.cuh"
#include "tally/device/single_pass/one_block.cuh"
#include "tally/device/single_pass/pipelined.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"

namespace tally::detail {

// ---- the production plan --------------------------------------------------------------
// tally::inclusive_scan and exclusive_scan run the decoupled look-back on warp shuffle
// scans and nothing else, so a plain call compiles only the kernels of its plans below.
// The textbook strategy x block pairs are tally::textbook's (device/textbook.cuh).
inline void check_production_options(const char* function, const options& o) {
  if (o.strategy != scan_strategy::automatic && o.strategy != scan_strategy::decoupled_lookback) {
    throw_invalid(function, "options.strategy",
                  "must be automatic or decoupled_lookback here; the textbook strategies "
                  "(chained, reduce_then_scan, scan_then_propagate, naive) are run by "
                  "tally::textbook::inclusive_scan / exclusive_scan (tally/device/textbook.cuh)");
  }
  if (o.block != block_scan::automatic && o.block != block_scan::warp_scans) {
    throw_invalid(function, "options.block",
                  "must be automatic or warp_scans here; the other block algorithms are run by "
                  "tally::textbook::inclusive_scan / exclusive_scan (tally/device/textbook.cuh)");
  }
}

// The plans of the single-pass scans, chosen in scan_plan_for below.
enum class scan_plan {
  one_block,        // the whole input in one block: no tile state (single_pass/one_block.cuh)
  small_tiles,      // small tiles by block, for n up to small_path_max_tiles small tiles
  pipelined,        // persistent producer/consumer blocks for large aligned inputs
  tiles_by_block,   // the default tiles, tile = block, where the device holds them all at once
  tiles_by_ticket,  // the default tiles, tile = ticket from an atomic counter: everything else
};

inline const char* scan_plan_name(scan_plan p) {
  switch (p) {
    case scan_plan::one_block: return "one_block";
    case scan_plan::small_tiles: return "small_tiles";
    case scan_plan::pipelined: return "pipelined";
    case scan_plan::tiles_by_block: return "tiles_by_block";
    case scan_plan::tiles_by_ticket: return "tiles_by_ticket";
  }
  return "?";
}

// A plan forced on this thread's scans, for tests that run their contract on every plan
// (tests/device/scan_contract.cuh); nullopt (the default): the chooser decides. A forced plan
// is taken only where it can run (scan_plan_runs); elsewhere the chooser decides as
// without it.
inline std::optional<scan_plan>& forced_scan_plan() {
  thread_local std::optional<scan_plan> plan;
  return plan;
}

// Whether `plan` can run the call (correctness, not speed): the vectorised plans need
// 16-byte aligned pointers to the accumulator type, the one-block scan at most its items,
// the small tiles at most small_path_max_tiles of them, and the chained scan (by_block
// false) runs its tiles by ticket only.
template <class Strategy, class Acc, class In, class Out>
bool scan_plan_runs(scan_plan plan, In in, Out out, std::int64_t n) {
  switch (plan) {
    case scan_plan::one_block:
      if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
        return one_block::takes<Acc>(in, out, n);
      }
      return false;
    case scan_plan::small_tiles:
      // (beyond this many small tiles the storage query's answer would not cover them)
      if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
        return single_pass::aligned_16(in) && single_pass::aligned_16(out) &&
               n <= single_pass::small_path_max_tiles *
                        single_pass::small_single_pass_tuning<Acc>().tile_items();
      }
      return false;
    case scan_plan::tiles_by_block:
      if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
        return single_pass::aligned_16(in) && single_pass::aligned_16(out);
      }
      return false;
    case scan_plan::pipelined:
      if constexpr (pipelined::acc_pointers<Acc, In, Out>()) {
        return single_pass::aligned_16(in) && single_pass::aligned_16(out);
      }
      return false;
    case scan_plan::tiles_by_ticket: return true;
  }
  (void)in, (void)out, (void)n;
  return false;
}

// THE plan chooser of the single-pass scans, from n, the accumulator, the pointers'
// types and alignment, the device and the options (the thresholds: docs/performance.md,
// "Plans and thresholds"). Strategy::by_block is false for the chained scan, which stays
// the textbook algorithm (tiles by ticket) at every size.
template <class Strategy, class Acc, class In, class Out>
scan_plan scan_plan_for(const char* function, In in, Out out, std::int64_t n, const options& o) {
  if (const std::optional<scan_plan> forced = forced_scan_plan();
      forced && scan_plan_runs<Strategy, Acc>(*forced, in, out, n)) {
    return *forced;
  }
  if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
    if (one_block::takes<Acc>(in, out, n)) return scan_plan::one_block;
    if (single_pass::small_path_takes<Acc>(in, out, n, o, function)) return scan_plan::small_tiles;
  }
  if constexpr (pipelined::acc_pointers<Acc, In, Out>()) {
    if (pipelined::takes<Acc>(in, out, n)) return scan_plan::pipelined;
  }
  if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
    return scan_plan::tiles_by_block;
  }
  (void)function, (void)in, (void)out, (void)n, (void)o;
  return scan_plan::tiles_by_ticket;
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
// caller's or stream-ordered), then the strategy's kernels. tally::inclusive_scan and
// exclusive_scan call it through production_scan() below, tally::textbook through
// dispatch_textbook(); tests and the bench may call it directly to instantiate one pair
// only. Arguments are checked by the caller. Threads and Items apply to the multi-pass
// strategies; the single-pass ones run the plan scan_plan_for chooses (call
// single_pass::scan to override a tuning).
template <class Strategy, class Selector, bool Exclusive, class Acc,
          int Threads = default_tuning<Selector::tuning_key, Acc>().block_threads,
          int Items = default_tuning<Selector::tuning_key, Acc>().items_per_thread, class In,
          class Out, class Op>
void scan_with(const char* function, const char* storage_query, In in, Out out, std::int64_t n,
               seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  if (n == 0) return;
  if constexpr (Strategy::single_pass) {
    using protocol = typename Strategy::protocol_type;
    // caller storage is held to what the storage query said, whichever plan runs
    const std::size_t promised = single_pass::public_storage_bytes<Acc>(n);
    const scan_plan plan = scan_plan_for<Strategy, Acc>(function, in, out, n, o);
    if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
      if (plan == scan_plan::one_block) {
        // no state at all; caller storage is still held to the storage query's answer
        check_caller_storage(function, storage_query, o.storage.data, o.storage.bytes, promised);
        one_block::scan<Exclusive, Acc>(function, in, out, n, seed, op, o.stream);
        return;
      }
      if (plan == scan_plan::small_tiles) {
        single_pass::scan<protocol, Exclusive, Acc, single_pass::small_single_pass_tuning<Acc>(),
                          true>(function, storage_query, in, out, n, seed, op, o, {}, promised);
        return;
      }
    }
    if constexpr (pipelined::acc_pointers<Acc, In, Out>()) {
      if (plan == scan_plan::pipelined) {
        pipelined::scan<typename Strategy::pipelined_protocol_type, Exclusive, Acc>(
            function, storage_query, in, out, n, seed, op, o, {}, promised);
        return;
      }
    }
    if constexpr (Strategy::by_block && single_pass::acc_pointers<Acc, In, Out>()) {
      // plan == tiles_by_block
      single_pass::scan<protocol, Exclusive, Acc, single_pass::default_single_pass_tuning<Acc>(),
                        true>(function, storage_query, in, out, n, seed, op, o, {}, promised);
      return;
    }
    // plan == tiles_by_ticket
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

namespace tally::detail {

// The production scan: the decoupled look-back's plans (scan_plan_for).
template <bool Exclusive, class Acc, class In, class Out, class Op>
void production_scan(const char* function, const char* storage_query, In in, Out out,
                     std::int64_t n, seed_value<Acc, Exclusive> seed, Op op, const options& o) {
  check_production_options(function, o);
  scan_with<decoupled_lookback::strategy, warp_scans_selector, Exclusive, Acc>(
      function, storage_query, in, out, n, seed, op, o);
}

template <class Acc>
std::size_t production_storage_bytes(const char* function, std::int64_t n, const options& o) {
  check_production_options(function, o);
  return single_pass::public_storage_bytes<Acc>(n);
}

}  // namespace tally::detail
