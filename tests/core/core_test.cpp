// Operators, identities, the accumulator-type rule, and the errors of tally/core.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.hpp"
#include "tally/tally.hpp"

namespace {

using tally::test::affine;
using tally::test::compose;
using tally::test::invalid_argument_message;

// The identity of each operator leaves random values unchanged from either side.
template <class Op, class T>
void expect_identity() {
  const T e = tally::identity<Op, T>();
  for (T x : tally::test::random_input<T>(100)) {
    EXPECT_EQ(static_cast<T>(Op{}(e, x)), x);
    EXPECT_EQ(static_cast<T>(Op{}(x, e)), x);
  }
}

TEST(Operators, IdentitiesAreIdentities) {
  expect_identity<tally::plus, std::int32_t>();
  expect_identity<tally::plus, double>();
  expect_identity<tally::multiplies, std::int64_t>();
  expect_identity<tally::minimum, std::int32_t>();
  expect_identity<tally::minimum, float>();
  expect_identity<tally::maximum, std::uint64_t>();
  expect_identity<tally::maximum, double>();
  expect_identity<tally::bit_and, std::uint32_t>();
  expect_identity<tally::bit_or, std::int64_t>();
  expect_identity<tally::bit_xor, std::uint8_t>();
}

TEST(Operators, ValuesAndOrder) {
  EXPECT_EQ(tally::plus{}(2, 3), 5);
  EXPECT_EQ(tally::multiplies{}(4, 3), 12);
  EXPECT_EQ(tally::minimum{}(4, -3), -3);
  EXPECT_EQ(tally::maximum{}(4, -3), 4);
  EXPECT_EQ(tally::bit_and{}(0b1100, 0b1010), 0b1000);
  EXPECT_EQ(tally::bit_or{}(0b1100, 0b1010), 0b1110);
  EXPECT_EQ(tally::bit_xor{}(0b1100, 0b1010), 0b0110);
  // The test operator really is non-commutative.
  const affine f{3, 1}, g{5, 4};
  EXPECT_FALSE(compose{}(f, g) == compose{}(g, f));
  // and associative.
  const affine h{7, 9};
  EXPECT_EQ(compose{}(compose{}(f, g), h), compose{}(f, compose{}(g, h)));
}

TEST(Operators, HasIdentity) {
  static_assert(tally::has_identity_v<tally::plus, int>);
  static_assert(tally::has_identity_v<tally::maximum, double>);
  static_assert(!tally::has_identity_v<tally::bit_and, double>);
  static_assert(!tally::has_identity_v<compose, affine>);
  EXPECT_EQ((tally::identity<tally::minimum, double>()), std::numeric_limits<double>::infinity());
  EXPECT_EQ((tally::identity<tally::maximum, std::int8_t>()),
            std::numeric_limits<std::int8_t>::lowest());
}

TEST(Accumulator, P2322Rule) {
  // inclusive: the type of op(x, x)
  static_assert(std::is_same_v<tally::inclusive_accumulator_t<tally::plus, std::int8_t>, int>);
  static_assert(std::is_same_v<tally::inclusive_accumulator_t<tally::plus, float>, float>);
  static_assert(
      std::is_same_v<tally::inclusive_accumulator_t<tally::maximum, std::int8_t>, std::int8_t>);
  // exclusive and reduce: the type of op(init, x)
  static_assert(std::is_same_v<tally::exclusive_accumulator_t<tally::plus, std::int64_t, int>,
                               std::int64_t>);
  static_assert(std::is_same_v<tally::exclusive_accumulator_t<tally::plus, int, float>, float>);
  static_assert(std::is_same_v<tally::exclusive_accumulator_t<compose, affine, affine>, affine>);
  // The rule at work: int32 values summed from an int64 init do not overflow.
  std::vector<std::int32_t> big(3, std::numeric_limits<std::int32_t>::max());
  const auto total = tally::cpu::reduce(big.begin(), big.end(), std::int64_t{0});
  static_assert(std::is_same_v<decltype(total), const std::int64_t>);
  EXPECT_EQ(total, 3LL * std::numeric_limits<std::int32_t>::max());
}

TEST(Errors, ErrorCarriesCode) {
  const tally::error e(2, "tally::inclusive_scan: cudaMallocAsync: out of memory");
  EXPECT_EQ(e.code(), 2);
  EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos);
  const std::runtime_error& base = e;  // derived from std::runtime_error
  EXPECT_NE(std::string(base.what()).find("inclusive_scan"), std::string::npos);
}


TEST(Errors, ChecksNameFunctionAndArgument) {
  const std::string m1 = invalid_argument_message([] { tally::detail::check_count("reduce", -1); });
  EXPECT_NE(m1.find("tally::reduce"), std::string::npos) << m1;
  EXPECT_NE(m1.find("'n'"), std::string::npos) << m1;
  EXPECT_NE(m1.find("-1"), std::string::npos) << m1;
  const int* null = nullptr;
  const std::string m2 = invalid_argument_message(
      [&] { tally::detail::check_pointer("inclusive_scan", "in", null, 5); });
  EXPECT_NE(m2.find("tally::inclusive_scan"), std::string::npos) << m2;
  EXPECT_NE(m2.find("'in'"), std::string::npos) << m2;
  EXPECT_NO_THROW(tally::detail::check_pointer("inclusive_scan", "in", null, 0));
}

TEST(Options, Defaults) {
  const tally::options o;
  EXPECT_EQ(o.stream, nullptr);
  EXPECT_EQ(o.strategy, tally::scan_strategy::automatic);
  EXPECT_EQ(o.block, tally::block_scan::automatic);
  EXPECT_FALSE(o.deterministic);
  EXPECT_EQ(o.storage.data, nullptr);
  EXPECT_EQ(o.storage.bytes, 0u);
}

}  // namespace
