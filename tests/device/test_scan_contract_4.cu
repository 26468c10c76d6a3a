// tests/device/test_scan_contract_4.cu -- the scan contract on every plan: 4-byte values
// (scan_contract.cuh).
#include "scan_contract.cuh"
#include "test_affine.cuh"

namespace {
using namespace tally_test;
using namespace tally_test::contract;

TEST(ScanContract, Int32Sum) { check_every_plan<std::int32_t>("int32 plus", tally::plus{}, 1); }
TEST(ScanContract, Int32Max) { check_every_plan<std::int32_t>("int32 maximum", tally::maximum{}, 2); }
TEST(ScanContract, FloatSum) { check_every_plan<float>("float plus", tally::plus{}, 3); }
TEST(ScanContract, Affine16NonCommutative) {
  check_every_plan<affine::affine16>("affine16 compose", affine::compose16{}, 4);
}
}  // namespace
