// tally::cpu selection family (compaction, partitions, runs, reduce-by-key): the
// sequential references against hand-written expectations, and the parallel versions
// against the sequential references over sizes around the parallel threshold and the
// chunk boundaries, every selectivity, runs from length 1 to 2^20, in place, several
// thread counts and iterator kinds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <list>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tbb/task_arena.h>

#include "test_support.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/select.hpp"
#include "tally/cpu/sequential_select.hpp"
#include "tally/tally.hpp"

namespace {

using tally::test::affine;
using tally::test::compose;
using tally::test::mat2;
using tally::test::mat2_product;
using i64 = std::int64_t;
namespace cpu = tally::cpu;
namespace seq = tally::cpu::sequential;

// A 16-byte user type.
struct rec {
  i64 key;
  std::int32_t tag;
  float weight;
  friend bool operator==(const rec& a, const rec& b) {
    return a.key == b.key && a.tag == b.tag && a.weight == b.weight;
  }
};
static_assert(sizeof(rec) == 16 && std::is_trivially_copyable_v<rec>);
std::ostream& operator<<(std::ostream& os, const rec& r) {
  return os << "{" << r.key << ", " << r.tag << ", " << r.weight << "}";
}

// ---- values -------------------------------------------------------------------------------
// make_value<T>(r) turns 64 random bits into a T that is never poison_value<T>();
// unit(x) maps it into [0, 1), so `unit(x) < p` keeps about a fraction p (exactly none
// for p = 0 and all for p = 1).

template <class T>
T make_value(std::uint64_t r) {
  if constexpr (std::is_same_v<T, rec>) {
    return rec{static_cast<i64>(r >> 1) - (i64{1} << 62), static_cast<std::int32_t>(r >> 40),
               static_cast<float>(r & 0xFFFF)};
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<double>(r >> 40) * 0x1p-23 - 1.0);  // exact, in [-1, 1)
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return static_cast<T>(static_cast<int>(r % 255) - 127);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return static_cast<T>(static_cast<i64>(r % 4294967295ULL) - 2147483647);
  } else {
    static_assert(std::is_same_v<T, i64>);
    return static_cast<T>(r >> 1);
  }
}

template <class T>
T poison_value() {
  if constexpr (std::is_same_v<T, rec>) {
    return rec{std::numeric_limits<i64>::min(), -1, std::numeric_limits<float>::quiet_NaN()};
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return std::numeric_limits<T>::min();
  }
}

template <class T>
double unit(const T& x) {
  if constexpr (std::is_same_v<T, rec>) {
    return static_cast<double>(static_cast<std::uint64_t>(x.key + (i64{1} << 62)) >> 11) * 0x1p-52;
  } else if constexpr (std::is_floating_point_v<T>) {
    return (static_cast<double>(x) + 1.0) / 2.0;
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return (x + 127) / 255.0;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return (static_cast<double>(x) + 2147483647.0) / 4294967295.0;
  } else {
    return static_cast<double>(static_cast<std::uint64_t>(x) >> 11) * 0x1p-52;
  }
}

struct below {
  double p;
  template <class T>
  bool operator()(const T& x) const {
    return unit(x) < p;
  }
};

template <class T>
std::vector<T> values(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 rng(tally::test::seed() * 0x9E3779B97F4A7C15ULL + salt * 7919 + n);
  std::vector<T> v(n);
  for (auto& x : v) x = make_value<T>(rng());
  return v;
}

// Compares whole buffers bit for bit (selection copies values exactly; the poison left
// past the end of an output must match too).
template <class T>
::testing::AssertionResult same(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": got "
                                           << tally::test::printable(got[i]) << ", want "
                                           << tally::test::printable(want[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// The parallel threshold and chunk length, in elements of T (as detail/select.hpp counts
// them for a one-input operation).
template <class T>
i64 threshold() {
  return static_cast<i64>(cpu::cpu_tuning::parallel_min_bytes / sizeof(T));
}
template <class T>
i64 chunk() {
  return static_cast<i64>(cpu::cpu_tuning::tile_bytes / sizeof(T));
}

// Several times the threshold, at most about 2^20 elements.
template <class T>
i64 larger() {
  return std::min(8 * threshold<T>(), i64{1} << 20) + 13;
}

// 0, 1, 2, 3, small odd sizes, both sides of the threshold and of chunk boundaries, and a
// few larger ones.
template <class T>
std::vector<i64> sizes() {
  const i64 t = threshold<T>(), c = chunk<T>();
  return {0, 1, 2, 3, 7, 31, 33, 1001, t - 1, t, t + 1, 6 * c - 1, 6 * c, 6 * c + 1, larger<T>()};
}

const double selectivities[] = {0.0, 0.01, 0.1, 0.5, 0.9, 1.0};

// ---- the references against hand-written expectations --------------------------------

const std::vector<int> A = {1, 3, 2, 4, 8, 6, 5, 4, 9, 7, 3};
const auto odd = [](int x) { return x % 2 != 0; };

TEST(CpuSelectReference, WorkedExample) {
  std::vector<int> out(A.size(), -1);
  auto end = seq::copy_if(A.begin(), A.end(), out.begin(), odd);
  EXPECT_EQ(end - out.begin(), 6);
  EXPECT_EQ(out, (std::vector<int>{1, 3, 5, 9, 7, 3, -1, -1, -1, -1, -1}));
  std::fill(out.begin(), out.end(), -1);
  auto mid = seq::partition(A.begin(), A.end(), out.begin(), odd);
  EXPECT_EQ(mid - out.begin(), 6);
  EXPECT_EQ(out, (std::vector<int>{1, 3, 5, 9, 7, 3, 2, 4, 8, 6, 4}));
  std::fill(out.begin(), out.end(), -1);
  end = seq::remove_if(A.begin(), A.end(), out.begin(), odd);
  EXPECT_EQ(end - out.begin(), 5);
  EXPECT_EQ(out, (std::vector<int>{2, 4, 8, 6, 4, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(seq::count_if(A.begin(), A.end(), odd), 6);
  // Stencil and flags.
  const std::vector<int> stencil = {0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 1};
  std::vector<int> kept;
  seq::copy_if(A.begin(), A.end(), stencil.begin(), std::back_inserter(kept),
               [](int s) { return s == 1; });
  EXPECT_EQ(kept, (std::vector<int>{3, 2, 6, 3}));
  const std::vector<std::uint8_t> flags = {7, 0, 0, 255, 0, 0, 1, 0, 0, 0, 2};
  kept.clear();
  seq::copy_flagged(A.begin(), A.end(), flags.begin(), std::back_inserter(kept));
  EXPECT_EQ(kept, (std::vector<int>{1, 4, 5, 3}));
  // Three ways: x < 3, else x < 6, else the rest.
  std::vector<int> a(11, -1), b(11, -1), c(11, -1);
  const auto counts = seq::partition_three_way(A.begin(), A.end(), a.begin(), b.begin(), c.begin(),
                                               [](int x) { return x < 3; }, [](int x) { return x < 6; });
  EXPECT_EQ(counts, (tally::three_way_result{2, 5, 4}));
  EXPECT_EQ(a, (std::vector<int>{1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(b, (std::vector<int>{3, 4, 5, 4, 3, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(c, (std::vector<int>{8, 6, 9, 7, -1, -1, -1, -1, -1, -1, -1}));
}

TEST(CpuSelectReference, Runs) {
  const std::vector<int> x = {1, 1, 2, 2, 2, 3, 1, 1, 4};
  std::vector<int> u;
  seq::unique(x.begin(), x.end(), std::back_inserter(u));
  EXPECT_EQ(u, (std::vector<int>{1, 2, 3, 1, 4}));
  std::vector<int> uk, uv;
  const std::vector<int> v = {10, 11, 12, 13, 14, 15, 16, 17, 18};
  seq::unique_by_key(x.begin(), x.end(), v.begin(), std::back_inserter(uk), std::back_inserter(uv));
  EXPECT_EQ(uk, (std::vector<int>{1, 2, 3, 1, 4}));
  EXPECT_EQ(uv, (std::vector<int>{10, 12, 15, 16, 18}));
  std::vector<int> ru;
  std::vector<std::int16_t> rc(5, -1);
  const auto [ru_end, rc_end] = seq::run_length_encode(x.begin(), x.end(), std::back_inserter(ru), rc.begin());
  EXPECT_EQ(ru, (std::vector<int>{1, 2, 3, 1, 4}));
  EXPECT_EQ(rc, (std::vector<std::int16_t>{2, 3, 1, 2, 1}));
  EXPECT_EQ(rc_end, rc.end());
  std::vector<i64> offsets(3, -1), lengths(3, -1);
  const auto [o_end, l_end] = seq::non_trivial_runs(x.begin(), x.end(), offsets.begin(), lengths.begin());
  EXPECT_EQ(offsets, (std::vector<i64>{0, 2, 6}));
  EXPECT_EQ(lengths, (std::vector<i64>{2, 3, 2}));
  EXPECT_EQ(o_end, offsets.end());
  EXPECT_EQ(l_end, lengths.end());
  std::vector<int> rk, rv;
  seq::reduce_by_key(x.begin(), x.end(), v.begin(), std::back_inserter(rk), std::back_inserter(rv));
  EXPECT_EQ(rk, (std::vector<int>{1, 2, 3, 1, 4}));
  EXPECT_EQ(rv, (std::vector<int>{21, 39, 15, 33, 18}));
  // A last run that is a single element, and a single run.
  const std::vector<int> y = {5, 5, 5, 6};
  std::vector<i64> o2, l2;
  seq::non_trivial_runs(y.begin(), y.end(), std::back_inserter(o2), std::back_inserter(l2));
  EXPECT_EQ(o2, (std::vector<i64>{0}));
  EXPECT_EQ(l2, (std::vector<i64>{3}));
  const std::vector<int> z = {4, 4, 4};
  std::vector<int> zu;
  std::vector<i64> zc;
  seq::run_length_encode(z.begin(), z.end(), std::back_inserter(zu), std::back_inserter(zc));
  EXPECT_EQ(zu, (std::vector<int>{4}));
  EXPECT_EQ(zc, (std::vector<i64>{3}));
  // Non-commutative: the values of a run are composed in order.
  const affine f{3, 1}, g{5, 7}, h{9, 2}, k{11, 4};
  const std::vector<int> keys = {1, 1, 1, 2};
  const std::vector<affine> maps = {f, g, h, k};
  std::vector<affine> composed;
  std::vector<int> composed_keys;
  seq::reduce_by_key(keys.begin(), keys.end(), maps.begin(), std::back_inserter(composed_keys),
                     std::back_inserter(composed), compose{});
  ASSERT_EQ(composed.size(), 2u);
  EXPECT_EQ(composed[0], compose{}(compose{}(f, g), h));
  EXPECT_FALSE(composed[0] == compose{}(compose{}(h, g), f));
  EXPECT_EQ(composed[1], k);
  // The accumulator rule: int8 values summed in int (inclusive_accumulator_t of plus).
  const std::vector<std::int8_t> bytes = {100, 100, 100};
  std::vector<int> sums;
  std::vector<int> sum_keys;
  seq::reduce_by_key(z.begin(), z.end(), bytes.begin(), std::back_inserter(sum_keys), std::back_inserter(sums));
  EXPECT_EQ(sums, (std::vector<int>{300}));
  // Empty inputs write nothing.
  std::vector<int> none;
  EXPECT_EQ(seq::unique(none.begin(), none.end(), u.begin()), u.begin());
  const auto [nk, nv] = seq::reduce_by_key(none.begin(), none.end(), v.begin(), rk.begin(), rv.begin());
  EXPECT_EQ(nk, rk.begin());
  EXPECT_EQ(nv, rv.begin());
}

// Runs are split by comparing adjacent elements: with a non-transitive equal (|a - b| <= 1)
// 1 2 3 is one run (std::unique, comparing with the run's first element, would split it).
struct near {
  bool operator()(int a, int b) const { return a - b <= 1 && b - a <= 1; }
};

TEST(CpuSelectReference, AdjacentComparison) {
  const std::vector<int> x = {1, 2, 3, 5, 6, 9};
  std::vector<int> u;
  seq::unique(x.begin(), x.end(), std::back_inserter(u), near{});
  EXPECT_EQ(u, (std::vector<int>{1, 5, 9}));
  // The parallel version on a long input of the same pattern, shifted by 20 per copy.
  std::vector<int> big, want;
  for (int r = 0; r < 100000; ++r) {
    for (int v : x) big.push_back(v + 20 * r);
    for (int v : {1, 5, 9}) want.push_back(v + 20 * r);
  }
  std::vector<int> got(big.size(), -1);
  const auto end = cpu::unique(big.begin(), big.end(), got.begin(), near{});
  got.resize(static_cast<std::size_t>(end - got.begin()));
  EXPECT_EQ(got, want);
}

// The copies in place: each element is read before its position is written.
TEST(CpuSelectReference, InPlace) {
  std::vector<int> x = A;
  EXPECT_EQ(seq::copy_if(x.begin(), x.end(), x.begin(), odd) - x.begin(), 6);
  EXPECT_EQ(x, (std::vector<int>{1, 3, 5, 9, 7, 3, 5, 4, 9, 7, 3}));
  std::vector<int> y = {1, 1, 2, 2, 2, 3, 1, 1, 4};
  EXPECT_EQ(seq::unique(y.begin(), y.end(), y.begin()) - y.begin(), 5);
  EXPECT_EQ(y, (std::vector<int>{1, 2, 3, 1, 4, 3, 1, 1, 4}));
}

// The worked example at a size that runs in parallel: A repeated, so the expectation is
// the small one repeated (the selected parts of every copy, then the rejected ones).
TEST(CpuSelect, WorkedExampleRepeated) {
  const int copies = 50000;  // 550000 ints: above the parallel threshold
  std::vector<int> x, kept, rejected;
  for (int r = 0; r < copies; ++r) {
    x.insert(x.end(), A.begin(), A.end());
    for (int v : A) (odd(v) ? kept : rejected).push_back(v);
  }
  ASSERT_GT(static_cast<i64>(x.size()), threshold<int>());
  std::vector<int> out(x.size(), -1);
  auto end = cpu::copy_if(x.begin(), x.end(), out.begin(), odd);
  ASSERT_EQ(end - out.begin(), 6 * copies);
  EXPECT_TRUE(std::equal(kept.begin(), kept.end(), out.begin()));
  EXPECT_EQ(std::count(out.begin() + 6 * copies, out.end(), -1), 5 * copies);
  auto mid = cpu::partition(x.begin(), x.end(), out.begin(), odd);
  ASSERT_EQ(mid - out.begin(), 6 * copies);
  EXPECT_TRUE(std::equal(kept.begin(), kept.end(), out.begin()));
  EXPECT_TRUE(std::equal(rejected.begin(), rejected.end(), mid));
  std::fill(out.begin(), out.end(), -1);
  end = cpu::remove_if(x.begin(), x.end(), out.begin(), odd);
  ASSERT_EQ(end - out.begin(), 5 * copies);
  EXPECT_TRUE(std::equal(rejected.begin(), rejected.end(), out.begin()));
  EXPECT_EQ(cpu::count_if(x.begin(), x.end(), odd), 6 * copies);
}

// ---- compaction and partitions against the references ---------------------------------

// copy_if and count_if; with `All` also remove_if and partition.
template <class T, bool All>
void check_selection(i64 n, double p, std::uint64_t salt) {
  SCOPED_TRACE(::testing::Message() << "n = " << n << ", selectivity " << p);
  const auto x = values<T>(static_cast<std::size_t>(n), salt);
  const T* in = x.data();
  const below pred{p};
  const T poison = poison_value<T>();
  std::vector<T> want(x.size(), poison), got(x.size(), poison);
  const i64 kept = seq::copy_if(in, in + n, want.data(), pred) - want.data();
  EXPECT_EQ(cpu::copy_if(in, in + n, got.data(), pred), got.data() + kept) << "copy_if";
  ASSERT_TRUE(same(got, want)) << "copy_if";
  if (p == 0.0) {
    ASSERT_EQ(kept, 0);
  }
  if (p == 1.0) {
    ASSERT_EQ(kept, n);
  }
  EXPECT_EQ(cpu::count_if(in, in + n, pred), kept) << "count_if";
  if constexpr (All) {
    std::fill(want.begin(), want.end(), poison);
    std::fill(got.begin(), got.end(), poison);
    ASSERT_EQ(seq::remove_if(in, in + n, want.data(), pred) - want.data(), n - kept);
    EXPECT_EQ(cpu::remove_if(in, in + n, got.data(), pred), got.data() + n - kept) << "remove_if";
    ASSERT_TRUE(same(got, want)) << "remove_if";

    std::fill(want.begin(), want.end(), poison);
    std::fill(got.begin(), got.end(), poison);
    ASSERT_EQ(seq::partition(in, in + n, want.data(), pred) - want.data(), kept);
    EXPECT_EQ(cpu::partition(in, in + n, got.data(), pred), got.data() + kept) << "partition";
    ASSERT_TRUE(same(got, want)) << "partition";
  }
}

// In place: the input's tail past the kept elements stays as it was.
template <class T>
void check_selection_in_place(i64 n, double p, std::uint64_t salt) {
  SCOPED_TRACE(::testing::Message() << "in place, n = " << n << ", selectivity " << p);
  const auto x = values<T>(static_cast<std::size_t>(n), salt);
  const below pred{p};
  std::vector<T> want = x, got = x;
  const i64 kept = seq::copy_if(want.data(), want.data() + n, want.data(), pred) - want.data();
  EXPECT_EQ(cpu::copy_if(got.data(), got.data() + n, got.data(), pred), got.data() + kept);
  ASSERT_TRUE(same(got, want)) << "copy_if";
  got = x;
  want = x;
  const i64 left = seq::remove_if(want.data(), want.data() + n, want.data(), pred) - want.data();
  EXPECT_EQ(cpu::remove_if(got.data(), got.data() + n, got.data(), pred), got.data() + left);
  ASSERT_TRUE(same(got, want)) << "remove_if";
}

template <class T, bool All, bool InPlace>
void check_all_selections() {
  std::uint64_t salt = 0;
  for (i64 n : sizes<T>()) {
    for (double p : selectivities) {
      check_selection<T, All>(n, p, ++salt);
      if constexpr (InPlace) check_selection_in_place<T>(n, p, salt);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Every operation for int8, int32, double and the 16-byte type (in place for the last
// three); copy_if and count_if for int64 and float.
TEST(CpuSelect, Int8) { check_all_selections<std::int8_t, true, false>(); }
TEST(CpuSelect, Int32) {
  check_all_selections<std::int32_t, true, true>();
  if (!tally::test::quick()) {
    for (double p : {0.01, 0.5, 1.0}) check_selection<std::int32_t, true>(3'000'017, p, 99);
  }
}
TEST(CpuSelect, Int64) { check_all_selections<i64, false, false>(); }
TEST(CpuSelect, Float) { check_all_selections<float, false, false>(); }
TEST(CpuSelect, Double) { check_all_selections<double, true, true>(); }
TEST(CpuSelect, Record16) { check_all_selections<rec, true, true>(); }

// The stencil and flag forms and the three-way partition, on int32 and the 16-byte type.
template <class T>
void check_stencil_flags_three_way(i64 n, double p, std::uint64_t salt) {
  SCOPED_TRACE(::testing::Message() << "n = " << n << ", selectivity " << p);
  const auto x = values<T>(static_cast<std::size_t>(n), salt);
  const auto s = values<std::int32_t>(static_cast<std::size_t>(n), salt + 1000);
  const below pred{p};
  const T poison = poison_value<T>();
  std::vector<T> want(x.size(), poison), got(x.size(), poison);
  const i64 kept = seq::copy_if(x.begin(), x.end(), s.begin(), want.begin(), pred) - want.begin();
  EXPECT_EQ(cpu::copy_if(x.begin(), x.end(), s.begin(), got.begin(), pred) - got.begin(), kept);
  ASSERT_TRUE(same(got, want)) << "copy_if with a stencil";
  // In place, with the stencil.
  std::vector<T> in_place = x;
  EXPECT_EQ(cpu::copy_if(in_place.data(), in_place.data() + n, s.data(), in_place.data(), pred),
            in_place.data() + kept);
  ASSERT_TRUE(std::equal(in_place.begin(), in_place.begin() + kept, want.begin()) &&
              std::equal(in_place.begin() + kept, in_place.end(), x.begin() + kept))
      << "copy_if with a stencil, in place";

  // Flags: any non-zero byte is true.
  std::vector<std::uint8_t> flags(x.size());
  for (std::size_t i = 0; i < flags.size(); ++i) {
    flags[i] = pred(s[i]) ? static_cast<std::uint8_t>(1 + (static_cast<std::uint32_t>(s[i]) % 255)) : 0;
  }
  std::fill(got.begin(), got.end(), poison);
  EXPECT_EQ(cpu::copy_flagged(x.data(), x.data() + n, flags.data(), got.data()), got.data() + kept);
  ASSERT_TRUE(same(got, want)) << "copy_flagged";

  // Three ways: unit < p, else unit < p + 0.3, else the rest.
  const below second{std::min(1.0, p + 0.3)};
  std::vector<T> wa(x.size(), poison), wb = wa, wc = wa, ga = wa, gb = wa, gc = wa;
  const auto want_counts = seq::partition_three_way(x.begin(), x.end(), wa.begin(), wb.begin(),
                                                    wc.begin(), pred, second);
  EXPECT_EQ(want_counts.first + want_counts.second + want_counts.rest, n);
  const auto got_counts = cpu::partition_three_way(x.begin(), x.end(), ga.begin(), gb.begin(),
                                                   gc.begin(), pred, second);
  EXPECT_EQ(got_counts, want_counts);
  ASSERT_TRUE(same(ga, wa)) << "three-way, first";
  ASSERT_TRUE(same(gb, wb)) << "three-way, second";
  ASSERT_TRUE(same(gc, wc)) << "three-way, rest";
}

template <class T>
void check_all_stencil_flags_three_way() {
  std::uint64_t salt = 500;
  for (i64 n : sizes<T>()) {
    for (double p : selectivities) {
      check_stencil_flags_three_way<T>(n, p, ++salt);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(CpuSelect, StencilFlagsThreeWayInt32) { check_all_stencil_flags_three_way<std::int32_t>(); }
TEST(CpuSelect, StencilFlagsThreeWayRecord16) { check_all_stencil_flags_three_way<rec>(); }

// vector<bool> flags (a proxy reference) on the parallel path.
TEST(CpuSelect, VectorBoolFlags) {
  const i64 n = 3 * threshold<i64>() + 5;
  const auto x = values<i64>(static_cast<std::size_t>(n), 7);
  std::vector<bool> flags(x.size());
  std::vector<std::uint8_t> bytes(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    flags[i] = unit(x[i]) < 0.3;
    bytes[i] = flags[i] ? 1 : 0;
  }
  std::vector<i64> want(x.size(), -1), got(x.size(), -1);
  const auto wend = seq::copy_flagged(x.begin(), x.end(), bytes.begin(), want.begin());
  EXPECT_EQ(cpu::copy_flagged(x.begin(), x.end(), flags.begin(), got.begin()) - got.begin(),
            wend - want.begin());
  EXPECT_TRUE(same(got, want));
}

// ---- runs ---------------------------------------------------------------------------------

// Run lengths summing to n: `kind` 0: all 1; 1: random (mostly 1 to 3, some to 100, a few to
// 5000, one of about n/2); 2: one run; 3: 1, 2, 4, ..., 2^20 and again; otherwise all of
// length `kind`.
std::vector<i64> run_lengths(i64 n, i64 kind, std::uint64_t salt) {
  std::vector<i64> lengths;
  std::mt19937_64 rng(tally::test::seed() * 17 + salt + static_cast<std::uint64_t>(n));
  i64 rest = n;
  auto add = [&](i64 len) {
    len = std::min(len, rest);
    if (len > 0) lengths.push_back(len);
    rest -= len;
  };
  if (kind == 0) {
    while (rest > 0) add(1);
  } else if (kind == 1) {
    const i64 huge = n / 2;
    const i64 at = n > 0 ? static_cast<i64>(rng() % static_cast<std::uint64_t>(n)) : 0;
    std::uniform_int_distribution<int> pick(0, 99);
    bool huge_done = false;
    while (rest > 0) {
      if (!huge_done && n - rest >= at) {
        add(huge);
        huge_done = true;
        continue;
      }
      const int k = pick(rng);
      add(k < 70 ? 1 + static_cast<i64>(rng() % 3)
                 : k < 95 ? 1 + static_cast<i64>(rng() % 100) : 1 + static_cast<i64>(rng() % 5000));
    }
  } else if (kind == 2) {
    add(n);
  } else if (kind == 3) {
    for (i64 len = 1; rest > 0; len = len >= (i64{1} << 20) ? 1 : len * 2) add(len);
  } else {
    while (rest > 0) add(kind);
  }
  return lengths;
}

std::vector<i64> run_kinds(i64 n, i64 chunk_len) {
  std::vector<i64> kinds = {0, 1, 2, 3, 7};
  for (i64 len : {chunk_len - 1, chunk_len, chunk_len + 1, i64{1} << 20}) {
    if (len < n) kinds.push_back(len);
  }
  return kinds;
}

// Values by run: every run gets a value different from the previous run's.
template <class T>
std::vector<T> run_values(const std::vector<i64>& lengths, std::uint64_t salt) {
  std::mt19937_64 rng(tally::test::seed() * 131 + salt);
  std::vector<T> v;
  T prev = poison_value<T>();
  for (i64 len : lengths) {
    T value = make_value<T>(rng());
    while (value == prev) value = make_value<T>(rng());
    v.insert(v.end(), static_cast<std::size_t>(len), value);
    prev = value;
  }
  return v;
}

template <class T>
std::vector<i64> run_sizes() {
  const i64 t = threshold<T>(), c = chunk<T>();
  return {0, 1, 2, 3, 33, 1001, t - 1, t + 1, 6 * c + 1, larger<T>()};
}

// unique (out of place and, where asked, in place) and run_length_encode.
template <class T, bool InPlace>
void check_unique_rle(const std::vector<i64>& lengths, std::uint64_t salt) {
  const auto x = run_values<T>(lengths, salt);
  const i64 n = static_cast<i64>(x.size());
  SCOPED_TRACE(::testing::Message() << "n = " << n << ", runs = " << lengths.size());
  const T poison = poison_value<T>();
  std::vector<T> want(x.size(), poison), got(x.size(), poison);
  const i64 runs = seq::unique(x.begin(), x.end(), want.begin()) - want.begin();
  ASSERT_EQ(runs, static_cast<i64>(lengths.size()));
  EXPECT_EQ(cpu::unique(x.data(), x.data() + n, got.data()), got.data() + runs) << "unique";
  ASSERT_TRUE(same(got, want)) << "unique";
  if constexpr (InPlace) {
    std::vector<T> w = x, g = x;
    seq::unique(w.begin(), w.end(), w.begin());
    EXPECT_EQ(cpu::unique(g.begin(), g.end(), g.begin()) - g.begin(), runs) << "unique in place";
    ASSERT_TRUE(same(g, w)) << "unique in place";
  }
  std::fill(got.begin(), got.end(), poison);
  std::vector<std::int32_t> counts(x.size(), -1);
  const auto [u_end, c_end] = cpu::run_length_encode(x.begin(), x.end(), got.begin(), counts.begin());
  EXPECT_EQ(u_end - got.begin(), runs);
  EXPECT_EQ(c_end - counts.begin(), runs);
  ASSERT_TRUE(same(got, want)) << "run_length_encode, unique";
  std::vector<std::int32_t> want_counts(x.size(), -1);
  for (std::size_t r = 0; r < lengths.size(); ++r) want_counts[r] = static_cast<std::int32_t>(lengths[r]);
  ASSERT_TRUE(same(counts, want_counts)) << "run_length_encode, counts";
}

// non_trivial_runs, against the lengths the input was made of.
template <class T>
void check_non_trivial(const std::vector<i64>& lengths, std::uint64_t salt) {
  const auto x = run_values<T>(lengths, salt);
  SCOPED_TRACE(::testing::Message() << "n = " << x.size() << ", runs = " << lengths.size());
  std::vector<i64> want_offsets(x.size(), -1);
  std::vector<std::int32_t> want_lengths(x.size(), -1);
  i64 at = 0, m = 0;
  for (i64 len : lengths) {
    if (len > 1) {
      want_offsets[static_cast<std::size_t>(m)] = at;
      want_lengths[static_cast<std::size_t>(m)] = static_cast<std::int32_t>(len);
      ++m;
    }
    at += len;
  }
  std::vector<i64> offsets(x.size(), -1);
  std::vector<std::int32_t> lens(x.size(), -1);
  const auto [o_end, l_end] = cpu::non_trivial_runs(x.begin(), x.end(), offsets.begin(), lens.begin());
  EXPECT_EQ(o_end - offsets.begin(), m);
  EXPECT_EQ(l_end - lens.begin(), m);
  ASSERT_TRUE(same(offsets, want_offsets)) << "offsets";
  ASSERT_TRUE(same(lens, want_lengths)) << "lengths";
  std::vector<i64> ref_offsets(x.size(), -1);
  std::vector<std::int32_t> ref_lengths(x.size(), -1);
  seq::non_trivial_runs(x.begin(), x.end(), ref_offsets.begin(), ref_lengths.begin());
  ASSERT_TRUE(same(ref_offsets, want_offsets)) << "reference offsets";
  ASSERT_TRUE(same(ref_lengths, want_lengths)) << "reference lengths";
}

template <class T, class Check>
void for_all_run_layouts(Check check) {
  std::uint64_t salt = 0;
  for (i64 n : run_sizes<T>()) {
    for (i64 kind : run_kinds(n, chunk<T>())) {
      ++salt;
      check(run_lengths(n, kind, salt), salt);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(CpuSelectRuns, Int8) {
  for_all_run_layouts<std::int8_t>([](const auto& l, auto s) { check_unique_rle<std::int8_t, false>(l, s); });
}
TEST(CpuSelectRuns, Int32) {
  for_all_run_layouts<std::int32_t>([](const auto& l, auto s) {
    check_unique_rle<std::int32_t, true>(l, s);
    check_non_trivial<std::int32_t>(l, s);
  });
  if (!tally::test::quick()) {
    for (i64 kind : {i64{1}, i64{3}, i64{2}}) check_unique_rle<std::int32_t, true>(run_lengths(3'000'017, kind, 9), 9);
  }
}
TEST(CpuSelectRuns, Float) {
  for_all_run_layouts<float>([](const auto& l, auto s) { check_unique_rle<float, false>(l, s); });
}
TEST(CpuSelectRuns, Double) {
  for_all_run_layouts<double>([](const auto& l, auto s) { check_non_trivial<double>(l, s); });
}
TEST(CpuSelectRuns, Record16) {
  for_all_run_layouts<rec>([](const auto& l, auto s) { check_unique_rle<rec, true>(l, s); });
}

// ---- by key -------------------------------------------------------------------------------

// A poison outside random_input's values (integers there lie in [-100, 100]).
template <class V>
V value_poison() {
  if constexpr (std::is_integral_v<V>) {
    return std::numeric_limits<V>::min();
  } else {
    return tally::test::poison<V>();
  }
}

// Keys equal within a group of 4 (key / 4): consecutive keys of one run differ under ==,
// so the comparison given must be the one used, and the first key of each run is the
// one kept.
struct same_group {
  bool operator()(i64 a, i64 b) const { return a / 4 == b / 4; }
};

// Keys per run: run r gets group r (times 4) plus noise in [0, 4) per element.
std::vector<i64> group_keys(const std::vector<i64>& lengths, std::uint64_t salt) {
  std::mt19937_64 rng(tally::test::seed() * 3 + salt);
  std::vector<i64> keys;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    for (i64 j = 0; j < lengths[r]; ++j) keys.push_back(static_cast<i64>(r) * 4 + static_cast<i64>(rng() % 4));
  }
  return keys;
}

// reduce_by_key (and unique_by_key) against the reference: K keys from run_values (or
// grouped keys under same_group), V values from random_input, the results as the
// accumulator type.
template <class K, class V, bool Unique, class Op, class Equal = std::equal_to<>>
void check_by_key(const std::vector<i64>& lengths, std::uint64_t salt, Op op, Equal equal = {}) {
  using Acc = tally::inclusive_accumulator_t<Op, V>;
  std::vector<K> keys;
  if constexpr (std::is_same_v<Equal, same_group>) {
    keys = group_keys(lengths, salt);
  } else {
    keys = run_values<K>(lengths, salt);
  }
  const auto v = tally::test::random_input<V>(keys.size(), salt);
  const i64 n = static_cast<i64>(keys.size()), runs = static_cast<i64>(lengths.size());
  SCOPED_TRACE(::testing::Message() << "n = " << n << ", runs = " << runs);
  const K key_poison = std::is_same_v<Equal, same_group> ? K(-1) : poison_value<K>();
  std::vector<K> want_keys(keys.size(), key_poison), got_keys = want_keys;
  std::vector<Acc> want(keys.size(), value_poison<Acc>()), got = want;
  const auto [wk, wv] = seq::reduce_by_key(keys.begin(), keys.end(), v.begin(), want_keys.begin(),
                                           want.begin(), op, equal);
  ASSERT_EQ(wk - want_keys.begin(), runs);
  ASSERT_EQ(wv - want.begin(), runs);
  const auto [gk, gv] = cpu::reduce_by_key(keys.data(), keys.data() + n, v.data(), got_keys.data(),
                                           got.data(), op, equal);
  EXPECT_EQ(gk, got_keys.data() + runs);
  EXPECT_EQ(gv, got.data() + runs);
  ASSERT_TRUE(same(got_keys, want_keys)) << "reduce_by_key, keys";
  if constexpr (std::is_floating_point_v<Acc>) {
    // Rounded differently from the sequential fold: each run against its double sum.
    i64 at = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      double exact = 0, magnitude = 0;
      for (i64 j = at; j < at + lengths[r]; ++j) {
        exact += static_cast<double>(v[static_cast<std::size_t>(j)]);
        magnitude += std::abs(static_cast<double>(v[static_cast<std::size_t>(j)]));
      }
      at += lengths[r];
      const double tol = std::numeric_limits<Acc>::epsilon() *
                         (16.0 + 4.0 * std::sqrt(static_cast<double>(lengths[r]))) * (magnitude + 1.0);
      ASSERT_NEAR(static_cast<double>(got[r]), exact, tol) << "run " << r << " of length " << lengths[r];
    }
    for (std::size_t r = lengths.size(); r < got.size(); ++r) ASSERT_TRUE(std::isnan(got[r])) << r;
  } else {
    ASSERT_TRUE(same(got, want)) << "reduce_by_key, values";
  }
  if constexpr (!Unique) return;
  // unique_by_key: the first key of each run and its value.
  std::vector<V> want_values(keys.size(), value_poison<V>()), got_values = want_values;
  std::fill(want_keys.begin(), want_keys.end(), key_poison);
  std::fill(got_keys.begin(), got_keys.end(), key_poison);
  seq::unique_by_key(keys.begin(), keys.end(), v.begin(), want_keys.begin(), want_values.begin(), equal);
  const auto [uk, uv] = cpu::unique_by_key(keys.begin(), keys.end(), v.begin(), got_keys.begin(),
                                           got_values.begin(), equal);
  EXPECT_EQ(uk - got_keys.begin(), runs);
  EXPECT_EQ(uv - got_values.begin(), runs);
  ASSERT_TRUE(same(got_keys, want_keys)) << "unique_by_key, keys";
  ASSERT_TRUE(same(got_values, want_values)) << "unique_by_key, values";
}

template <class K, class V, bool Unique, class Op, class Equal = std::equal_to<>>
void check_all_by_key(Op op, Equal equal = {}) {
  // Chunks count the bytes of a key and a value.
  const i64 t = static_cast<i64>(cpu::cpu_tuning::parallel_min_bytes / (sizeof(K) + sizeof(V)));
  const i64 c = static_cast<i64>(cpu::cpu_tuning::tile_bytes / (sizeof(K) + sizeof(V)));
  std::uint64_t salt = 300;
  for (i64 n : {i64{0}, i64{1}, i64{2}, i64{3}, i64{33}, i64{1001}, t - 1, t + 1, 6 * c + 1, 8 * t + 13}) {
    for (i64 kind : run_kinds(n, c)) {
      ++salt;
      check_by_key<K, V, Unique>(run_lengths(n, kind, salt), salt, op, equal);
      if (::testing::Test::HasFailure()) return;
    }
  }
  // Runs of 2^20 (and random ones, and 1, 2, 4, ..., 2^19).
  for (i64 kind : {i64{1}, i64{3}, i64{1} << 20}) {
    ++salt;
    check_by_key<K, V, Unique>(run_lengths((i64{1} << 20) + 4099, kind, salt), salt, op, equal);
    if (::testing::Test::HasFailure()) return;
  }
}

// reduce_by_key on each; unique_by_key on the first and the third.
TEST(CpuSelectByKey, Int32KeysInt64Plus) { check_all_by_key<std::int32_t, i64, true>(tally::plus{}); }
// int8 values accumulate in int: runs of 2^20 values of up to 100 do not wrap.
TEST(CpuSelectByKey, Int64KeysInt8PlusInInt) { check_all_by_key<i64, std::int8_t, false>(tally::plus{}); }
TEST(CpuSelectByKey, GroupedKeysAffineCompose) {
  check_all_by_key<i64, affine, true>(compose{}, same_group{});
}
TEST(CpuSelectByKey, DoubleKeysMat2Product) { check_all_by_key<double, mat2, false>(mat2_product{}); }
TEST(CpuSelectByKey, Int8KeysFloatPlus) { check_all_by_key<std::int8_t, float, false>(tally::plus{}); }

// ---- thread counts ------------------------------------------------------------------------

// One thread, two, and more threads than cores (where the in-place compaction's waits
// meet descheduled threads).
TEST(CpuSelect, ThreadCounts) {
  for (int threads : {1, 2, 16}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    tbb::task_arena(threads).execute([&] {
      for (double p : {0.1, 0.5, 1.0}) check_selection_in_place<std::int32_t>(6 * threshold<std::int32_t>() + 3, p, 40);
      for (i64 kind : {i64{0}, i64{1}, i64{3}}) {
        check_unique_rle<rec, true>(run_lengths(3 * threshold<rec>() + 1, kind, 41), 41);
        check_by_key<i64, affine, true>(run_lengths(i64{1} << 19, kind, 42), 42, compose{}, same_group{});
      }
    });
    if (::testing::Test::HasFailure()) return;
  }
}

// ---- iterator kinds -----------------------------------------------------------------------

struct times_three {
  i64 operator()(i64 x) const { return 3 * x + 1; }
};
struct third {
  i64 operator()(i64 x) const { return x / 3; }
};

// A transform iterator (values, not references) takes the parallel path.
TEST(CpuSelect, TransformIterator) {
  const i64 n = 4 * threshold<i64>() + 9;
  std::vector<i64> base(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) base[static_cast<std::size_t>(i)] = i;
  const auto mapped = tally::make_transform_iterator(static_cast<const i64*>(base.data()), times_three{});
  std::vector<i64> materialised(base.size());
  for (std::size_t i = 0; i < base.size(); ++i) materialised[i] = times_three{}(base[i]);
  const auto pred = [](i64 x) { return x % 7 == 2; };
  std::vector<i64> want(base.size(), -1), got(base.size(), -1);
  const auto wend = seq::copy_if(materialised.begin(), materialised.end(), want.begin(), pred);
  EXPECT_EQ(cpu::copy_if(mapped, mapped + n, got.begin(), pred) - got.begin(), wend - want.begin());
  EXPECT_TRUE(same(got, want));
  EXPECT_EQ(cpu::count_if(mapped, mapped + n, pred), wend - want.begin());
  // Keys through a transform: i / 3 makes runs of 3; reduce the transformed values by them.
  const auto keys = tally::make_transform_iterator(static_cast<const i64*>(base.data()), third{});
  std::vector<i64> got_keys(base.size(), -1), sums(base.size(), -1);
  const auto [kend, vend] = cpu::reduce_by_key(keys, keys + n, mapped, got_keys.begin(), sums.begin());
  const i64 runs = (n + 2) / 3;
  ASSERT_EQ(kend - got_keys.begin(), runs);
  ASSERT_EQ(vend - sums.begin(), runs);
  for (i64 r = 0; r < runs; ++r) {
    i64 sum = 0;
    for (i64 i = 3 * r; i < std::min(n, 3 * r + 3); ++i) sum += times_three{}(i);
    ASSERT_EQ(got_keys[static_cast<std::size_t>(r)], r);
    ASSERT_EQ(sums[static_cast<std::size_t>(r)], sum) << "run " << r;
  }
  // unique of the transformed keys, and a three-way partition of a transform.
  std::vector<i64> u(base.size(), -1);
  ASSERT_EQ(cpu::unique(keys, keys + n, u.begin()) - u.begin(), runs);
  for (i64 r = 0; r < runs; ++r) ASSERT_EQ(u[static_cast<std::size_t>(r)], r);
}

// Single-pass input iterators (std::istream_iterator), a list, and back_inserter outputs
// run the sequential path through the same calls.
TEST(CpuSelect, InputIteratorsAndOutputIterators) {
  const std::string text = "1 3 2 4 8 6 5 4 9 7 3";
  using in = std::istream_iterator<int>;
  {
    std::istringstream s(text);
    std::vector<int> out;
    cpu::copy_if(in(s), in(), std::back_inserter(out), odd);
    EXPECT_EQ(out, (std::vector<int>{1, 3, 5, 9, 7, 3}));
  }
  {
    std::istringstream s(text);
    std::vector<int> out(11, -1);
    EXPECT_EQ(cpu::partition(in(s), in(), out.begin(), odd) - out.begin(), 6);
    EXPECT_EQ(out, (std::vector<int>{1, 3, 5, 9, 7, 3, 2, 4, 8, 6, 4}));
  }
  {
    std::istringstream s(text);
    EXPECT_EQ(cpu::count_if(in(s), in(), odd), 6);
  }
  {
    std::istringstream s("1 1 2 2 2 3 1 1 4"), t("10 11 12 13 14 15 16 17 18");
    std::vector<int> k, v;
    cpu::reduce_by_key(in(s), in(), in(t), std::back_inserter(k), std::back_inserter(v));
    EXPECT_EQ(k, (std::vector<int>{1, 2, 3, 1, 4}));
    EXPECT_EQ(v, (std::vector<int>{21, 39, 15, 33, 18}));
  }
  {
    std::istringstream s("1 1 2 2 2 3 1 1 4");
    std::vector<int> u;
    std::vector<i64> c;
    cpu::run_length_encode(in(s), in(), std::back_inserter(u), std::back_inserter(c));
    EXPECT_EQ(u, (std::vector<int>{1, 2, 3, 1, 4}));
    EXPECT_EQ(c, (std::vector<i64>{2, 3, 1, 2, 1}));
  }
  const std::list<int> l(A.begin(), A.end());
  std::vector<int> out;
  cpu::remove_if(l.begin(), l.end(), std::back_inserter(out), odd);
  EXPECT_EQ(out, (std::vector<int>{2, 4, 8, 6, 4}));
  // A random-access input large enough for the parallel path, into a back_inserter.
  const auto x = values<std::int32_t>(static_cast<std::size_t>(2 * threshold<std::int32_t>()), 3);
  std::vector<std::int32_t> got, want;
  cpu::copy_if(x.begin(), x.end(), std::back_inserter(got), below{0.4});
  seq::copy_if(x.begin(), x.end(), std::back_inserter(want), below{0.4});
  EXPECT_EQ(got, want);
}

// ---- bad arguments ------------------------------------------------------------------------

void expect_invalid(const std::string& message, const char* function, const char* argument) {
  EXPECT_NE(message.find(std::string("tally::") + function + ":"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("'") + argument + "'"), std::string::npos) << message;
}

TEST(CpuSelect, BadArguments) {
  using tally::test::invalid_argument_message;
  std::vector<int> v(10, 1), out(10);
  int* null = nullptr;
  const int* cnull = nullptr;
  const std::uint8_t* no_flags = nullptr;
  const int* b = v.data();
  const int* e = v.data() + 10;
  auto is_one = [](int x) { return x == 1; };
  expect_invalid(invalid_argument_message([&] { cpu::copy_if(e, b, out.data(), is_one); }), "cpu::copy_if", "last");
  expect_invalid(invalid_argument_message([&] { cpu::copy_if(b, e, null, is_one); }), "cpu::copy_if", "d_first");
  expect_invalid(invalid_argument_message([&] { cpu::copy_if(cnull, e, out.data(), is_one); }), "cpu::copy_if", "first");
  expect_invalid(invalid_argument_message([&] { cpu::copy_if(b, cnull, out.data(), is_one); }), "cpu::copy_if", "last");
  expect_invalid(invalid_argument_message([&] { cpu::copy_if(b, e, cnull, out.data(), is_one); }),
                 "cpu::copy_if", "stencil_first");
  expect_invalid(invalid_argument_message([&] { cpu::copy_flagged(b, e, no_flags, out.data()); }),
                 "cpu::copy_flagged", "flags_first");
  expect_invalid(invalid_argument_message([&] { cpu::remove_if(e, b, out.data(), is_one); }), "cpu::remove_if", "last");
  expect_invalid(invalid_argument_message([&] { cpu::count_if(e, b, is_one); }), "cpu::count_if", "last");
  expect_invalid(invalid_argument_message([&] { cpu::partition(b, e, null, is_one); }), "cpu::partition", "d_first");
  expect_invalid(invalid_argument_message([&] {
                   cpu::partition_three_way(b, e, out.data(), null, out.data(), is_one, is_one);
                 }),
                 "cpu::partition_three_way", "second_out");
  expect_invalid(invalid_argument_message([&] { cpu::unique(b, e, null); }), "cpu::unique", "d_first");
  expect_invalid(invalid_argument_message([&] { cpu::unique_by_key(e, b, b, out.data(), out.data()); }),
                 "cpu::unique_by_key", "keys_last");
  expect_invalid(invalid_argument_message([&] { cpu::unique_by_key(b, e, cnull, out.data(), out.data()); }),
                 "cpu::unique_by_key", "values_first");
  expect_invalid(invalid_argument_message([&] { cpu::run_length_encode(b, e, out.data(), null); }),
                 "cpu::run_length_encode", "counts_out");
  expect_invalid(invalid_argument_message([&] { cpu::non_trivial_runs(b, e, out.data(), null); }),
                 "cpu::non_trivial_runs", "lengths_out");
  expect_invalid(invalid_argument_message([&] { cpu::reduce_by_key(b, e, b, out.data(), null); }),
                 "cpu::reduce_by_key", "values_out");
  expect_invalid(invalid_argument_message([&] { cpu::reduce_by_key(b, e, b, null, out.data()); }),
                 "cpu::reduce_by_key", "keys_out");
  // Iterators other than pointers: last before first.
  expect_invalid(invalid_argument_message([&] { cpu::unique(v.end(), v.begin(), out.begin()); }), "cpu::unique", "last");
  // Empty ranges with null pointers are fine and write nothing.
  EXPECT_EQ(cpu::copy_if(cnull, cnull, null, is_one), null);
  EXPECT_EQ(cpu::count_if(cnull, cnull, is_one), 0);
  EXPECT_EQ(cpu::partition_three_way(cnull, cnull, null, null, null, is_one, is_one), tally::three_way_result{});
  const auto [k, r] = cpu::reduce_by_key(cnull, cnull, cnull, null, null);
  EXPECT_EQ(k, null);
  EXPECT_EQ(r, null);
}

}  // namespace
