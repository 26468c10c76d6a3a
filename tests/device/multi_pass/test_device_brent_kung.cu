// tests/device/multi_pass/test_device_brent_kung.cu -- device-wide scans with the brent_kung block algorithm
// under both strategies (see test_device_common.cuh).
#include "test_device_common.cuh"

TALLY_DEVICE_TESTS(BrentKung, tally::detail::brent_kung_selector)

// The divergent indexing of PMPP (no enum value reaches it; same tree, same results).
TEST(DeviceScan, BrentKungDivergent_Subset) {
  using selector = tally::detail::brent_kung_divergent_selector;
  using namespace tally_test;
  check_device_sizes<reduce_then_scan, selector, false, std::int32_t, tally::plus>(
      standard_sizes<selector, std::int32_t>(false), true);
  check_device_sizes<scan_then_propagate, selector, false, mat2, mat2_product>(
      standard_sizes<selector, mat2>(false), true);
  check_tile_sweep<reduce_then_scan, selector>();
}
