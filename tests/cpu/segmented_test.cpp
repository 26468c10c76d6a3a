// tally::cpu segmented scans (flags, offsets, keys), segmented reduce and batched scans:
// the sequential references against naive loops written here, and the parallel versions
// against the sequential references.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <list>
#include <random>
#include <span>
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
using i64 = std::int64_t;

bool quick() { return tally::test::quick(); }

// ---- segment layouts ----------------------------------------------------------------------

// Random lengths summing to n: mostly 0..3 (0 and 1 frequent), some up to 100, a few up to
// 5000, and one huge segment of about n/2 at a random place.
std::vector<i64> random_lengths(i64 n, std::uint64_t salt) {
  std::mt19937_64 rng(tally::test::seed() * 31 + salt + static_cast<std::uint64_t>(n));
  std::vector<i64> lengths;
  const i64 huge = n / 2;
  i64 rest = n - huge;
  std::uniform_int_distribution<int> kind(0, 99);
  while (rest > 0) {
    const int k = kind(rng);
    i64 len = k < 70 ? std::uniform_int_distribution<i64>(0, 3)(rng)
              : k < 95 ? std::uniform_int_distribution<i64>(0, 100)(rng)
                       : std::uniform_int_distribution<i64>(0, 5000)(rng);
    len = std::min(len, rest);
    lengths.push_back(len);
    rest -= len;
  }
  if (huge > 0 || lengths.empty()) {
    const auto at = std::uniform_int_distribution<std::size_t>(0, lengths.size())(rng);
    lengths.insert(lengths.begin() + static_cast<std::ptrdiff_t>(at), huge);
  }
  // Empty segments first and last too.
  lengths.insert(lengths.begin(), 0);
  lengths.push_back(0);
  return lengths;
}

// Segments of one length (the last one shorter).
std::vector<i64> uniform_lengths(i64 n, i64 len) {
  std::vector<i64> lengths(static_cast<std::size_t>(n / len), len);
  if (n % len != 0 || n == 0) lengths.push_back(n % len);
  return lengths;
}

struct layout {
  std::vector<i64> offsets;         // CSR, offsets[0] = `before`
  std::vector<std::uint8_t> flags;  // one per element of [0, n)
  std::vector<i64> keys;            // one per element; equal under `same_group` per segment
};

// Keys are segment * 4 + noise in [0, 4): consecutive elements of one segment have
// different keys under ==, equal ones under same_group (so the custom equality must be
// used). Adjacent non-empty segments get different groups.
struct same_group {
  bool operator()(i64 a, i64 b) const { return a / 4 == b / 4; }
};

layout make_layout(const std::vector<i64>& lengths, i64 before, std::uint64_t salt) {
  std::mt19937_64 rng(tally::test::seed() + salt);
  layout l;
  l.offsets.push_back(before);
  for (i64 len : lengths) l.offsets.push_back(l.offsets.back() + len);
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    for (i64 j = 0; j < lengths[s]; ++j) {
      // A head flag is any non-zero byte; non-heads 0.
      l.flags.push_back(j == 0 ? static_cast<std::uint8_t>(1 + rng() % 255) : 0);
      l.keys.push_back(static_cast<i64>(s) * 4 + static_cast<i64>(rng() % 4));
    }
  }
  if (!l.flags.empty()) l.flags[0] = 0;  // never read: the first element always starts one
  return l;
}

// ---- naive references (loops written here, independent of the library) ------------------

template <class Acc, class T, class Op>
std::vector<Acc> naive_segmented(const std::vector<T>& x, const std::vector<i64>& lengths,
                                 Op op, const Acc* init) {
  std::vector<Acc> out;
  std::size_t i = 0;
  for (i64 len : lengths) {
    for (i64 j = 0; j < len; ++j, ++i) {
      if (init) {
        Acc acc = *init;
        for (i64 m = 0; m < j; ++m) acc = op(acc, x[i - static_cast<std::size_t>(j - m)]);
        out.push_back(acc);
      } else {
        Acc acc = static_cast<Acc>(x[i - static_cast<std::size_t>(j)]);
        for (i64 m = 1; m <= j; ++m) acc = op(acc, x[i - static_cast<std::size_t>(j - m)]);
        out.push_back(acc);
      }
    }
  }
  return out;
}

// ---- the references against the naive loops -------------------------------------------------

TEST(CpuSegmentedReference, MatchesNaiveLoops) {
  for (i64 n : {i64{0}, i64{1}, i64{2}, i64{17}, i64{300}, i64{2000}}) {
    for (int layout_kind = 0; layout_kind < 3; ++layout_kind) {
      SCOPED_TRACE(::testing::Message() << "n = " << n << ", layout " << layout_kind);
      const auto lengths = layout_kind == 0   ? random_lengths(n, 1)
                           : layout_kind == 1 ? uniform_lengths(n, 1)
                                              : uniform_lengths(n, 7);
      const layout l = make_layout(lengths, 0, 2);
      const auto x = tally::test::random_input<affine>(static_cast<std::size_t>(n), 3);
      const affine init{5, 9};
      const auto want_inc = naive_segmented<affine>(x, lengths, compose{}, nullptr);
      const auto want_exc = naive_segmented<affine>(x, lengths, compose{}, &init);
      namespace seq = tally::cpu::sequential;
      std::vector<affine> got(x.size());
      seq::inclusive_scan_by_flags(x.begin(), x.end(), l.flags.begin(), got.begin(), compose{});
      EXPECT_EQ(got, want_inc) << "inclusive by flags";
      seq::exclusive_scan_by_flags(x.begin(), x.end(), l.flags.begin(), got.begin(), init, compose{});
      EXPECT_EQ(got, want_exc) << "exclusive by flags";
      EXPECT_EQ(seq::inclusive_segmented_scan(x.begin(), l.offsets.begin(), l.offsets.end(),
                                              got.begin(), compose{}),
                got.end());
      EXPECT_EQ(got, want_inc) << "inclusive by offsets";
      seq::exclusive_segmented_scan(x.begin(), l.offsets.begin(), l.offsets.end(), got.begin(),
                                    init, compose{});
      EXPECT_EQ(got, want_exc) << "exclusive by offsets";
      seq::inclusive_scan_by_key(l.keys.begin(), l.keys.end(), x.begin(), got.begin(), compose{},
                                 same_group{});
      EXPECT_EQ(got, want_inc) << "inclusive by key";
      seq::exclusive_scan_by_key(l.keys.begin(), l.keys.end(), x.begin(), got.begin(), init,
                                 compose{}, same_group{});
      EXPECT_EQ(got, want_exc) << "exclusive by key";
      // In place.
      got = x;
      seq::inclusive_scan_by_flags(got.begin(), got.end(), l.flags.begin(), got.begin(), compose{});
      EXPECT_EQ(got, want_inc) << "inclusive by flags, in place";
      // Segmented reduce: the last exclusive... recomputed naively per segment.
      std::vector<affine> sums(lengths.size(), tally::test::poison<affine>());
      std::vector<affine> want_sums;
      std::size_t i = 0;
      for (i64 len : lengths) {
        affine acc = init;
        for (i64 j = 0; j < len; ++j) acc = compose{}(acc, x[i++]);
        want_sums.push_back(acc);
      }
      EXPECT_EQ(seq::segmented_reduce(x.begin(), l.offsets.begin(), l.offsets.end(), sums.begin(),
                                      init, compose{}),
                sums.end());
      EXPECT_EQ(sums, want_sums) << "segmented reduce";
    }
  }
  // Default equality splits at every key change; input iterators of another kind (a list).
  const std::vector<int> keys = {1, 1, 2, 2, 2, 1, 3};
  const std::list<int> values = {1, 2, 3, 4, 5, 6, 7};
  std::vector<int> out(7);
  tally::cpu::sequential::inclusive_scan_by_key(keys.begin(), keys.end(), values.begin(), out.begin());
  EXPECT_EQ(out, (std::vector<int>{1, 3, 3, 7, 12, 6, 7}));
  tally::cpu::sequential::exclusive_scan_by_key(keys.begin(), keys.end(), values.begin(), out.begin(), 10);
  EXPECT_EQ(out, (std::vector<int>{10, 11, 10, 13, 17, 10, 10}));
}

// Offsets outside [offsets[0], offsets[S]) are untouched; a lone offset is zero segments.
TEST(CpuSegmentedReference, OffsetsLeaveTheRestAlone) {
  const std::vector<int> x = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int> offsets = {2, 2, 5, 6};
  std::vector<int> out(8, -1);
  EXPECT_EQ(tally::cpu::sequential::inclusive_segmented_scan(x.begin(), offsets.begin(),
                                                             offsets.end(), out.begin()),
            out.begin() + 6);
  EXPECT_EQ(out, (std::vector<int>{-1, -1, 3, 7, 12, 6, -1, -1}));
  std::vector<int> sums(3, -1);
  tally::cpu::sequential::segmented_reduce(x.begin(), offsets.begin(), offsets.end(), sums.begin(), 100);
  EXPECT_EQ(sums, (std::vector<int>{100, 112, 106}));
}

// ---- parallel against the sequential reference --------------------------------------------

enum class way { flags, offsets, keys };
const char* name(way w) {
  switch (w) {
    case way::flags: return "flags";
    case way::offsets: return "offsets";
    case way::keys: return "keys";
  }
  return "?";
}

// The double-precision segmented sums of x (and sums of |x|) for float tolerances.
template <class T>
void exact_segmented_sums(const std::vector<T>& x, const std::vector<i64>& lengths, i64 before,
                          const double* init, std::vector<double>& exact,
                          std::vector<double>& magnitude) {
  exact.assign(x.size(), 0.0);
  magnitude.assign(x.size(), 0.0);
  std::size_t i = static_cast<std::size_t>(before);
  for (i64 len : lengths) {
    double s = init ? *init : 0.0, m = init ? std::abs(*init) : 0.0;
    for (i64 j = 0; j < len; ++j, ++i) {
      if (init) {
        exact[i] = s;
        magnitude[i] = m;
      }
      s += static_cast<double>(x[i]);
      m += std::abs(static_cast<double>(x[i]));
      if (!init) {
        exact[i] = s;
        magnitude[i] = m;
      }
    }
  }
}

// Runs every way x inclusive/exclusive x in place/out of place on one layout, against the
// sequential offsets reference.
template <class T, class Op, class Init>
void check_layout(const std::vector<i64>& lengths, Op op, Init init, std::uint64_t salt) {
  using IncAcc = tally::inclusive_accumulator_t<Op, T>;
  using ExcAcc = tally::exclusive_accumulator_t<Op, Init, T>;
  static_assert(std::is_same_v<IncAcc, T> && std::is_same_v<ExcAcc, T>,
                "the test writes results into T arrays");
  i64 n = 0;
  for (i64 len : lengths) n += len;
  // Elements before and after the segments (offsets only) must stay untouched.
  const i64 before = 3, after = 5;
  const layout l = make_layout(lengths, before, salt);
  const std::size_t total = static_cast<std::size_t>(before + n + after);
  const std::vector<T> x = tally::test::random_input<T>(total, salt);
  const std::vector<T> xs(x.begin() + before, x.begin() + before + n);  // the segmented part

  for (bool exclusive : {false, true}) {
    std::vector<T> want(total, tally::test::poison<T>());
    if (exclusive) {
      tally::cpu::sequential::exclusive_segmented_scan(x.begin(), l.offsets.begin(), l.offsets.end(),
                                                       want.begin(), init, op);
    } else {
      tally::cpu::sequential::inclusive_segmented_scan(x.begin(), l.offsets.begin(), l.offsets.end(),
                                                       want.begin(), op);
    }
    std::vector<double> exact, magnitude;
    if constexpr (std::is_floating_point_v<T>) {
      const double init_d = static_cast<double>(init);
      exact_segmented_sums(x, lengths, before, exclusive ? &init_d : nullptr, exact, magnitude);
    }
    auto compare = [&](const std::vector<T>& got, const std::vector<T>& expect, i64 offset) {
      if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, tally::plus>) {
        std::vector<double> e(exact.begin() + offset, exact.begin() + offset + static_cast<i64>(got.size()));
        std::vector<double> m(magnitude.begin() + offset,
                              magnitude.begin() + offset + static_cast<i64>(got.size()));
        return tally::test::matches(got, expect, &e, &m);
      } else {
        return tally::test::matches(got, expect);
      }
    };
    const std::vector<T> want_s(want.begin() + before, want.begin() + before + n);

    for (way w : {way::flags, way::offsets, way::keys}) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(::testing::Message() << name(w) << (exclusive ? ", exclusive" : ", inclusive")
                                          << (in_place ? ", in place" : "") << ", n = " << n
                                          << ", segments = " << lengths.size());
        if (w == way::offsets) {
          std::vector<T> got = in_place ? x : std::vector<T>(total, tally::test::poison<T>());
          typename std::vector<T>::iterator end;
          if (in_place) {
            end = exclusive ? tally::cpu::exclusive_segmented_scan(got.begin(), l.offsets.begin(),
                                                                   l.offsets.end(), got.begin(), init, op)
                            : tally::cpu::inclusive_segmented_scan(got.begin(), l.offsets.begin(),
                                                                   l.offsets.end(), got.begin(), op);
          } else {
            end = exclusive ? tally::cpu::exclusive_segmented_scan(x.begin(), l.offsets.begin(),
                                                                   l.offsets.end(), got.begin(), init, op)
                            : tally::cpu::inclusive_segmented_scan(x.begin(), l.offsets.begin(),
                                                                   l.offsets.end(), got.begin(), op);
          }
          EXPECT_EQ(end - got.begin(), before + n);
          // Untouched outside the segments: the input in place, the poison otherwise.
          for (i64 i = 0; i < static_cast<i64>(total); ++i) {
            if (i >= before && i < before + n) continue;
            const T expect = in_place ? x[static_cast<std::size_t>(i)] : tally::test::poison<T>();
            if constexpr (std::is_floating_point_v<T>) {
              ASSERT_TRUE(std::memcmp(&got[static_cast<std::size_t>(i)], &expect, sizeof(T)) == 0)
                  << "element " << i << " outside the segments was written";
            } else {
              ASSERT_TRUE(got[static_cast<std::size_t>(i)] == expect)
                  << "element " << i << " outside the segments was written";
            }
          }
          const std::vector<T> got_s(got.begin() + before, got.begin() + before + n);
          ASSERT_TRUE(compare(got_s, want_s, before));
        } else {
          std::vector<T> got = in_place ? xs : std::vector<T>(static_cast<std::size_t>(n), tally::test::poison<T>());
          const T* src = in_place ? got.data() : xs.data();
          T* end = nullptr;
          if (w == way::flags) {
            end = exclusive ? tally::cpu::exclusive_scan_by_flags(src, src + n, l.flags.data(), got.data(), init, op)
                            : tally::cpu::inclusive_scan_by_flags(src, src + n, l.flags.data(), got.data(), op);
          } else {
            end = exclusive ? tally::cpu::exclusive_scan_by_key(l.keys.data(), l.keys.data() + n, src,
                                                                got.data(), init, op, same_group{})
                            : tally::cpu::inclusive_scan_by_key(l.keys.data(), l.keys.data() + n, src,
                                                                got.data(), op, same_group{});
          }
          EXPECT_EQ(end, got.data() + n);
          ASSERT_TRUE(compare(got, want_s, before));
        }
      }
    }
  }
}

template <class T, class Op, class Init>
void check_all_layouts(i64 max_n, Op op, Init init) {
  std::vector<i64> sizes = {0, 1, 2, 33, 1000, (i64{1} << 17) + 3, max_n};
  std::uint64_t salt = 0;
  for (i64 n : sizes) {
    if (n > max_n) continue;
    ++salt;
    check_layout<T>(random_lengths(n, salt), op, init, salt);
    if (::testing::Test::HasFailure()) return;
    for (i64 len : {i64{1}, i64{4}, i64{32}, i64{1024}, i64{1} << 16, n}) {
      if (len == 0 || len > std::max<i64>(n, 1)) continue;
      check_layout<T>(uniform_lengths(n, len), op, init, ++salt);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

i64 big() { return quick() ? i64{1} << 18 : (i64{1} << 22) + 11; }
i64 medium() { return quick() ? i64{1} << 17 : (i64{1} << 20) + 5; }

TEST(CpuSegmented, Int32Plus) { check_all_layouts<std::int32_t>(big(), tally::plus{}, 17); }
TEST(CpuSegmented, Int64Maximum) { check_all_layouts<i64>(medium(), tally::maximum{}, i64{-50}); }
TEST(CpuSegmented, Uint32BitXor) { check_all_layouts<std::uint32_t>(medium(), tally::bit_xor{}, 0xF0u); }
TEST(CpuSegmented, FloatPlus) { check_all_layouts<float>(medium(), tally::plus{}, 1.5f); }
TEST(CpuSegmented, DoubleMinimum) { check_all_layouts<double>(medium(), tally::minimum{}, 0.75); }
TEST(CpuSegmented, AffineCompose) { check_all_layouts<affine>(medium(), compose{}, affine{3, 4}); }
TEST(CpuSegmented, Mat2Product) {
  check_all_layouts<mat2>(quick() ? i64{1} << 15 : i64{1} << 18, mat2_product{}, mat2{{1, 2, 0, 1}});
}

// 1 thread, 2, and more threads than cores (waiting tiles compute their predecessors'
// prefixes, except in place), for the vectorised and the generic path.
TEST(CpuSegmented, ThreadCounts) {
  const i64 n = quick() ? i64{1} << 18 : (i64{1} << 21) + 9;
  for (int threads : {1, 2, 16}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    tbb::task_arena(threads).execute([&] {
      check_layout<std::int32_t>(random_lengths(n, 40), tally::plus{}, 3, 41);
      check_layout<std::int32_t>(uniform_lengths(n, 5), tally::plus{}, 3, 42);
      check_layout<affine>(random_lengths(n / 2, 43), compose{}, affine{7, 1}, 44);
    });
    if (::testing::Test::HasFailure()) return;
  }
}

// Float results depend on the tile size (and, for outputs of cpu_tuning::stream_min_bytes
// or more, on the output's alignment, which decides where the non-temporal kernel's
// aligned vectors begin): the same bits for any thread count into the same buffer.
TEST(CpuSegmented, FloatBitsIndependentOfThreadCount) {
  const i64 n = quick() ? i64{1} << 18 : (i64{1} << 22) + 3;
  const auto lengths = random_lengths(n, 50);
  const layout l = make_layout(lengths, 0, 51);
  const auto x = tally::test::random_input<float>(static_cast<std::size_t>(n), 52);
  std::vector<float> many(x.size(), tally::test::poison<float>());
  tbb::task_arena(1).execute([&] {
    tally::cpu::inclusive_scan_by_flags(x.begin(), x.end(), l.flags.begin(), many.begin());
  });
  const std::vector<float> one = many;
  for (int threads : {2, 16}) {
    std::fill(many.begin(), many.end(), tally::test::poison<float>());
    tbb::task_arena(threads).execute([&] {
      tally::cpu::inclusive_scan_by_flags(x.begin(), x.end(), l.flags.begin(), many.begin());
    });
    std::size_t first_difference = x.size();
    for (std::size_t i = 0; i < x.size() && first_difference == x.size(); ++i) {
      if (std::memcmp(&one[i], &many[i], sizeof(float)) != 0) first_difference = i;
    }
    ASSERT_EQ(first_difference, x.size())
        << threads << " threads: " << one[first_difference] << " != " << many[first_difference];
  }
}

// Other iterator kinds: a std::list runs the sequential path; vector<bool> flags and
// std::vector iterators the parallel one.
TEST(CpuSegmented, IteratorKinds) {
  const std::list<int> values = {1, 2, 3, 4, 5, 6};
  const std::vector<bool> flags = {false, false, true, false, true, true};
  std::vector<int> out(6);
  tally::cpu::inclusive_scan_by_flags(values.begin(), values.end(), flags.begin(), out.begin());
  EXPECT_EQ(out, (std::vector<int>{1, 3, 3, 7, 5, 6}));
  const i64 n = (i64{1} << 19) + 1;
  const auto x = tally::test::random_input<i64>(static_cast<std::size_t>(n), 60);
  std::vector<bool> big_flags(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> byte_flags(static_cast<std::size_t>(n));
  for (i64 i = 0; i < n; ++i) {
    const bool head = (i * 7919) % 1001 == 3;
    big_flags[static_cast<std::size_t>(i)] = head;
    byte_flags[static_cast<std::size_t>(i)] = head ? 1 : 0;
  }
  std::vector<i64> got(x.size()), want(x.size());
  tally::cpu::exclusive_scan_by_flags(x.begin(), x.end(), big_flags.begin(), got.begin(), i64{-4});
  tally::cpu::sequential::exclusive_scan_by_flags(x.begin(), x.end(), byte_flags.begin(), want.begin(), i64{-4});
  EXPECT_TRUE(tally::test::matches(got, want));
  // Strings under concatenation (non-commutative, non-trivial type), by key.
  const std::vector<std::string> words = {"a", "b", "c", "d", "e"};
  const std::vector<int> keys = {1, 1, 2, 2, 2};
  std::vector<std::string> sout(5);
  tally::cpu::exclusive_scan_by_key(keys.begin(), keys.end(), words.begin(), sout.begin(),
                                    std::string(">"));
  EXPECT_EQ(sout, (std::vector<std::string>{">", ">a", ">", ">c", ">cd"}));
}

// The exclusive accumulator follows init: int32 values summed in int64 per segment.
TEST(CpuSegmented, ExclusiveInitTypeWidensAccumulator) {
  const i64 n = i64{1} << 20;
  std::vector<std::int32_t> x(static_cast<std::size_t>(n), std::numeric_limits<std::int32_t>::max() - 1);
  const std::vector<i64> offsets = {0, 5, n};
  std::vector<i64> out(x.size(), -1);
  tally::cpu::exclusive_segmented_scan(x.begin(), offsets.begin(), offsets.end(), out.begin(), i64{0});
  EXPECT_EQ(out[4], 4 * i64{std::numeric_limits<std::int32_t>::max() - 1});
  EXPECT_EQ(out[n - 1], (n - 6) * i64{std::numeric_limits<std::int32_t>::max() - 1});
  std::vector<i64> sums(2);
  tally::cpu::segmented_reduce(x.begin(), offsets.begin(), offsets.end(), sums.begin(), i64{0});
  EXPECT_EQ(sums[1], (n - 5) * i64{std::numeric_limits<std::int32_t>::max() - 1});
}

// ---- segmented reduce -----------------------------------------------------------------------

template <class T, class Op, class Init>
void check_reduce(const std::vector<i64>& lengths, Op op, Init init, std::uint64_t salt) {
  using Acc = tally::exclusive_accumulator_t<Op, Init, T>;
  i64 n = 0;
  for (i64 len : lengths) n += len;
  const layout l = make_layout(lengths, 2, salt);
  const auto x = tally::test::random_input<T>(static_cast<std::size_t>(n + 2), salt);
  std::vector<Acc> want(lengths.size()), got(lengths.size(), tally::test::poison<Acc>());
  tally::cpu::sequential::segmented_reduce(x.begin(), l.offsets.begin(), l.offsets.end(), want.begin(), init, op);
  EXPECT_EQ(tally::cpu::segmented_reduce(x.data(), l.offsets.data(), l.offsets.data() + l.offsets.size(),
                                         got.data(), init, op),
            got.data() + got.size());
  SCOPED_TRACE(::testing::Message() << "n = " << n << ", segments = " << lengths.size());
  if constexpr (std::is_floating_point_v<T>) {
    std::vector<double> exact, magnitude;
    for (std::size_t s = 0; s < lengths.size(); ++s) {
      double e = static_cast<double>(init), m = std::abs(e);
      for (i64 i = l.offsets[s]; i < l.offsets[s + 1]; ++i) {
        e += static_cast<double>(x[static_cast<std::size_t>(i)]);
        m += std::abs(static_cast<double>(x[static_cast<std::size_t>(i)]));
      }
      exact.push_back(e);
      magnitude.push_back(m);
    }
    // The tolerance grows with the largest segment (the sizes in `matches` are the count
    // of segments): compare each against its own bound.
    for (std::size_t s = 0; s < lengths.size(); ++s) {
      const double tol = std::numeric_limits<T>::epsilon() *
                         (16.0 + 4.0 * std::sqrt(static_cast<double>(lengths[s]))) * (magnitude[s] + 1.0);
      ASSERT_NEAR(static_cast<double>(got[s]), exact[s], tol) << "segment " << s;
    }
  } else {
    ASSERT_TRUE(tally::test::matches(got, want));
  }
}

TEST(CpuSegmentedReduce, EveryLayout) {
  const i64 n = quick() ? i64{1} << 18 : (i64{1} << 22) + 1;
  std::uint64_t salt = 100;
  for (i64 size : {i64{0}, i64{1}, i64{1000}, n}) {
    salt += 4;
    check_reduce<std::int32_t>(random_lengths(size, salt), tally::plus{}, 5, salt);
    check_reduce<float>(random_lengths(size, salt + 1), tally::plus{}, 0.5f, salt + 1);
    check_reduce<affine>(random_lengths(size / 4, salt + 2), compose{}, affine{3, 1}, salt + 2);
    check_reduce<i64>(random_lengths(size, salt + 3), tally::maximum{}, i64{-1000}, salt + 3);
    for (i64 len : {i64{1}, i64{3}, i64{64}, i64{1} << 16}) {
      if (len > std::max<i64>(size, 1)) continue;
      check_reduce<std::int32_t>(uniform_lengths(size, len), tally::plus{}, -2, ++salt);
      check_reduce<affine>(uniform_lengths(size / 4, len), compose{}, affine{3, 1}, ++salt);
    }
    if (::testing::Test::HasFailure()) return;
  }
  // A million empty segments (and a few non-empty ones) give init.
  std::vector<i64> empties(quick() ? 100000 : 1000000, 0);
  empties[10] = 7;
  empties[empties.size() - 3] = 100000;
  check_reduce<std::int32_t>(empties, tally::plus{}, 42, 200);
  for (int threads : {1, 2, 16}) {
    tbb::task_arena(threads).execute([&] {
      check_reduce<std::int32_t>(random_lengths(n, 300), tally::plus{}, 9, 301);
      check_reduce<affine>(random_lengths(n / 4, 302), compose{}, affine{1, 1}, 303);
    });
  }
}

// ---- batched -------------------------------------------------------------------------------

// A naive scan along `axis` through multi-indices (independent of the library's (outer,
// len, inner) arithmetic): the odometer walks every element; the running accumulator of
// a line lives in a map keyed by the element's index with the axis coordinate zeroed.
template <class Acc, class T, class Op>
std::vector<Acc> naive_batched(const std::vector<T>& x, const std::vector<i64>& shape, int axis,
                               Op op, const Acc* init) {
  std::vector<Acc> out;
  out.reserve(x.size());
  std::vector<i64> stride(shape.size(), 1);
  for (int a = static_cast<int>(shape.size()) - 2; a >= 0; --a) stride[a] = stride[a + 1] * shape[a + 1];
  for (std::size_t i = 0; i < x.size(); ++i) {
    const i64 coord = (static_cast<i64>(i) / stride[axis]) % shape[axis];
    const std::size_t line_start = i - static_cast<std::size_t>(coord * stride[axis]);
    // Accumulate the line from its start up to this element (quadratic, so shapes stay small).
    std::optional<Acc> acc;
    if (init) acc = *init;
    for (i64 k = 0; k < coord + (init ? 0 : 1); ++k) {
      const T& v = x[line_start + static_cast<std::size_t>(k * stride[axis])];
      acc = acc ? static_cast<Acc>(op(*acc, v)) : static_cast<Acc>(v);
    }
    out.push_back(*acc);
  }
  return out;
}

TEST(CpuBatchedReference, MatchesNaiveLoops) {
  const std::vector<std::vector<i64>> shapes = {{7}, {3, 5}, {5, 3}, {1, 9}, {9, 1}, {4, 3, 5},
                                                {2, 3, 4, 5}, {3, 0, 2}};
  for (const auto& shape : shapes) {
    i64 total = 1;
    for (i64 e : shape) total *= e;
    const auto x = tally::test::random_input<affine>(static_cast<std::size_t>(total), 70);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      SCOPED_TRACE(::testing::Message() << "rank " << shape.size() << ", axis " << axis);
      const affine init{3, 3};
      std::vector<affine> got(x.size());
      tally::cpu::sequential::inclusive_scan_batched(x.begin(), got.begin(), shape, axis, compose{});
      EXPECT_EQ(got, naive_batched<affine>(x, shape, axis, compose{}, nullptr));
      tally::cpu::sequential::exclusive_scan_batched(x.begin(), got.begin(), shape, axis, init, compose{});
      EXPECT_EQ(got, naive_batched<affine>(x, shape, axis, compose{}, &init));
    }
  }
}

template <class T, class Op, class Init>
void check_batched(const std::vector<i64>& shape, Op op, Init init, std::uint64_t salt) {
  i64 total = 1;
  for (i64 e : shape) total *= e;
  const auto x = tally::test::random_input<T>(static_cast<std::size_t>(total), salt);
  for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
    for (bool exclusive : {false, true}) {
      std::vector<T> want(x.size());
      if (exclusive) {
        tally::cpu::sequential::exclusive_scan_batched(x.begin(), want.begin(), shape, axis, init, op);
      } else {
        tally::cpu::sequential::inclusive_scan_batched(x.begin(), want.begin(), shape, axis, op);
      }
      std::vector<double> exact, magnitude;
      if constexpr (std::is_floating_point_v<T>) {
        // Double-precision lines for the tolerance.
        std::vector<double> xd(x.begin(), x.end()), ad(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) ad[i] = std::abs(xd[i]);
        exact.resize(x.size());
        magnitude.resize(x.size());
        const double init_d = static_cast<double>(init), init_a = std::abs(init_d);
        if (exclusive) {
          tally::cpu::sequential::exclusive_scan_batched(xd.begin(), exact.begin(), shape, axis, init_d);
          tally::cpu::sequential::exclusive_scan_batched(ad.begin(), magnitude.begin(), shape, axis, init_a);
        } else {
          tally::cpu::sequential::inclusive_scan_batched(xd.begin(), exact.begin(), shape, axis);
          tally::cpu::sequential::inclusive_scan_batched(ad.begin(), magnitude.begin(), shape, axis);
        }
      }
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "shape rank " << shape.size() << " [" << shape[0]
                                          << (shape.size() > 1 ? ", " + std::to_string(shape[1]) : "")
                                          << (shape.size() > 2 ? ", " + std::to_string(shape[2]) : "")
                                          << "], axis " << axis << (exclusive ? ", exclusive" : ", inclusive")
                                          << (in_place ? ", in place" : ""));
        std::vector<T> got = in_place ? x : std::vector<T>(x.size(), tally::test::poison<T>());
        const T* src = in_place ? got.data() : x.data();
        T* end = nullptr;
        if (shape.size() == 2 && !in_place) {
          // The 2-d convenience form.
          end = exclusive ? tally::cpu::exclusive_scan_batched(src, got.data(), shape[0], shape[1], axis, init, op)
                          : tally::cpu::inclusive_scan_batched(src, got.data(), shape[0], shape[1], axis, op);
        } else {
          end = exclusive ? tally::cpu::exclusive_scan_batched(src, got.data(), shape, axis, init, op)
                          : tally::cpu::inclusive_scan_batched(src, got.data(), shape, axis, op);
        }
        EXPECT_EQ(end, got.data() + total);
        if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, tally::plus>) {
          ASSERT_TRUE(tally::test::matches(got, want, &exact, &magnitude));
        } else {
          ASSERT_TRUE(tally::test::matches(got, want));
        }
      }
    }
  }
}

std::vector<std::vector<i64>> batched_shapes() {
  if (quick()) {
    return {{1 << 14, 32}, {32, 1 << 14}, {512, 256}, {(1 << 17) + 3, 2}, {2, (1 << 17) + 3},
            {3, 1 << 16, 3}, {20, 30, 40}, {0, 5}, {1, 1}};
  }
  return {{1 << 20, 32}, {32, 1 << 20}, {16384, 1024}, {(1 << 21) + 3, 2}, {2, (1 << 21) + 3},
          {3, 1 << 19, 3}, {64, 300, 70}, {5000, 3, 100}, {0, 5}, {1, 1}};
}

TEST(CpuBatched, Int32Plus) {
  std::uint64_t salt = 80;
  for (const auto& shape : batched_shapes()) {
    check_batched<std::int32_t>(shape, tally::plus{}, 11, ++salt);
    if (::testing::Test::HasFailure()) return;
  }
}
TEST(CpuBatched, FloatPlus) {
  // Smaller than the int32 shapes: the double-precision references are slow.
  const std::vector<std::vector<i64>> shapes =
      quick() ? batched_shapes()
              : std::vector<std::vector<i64>>{{1 << 16, 32}, {32, 1 << 16}, {2048, 512},
                                              {(1 << 20) + 3, 2}, {2, (1 << 20) + 3},
                                              {3, 1 << 18, 3}, {64, 300, 70}};
  std::uint64_t salt = 90;
  for (const auto& shape : shapes) {
    check_batched<float>(shape, tally::plus{}, -0.5f, ++salt);
    if (::testing::Test::HasFailure()) return;
  }
}
TEST(CpuBatched, AffineCompose) {
  const std::vector<std::vector<i64>> shapes = {{1 << 14, 32}, {32, 1 << 14}, {(1 << 18) + 1, 2},
                                                {2, (1 << 18) + 1}, {3, 1 << 15, 3}, {17, 33, 65}};
  std::uint64_t salt = 100;
  for (const auto& shape : shapes) {
    check_batched<affine>(shape, compose{}, affine{5, 2}, ++salt);
    if (::testing::Test::HasFailure()) return;
  }
}
TEST(CpuBatched, ThreadCounts) {
  const std::vector<std::vector<i64>> shapes = {{(1 << 18) + 1, 2}, {3, 1 << 17, 3}, {64, 70, 80}};
  for (int threads : {1, 2, 16}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    tbb::task_arena(threads).execute([&] {
      std::uint64_t salt = 110;
      for (const auto& shape : shapes) {
        check_batched<i64>(shape, tally::maximum{}, i64{-3}, ++salt);
        check_batched<affine>(shape, compose{}, affine{1, 2}, ++salt);
      }
    });
    if (::testing::Test::HasFailure()) return;
  }
}

// ---- bad arguments -------------------------------------------------------------------------

template <class F>
void expect_invalid(F f, const char* function, const char* argument) {
  try {
    f();
    ADD_FAILURE() << "no exception from " << function;
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(std::string("tally::") + function), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("'") + argument + "'"), std::string::npos) << m;
  }
}

TEST(CpuSegmented, BadArguments) {
  std::vector<int> v(10, 1), out(10);
  std::vector<std::uint8_t> flags(10, 0);
  expect_invalid([&] { tally::cpu::inclusive_scan_by_flags(v.data() + 5, v.data(), flags.data(), out.data()); },
                 "cpu::inclusive_scan_by_flags", "last");
  int* null = nullptr;
  expect_invalid([&] { tally::cpu::exclusive_scan_by_flags(v.data(), v.data() + 10, flags.data(), null, 0); },
                 "cpu::exclusive_scan_by_flags", "d_first");
  const std::uint8_t* null_flags = nullptr;
  expect_invalid([&] { tally::cpu::inclusive_scan_by_flags(v.data(), v.data() + 10, null_flags, out.data()); },
                 "cpu::inclusive_scan_by_flags", "flags_first");
  std::vector<int> keys(10, 0);
  expect_invalid([&] { tally::cpu::inclusive_scan_by_key(keys.data() + 3, keys.data(), v.data(), out.data()); },
                 "cpu::inclusive_scan_by_key", "last");
  const std::vector<i64> decreasing = {0, 4, 3, 10};
  expect_invalid([&] { tally::cpu::inclusive_segmented_scan(v.begin(), decreasing.begin(), decreasing.end(), out.begin()); },
                 "cpu::inclusive_segmented_scan", "offsets_first");
  const std::vector<i64> negative = {-1, 4};
  expect_invalid([&] { tally::cpu::exclusive_segmented_scan(v.begin(), negative.begin(), negative.end(), out.begin(), 0); },
                 "cpu::exclusive_segmented_scan", "offsets_first");
  expect_invalid([&] { tally::cpu::segmented_reduce(v.data(), decreasing.data() + 2, decreasing.data(), out.data(), 0); },
                 "cpu::segmented_reduce", "offsets_last");
  // A decrease far into a long offsets array (the parallel check).
  std::vector<i64> long_offsets(1 << 20);
  for (std::size_t i = 0; i < long_offsets.size(); ++i) long_offsets[i] = static_cast<i64>(i / 2);
  long_offsets[777777] = 5;
  std::vector<int> big(1 << 19, 1), big_out(1 << 19);
  expect_invalid([&] { tally::cpu::segmented_reduce(big.begin(), long_offsets.begin(), long_offsets.end(), big_out.begin(), 0); },
                 "cpu::segmented_reduce", "offsets_first");
  try {
    tally::cpu::segmented_reduce(big.begin(), long_offsets.begin(), long_offsets.end(), big_out.begin(), 0);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("offsets[777777]"), std::string::npos) << e.what();
  }
  // Batched: axis, extents, overflow, empty shape, 2-d rows/cols.
  const std::vector<i64> shape = {2, 5};
  expect_invalid([&] { tally::cpu::inclusive_scan_batched(v.data(), out.data(), shape, 2); },
                 "cpu::inclusive_scan_batched", "axis");
  expect_invalid([&] { tally::cpu::inclusive_scan_batched(v.data(), out.data(), shape, -1); },
                 "cpu::inclusive_scan_batched", "axis");
  const std::vector<i64> negative_shape = {2, -5};
  expect_invalid([&] { tally::cpu::exclusive_scan_batched(v.data(), out.data(), negative_shape, 0, 0); },
                 "cpu::exclusive_scan_batched", "shape");
  const std::vector<i64> huge_shape = {i64{1} << 40, i64{1} << 40};
  expect_invalid([&] { tally::cpu::inclusive_scan_batched(v.data(), out.data(), huge_shape, 0); },
                 "cpu::inclusive_scan_batched", "shape");
  expect_invalid([&] { tally::cpu::inclusive_scan_batched(v.data(), out.data(), std::span<const i64>(), 0); },
                 "cpu::inclusive_scan_batched", "shape");
  expect_invalid([&] { tally::cpu::inclusive_scan_batched(v.data(), out.data(), -2, 5, 0); },
                 "cpu::inclusive_scan_batched", "rows");
  expect_invalid([&] { tally::cpu::exclusive_scan_batched(v.data(), out.data(), 2, 5, 3, 0); },
                 "cpu::exclusive_scan_batched", "axis");
  expect_invalid([&] { tally::cpu::inclusive_scan_batched(null, out.data(), 2, 5, 0); },
                 "cpu::inclusive_scan_batched", "first");
  // Empty things are fine: nothing written.
  const std::vector<i64> no_offsets;
  EXPECT_EQ(tally::cpu::inclusive_segmented_scan(v.begin(), no_offsets.begin(), no_offsets.end(), out.begin()),
            out.begin());
  EXPECT_EQ(tally::cpu::inclusive_scan_by_flags(null, null, null_flags, null), null);
  EXPECT_EQ(tally::cpu::inclusive_scan_batched(null, null, {0, 7}, 1), null);
  // The initializer-list shape form.
  std::vector<int> m = {1, 2, 3, 4, 5, 6};
  std::vector<int> r(6);
  tally::cpu::inclusive_scan_batched(m.begin(), r.begin(), {2, 3}, 0);
  EXPECT_EQ(r, (std::vector<int>{1, 2, 3, 5, 7, 9}));
  tally::cpu::exclusive_scan_batched(m.begin(), r.begin(), {2, 3}, 1, 100);
  EXPECT_EQ(r, (std::vector<int>{100, 101, 103, 100, 104, 109}));
}

// The flag operator itself: associative (on random triples) and not commutative.
TEST(CpuSegmented, FlagOperatorIsAssociative) {
  const auto v = tally::test::random_input<affine>(300, 5);
  std::mt19937_64 rng(tally::test::seed());
  const tally::segmented_op<compose> sop{compose{}};
  for (std::size_t i = 0; i + 2 < v.size(); ++i) {
    const tally::flagged<affine> a{rng() % 2 == 0, v[i]}, b{rng() % 3 == 0, v[i + 1]},
        c{rng() % 2 == 0, v[i + 2]};
    const auto l = sop(sop(a, b), c), r = sop(a, sop(b, c));
    ASSERT_EQ(l.head, r.head);
    ASSERT_EQ(l.value, r.value);
  }
  const tally::flagged<int> one{true, 1}, two{false, 2};
  const auto p = tally::make_segmented_op(tally::plus{});
  EXPECT_EQ(p(one, two).value, 3);
  EXPECT_TRUE(p(one, two).head);
  EXPECT_EQ(p(two, one).value, 1);
  constexpr auto id = tally::identity<tally::segmented_op<tally::plus>, tally::flagged<int>>();
  static_assert(!id.head && id.value == 0);
}

// absorbs_prefix, as the GPU look-back calls it (unqualified, from another namespace):
// exactly the pairs with a head absorb, under every operator inside the flag operator,
// and they do absorb (op(p, x) == x for random p); plain operators absorb nothing.
namespace absorbing {
template <class Op, class T>
bool absorbs(const Op& op, const T& x) {
  return absorbs_prefix(op, x);
}
}  // namespace absorbing

TEST(CpuSegmented, PairsWithAHeadAbsorbEveryPrefix) {
  const auto v = tally::test::random_input<affine>(200, 6);
  std::mt19937_64 rng(tally::test::seed());
  const tally::segmented_op<compose> sop{compose{}};
  for (std::size_t i = 0; i + 1 < v.size(); ++i) {
    const tally::flagged<affine> p{rng() % 2 == 0, v[i]}, x{rng() % 2 == 0, v[i + 1]};
    ASSERT_EQ(absorbing::absorbs(sop, x), x.head);
    if (x.head) {
      const auto r = sop(p, x);
      ASSERT_TRUE(r.head);
      ASSERT_EQ(r.value, x.value);
    }
  }
  const auto plus_pairs = tally::make_segmented_op(tally::plus{});
  EXPECT_TRUE(absorbing::absorbs(plus_pairs, tally::flagged<float>{true, 2.5f}));
  EXPECT_FALSE(absorbing::absorbs(plus_pairs, tally::flagged<float>{false, 2.5f}));
  EXPECT_FALSE(absorbing::absorbs(tally::plus{}, 0));
  EXPECT_FALSE(absorbing::absorbs(tally::maximum{}, tally::flagged<int>{true, 1}));  // not the flag operator
  static_assert(tally::absorbs_prefix(tally::make_segmented_op(tally::minimum{}), tally::flagged<int>{true, 0}));
}

}  // namespace
