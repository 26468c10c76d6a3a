// tests/device/multi_pass/test_device_brent_kung_conflict_free.cu -- device-wide scans with the brent_kung_conflict_free block algorithm
// under both strategies (see test_device_common.cuh).
#include "test_device_common.cuh"

TALLY_DEVICE_TESTS(BrentKungConflictFree, tally::detail::brent_kung_conflict_free_selector)
