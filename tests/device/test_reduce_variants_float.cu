// tests/device/test_reduce_variants_float.cu -- every reduction of tally::reduction on float
// and double, sum (integer-valued inputs: exact in any order, so even the atomic sum is
// compared bit for bit) and max (no hardware atomic: algorithm::atomic must throw).
#include "test_reduce_common.cuh"

TALLY_REDUCE_VARIANT_TESTS(FloatPlus, float, tally::plus, 26)
TALLY_REDUCE_VARIANT_TESTS(FloatMax, float, tally::maximum, 24)
TALLY_REDUCE_VARIANT_TESTS(DoublePlus, double, tally::plus, 24)
TALLY_REDUCE_VARIANT_TESTS(DoubleMax, double, tally::maximum, 24)
