// tests/device/single_pass/test_device_chained.cu -- device-wide scans with the chained (StreamScan)
// strategy: every type x operator x {inclusive, exclusive} over DESIGN's sizes (in place
// included), and every size from one tile to two tiles (see test_device_common.cuh).
#include "test_device_common.cuh"

namespace {

using chained = tally::detail::chained::strategy;
using selector = tally_test::single_pass_selector;  // the single-pass tiles for the size lists

TEST(DeviceScan, Chained) { tally_test::check_all_types<chained, selector>(); }

TEST(DeviceScan, Chained_TileSweep) { tally_test::check_tile_sweep<chained, selector>(); }

}  // namespace
