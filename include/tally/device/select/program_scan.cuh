// tally/device/select/program_scan.cuh -- how the selection family runs: one inclusive
// single-pass scan (the decoupled look-back, device/single_pass/) whose input and output
// are a TILE PROGRAM (single_pass/tile_pipeline.cuh, "Tile programs").
//
// A selection is a scan in its middle. Each item gives a small accumulator (a 0/1 count;
// a count and a run's start; a count and a partial reduction), the look-back gives every
// tile the accumulator of everything before it, and the store turns each item's
// inclusive value into its output position: item i kept with inclusive count c goes to
// out[c - 1]. So the counting and the scatter are one pass and one launch; the only
// state is the scans' tile descriptors (no n-sized scratch); the item that holds n - 1
// writes the total count.
//
// The plan: the scans' tiles by ticket at the accumulator's default tuning (tiles of 3072
// items for the 8-byte counts, single_pass/tile_pipeline.cuh), scalar loads in the
// warp-striped layout. Where the pointer tricks of the plain scans do not apply (the
// input is a program, not a pointer to the accumulator) this is the engine's one kernel.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/core/select.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/dispatch.cuh"  // check_production_options
#include "tally/device/detail/pointer_check.cuh"
#include "tally/device/single_pass/decoupled_lookback.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"

namespace tally::detail::select {

// The accumulator of the compactions: kept items so far.
using count_t = std::int64_t;

// The accumulator of the run-length forms: a count (of runs, or of runs longer than one)
// and the start of the latest run (-1: no run starts in the range).
struct run_state {
  std::int64_t count;
  std::int64_t start;
};
struct run_op {
  TALLY_HOST_DEVICE run_state operator()(const run_state& a, const run_state& b) const {
    return {a.count + b.count, b.start >= 0 ? b.start : a.start};
  }
};

// The accumulator of the three-way partition: items sent to the first and to the second
// output so far.
struct two_counts {
  std::int64_t first;
  std::int64_t second;
};
struct two_counts_plus {
  TALLY_HOST_DEVICE two_counts operator()(const two_counts& a, const two_counts& b) const {
    return {a.first + b.first, a.second + b.second};
  }
};

// The options a selection takes: those of the production scans, without caller storage.
inline void check_select_options(const char* function, const options& o) {
  check_production_options(function, o);
  if (o.storage.data != nullptr) {
    throw_invalid(function, "options.storage",
                  "is not taken by the selection family: its tile state lives in tally's "
                  "per-stream buffer (or, while a graph is captured, in an allocation of the "
                  "call)");
  }
}

// Runs one selection of n >= 1 items (arguments and options checked by the caller).
// hook: the stall tests' (single_pass/tile_pipeline.cuh, no_stall).
template <class Acc, class In, class Out, class Op, class Hook = single_pass::no_stall>
void run(const char* function, In in, Out out, std::int64_t n, Op op, const options& o,
         Hook hook = {}) {
  single_pass::scan<decoupled_lookback::protocol, false, Acc>(
      function, "", in, out, n, seed_value<Acc, false>{}, op, o, hook);
}

// The host forms: run(count) with a device count, then wait for it and return it.
// Not while the stream is captured into a graph (the call waits for its result): the
// count_to form is the one to capture.
template <class Count, class Run>
Count host_count(const char* function, const options& o, Run&& run) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TALLY_CUDA_CHECK(cudaStreamIsCapturing(o.stream, &capture), function);
  if (capture != cudaStreamCaptureStatusNone) {
    throw_invalid(function, "options.stream",
                  "is being captured into a graph: this form waits for its count; pass "
                  "tally::count_to(device pointer) instead");
  }
  void* d = nullptr;
  TALLY_CUDA_CHECK(cudaMallocAsync(&d, sizeof(Count), o.stream), function);
  Count result{};
  try {
    run(static_cast<Count*>(d));
    TALLY_CUDA_CHECK(cudaMemcpyAsync(&result, d, sizeof(Count), cudaMemcpyDeviceToHost, o.stream),
                     function);
  } catch (...) {
    (void)cudaFreeAsync(d, o.stream);
    throw;
  }
  TALLY_CUDA_CHECK(cudaFreeAsync(d, o.stream), function);
  TALLY_CUDA_CHECK(cudaStreamSynchronize(o.stream), function);
  return result;
}

// The device count of an empty input (no kernel runs).
template <class Count>
void write_zero(const char* function, Count* count, const options& o) {
  TALLY_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(Count), o.stream), function);
}

template <class Count>
void check_count_pointer(const char* function, const device_count<Count>& c) {
  check_device_pointer(function, "count", c.pointer, 1);
}

}  // namespace tally::detail::select

namespace tally::detail::single_pass {
// counts are integers: exact in any association (no deterministic kernel of their own)
template <>
struct exact_values<select::run_state> : std::true_type {};
template <>
struct exact_values<select::two_counts> : std::true_type {};
}  // namespace tally::detail::single_pass
