// tests/device/multi_pass/test_device_kogge_stone.cu -- device-wide scans with the kogge_stone block algorithm
// under both strategies (see test_device_common.cuh).
#include "test_device_common.cuh"

TALLY_DEVICE_TESTS(KoggeStone, tally::detail::kogge_stone_selector)
