// tally/device/single_pass/chained.cuh -- strategy: the chained single-pass scan.
//
// Algorithm: Yan, Long & Zhang, "StreamScan: Fast Scan Algorithms for GPUs without
// Global Barrier Synchronization" (PPoPP 2013); PMPP chapter 11.7 ("stream-based scan",
// adjacent synchronisation with flags). The tile pipeline (dynamic tile index from an
// atomic counter, loads, local scans, stores) is single_pass/tile_pipeline.cuh; the descriptors
// (status and value in one word, or value + release/acquire flag) are single_pass/tile_state.cuh.
// This file is the protocol by which tile t > 0 learns its exclusive prefix:
//
//   wait until tile t - 1 has published its INCLUSIVE value I_{t-1}; that is the prefix.
//   (The kernel then publishes I_t = I_{t-1} op A_t.)
//
// One descriptor read per tile, but the prefixes form a chain through all tiles: tile t
// cannot publish before tile t - 1 has, so the scan advances by one tile per global
// memory round trip (write a flag, another SM sees it), however many SMs there are.
// That latency chain is what decoupled look-back removes (single_pass/decoupled_lookback.cuh).
// The result is the left fold ((A_0 op A_1) op ...) of tile aggregates: deterministic,
// and the same association as the look-back's deterministic mode.
//
// Deadlock freedom: tile indices are tickets drawn in order from an atomic counter, so
// tile t - 1 belongs to a block that started before this one; waiting for it never waits
// for a block the hardware has not scheduled (with blockIdx as the tile index, block
// t - 1 might not be resident while block t spins).
#pragma once

#include <cstdint>

#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::chained {

struct protocol {
  // Always deterministic (the left fold above): options.deterministic changes nothing.
  static constexpr bool has_deterministic_mode = false;
  template <bool, class Descriptors, class Acc, class Op>
  TALLY_DEVICE static Acc exclusive_prefix(const Descriptors& d, unsigned epoch, std::int64_t tile,
                                           const Acc& aggregate, Op&) {
    Acc value = aggregate;  // overwritten by the predecessor's inclusive value
    if (warp::lane_id() == 0) {
      // lane 0 polls; the other lanes wait at the shuffle below
      while (d.load(tile - 1, epoch, value) != single_pass::status_inclusive) {
      }
    }
    return warp::shuffle_index(value, 0);
  }
  // The pipelined scan (single_pass/pipelined.cuh) asks for a tile's prefix after it has scanned
  // the block's next tile. The chained scan publishes no aggregates (only inclusive
  // values, one after the other), so the wait is the same as above.
  static constexpr bool publishes_aggregate = false;
  template <bool Deterministic, class Descriptors, class Acc, class Op>
  TALLY_DEVICE static Acc prefix_after_aggregate(const Descriptors& d, unsigned epoch,
                                                 std::int64_t tile, const Acc& aggregate, Op& op) {
    return exclusive_prefix<Deterministic>(d, epoch, tile, aggregate, op);
  }
};

struct strategy {
  static constexpr bool single_pass = true;
  // The chained scan stays the textbook algorithm at every n: tile indices from the
  // atomic counter, no small-n path (a chain of 64 small tiles is 64 round trips;
  // single_pass/tile_pipeline.cuh).
  static constexpr bool by_block = false;
  using protocol_type = protocol;
  using pipelined_protocol_type = protocol;  // (holds no windows)
};

}  // namespace tally::detail::chained
