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
// Storage and launches:
//   decoupled_lookback, chained (and automatic): ONE kernel launch per call and no
//     allocation in the steady state. Up to one tile (4096 4-byte or 2048 8-byte values)
//     no state at all. Beyond, the tile descriptors live in a buffer tally keeps per
//     (device, stream) and reuses from call to call without a reset (epoch tags,
//     device/single_pass/tile_state.cuh); the first call on a stream, and a call with more
//     tiles than any before on it, grows it (stream-ordered allocation + memset).
//     With options.storage.data != nullptr the descriptors live in the caller's storage
//     instead (no allocation: graph capture friendly), cleared by the kernel itself
//     where it runs its tiles by block (a grid-wide barrier: still one launch), else
//     zeroed by a cudaMemsetAsync before it (two operations). While the stream is being
//     captured into a graph without caller storage, the call allocates its own
//     descriptors, stream-ordered, as the multi-pass strategies do.
//   reduce_then_scan, scan_then_propagate: two or three launches per level; without
//     options.storage the call allocates stream-ordered from a memory pool of tally's
//     own (cudaMallocFromPoolAsync; detail/storage.cuh says why) and frees with
//     cudaFreeAsync on options.stream; with caller storage, no allocation at all.
// The caller-storage size comes from
//   tally::inclusive_scan_storage_bytes<In, Op>(n, options)
//   tally::exclusive_scan_storage_bytes<In, Init, Op>(n, options)
// (In, Init and Op as in the call; the size depends on n, the value types, and options'
// strategy and block; any alignment of the pointer is fine). 0 means none is needed;
// too few bytes throws std::invalid_argument.
//
// options.strategy: automatic (= decoupled_lookback, measured fastest), decoupled_lookback,
//   chained (single pass, tile by tile: slow, for teaching and comparison),
//   reduce_then_scan, scan_then_propagate (writes `out` twice and reads it back: `out`
//   must be readable and hold the accumulator exactly).
// options.block: automatic (= warp_scans) or any block_scan value for the multi-pass
//   strategies; the single-pass ones accept automatic and warp_scans only (their tile
//   pipeline is single_pass/tile_pipeline.cuh). Exclusive multi-pass scans use the shifted load
//   (PMPP) with every block algorithm but brent_kung and brent_kung_conflict_free, which
//   use Blelloch's down-sweep (see device/multi_pass/block_algorithms.cuh).
// options.deterministic: floating-point results identical bit for bit from run to run.
//   The multi-pass strategies and chained are deterministic anyway (fixed tiles and order
//   of combination). decoupled_lookback's association depends on how far each tile
//   looked back, which depends on timing: with deterministic = true it combines the
//   look-back window strictly left to right, which gives every tile the same left fold
//   of tile aggregates in every run (single_pass/decoupled_lookback.cuh; the cost is measured in
//   docs/perf-notes.md). Integer results never depend on it.
// Single-pass accumulators must be trivially copyable (any size; up to 8 bytes the tile
//   status and value share one word).
//
// Errors: n < 0, a null pointer with n > 0, too small storage, a block algorithm the
// strategy does not use -> std::invalid_argument naming the function and argument; a
// CUDA failure (an invalid stream included) -> tally::error.
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
