// tally/device/single_pass/decoupled_lookback.cuh -- strategy: single-pass scan with
// decoupled look-back.
//
// Algorithm: Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back" (NVIDIA technical report NVR-2016-002, 2016). The tile pipeline (tickets,
// loads, local scans, stores) is single_pass/tile_pipeline.cuh; the descriptors and their memory
// ordering are single_pass/tile_state.cuh. This file is the protocol by which a tile t > 0 learns
// its exclusive prefix, run by the 32 lanes of warp 0:
//
//   1. publish the tile's AGGREGATE A_t (its own reduction, known without waiting for
//      anybody) -- this is the "decoupling": a successor that finds it can skip over
//      this tile instead of waiting for its prefix;
//   2. look back over a WINDOW of the 32 * SlotsPerLane preceding tiles, SlotsPerLane
//      descriptors per lane (lanes and slots in tile order), until none of them is
//      `invalid` (each will publish at least its aggregate soon: it holds an earlier
//      ticket, so it is running and waits only for tiles before it);
//   3. if some tile j of the window has published its INCLUSIVE value I_j, the prefix is
//      I_j op A_{j+1} op ... op A_{t-1} (j the latest such tile); otherwise the window's
//      aggregates are reduced, kept, and the next window back is examined the same way.
//      An aggregate that absorbs every prefix (x op A_j == A_j for every x: a segmented
//      scan's tile that holds a head; absorbs_prefix in core/operators.hpp) counts as
//      inclusive, I_j = A_j, the same bits: segmented look-backs end at the nearest tile
//      with a head instead of waiting for inclusive values to reach it;
//   4. (the kernel) publish the inclusive value prefix op A_t.
// Because step 1 comes first, the expected look-back distance is short and independent
// of the number of tiles: the serialisation of the chained scan (single_pass/chained.cuh) is gone.
//
// Determinism (options.deterministic). The association of the prefix depends on WHICH
// tile j was found inclusive, i.e. on timing, so float results could differ from run to
// run. In deterministic mode the window is combined strictly left to right,
//   ((I_j op A_{j+1}) op A_{j+2}) op ... op A_{t-1},
// and, inductively, every inclusive value is then the left fold
// (((A_0 op A_1) op A_2) ... op A_t) of the tile aggregates, whatever j was: the same
// operations in the same order in every run (the same association as the chained scan).
// To keep the fold left-to-right, a window without an inclusive tile cannot be reduced
// and set aside as the ordinary look-back does. For values of up to 4 bytes the look-back
// re-reads such a window until an inclusive tile appears in it (its oldest tile always
// does, eventually, without waiting for this tile). For wider values it keeps the
// window's aggregates as they are ("held", in shared memory, up to a few hundred tiles
// of them) and goes on to the window before it; once a window shows an inclusive tile,
// it folds from there forward through every held window, one value at a time. Where
// the held windows are full it re-reads the oldest window as above.
#pragma once

#include <cstdint>

#include "tally/core/operators.hpp"  // absorbs_prefix
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::decoupled_lookback {

// Polling. Every tile in flight polls the descriptors of the few hundred tiles before it;
// polled eagerly, the lines that hold them become the bottleneck of the whole scan (so a
// 32-tile window beats a wider one, and longer tiles beat shorter ones: fewer polls reach
// the hot lines; single_pass/tile_state.cuh puts each descriptor in a line of its own for
// the same reason). So, past the first `EagerTiles` tiles (whose predecessors are few and
// whose latency is the scan's at small n), a tile waits `InitialDelayNs` after publishing
// its aggregate before its first poll -- about the time its predecessors need to publish
// -- and `PollDelayNs` between polls. (CUB's sm90 tunings make the same trade with fixed
// delays.) The delays pay in large scans of many thousands of tiles; at mid sizes, grids
// of up to EagerTiles tiles, they would only make the scan wait longer
// (docs/performance.md, "Plans and thresholds").
template <int InitialDelayNs, int PollDelayNs>
struct delays {
  static constexpr int initial_ns = InitialDelayNs;
  static constexpr int poll_ns = PollDelayNs;
};

// Static shared memory for `count` values of Acc (none for count 0). A raw array: Acc
// may have a constructor, which a __shared__ variable may not.
template <class Acc, int Count>
TALLY_DEVICE Acc* held_storage() {
  if constexpr (Count > 0) {
    __shared__ alignas(Acc) unsigned char raw[Count * sizeof(Acc)];
    return reinterpret_cast<Acc*>(raw);
  } else {
    return nullptr;
  }
}

// SlotsPerLane descriptors per lane: a window of 32 * SlotsPerLane tiles per round trip
// (the loads are independent, so a wider window costs no more latency, but it reads
// more lines of the hot descriptor array).
//
// Deterministic mode has a window and a reach of its own, by the width of a descriptor
// (single_pass/tile_state.cuh; docs/performance.md, "Plans and thresholds"):
// - values of up to 4 bytes, one 8-byte word a descriptor: DeterministicSlotsPerLane
//   (a window of 128 tiles) and no held windows;
// - wider values: a 16-byte word a descriptor (or more), so a slot costs 2-4 times the
//   registers: one slot per lane (a window of 32 tiles), and up to
//   WideDeterministicHeldTiles aggregates held (the banner; at most HeldBytes of static
//   shared memory a kernel, 4 KiB by default). The registers of a wide window would keep
//   the deterministic double scan to 2 blocks of 256 threads per SM, too few for its
//   tiles by block; without the held windows a 32-tile window would let the frontier of
//   inclusive tiles advance by only 32 tiles per round trip.
template <int SlotsPerLane, int DeterministicSlotsPerLane, class Delays,
          std::int64_t EagerTiles = 1024, int WideDeterministicHeldTiles = 512, int HeldBytes = 4096>
struct basic_protocol {
  // The deterministic look-back is a kernel of its own (single_pass/tile_pipeline.cuh): its wider
  // window and its held windows would otherwise set the registers and shared memory of
  // every scan.
  static constexpr bool has_deterministic_mode = true;

  template <class Acc>
  static constexpr bool one_word = single_pass::descriptor_format<Acc> == 4;
  template <class Acc>
  static constexpr int deterministic_slots = one_word<Acc> ? DeterministicSlotsPerLane : 1;
  template <class Acc>
  static constexpr int deterministic_held_tiles =
      one_word<Acc> ? 0
                    : (WideDeterministicHeldTiles < static_cast<int>(HeldBytes / sizeof(Acc))
                           ? WideDeterministicHeldTiles
                           : static_cast<int>(HeldBytes / sizeof(Acc)));
  // The static shared memory they take (the deterministic kernel's only: the segmented
  // pipelined kernel sizes its tiles by it, segmented/pipelined.cuh).
  template <class Acc>
  static constexpr int deterministic_held_bytes =
      deterministic_held_tiles<Acc> * static_cast<int>(sizeof(Acc));

  TALLY_DEVICE static void pause(std::int64_t tile, unsigned ns) {
    if (ns > 0 && tile >= EagerTiles) __nanosleep(ns);
  }

  template <bool Deterministic, class Descriptors, class Acc, class Op>
  TALLY_DEVICE static Acc exclusive_prefix(const Descriptors& d, unsigned epoch, std::int64_t tile,
                                           const Acc& aggregate, Op& op) {
    // 1. the aggregate first
    if (warp::lane_id() == 0) {
      d.store(tile, single_pass::make_tag(epoch, single_pass::status_aggregate), aggregate);
    }
    pause(tile, Delays::initial_ns);
    if constexpr (Deterministic) {
      return look_back<deterministic_slots<Acc>, true, deterministic_held_tiles<Acc>>(
          d, epoch, tile, aggregate, op);
    } else {
      return look_back<SlotsPerLane, false, 0>(d, epoch, tile, aggregate, op);
    }
  }

  // The pipelined scan (single_pass/pipelined.cuh) publishes a tile's aggregate (step 1) as soon
  // as the tile is scanned, and asks for its prefix only after it has scanned its next
  // tile: what is left is steps 2 and 3, with no initial pause (that scan took its place).
  static constexpr bool publishes_aggregate = true;
  template <bool Deterministic, class Descriptors, class Acc, class Op>
  TALLY_DEVICE static Acc prefix_after_aggregate(const Descriptors& d, unsigned epoch,
                                                 std::int64_t tile, const Acc& aggregate, Op& op) {
    if constexpr (Deterministic) {
      return look_back<deterministic_slots<Acc>, true, deterministic_held_tiles<Acc>>(
          d, epoch, tile, aggregate, op);
    } else {
      return look_back<SlotsPerLane, false, 0>(d, epoch, tile, aggregate, op);
    }
  }

 private:
  // Run by one warp of the block at a time (the deterministic form's held windows are one
  // static shared array per kernel).
  template <int Slots, bool Deterministic, int HeldTiles, class Descriptors, class Acc, class Op>
  TALLY_DEVICE static Acc look_back(const Descriptors& d, unsigned epoch, std::int64_t tile,
                                    const Acc& aggregate, Op& op) {
    using single_pass::status_inclusive;
    using single_pass::status_invalid;
    constexpr int slots = Slots;
    constexpr int window = 32 * Slots;
    constexpr bool deterministic = Deterministic;
    const int lane = warp::lane_id();

    Acc later = aggregate;  // the windows already passed (tiles after this window), reduced
    bool have_later = false;
    // deterministic mode: the windows passed, their aggregates as read (tile order; held
    // window 0 is the one just before this tile)
    constexpr int held_capacity = deterministic ? HeldTiles / window : 0;
    Acc* held_values = held_storage<Acc, held_capacity * window>();
    int held = 0;
    std::int64_t window_first = tile - window;
    for (;;) {
      // 2. lane l reads tiles window_first + l * slots + s, s < slots: lanes and slots in
      //    tile order. Tiles before 0 read tile 0 again, which is harmless: tile 0 is
      //    inclusive, and everything before the latest inclusive tile is ignored below.
      Acc value[slots];
      bool inclusive[slots];
      unsigned inclusive_lanes;
      for (;;) {
        bool all_valid = true;
#pragma unroll
        for (int s = 0; s < slots; ++s) {
          const std::int64_t t = window_first + lane * slots + s;
          const single_pass::tile_status status = d.load(t < 0 ? 0 : t, epoch, value[s]);
          all_valid = all_valid && status != status_invalid;
          // an aggregate that absorbs every prefix (a segmented tile with a head) is the
          // tile's inclusive value already (operators.hpp): the walk ends there as well
          inclusive[s] = status == status_inclusive ||
                         (status != status_invalid && absorbs_prefix(op, value[s]));
        }
        if (__all_sync(warp::full_mask, all_valid)) {
          bool any = false;
#pragma unroll
          for (int s = 0; s < slots; ++s) any = any || inclusive[s];
          inclusive_lanes = __ballot_sync(warp::full_mask, any);
          // deterministic mode waits in this window for an inclusive tile once it holds
          // as many windows as it can (the banner)
          if (inclusive_lanes != 0 || !deterministic || held < held_capacity) break;
        }
        pause(tile, Delays::poll_ns);
      }

      // 3. `first` = the latest lane with an inclusive tile (0 if none), and within it
      //    `first_slot` = its latest inclusive slot (0 if none)
      const int first = inclusive_lanes != 0 ? 31 - __clz(inclusive_lanes) : 0;
      int my_slot = 0;
#pragma unroll
      for (int s = 0; s < slots; ++s) my_slot = inclusive[s] ? s : my_slot;
      const int first_slot = __shfl_sync(warp::full_mask, my_slot, first);

      Acc window_value;
      if constexpr (deterministic) {
        if constexpr (held_capacity > 0) {
          if (inclusive_lanes == 0) {
            // no inclusive tile here: hold the window's aggregates and read the one before
#pragma unroll
            for (int s = 0; s < slots; ++s) {
              held_values[held * window + lane * slots + s] = value[s];
            }
            ++held;
            window_first -= window;
            continue;
          }
        }
        // strictly left to right from the inclusive tile (see the banner)
        window_value = warp::shuffle_index(value[0], first);
#pragma unroll
        for (int s = 1; s < slots; ++s) {
          const Acc v = warp::shuffle_index(value[s], first);
          if (s == first_slot) window_value = v;
          if (s > first_slot) window_value = static_cast<Acc>(op(window_value, v));
        }
        for (int k = first + 1; k < 32; ++k) {
#pragma unroll
          for (int s = 0; s < slots; ++s) {
            window_value = static_cast<Acc>(op(window_value, warp::shuffle_index(value[s], k)));
          }
        }
        if constexpr (held_capacity > 0) {
          // then the held windows, oldest first; every lane folds the same values in the
          // same order (broadcast reads). The barrier orders the other lanes' writes of
          // them before these reads.
          __syncwarp();
          for (int h = held - 1; h >= 0; --h) {
#pragma unroll 8
            for (int i = 0; i < window; ++i) {
              window_value = static_cast<Acc>(op(window_value, held_values[h * window + i]));
            }
          }
          // and the next look-back of this warp may write them again only after every
          // lane has read them
          __syncwarp();
        }
      } else {
        // each lane folds its slots (lane `first` from its inclusive slot on), then a
        // log-step scan over lanes >= first; lane 31 ends with the window's reduction
        const int from = lane == first ? first_slot : 0;
        Acc mine = value[slots - 1];
#pragma unroll
        for (int s = slots - 2; s >= 0; --s) {
          if (s >= from) mine = static_cast<Acc>(op(value[s], mine));
        }
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) {
          const Acc earlier = warp::shuffle_up(mine, static_cast<unsigned>(offset));
          if (lane - offset >= first) mine = static_cast<Acc>(op(earlier, mine));
        }
        window_value = warp::shuffle_index(mine, 31);
      }
      const Acc reduced = have_later ? static_cast<Acc>(op(window_value, later)) : window_value;
      if (inclusive_lanes != 0) return reduced;
      later = reduced;
      have_later = true;
      window_first -= window;
    }
  }
};

// The defaults (docs/performance.md, "Plans and thresholds").
using protocol_delays = delays<thresholds.lookback_initial_delay_ns, thresholds.lookback_poll_delay_ns>;
using protocol = basic_protocol<1, 4, protocol_delays, thresholds.lookback_eager_tiles>;
// The same for the pipelined kernel (single_pass/pipelined.cuh), with half the held windows of
// wide values (at most 256 tiles and 2 KiB: 256 doubles, 128 16-byte values): its 9-row
// tiles leave room for 3 blocks a SM only with these, which makes its deterministic
// double scan faster than 8-row tiles with 4 KiB held or 9 rows with 4 KiB (2 blocks a
// SM; docs/performance.md, "Plans and thresholds"). The bits are the same whatever the
// held windows: the fold is strictly left to right either way (the banner).
using pipelined_protocol =
    basic_protocol<1, 4, protocol_delays, thresholds.lookback_eager_tiles, 256, 2048>;

// The strategy as dispatch.cuh sees it.
struct strategy {
  static constexpr bool single_pass = true;
  // single_pass/tile_pipeline.cuh: "The small-n path", "Tiles by block"
  static constexpr bool by_block = true;
  using protocol_type = protocol;
  using pipelined_protocol_type = pipelined_protocol;
};

}  // namespace tally::detail::decoupled_lookback
