// tests/device/multi_pass/test_device_kogge_stone_double_buffered.cu -- device-wide scans with the kogge_stone_double_buffered block algorithm
// under both strategies (see test_device_common.cuh).
#include "test_device_common.cuh"

TALLY_DEVICE_TESTS(KoggeStoneDoubleBuffered, tally::detail::kogge_stone_double_buffered_selector)
