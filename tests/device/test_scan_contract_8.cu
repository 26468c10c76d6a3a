// tests/device/test_scan_contract_8.cu -- the scan contract on every plan: 8- and 16-byte
// values (scan_contract.cuh).
#include "scan_contract.cuh"
#include "test_affine.cuh"

namespace {
using namespace tally_test;
using namespace tally_test::contract;

// 12 bytes (the pipelined kernel's wide tiles): an affine map mod 2^32 with a count,
// composed in order (non-commutative, exact).
struct affine_count {
  std::uint32_t a, b, count;
  bool operator==(const affine_count&) const = default;
};
struct compose_count {
  TALLY_HOST_DEVICE affine_count operator()(const affine_count& f, const affine_count& g) const {
    return {g.a * f.a, g.a * f.b + g.b, f.count + g.count};
  }
};

TEST(ScanContract, Int64Sum) { check_every_plan<std::int64_t>("int64 plus", tally::plus{}, 5); }
TEST(ScanContract, DoubleSum) { check_every_plan<double>("double plus", tally::plus{}, 6); }
TEST(ScanContract, DoubleMax) { check_every_plan<double>("double maximum", tally::maximum{}, 7); }
TEST(ScanContract, Affine32NonCommutative) {
  check_every_plan<affine::affine32>("affine32 compose", affine::compose32{}, 8);
}
TEST(ScanContract, Mat2NonCommutative) {
  check_every_plan<mat2>("mat2 product (16 bytes)", mat2_product{}, 9);
}
TEST(ScanContract, AffineCountWide) {
  check_every_plan<affine_count>("affine+count compose (12 bytes)", compose_count{}, 10);
}
}  // namespace
