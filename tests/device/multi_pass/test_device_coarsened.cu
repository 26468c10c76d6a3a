// tests/device/multi_pass/test_device_coarsened.cu -- device-wide scans with the coarsened block algorithm
// under both strategies (see test_device_common.cuh).
#include "test_device_common.cuh"

TALLY_DEVICE_TESTS(Coarsened, tally::detail::coarsened_selector)
