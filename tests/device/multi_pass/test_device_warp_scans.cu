// tests/device/multi_pass/test_device_warp_scans.cu -- device-wide scans with the warp_scans block algorithm
// under both strategies (see test_device_common.cuh).
#include "test_device_common.cuh"

TALLY_DEVICE_TESTS(WarpScans, tally::detail::warp_scans_selector)
