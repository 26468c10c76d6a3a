// tally/device/multi_pass/block_algorithms.cuh -- from the block_scan enum to block classes.
//
// A selector names the block class a strategy uses for inclusive scans and for exclusive
// scans, and how exclusive scans are made:
//   exclusive_through_block == false  the shifted load (PMPP 11.1-11.2): the tile is
//       loaded one place to the right with the tile's seed in front, and scanned
//       INCLUSIVELY;
//   exclusive_through_block == true   the block class's own exclusive scan: Blelloch's
//       down-sweep with the seed as the root (block/blelloch.cuh).
// The public enum maps as follows (and `automatic` -> warp_scans):
//   kogge_stone, kogge_stone_double_buffered, coarsened, warp_scans
//       inclusive: that class; exclusive: shifted load + that class's inclusive scan
//   brent_kung, brent_kung_conflict_free
//       inclusive: Brent-Kung (contiguous indexing; padded addresses for the second);
//       exclusive: Blelloch's down-sweep (linear or padded addresses), i.e. the
//       work-efficient tree's exclusive form.
// The teaching baselines (automatic never picks them):
//   blelloch
//       inclusive and exclusive: Blelloch's up-sweep/down-sweep alone (block/blelloch.cuh;
//       the inclusive form through the down-sweep with x_0 as the root)
//   brent_kung_divergent
//       inclusive: Brent-Kung with PMPP's divergent indexing (every warp keeps a few active
//       lanes at every level); exclusive: the shifted load + that inclusive scan, so both
//       forms measure the divergent tree
#pragma once

#include "tally/block/blelloch.cuh"
#include "tally/block/brent_kung.cuh"
#include "tally/block/brent_kung_conflict_free.cuh"
#include "tally/block/coarsened.cuh"
#include "tally/block/kogge_stone.cuh"
#include "tally/block/kogge_stone_double_buffered.cuh"
#include "tally/block/warp_scans.cuh"
#include "tally/core/options.hpp"
#include "tally/device/detail/tuning.cuh"

#include <type_traits>

namespace tally::detail {

template <block_scan Tuned, template <class, int, int> class Inclusive,
          template <class, int, int> class Exclusive, bool ThroughBlock>
struct block_selector {
  static constexpr block_scan tuning_key = Tuned;
  template <class T, int Threads, int Items>
  using inclusive_type = Inclusive<T, Threads, Items>;
  template <class T, int Threads, int Items>
  using exclusive_type = Exclusive<T, Threads, Items>;
  static constexpr bool exclusive_through_block = ThroughBlock;
};

template <class T, int Threads, int Items>
using kogge_stone_t = block::block_scan_kogge_stone<T, Threads, Items>;
template <class T, int Threads, int Items>
using kogge_stone_double_buffered_t = block::block_scan_kogge_stone_double_buffered<T, Threads, Items>;
template <class T, int Threads, int Items>
using brent_kung_divergent_t =
    block::block_scan_brent_kung<T, Threads, Items, block::brent_kung_indexing::divergent>;
template <class T, int Threads, int Items>
using brent_kung_contiguous_t =
    block::block_scan_brent_kung<T, Threads, Items, block::brent_kung_indexing::contiguous>;
template <class T, int Threads, int Items>
using brent_kung_conflict_free_t = block::block_scan_brent_kung_conflict_free<T, Threads, Items>;
template <class T, int Threads, int Items>
using blelloch_t = block::block_scan_blelloch<T, Threads, Items, false>;
template <class T, int Threads, int Items>
using blelloch_conflict_free_t = block::block_scan_blelloch<T, Threads, Items, true>;
template <class T, int Threads, int Items>
using coarsened_t = block::block_scan_coarsened<T, Threads, Items>;
template <class T, int Threads, int Items>
using warp_scans_t = block::block_scan_warp_scans<T, Threads, Items>;

using kogge_stone_selector =
    block_selector<block_scan::kogge_stone, kogge_stone_t, kogge_stone_t, false>;
using kogge_stone_double_buffered_selector =
    block_selector<block_scan::kogge_stone_double_buffered, kogge_stone_double_buffered_t,
                   kogge_stone_double_buffered_t, false>;
using brent_kung_selector =
    block_selector<block_scan::brent_kung, brent_kung_contiguous_t, blelloch_t, true>;
using brent_kung_divergent_selector =
    block_selector<block_scan::brent_kung_divergent, brent_kung_divergent_t, brent_kung_divergent_t,
                   false>;
using blelloch_selector = block_selector<block_scan::blelloch, blelloch_t, blelloch_t, true>;
using brent_kung_conflict_free_selector =
    block_selector<block_scan::brent_kung_conflict_free, brent_kung_conflict_free_t,
                   blelloch_conflict_free_t, true>;
using coarsened_selector = block_selector<block_scan::coarsened, coarsened_t, coarsened_t, false>;
using warp_scans_selector = block_selector<block_scan::warp_scans, warp_scans_t, warp_scans_t, false>;

}  // namespace tally::detail
