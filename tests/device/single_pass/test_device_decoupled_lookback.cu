// tests/device/single_pass/test_device_decoupled_lookback.cu -- device-wide scans with the decoupled
// look-back strategy: every type x operator x {inclusive, exclusive} over DESIGN's sizes
// (in place included), and every size from one tile to two tiles (see
// test_device_common.cuh). The single-pass specifics (misaligned pointers, iterators,
// large structs, stalls, determinism, state reuse) are in test_single_pass.cu.
#include "test_device_common.cuh"

namespace {

using lookback = tally::detail::decoupled_lookback::strategy;
// the single-pass tiles for the size lists (tile - 1, tile, tile + 1, the sweep)
using selector = tally_test::single_pass_selector;
static_assert(tally_test::tile_of<selector, std::int32_t>() ==
              tally::detail::single_pass::tile_items<std::int32_t>());

TEST(DeviceScan, DecoupledLookback) { tally_test::check_all_types<lookback, selector>(); }

TEST(DeviceScan, DecoupledLookback_TileSweep) { tally_test::check_tile_sweep<lookback, selector>(); }

}  // namespace
