// tally::cpu::reduce against the sequential reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <list>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tally/tally.hpp"

namespace {

using tally::test::affine;
using tally::test::compose;
using tally::test::mat2;
using tally::test::mat2_product;

template <class T, class Op, class Init>
void check_reduce(std::size_t max_n, Op op, Init init) {
  for (std::size_t n : tally::test::test_sizes(max_n)) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    const auto in = tally::test::random_input<T>(n, 7);
    const auto got = tally::cpu::reduce(in.begin(), in.end(), init, op);
    const auto want = tally::cpu::sequential::reduce(in.begin(), in.end(), init, op);
    static_assert(std::is_same_v<decltype(got), decltype(want)>);
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, tally::plus>) {
      double exact = static_cast<double>(init), magnitude = std::abs(exact);
      for (T x : in) {
        exact += x;
        magnitude += std::abs(static_cast<double>(x));
      }
      const double tol = std::numeric_limits<T>::epsilon() *
                         (16.0 + 4.0 * std::sqrt(static_cast<double>(n))) * (magnitude + 1.0);
      ASSERT_NEAR(static_cast<double>(got), exact, tol);
    } else {
      ASSERT_EQ(got, want);
    }
  }
}

constexpr std::size_t big = std::size_t{1} << 24;
constexpr std::size_t medium = std::size_t{1} << 21;

TEST(CpuReduce, Int32Plus) { check_reduce<std::int32_t>(big, tally::plus{}, 11); }
TEST(CpuReduce, Int32Maximum) { check_reduce<std::int32_t>(medium, tally::maximum{}, -1000); }
TEST(CpuReduce, Int64Minimum) { check_reduce<std::int64_t>(medium, tally::minimum{}, std::int64_t{1000}); }
TEST(CpuReduce, Uint64Plus) { check_reduce<std::uint64_t>(medium, tally::plus{}, std::uint64_t{1}); }
TEST(CpuReduce, FloatPlus) { check_reduce<float>(big, tally::plus{}, 0.5f); }
TEST(CpuReduce, DoublePlus) { check_reduce<double>(medium, tally::plus{}, 0.5); }
TEST(CpuReduce, DoubleMaximum) { check_reduce<double>(medium, tally::maximum{}, -3.0); }
TEST(CpuReduce, Uint32BitAnd) { check_reduce<std::uint32_t>(medium, tally::bit_and{}, 0xFFFFFFFFu); }
TEST(CpuReduce, Int32MultipliesInt64Init) { check_reduce<std::int32_t>(medium, tally::multiplies{}, std::int64_t{1}); }
TEST(CpuReduce, AffineCompose) { check_reduce<affine>(medium, compose{}, affine{1, 0}); }
TEST(CpuReduce, Mat2Product) { check_reduce<mat2>(medium, mat2_product{}, mat2{{1, 0, 0, 1}}); }

TEST(CpuReduce, Int8SumFromInt64InitDoesNotOverflow) {
  std::vector<std::int8_t> in(1 << 20, 100);
  EXPECT_EQ(tally::cpu::reduce(in.begin(), in.end(), std::int64_t{0}), 100LL << 20);
}

TEST(CpuReduce, FloatRepeatsBitForBit) {
  const auto in = tally::test::random_input<float>((1 << 23) + 5);
  const float first = tally::cpu::reduce(in.begin(), in.end(), 0.0f);
  for (int run = 0; run < 3; ++run) {
    const float again = tally::cpu::reduce(in.begin(), in.end(), 0.0f);
    EXPECT_EQ(0, std::memcmp(&first, &again, sizeof(float)));
  }
}

TEST(CpuReduce, StringsInAList) {
  std::list<std::string> words = {"x", "y", "z"};
  EXPECT_EQ(tally::cpu::reduce(words.begin(), words.end(), std::string("<")), "<xyz");
}

TEST(CpuReduce, EmptyGivesInit) {
  std::vector<double> none;
  EXPECT_EQ(tally::cpu::reduce(none.begin(), none.end(), 4.5), 4.5);
  const double* null = nullptr;
  EXPECT_EQ(tally::cpu::reduce(null, null, 4.5), 4.5);
}

TEST(CpuReduce, BadArguments) {
  std::vector<int> v(4, 1);
  try {
    tally::cpu::reduce(v.data() + 3, v.data(), 0);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tally::cpu::reduce"), std::string::npos) << m;
    EXPECT_NE(m.find("'last'"), std::string::npos) << m;
  }
}

}  // namespace
