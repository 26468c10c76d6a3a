// tally::cpu::inclusive_scan and exclusive_scan against the sequential reference.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <list>
#include <ranges>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <tbb/task_arena.h>

#include "test_support.hpp"
#include "tally/tally.hpp"

namespace {

using tally::test::affine;
using tally::test::compose;
using tally::test::mat2;
using tally::test::mat2_product;

enum class mode { inclusive, exclusive, inclusive_in_place, exclusive_in_place };
const char* name(mode m) {
  switch (m) {
    case mode::inclusive: return "inclusive";
    case mode::exclusive: return "exclusive";
    case mode::inclusive_in_place: return "inclusive in place";
    case mode::exclusive_in_place: return "exclusive in place";
  }
  return "?";
}

// Runs one scan of `n` random elements of T and compares it with the sequential
// reference (float sums: with a double-precision reference).
template <class T, class Out, class Op, class Init>
void check(std::size_t n, Op op, Init init, mode m) {
  SCOPED_TRACE(::testing::Message() << name(m) << ", n = " << n);
  const std::vector<T> in = tally::test::random_input<T>(n, static_cast<std::uint64_t>(m));
  const bool exclusive = m == mode::exclusive || m == mode::exclusive_in_place;
  const bool in_place = m == mode::inclusive_in_place || m == mode::exclusive_in_place;

  std::vector<Out> want(n);
  if (exclusive) {
    tally::cpu::sequential::exclusive_scan(in.begin(), in.end(), want.begin(), init, op);
  } else {
    tally::cpu::sequential::inclusive_scan(in.begin(), in.end(), want.begin(), op);
  }

  std::vector<Out> got;
  if constexpr (std::is_same_v<T, Out>) {
    if (in_place) {
      got = in;
      if (exclusive) {
        tally::cpu::exclusive_scan(got.begin(), got.end(), got.begin(), init, op);
      } else {
        tally::cpu::inclusive_scan(got.begin(), got.end(), got.begin(), op);
      }
    }
  }
  if (!in_place) {
    got.assign(n, tally::test::poison<Out>());
    auto end = exclusive ? tally::cpu::exclusive_scan(in.data(), in.data() + n, got.data(), init, op)
                         : tally::cpu::inclusive_scan(in.data(), in.data() + n, got.data(), op);
    EXPECT_EQ(end, got.data() + n);
  }

  if constexpr (std::is_floating_point_v<Out> && std::is_same_v<Op, tally::plus>) {
    std::vector<double> exact(n), magnitude(n);
    double sum = exclusive ? static_cast<double>(init) : 0.0;
    double mag = exclusive ? std::abs(static_cast<double>(init)) : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (exclusive) {
        exact[i] = sum;
        magnitude[i] = mag;
      }
      sum += static_cast<double>(in[i]);
      mag += std::abs(static_cast<double>(in[i]));
      if (!exclusive) {
        exact[i] = sum;
        magnitude[i] = mag;
      }
    }
    EXPECT_TRUE(tally::test::matches(got, want, &exact, &magnitude));
  } else {
    EXPECT_TRUE(tally::test::matches(got, want));
  }
}

template <class T, class Out = T, class Op, class Init>
void check_all_modes(std::size_t max_n, Op op, Init init) {
  for (std::size_t n : tally::test::test_sizes(max_n)) {
    for (mode m : {mode::inclusive, mode::exclusive, mode::inclusive_in_place,
                   mode::exclusive_in_place}) {
      if constexpr (!std::is_same_v<T, Out>) {
        if (m == mode::inclusive_in_place || m == mode::exclusive_in_place) continue;
      }
      check<T, Out>(n, op, init, m);
      if (::testing::Test::HasFailure()) return;  // one failing size is enough to read
    }
  }
}

// 2^24 for the main type, smaller for the rest to keep CI quick: every size above
// cpu_tuning::parallel_min_bytes runs the parallel path with many tiles.
constexpr std::size_t big = std::size_t{1} << 24;
constexpr std::size_t medium = std::size_t{1} << 21;

TEST(CpuScan, Int32Plus) { check_all_modes<std::int32_t>(big, tally::plus{}, 17); }
TEST(CpuScan, Int32Maximum) { check_all_modes<std::int32_t>(medium, tally::maximum{}, -50); }
TEST(CpuScan, Int32Minimum) { check_all_modes<std::int32_t>(medium, tally::minimum{}, 60); }
TEST(CpuScan, Uint32Plus) { check_all_modes<std::uint32_t>(medium, tally::plus{}, 5u); }
TEST(CpuScan, Int64Plus) { check_all_modes<std::int64_t>(medium, tally::plus{}, std::int64_t{-9}); }
TEST(CpuScan, Int64Maximum) { check_all_modes<std::int64_t>(medium, tally::maximum{}, std::int64_t{-7}); }
TEST(CpuScan, Uint64Plus) { check_all_modes<std::uint64_t>(medium, tally::plus{}, std::uint64_t{3}); }
TEST(CpuScan, FloatPlus) { check_all_modes<float>(big, tally::plus{}, 1.5f); }
TEST(CpuScan, FloatMaximum) { check_all_modes<float>(medium, tally::maximum{}, -0.5f); }
TEST(CpuScan, DoublePlus) { check_all_modes<double>(medium, tally::plus{}, -2.25); }
TEST(CpuScan, DoubleMinimum) { check_all_modes<double>(medium, tally::minimum{}, 0.75); }
TEST(CpuScan, Int32Multiplies) { check_all_modes<std::int32_t>(medium, tally::multiplies{}, 3); }
TEST(CpuScan, Uint32BitXor) { check_all_modes<std::uint32_t>(medium, tally::bit_xor{}, 0xF0u); }
TEST(CpuScan, Int64BitOr) { check_all_modes<std::int64_t>(medium, tally::bit_or{}, std::int64_t{1} << 40); }
// int8 sums accumulate in int (the type of int8 + int8) and are written as int.
TEST(CpuScan, Int8PlusAccumulatesInInt) { check_all_modes<std::int8_t, int>(medium, tally::plus{}, 0); }
// Non-commutative operators, on user structs: the generic parallel path.
TEST(CpuScan, AffineCompose) { check_all_modes<affine>(medium, compose{}, affine{3, 4}); }
TEST(CpuScan, Mat2Product) { check_all_modes<mat2>(std::size_t{1} << 18, mat2_product{}, mat2{{1, 2, 0, 1}}); }

TEST(CpuScan, ExclusiveInitTypeWidensAccumulator) {
  // int32 values near the top of the range summed from an int64 init: no overflow.
  const std::size_t n = 1 << 20;
  std::vector<std::int32_t> in(n, std::numeric_limits<std::int32_t>::max() - 3);
  std::vector<std::int64_t> out(n, -1);
  tally::cpu::exclusive_scan(in.begin(), in.end(), out.begin(), std::int64_t{0});
  EXPECT_EQ(out[n - 1], static_cast<std::int64_t>(n - 1) * (std::numeric_limits<std::int32_t>::max() - 3));
}

TEST(CpuScan, NonCopyableIteratorKindsAndStrings) {
  // A std::list (bidirectional: the sequential path) of strings (non-trivial type,
  // non-commutative concatenation).
  std::list<std::string> words = {"a", "b", "c", "d"};
  std::vector<std::string> out(4);
  tally::cpu::inclusive_scan(words.begin(), words.end(), out.begin(), tally::plus{});
  EXPECT_EQ(out, (std::vector<std::string>{"a", "ab", "abc", "abcd"}));
  tally::cpu::exclusive_scan(words.begin(), words.end(), out.begin(), std::string(">"),
                             tally::plus{});
  EXPECT_EQ(out, (std::vector<std::string>{">", ">a", ">ab", ">abc"}));
}

TEST(CpuScan, RandomAccessIteratorInput) {
  // A counting input (random access but not contiguous: the generic parallel path).
  const std::int64_t n = 3 << 20;
  auto iota = std::views::iota(std::int64_t{1}, n + 1);
  std::vector<std::int64_t> out(static_cast<std::size_t>(n), -1);
  tally::cpu::inclusive_scan(iota.begin(), iota.end(), out.begin());
  for (std::int64_t i = 0; i < n; i += 9973) ASSERT_EQ(out[i], (i + 1) * (i + 2) / 2) << i;
  EXPECT_EQ(out[n - 1], n * (n + 1) / 2);
}

TEST(CpuScan, FloatResultsRepeatBitForBit) {
  const std::size_t n = (1 << 22) + 123;
  const auto in = tally::test::random_input<float>(n);
  std::vector<float> a(n), b(n);
  tally::cpu::inclusive_scan(in.begin(), in.end(), a.begin());
  for (int run = 0; run < 3; ++run) {
    tally::cpu::inclusive_scan(in.begin(), in.end(), b.begin());
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), n * sizeof(float))) << "run " << run;
  }
}

// The association depends on the tile size only: the same bits for any number of
// threads, including more threads than cores (where waiting tiles compute their
// predecessors' prefixes themselves, see cpu/detail/chained_scan.hpp).
TEST(CpuScan, FloatBitsIndependentOfThreadCount) {
  const std::size_t n = (std::size_t{1} << 23) + 77;
  const auto in = tally::test::random_input<float>(n, 11);
  std::vector<float> one(n, tally::test::poison<float>());
  tbb::task_arena(1).execute([&] { tally::cpu::inclusive_scan(in.begin(), in.end(), one.begin()); });
  for (int threads : {2, 3, 8, 16}) {
    std::vector<float> many(n, tally::test::poison<float>());
    tbb::task_arena(threads).execute(
        [&] { tally::cpu::inclusive_scan(in.begin(), in.end(), many.begin()); });
    ASSERT_EQ(0, std::memcmp(one.data(), many.data(), n * sizeof(float))) << threads << " threads";
  }
}

// Oversubscribed, in place (helping is off there: the owner of a tile may already be
// overwriting its input) and out of place, against the sequential reference.
TEST(CpuScan, OversubscribedThreads) {
  const std::size_t n = (std::size_t{1} << 22) + 5;
  const auto in = tally::test::random_input<std::int64_t>(n, 12);
  std::vector<std::int64_t> want(n);
  tally::cpu::sequential::inclusive_scan(in.begin(), in.end(), want.begin());
  tbb::task_arena arena(16);
  for (int run = 0; run < 3; ++run) {
    std::vector<std::int64_t> out(n, tally::test::poison<std::int64_t>());
    arena.execute([&] { tally::cpu::inclusive_scan(in.begin(), in.end(), out.begin()); });
    ASSERT_TRUE(tally::test::matches(out, want)) << "out of place, run " << run;
    std::vector<std::int64_t> inplace = in;
    arena.execute([&] { tally::cpu::inclusive_scan(inplace.begin(), inplace.end(), inplace.begin()); });
    ASSERT_TRUE(tally::test::matches(inplace, want)) << "in place, run " << run;
  }
  // The generic (non-vectorised) path too: a non-commutative struct.
  const auto maps = tally::test::random_input<affine>(n / 4, 13);
  std::vector<affine> want_maps(maps.size()), got_maps(maps.size(), tally::test::poison<affine>());
  tally::cpu::sequential::inclusive_scan(maps.begin(), maps.end(), want_maps.begin(), compose{});
  arena.execute([&] {
    tally::cpu::inclusive_scan(maps.begin(), maps.end(), got_maps.begin(), compose{});
  });
  EXPECT_TRUE(tally::test::matches(got_maps, want_maps));
}

TEST(CpuScan, BadArguments) {
  std::vector<int> v(10, 1);
  std::vector<int> out(10);
  try {
    tally::cpu::inclusive_scan(v.data() + 5, v.data(), out.data());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tally::cpu::inclusive_scan"), std::string::npos) << m;
    EXPECT_NE(m.find("'last'"), std::string::npos) << m;
  }
  int* null = nullptr;
  try {
    tally::cpu::exclusive_scan(v.data(), v.data() + 10, null, 0);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("tally::cpu::exclusive_scan"), std::string::npos) << m;
    EXPECT_NE(m.find("'d_first'"), std::string::npos) << m;
  }
  EXPECT_THROW(tally::cpu::inclusive_scan(null, v.data(), out.data()), std::invalid_argument);
  // An empty range with null pointers is fine and writes nothing.
  EXPECT_EQ(tally::cpu::inclusive_scan(null, null, null), null);
}

}  // namespace
