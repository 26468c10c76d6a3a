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
// The plan: the scans' tiles by ticket in the vectorised layout (program_tuning below),
// with shorter look-back pauses (select_protocol).
// The pointer paths of the plain scans (staged tiles, tiles by block, the pipelined
// kernel) take pointers to the accumulator, which a program is not.
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

// The accumulator of the compactions: kept items so far, in 32 bits where n allows (half
// the registers of a tile's counts and a one-word descriptor: 32-bit counts ran 1.6x
// faster at large n, docs/performance.md "Selection"), else in 64.
using count_t = std::int64_t;
using short_count_t = std::uint32_t;
// The largest n counted in 32 bits: the padding of a partial last tile (copies of item
// n - 1) may add up to a tile of counts past n, which must not wrap.
inline constexpr std::int64_t short_count_max_n = 0xffffffffll - 0x10000;

// The accumulator of the run-length forms: a count (of runs, or of runs longer than one)
// and the start of the latest run (`none`: no run starts in the range), in the count type
// of the call (with_count_type below).
template <class C>
struct run_state {
  static constexpr C none = static_cast<C>(-1);
  C count;
  C start;
};
struct run_op {
  template <class C>
  TALLY_HOST_DEVICE run_state<C> operator()(const run_state<C>& a, const run_state<C>& b) const {
    return {static_cast<C>(a.count + b.count), b.start != run_state<C>::none ? b.start : a.start};
  }
};

// The accumulator of the three-way partition: items sent to the first and to the second
// output so far.
template <class C>
struct two_counts {
  C first;
  C second;
};
struct two_counts_plus {
  template <class C>
  TALLY_HOST_DEVICE two_counts<C> operator()(const two_counts<C>& a, const two_counts<C>& b) const {
    return {static_cast<C>(a.first + b.first), static_cast<C>(a.second + b.second)};
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

// The tiles of a selection: each lane holds runs of `vec` consecutive items (the tile
// pipeline's vectorised layout, single_pass/tile_pipeline.cuh), so that a lane counts its
// run serially and a warp scans once per `vec` items of a lane (in the scalar layout every
// item is one step of a warp scan: shuffles would be most of the work). Accumulators of up
// to 8 bytes (32-bit counts, the 32-bit run states): 256 threads x 4 rows x 4, tiles of
// 4096 items; 64-bit counts (more than 2^32 items) 1 row of 8 (2048: more rows would hold
// 2 blocks a SM); 16-byte states 1 row of 8; wider ones 4 a lane. (The measurements:
// docs/performance.md, "Selection".)
template <class Acc>
constexpr single_pass::single_pass_tuning program_tuning() {
  if constexpr (std::is_same_v<Acc, count_t>) {
    return {256, 1, 8};
  } else if constexpr (sizeof(Acc) <= 8) {
    return {256, 4, 4};
  } else if constexpr (sizeof(Acc) <= 16) {
    return {256, 1, 8};
  } else {
    return {256, 1, 4};
  }
}

// The look-back of the selections: the scans' protocol (single_pass/decoupled_lookback.cuh)
// with shorter pauses. A selection's tile has fewer items than a scan's and its blocks
// are fewer a SM (their registers hold payloads and counts), so predecessors publish
// sooner and an SM has less to do while a tile sleeps: 300 ns before the first poll and
// 150 between polls took 10% less time than the scans' 1200 and 600 at 2^24-2^28
// (docs/performance.md, "Selection").
using select_protocol =
    decoupled_lookback::basic_protocol<1, 4, decoupled_lookback::delays<300, 150>,
                                       thresholds.lookback_eager_tiles>;

// A program's input and output as the vectorised layout takes them: a run of Vec
// consecutive items through the program's per-item calls (the loads of a lane's run hit
// the lines its first load brought to L1).
template <class Program, int Vec>
struct program_input : Program {
  static constexpr int vector_items = Vec;
  template <int V, class Acc>
  TALLY_DEVICE TALLY_FORCEINLINE void load(std::int64_t i, typename Program::payload_type (&p)[V],
                                           Acc (&acc)[V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      p[k] = this->payload(i + k);
      acc[k] = this->value(i + k, p[k]);
    }
  }
  bool vector_ready() const { return true; }
};
template <class Program, int Vec>
struct program_output : Program {
  static constexpr int vector_items = Vec;
  template <int V, class Payload, class Acc>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const Payload (&p)[V],
                                            const Acc (&acc)[V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) Program::store(i + k, p[k], acc[k]);
  }
  using Program::store;
  bool vector_ready() const { return true; }
};

// Runs f(count type) with the count type of n items: 32 bits up to short_count_max_n.
template <class F>
void with_count_type(std::int64_t n, F&& f) {
  if (n <= short_count_max_n) {
    f(short_count_t{});
  } else {
    f(count_t{});
  }
}

// Runs one selection of n >= 1 items (arguments and options checked by the caller).
// hook: the stall tests' (single_pass/tile_pipeline.cuh, no_stall).
template <class Acc, single_pass::single_pass_tuning Tune = program_tuning<Acc>(), class In,
          class Out, class Op, class Hook = single_pass::no_stall>
void run(const char* function, In in, Out out, std::int64_t n, Op op, const options& o,
         Hook hook = {}) {
  constexpr single_pass::single_pass_tuning tune = Tune;
  single_pass::scan<select_protocol, false, Acc, tune>(
      function, "", program_input<In, tune.vec>{in}, program_output<Out, tune.vec>{out}, n,
      seed_value<Acc, false>{}, op, o, hook);
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
template <class C>
struct exact_values<select::run_state<C>> : std::true_type {};
template <class C>
struct exact_values<select::two_counts<C>> : std::true_type {};
}  // namespace tally::detail::single_pass
