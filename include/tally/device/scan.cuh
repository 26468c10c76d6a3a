// tally/device/scan.cuh -- device-wide inclusive and exclusive scans: the public API.
//
//   tally::inclusive_scan(in, out, n, op = plus{}, options = {})
//   tally::exclusive_scan(in, out, n, init, op = plus{}, options = {})
//       out[i] = x_0 op ... op x_i                  (inclusive)
//       out[0] = init, out[i] = init op x_0 op ... op x_{i-1}   (exclusive)
//   in, out: device pointers or random-access iterators usable on the device (thrust
//       counting / transform iterators ...); in == out (in place) is allowed.
//   n: 64-bit; any n >= 0. op: any associative host+device callable, commutative or not,
//       with or without an identity.
//   Accumulator (core/accumulator.hpp): inclusive in decay(op(x, x)), exclusive in
//       decay(op(init, x)); the results are converted to out's element type on store.
//   Asynchronous on options.stream. No device-wide synchronisation.
//
// The plan: the decoupled look-back (Merrill & Garland 2016) on warp-shuffle tile scans,
//   in one of five plans chosen in one place (device/detail/dispatch.cuh) from n, the
//   accumulator size, the pointers' alignment and the options: the one-block scan, the
//   small tiles by block, the pipelined kernel (large 16-byte aligned inputs), the tiles
//   by block, the tiles by ticket (docs/performance.md, "Plans and thresholds").
//
// Storage and launches: ONE kernel launch per call and no allocation in the steady state.
//   The one-block scan (up to 4096 4-byte or 2048 8-byte values) needs no state at all.
//   Beyond, the tile descriptors live in a buffer tally keeps per (device, stream) and
//   reuses from call to call without a reset (epoch tags,
//   device/single_pass/tile_state.cuh); the first call on a stream, and a call with more
//   tiles than any earlier one on it, grows it (stream-ordered allocation + memset).
//   With options.storage.data != nullptr the descriptors live in the caller's storage
//   instead (no allocation: graph capture friendly), cleared by the kernel itself where
//   it runs its tiles by block (a grid-wide barrier: still one launch), else by a clear
//   kernel whose launch overlaps the scan's (device/detail/dependent_launch.cuh). While
//   the stream is being captured into a graph without caller storage, the call allocates
//   its own descriptors, stream-ordered.
// The caller-storage size comes from
//   tally::inclusive_scan_storage_bytes<In, Op>(n, options)
//   tally::exclusive_scan_storage_bytes<In, Init, Op>(n, options)
// (In, Init and Op as in the call; the size depends on n, the value types, and options'
// strategy and block; any alignment of the pointer is fine). 0 means none is needed;
// too few bytes throws std::invalid_argument.
//
// options.strategy: automatic or decoupled_lookback (the same plans).
// options.block: automatic or warp_scans (the same). Any other strategy or block value
//   throws std::invalid_argument naming tally::textbook::inclusive_scan / exclusive_scan
//   (device/textbook.cuh), which runs every strategy x block pair.
// options.deterministic: floating-point results identical bit for bit from run to run.
//   The look-back's association depends on how far each tile looked back, which depends
//   on timing: with deterministic = true it combines the look-back window strictly left
//   to right, which gives every tile the same left fold of tile aggregates in every run
//   (single_pass/decoupled_lookback.cuh; the cost: docs/performance.md, "What each path
//   earns"). Integer results never depend on it.
// Single-pass accumulators must be trivially copyable (any size; up to 8 bytes the tile
//   status and value share one word).
//
// Errors: n < 0, a null pointer with n > 0, host memory the device cannot read, too small
// storage, a strategy or block algorithm other than those above -> std::invalid_argument
// naming the function and argument; a CUDA failure (an invalid stream included) ->
// tally::error.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tally/core/accumulator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/device/detail/dispatch.cuh"
#include "tally/device/detail/pointer_check.cuh"

namespace tally {

template <class In, class Out, class Op = plus>
void inclusive_scan(In in, Out out, std::int64_t n, Op op = {}, const options& o = {}) {
  constexpr const char* function = "inclusive_scan";
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  detail::production_scan<false, acc_t>(function, "inclusive_scan_storage_bytes", in, out, n,
                                        detail::seed_value<acc_t, false>{}, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void exclusive_scan(In in, Out out, std::int64_t n, Init init, Op op = {}, const options& o = {}) {
  constexpr const char* function = "exclusive_scan";
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::production_scan<true, acc_t>(function, "exclusive_scan_storage_bytes", in, out, n,
                                       detail::seed_value<acc_t, true>{static_cast<acc_t>(init)},
                                       op, o);
}

// Bytes of caller storage an inclusive_scan(In, Out, n, Op, o) call needs (0: none).
template <class In, class Op = plus>
std::size_t inclusive_scan_storage_bytes(std::int64_t n, const options& o = {}) {
  detail::check_count("inclusive_scan_storage_bytes", n);
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  return detail::production_storage_bytes<acc_t>("inclusive_scan_storage_bytes", n, o);
}

// Bytes of caller storage an exclusive_scan(In, Out, n, Init, Op, o) call needs (0: none).
template <class In, class Init, class Op = plus>
std::size_t exclusive_scan_storage_bytes(std::int64_t n, const options& o = {}) {
  detail::check_count("exclusive_scan_storage_bytes", n);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  return detail::production_storage_bytes<acc_t>("exclusive_scan_storage_bytes", n, o);
}

}  // namespace tally
