// tests/device/test_reduce_variants_int.cu -- every reduction of tally::reduction (tree,
// block, chunked, chunked_consecutive, atomic, single_pass) on int32 and uint64, sum and
// max, over the DESIGN.md sizes, from an unaligned pointer, and with caller storage.
// (Floating point: test_reduce_variants_float.cu; split so that the units compile in
// parallel.)
#include "test_reduce_common.cuh"

TALLY_REDUCE_VARIANT_TESTS(Int32Plus, std::int32_t, tally::plus, 26)
TALLY_REDUCE_VARIANT_TESTS(Int32Max, std::int32_t, tally::maximum, 24)
TALLY_REDUCE_VARIANT_TESTS(Uint64Plus, std::uint64_t, tally::plus, 24)
TALLY_REDUCE_VARIANT_TESTS(Uint64Max, std::uint64_t, tally::maximum, 24)
