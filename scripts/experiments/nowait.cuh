// The ceiling of a single-pass design, shared by the experiment programs of this folder: a
// look-back protocol for the pipelined kernel (pipelined_scan.cuh) that never waits. Each
// tile takes its own aggregate as its prefix, so the results are wrong on purpose; the rest
// of the kernel (tickets, bulk copies, local scans, the aggregate's publication, stores) is
// unchanged, so its time is the kernel's without the wait for a prefix.
#pragma once

#include <cstdint>

struct nowait_protocol {
  static constexpr bool has_deterministic_mode = false;
  static constexpr bool publishes_aggregate = true;
  template <bool Deterministic, class Descriptors, class Acc, class Op>
  __device__ static Acc prefix_after_aggregate(const Descriptors&, unsigned, std::int64_t,
                                               const Acc& aggregate, Op&) {
    return aggregate;
  }
};
