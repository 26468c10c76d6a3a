// The applications of tally/algorithms/*.hpp on the CPU backend (tally::cpu) against
// sequential loops written here (double or long double for floating point, with a tolerance
// that grows with n), and the core pieces they are built from: the affine-map operator, the
// counting, transform and store iterators (random access, so the CPU scans run them in
// parallel), the public argument checks of core/error.hpp and core/shape.hpp.
// Sizes reach beyond cpu_tuning::parallel_min_bytes so the parallel paths run; outputs are
// poisoned before each call and every element is compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <list>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"
#include "tally/tally.hpp"

namespace {

namespace cpu = tally::cpu;
using i64 = std::int64_t;
using tally::test::invalid_argument_message;

constexpr std::size_t parallel_bytes = cpu::cpu_tuning::parallel_min_bytes;

std::mt19937_64 make_rng(std::uint64_t salt) {
  return std::mt19937_64(tally::test::seed() * 0x9E3779B97F4A7C15ULL + salt);
}

bool quick() { return tally::test::quick(); }

// Whether `message` holds every part; the message itself in the failure.
::testing::AssertionResult names(const std::string& message, std::initializer_list<const char*> parts) {
  for (const char* p : parts) {
    if (message.find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << p << "' not in: " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

// got[i] against exact[i] within eps(T) (16 + 4 sqrt(n)) (magnitude[i] + 1), the tolerance
// of tests/common/test_support.hpp; a NaN (the poison) never passes.
template <class T>
::testing::AssertionResult close_to(const std::vector<T>& got, const std::vector<double>& exact,
                                    const std::vector<double>& magnitude, double n_for_tolerance) {
  if (got.size() != exact.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << exact.size();
  }
  const double eps = std::numeric_limits<T>::epsilon();
  const double grow = 16.0 + 4.0 * std::sqrt(n_for_tolerance);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = eps * grow * (magnitude[i] + 1.0);
    if (!(std::abs(static_cast<double>(got[i]) - exact[i]) <= tol)) {
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": got "
                                           << got[i] << ", want " << exact[i] << " (tolerance "
                                           << tol << ", seed " << tally::test::seed() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
::testing::AssertionResult same(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == want[i])) {
      return ::testing::AssertionFailure() << "element " << i << " of " << got.size() << ": got "
                                           << tally::test::printable(got[i]) << ", want "
                                           << tally::test::printable(want[i]) << " (seed "
                                           << tally::test::seed() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// ============================================================================================
// core: iterators
// ============================================================================================

struct square_mod {  // i -> i^2 mod 1000 + 1 (never zero)
  i64 operator()(i64 i) const { return (i * i) % 1000 + 1; }
};
struct twice {
  float operator()(float x) const { return 2.0f * x; }
};
// A store_iterator's function: writes the value and counts the writes of each index.
struct write_counted {
  i64* out = nullptr;
  std::atomic<int>* writes = nullptr;
  i64 first = 0;  // the index of out[0]
  void operator()(i64 i, i64 v) const {
    out[i - first] = v;
    writes[i - first].fetch_add(1, std::memory_order_relaxed);
  }
};
// i -> an affine map of uint32 from a hash of i (odd gates): exact, non-commutative.
struct hashed_map {
  tally::affine_map<std::uint32_t> operator()(i64 i) const {
    std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return {static_cast<std::uint32_t>(h) | 1u, static_cast<std::uint32_t>(h >> 32)};
  }
};
struct write_map {
  tally::affine_map<std::uint32_t>* out = nullptr;
  void operator()(i64 i, const tally::affine_map<std::uint32_t>& f) const { out[i] = f; }
};

using counting64 = tally::counting_iterator<i64>;
static_assert(std::random_access_iterator<counting64>);
static_assert(std::random_access_iterator<tally::counting_iterator<std::int32_t>>);
static_assert(std::random_access_iterator<tally::counting_iterator<std::uint8_t>>);
static_assert(std::random_access_iterator<tally::transform_iterator<counting64, square_mod>>);
static_assert(std::random_access_iterator<tally::transform_iterator<const float*, twice>>);
static_assert(std::random_access_iterator<
              tally::transform_iterator<std::vector<float>::const_iterator, twice>>);
inline constexpr auto lambda_without_captures = [](i64 i) { return i + 1; };
static_assert(std::random_access_iterator<
              tally::transform_iterator<counting64, std::remove_const_t<decltype(lambda_without_captures)>>>);
static_assert(std::random_access_iterator<tally::store_iterator<write_counted>>);
static_assert(std::indirectly_writable<tally::store_iterator<write_counted>, i64>);
static_assert(std::is_same_v<std::iter_value_t<counting64>, i64>);
static_assert(std::is_same_v<std::iter_value_t<tally::transform_iterator<const float*, twice>>, float>);

TEST(CoreIterators, CountingIteratorArithmetic) {
  constexpr counting64 a(-3);
  static_assert(*a == -3 && a[5] == 2 && *(a + 10) == 7 && *(10 + a) == 7 && *(a - 2) == -5);
  static_assert((a + 10) - a == 10 && a - (a + 10) == -10);
  static_assert(a < a + 1 && a + 1 > a && a == counting64(-3) && a != a + 1 && a <= a);
  counting64 it(100);
  EXPECT_EQ(*it++, 100);
  EXPECT_EQ(*it, 101);
  EXPECT_EQ(*++it, 102);
  EXPECT_EQ(*it--, 102);
  EXPECT_EQ(*--it, 100);
  it += 1000;
  EXPECT_EQ(*it, 1100);
  it -= 1100;
  EXPECT_EQ(*it, 0);
  // 64-bit: values and distances beyond 2^32
  const counting64 far(i64{1} << 40);
  EXPECT_EQ(far[7], (i64{1} << 40) + 7);
  EXPECT_EQ(far - counting64(0), i64{1} << 40);
  // a narrow type counts in its own type, distances in ptrdiff_t
  const tally::counting_iterator<std::int16_t> s(30000);
  EXPECT_EQ(*(s + 5), 30005);
  EXPECT_EQ((s + 2000) - s, 2000);
  // std algorithms take it
  std::vector<i64> copied(5);
  std::copy(counting64(7), counting64(12), copied.begin());
  EXPECT_EQ(copied, (std::vector<i64>{7, 8, 9, 10, 11}));
}

TEST(CoreIterators, TransformIteratorRandomAccess) {
  const std::vector<float> v{1.5f, -2.0f, 3.25f, 4.0f, -5.5f};
  auto t = tally::make_transform_iterator(v.data(), twice{});
  EXPECT_EQ(*t, 3.0f);
  EXPECT_EQ(t[4], -11.0f);
  EXPECT_EQ(*(t + 2), 6.5f);
  EXPECT_EQ(*(2 + t), 6.5f);
  EXPECT_EQ(*((t + 4) - 1), 8.0f);
  EXPECT_EQ((t + 5) - t, 5);
  EXPECT_TRUE(t < t + 1);
  EXPECT_TRUE(t + 3 == t + 3);
  auto u = t;
  ++u;
  EXPECT_EQ(*u, -4.0f);
  u += 3;
  EXPECT_EQ(*u, -11.0f);
  EXPECT_EQ(*u--, -11.0f);
  EXPECT_EQ(*u, 8.0f);
  u -= 3;
  EXPECT_EQ(u.base(), v.data());
  const auto sq = tally::make_transform_iterator(counting64(0), square_mod{});
  EXPECT_EQ(sq[31], 31 * 31 % 1000 + 1);
  EXPECT_EQ(std::ranges::distance(sq, sq + 12345), 12345);
}

TEST(CoreIterators, StoreIteratorCallsTheFunctionWithTheIndex) {
  constexpr i64 first = 100;
  std::vector<i64> out(8, -1);
  std::vector<std::atomic<int>> writes(8);
  const auto st = tally::make_store_iterator(write_counted{out.data(), writes.data(), first}, first);
  st[3] = 33;
  *(st + 5) = 55;
  auto it = st;
  *it++ = 10;
  *it = 11;
  it += 6;
  *it = 77;
  *(it - 7) = 12;  // index 0 again
  EXPECT_EQ(out, (std::vector<i64>{12, 11, -1, 33, -1, 55, -1, 77}));
  EXPECT_EQ(writes[0].load(), 2);
  EXPECT_EQ(writes[2].load(), 0);
  EXPECT_EQ((st + 7) - st, 7);
  EXPECT_TRUE(st < st + 1);
  EXPECT_EQ(st.function().first, first);
}

// The three iterators in tally::cpu's parallel scans and reduction: every element stored
// once, with the sequential loop's values.
TEST(CoreIterators, ParallelScansThroughIterators) {
  const i64 n = i64{1} << 21;  // 16 MiB of int64: far beyond parallel_min_bytes
  ASSERT_GT(static_cast<std::size_t>(n) * sizeof(i64), 4 * parallel_bytes);
  const auto in = tally::make_transform_iterator(counting64(0), square_mod{});
  std::vector<i64> out(static_cast<std::size_t>(n), tally::test::poison<i64>());
  std::vector<std::atomic<int>> writes(static_cast<std::size_t>(n));
  const auto end = cpu::inclusive_scan(in, in + n, tally::make_store_iterator(write_counted{out.data(), writes.data(), 0}));
  EXPECT_EQ(end - tally::make_store_iterator(write_counted{}), n);
  i64 acc = 0;
  for (i64 i = 0; i < n; ++i) {
    acc += (i * i) % 1000 + 1;
    ASSERT_EQ(out[static_cast<std::size_t>(i)], acc) << "inclusive, element " << i;
    ASSERT_EQ(writes[static_cast<std::size_t>(i)].load(), 1) << "inclusive, element " << i;
  }
  // exclusive over the plain counting iterator, a non-zero init, a store_iterator whose
  // indices start at 1000 (its function subtracts them again)
  std::fill(out.begin(), out.end(), tally::test::poison<i64>());
  for (auto& w : writes) w.store(0);
  cpu::exclusive_scan(counting64(5), counting64(5 + n),
                      tally::make_store_iterator(write_counted{out.data(), writes.data(), 1000}, 1000),
                      i64{7});
  for (i64 i = 0; i < n; ++i) {
    const i64 want = 7 + 5 * i + i * (i - 1) / 2;
    ASSERT_EQ(out[static_cast<std::size_t>(i)], want) << "exclusive, element " << i;
    ASSERT_EQ(writes[static_cast<std::size_t>(i)].load(), 1) << "exclusive, element " << i;
  }
  EXPECT_EQ(cpu::reduce(counting64(0), counting64(n), i64{3}), 3 + n * (n - 1) / 2);
  EXPECT_EQ(cpu::reduce(in, in + n, i64{0}), acc);
  // a non-commutative operator through both iterators, in parallel
  const i64 m = i64{1} << 20;
  const auto maps = tally::make_transform_iterator(counting64(0), hashed_map{});
  std::vector<tally::affine_map<std::uint32_t>> got(static_cast<std::size_t>(m), {0u, 0xDEADBEEFu});
  std::vector<tally::affine_map<std::uint32_t>> want(static_cast<std::size_t>(m));
  cpu::inclusive_scan(maps, maps + m, tally::make_store_iterator(write_map{got.data()}), tally::affine{});
  cpu::sequential::inclusive_scan(maps, maps + m, want.begin(), tally::affine{});
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(got[i] == want[i]) << "affine scan, element " << i;
  }
  const auto total = cpu::reduce(maps, maps + m, tally::identity<tally::affine, tally::affine_map<std::uint32_t>>(),
                                 tally::affine{});
  EXPECT_TRUE(total == want.back());
}

// ============================================================================================
// core: affine maps
// ============================================================================================

TEST(CoreAffine, CompositionOrderAndIdentity) {
  using map = tally::affine_map<int>;
  constexpr map f{2, 3}, g{5, 7};
  // affine{}(f, g) = g after f: x -> 5 (2x + 3) + 7 = 10x + 22
  static_assert(tally::affine{}(f, g) == map{10, 22});
  // the other order is another map: x -> 2 (5x + 7) + 3 = 10x + 17
  static_assert(tally::affine{}(g, f) == map{10, 17});
  static_assert(!(tally::affine{}(f, g) == tally::affine{}(g, f)));
  static_assert(tally::apply(tally::affine{}(f, g), 4) == tally::apply(g, tally::apply(f, 4)));
  static_assert(tally::apply(f, 4) == 11);
  static_assert(tally::identity<tally::affine, map>() == map{1, 0});
  static_assert(tally::identity_of<tally::affine, tally::affine_map<double>>::value() ==
                tally::affine_map<double>{1.0, 0.0});
  static_assert(tally::has_identity_v<tally::affine, tally::affine_map<float>>);
  static_assert(tally::affine{}(tally::identity<tally::affine, map>(), f) == f);
  static_assert(tally::affine{}(f, tally::identity<tally::affine, map>()) == f);
  // narrow unsigned types keep their type and wrap: 16 * 16 = 256 = 0 mod 2^8
  using m8 = tally::affine_map<std::uint8_t>;
  static_assert(tally::affine{}(m8{16, 1}, m8{16, 1}) == m8{0, 17});
  static_assert(std::is_same_v<decltype(tally::affine{}(m8{}, m8{})), m8>);
  // floating point: the recurrence step x1 = a x0 + b
  constexpr tally::affine_map<double> h{0.5, 1.0};
  static_assert(tally::apply(tally::affine{}(h, h), 2.0) == 0.5 * (0.5 * 2.0 + 1.0) + 1.0);
  // associativity on random maps (exact modulo 2^32)
  auto g64 = make_rng(1);
  for (int k = 0; k < 1000; ++k) {
    const tally::affine_map<std::uint32_t> p{static_cast<std::uint32_t>(g64()), static_cast<std::uint32_t>(g64())},
        q{static_cast<std::uint32_t>(g64()), static_cast<std::uint32_t>(g64())},
        r{static_cast<std::uint32_t>(g64()), static_cast<std::uint32_t>(g64())};
    const tally::affine op{};
    ASSERT_TRUE(op(op(p, q), r) == op(p, op(q, r))) << "case " << k;
    const std::uint32_t x = static_cast<std::uint32_t>(g64());
    ASSERT_EQ(tally::apply(op(op(p, q), r), x), tally::apply(r, tally::apply(q, tally::apply(p, x))));
  }
}

// ============================================================================================
// core: the public argument checks
// ============================================================================================

TEST(CoreChecks, ThrowArgumentErrorRequireCountRequirePointer) {
  EXPECT_EQ(invalid_argument_message([] { tally::throw_argument_error("my_op", "width", "must be even"); }),
            "tally::my_op: argument 'width' must be even");
  EXPECT_EQ(invalid_argument_message([] { tally::require_count("my_op", "count", -3); }),
            "tally::my_op: argument 'count' must be >= 0, got -3");
  EXPECT_NO_THROW(tally::require_count("my_op", "count", 0));
  EXPECT_NO_THROW(tally::require_count("my_op", "count", i64{1} << 40));
  const int* null = nullptr;
  EXPECT_EQ(invalid_argument_message([&] { tally::require_pointer("my_op", "data", null, 1); }),
            "tally::my_op: argument 'data' is a null pointer with n > 0");
  EXPECT_NO_THROW(tally::require_pointer("my_op", "data", null, 0));
  const std::vector<int> v(3);
  EXPECT_NO_THROW(tally::require_pointer("my_op", "data", v.data(), 3));
  // iterators are not checked
  EXPECT_NO_THROW(tally::require_pointer("my_op", "data", std::vector<int>::const_iterator{}, 5));
  EXPECT_NO_THROW(tally::require_pointer("my_op", "data", counting64(0), 5));
}

TEST(CoreChecks, CheckShape) {
  const std::vector<i64> s{2, 3, 4};
  auto v = tally::check_shape("my_op", s, 0);
  EXPECT_EQ(v.outer, 1);
  EXPECT_EQ(v.len, 2);
  EXPECT_EQ(v.inner, 12);
  v = tally::check_shape("my_op", s, 1);
  EXPECT_EQ(v.outer, 2);
  EXPECT_EQ(v.len, 3);
  EXPECT_EQ(v.inner, 4);
  EXPECT_EQ(v.total(), 24);
  v = tally::check_shape("my_op", s, 2);
  EXPECT_EQ(v.outer, 6);
  EXPECT_EQ(v.len, 4);
  EXPECT_EQ(v.inner, 1);
  const std::vector<i64> one{5};
  v = tally::check_shape("my_op", one, 0);
  EXPECT_EQ(v.outer * 100 + v.len * 10 + v.inner, 100 + 50 + 1);
  // a zero extent anywhere: {0, 0, 0}
  for (int axis = 0; axis < 3; ++axis) {
    const std::vector<i64> z{3, 0, 4};
    v = tally::check_shape("my_op", z, axis);
    EXPECT_EQ(v.outer, 0);
    EXPECT_EQ(v.len, 0);
    EXPECT_EQ(v.inner, 0);
    EXPECT_EQ(v.total(), 0);
  }
  EXPECT_TRUE(names(invalid_argument_message([] { tally::check_shape("my_op", std::span<const i64>(), 0); }),
                    {"tally::my_op: argument 'shape'", "empty"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::check_shape("my_op", s, 3); }),
                    {"tally::my_op: argument 'axis'", "[0, 3)", "got 3"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::check_shape("my_op", s, -1); }),
                    {"tally::my_op: argument 'axis'", "got -1"}));
  const std::vector<i64> negative{2, -1, 3};
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::check_shape("my_op", negative, 0); }),
                    {"tally::my_op: argument 'shape'", "negative", "shape[1] = -1"}));
  const std::vector<i64> huge{i64{1} << 40, i64{1} << 30};
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::check_shape("my_op", huge, 0); }),
                    {"tally::my_op: argument 'shape'", "int64"}));
}

TEST(AlgorithmsSupport, ShareMemoryAndDifferenceKeys) {
  namespace as = tally::algorithms_support;
  std::vector<float> v(20);
  EXPECT_TRUE(as::share_memory(v.data(), 10, v.data() + 5, 10));
  EXPECT_TRUE(as::share_memory(v.data() + 5, 10, v.data(), 10));
  EXPECT_TRUE(as::share_memory(v.begin(), 20, v.begin(), 20));
  EXPECT_FALSE(as::share_memory(v.data(), 5, v.data() + 5, 5));
  EXPECT_FALSE(as::share_memory(v.data(), 0, v.data(), 5));
  // different element types: bytes decide (a double spans two floats)
  EXPECT_TRUE(as::share_memory(reinterpret_cast<double*>(v.data()), 3, v.data() + 5, 1));
  EXPECT_FALSE(as::share_memory(reinterpret_cast<double*>(v.data()), 3, v.data() + 6, 1));
  std::list<float> l(3);
  EXPECT_FALSE(as::share_memory(l.begin(), 3, l.begin(), 3));  // not contiguous: apart
  // the comparison's keys: the smallest is the first difference and carries its sign;
  // agreement everywhere is the common length's key, larger than any difference before it
  static_assert(as::key_sign(as::difference_key(5, -1)) == -1);
  static_assert(as::key_sign(as::difference_key(5, 1)) == 1);
  static_assert(as::key_sign(as::difference_key(9, 0)) == 0);
  static_assert(as::difference_key(3, 1) < as::difference_key(4, -1));
  static_assert(as::difference_key(8, 1) < as::difference_key(9, 0));  // a difference before m wins
  static_assert(as::key_sign(as::difference_key((i64{1} << 61) - 1, 1)) == 1);
  static_assert(as::difference_key((i64{1} << 61) - 1, 1) > as::difference_key((i64{1} << 61) - 2, 1));
}

// ============================================================================================
// linear_recurrence
// ============================================================================================

// x[i] = a[i] x[i-1] + b[i] in double, and the magnitude |a| m + |b| (m[-1] = |x0|) that
// scales the rounding error of any association.
struct recurrence_reference {
  std::vector<double> x, magnitude;
};
template <class A, class B>
recurrence_reference sequential_recurrence(const A* a, const B* b, i64 n, double x0, i64 stride = 1) {
  recurrence_reference r;
  r.x.resize(static_cast<std::size_t>(n));
  r.magnitude.resize(static_cast<std::size_t>(n));
  double x = x0, m = std::abs(x0);
  for (i64 i = 0; i < n; ++i) {
    const double ai = static_cast<double>(a[i * stride]), bi = static_cast<double>(b[i * stride]);
    x = ai * x + bi;
    m = std::abs(ai) * m + std::abs(bi);
    r.x[static_cast<std::size_t>(i)] = x;
    r.magnitude[static_cast<std::size_t>(i)] = m;
  }
  return r;
}

// Gates of magnitude in [0.5, 1) with random signs (the decays of state-space models, both
// signs so that an operand taken in the wrong order shows), inputs in [-1, 1).
template <class T>
void random_gates(std::vector<T>& a, std::vector<T>& b, std::size_t n, std::uint64_t salt) {
  auto g = make_rng(salt + n);
  std::uniform_real_distribution<double> mag(0.5, 1.0), in(-1.0, 1.0);
  a.resize(n);
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>((g() & 1) ? mag(g) : -mag(g));
    b[i] = static_cast<T>(in(g));
  }
}

template <class T>
void check_linear_recurrence(std::size_t max_n) {
  for (const std::size_t n : tally::test::test_sizes(max_n)) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    std::vector<T> a, b;
    random_gates(a, b, n, 11);
    for (const double x0 : {0.0, 0.75}) {
      SCOPED_TRACE(::testing::Message() << "x0 = " << x0);
      std::vector<T> x(n, tally::test::poison<T>());
      const auto end = cpu::linear_recurrence(a.begin(), a.end(), b.begin(), x.begin(), static_cast<T>(x0));
      ASSERT_TRUE(end == x.end());
      const auto want = sequential_recurrence(a.data(), b.data(), static_cast<i64>(n), x0);
      ASSERT_TRUE(close_to(x, want.x, want.magnitude, static_cast<double>(n)));
    }
  }
}

TEST(LinearRecurrence, FloatAgainstSequentialDouble) { check_linear_recurrence<float>(std::size_t{1} << 21); }
TEST(LinearRecurrence, DoubleAgainstSequentialDouble) { check_linear_recurrence<double>(std::size_t{1} << 20); }

// uint32 gates: every association gives the loop's exact value (modulo 2^32), so any
// operand-order or tile-prefix mistake of the parallel scan shows; x0 a double converted.
TEST(LinearRecurrence, Uint32ExactAgainstSequential) {
  for (const std::size_t n : tally::test::test_sizes(std::size_t{1} << 21)) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    auto g = make_rng(12 + n);
    std::vector<std::uint32_t> a(n), b(n), x(n, tally::test::poison<std::uint32_t>()), want(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<std::uint32_t>(g());
      b[i] = static_cast<std::uint32_t>(g());
    }
    std::uint32_t acc = 123457u;
    for (std::size_t i = 0; i < n; ++i) want[i] = acc = a[i] * acc + b[i];
    cpu::linear_recurrence(a.data(), a.data() + n, b.data(), x.data(), 123457.0);
    ASSERT_TRUE(same(x, want));
  }
}

TEST(LinearRecurrence, HandChecked) {
  const std::vector<double> a{2, 3, 4}, b{1, 1, 1};
  std::vector<double> x(3, -1.0);
  cpu::linear_recurrence(a.begin(), a.end(), b.begin(), x.begin(), 0.0);
  EXPECT_EQ(x, (std::vector<double>{1, 4, 17}));
  cpu::linear_recurrence(a.begin(), a.end(), b.begin(), x.begin(), 1);  // x0 an int
  EXPECT_EQ(x, (std::vector<double>{3, 10, 41}));
  // mixed types: float gates, double inputs -> double maps, stored to float
  const std::vector<float> af{0.5f, 0.5f};
  const std::vector<double> bd{1.0, 1.0};
  std::vector<float> xf(2, -1.0f);
  cpu::linear_recurrence(af.begin(), af.end(), bd.begin(), xf.begin(), 2.0);
  EXPECT_EQ(xf, (std::vector<float>{2.0f, 2.0f}));
  // n == 0: nothing written, x_first returned (null pointers allowed)
  std::vector<float> untouched(4, 9.0f);
  EXPECT_EQ(cpu::linear_recurrence(af.data(), af.data(), bd.data(), untouched.data(), 1.0), untouched.data());
  EXPECT_EQ(untouched, std::vector<float>(4, 9.0f));
  const float* null = nullptr;
  float* null_out = nullptr;
  EXPECT_NO_THROW(cpu::linear_recurrence(null, null, null, null_out, 1.0f));
}

// x == a and x == b, large enough for the parallel scan (which the in-place call must not
// take): the values of the loop.
TEST(LinearRecurrence, InPlace) {
  const std::size_t n = quick() ? (std::size_t{1} << 18) : (std::size_t{1} << 21);
  std::vector<float> a, b;
  random_gates(a, b, n, 13);
  const auto want = sequential_recurrence(a.data(), b.data(), static_cast<i64>(n), 0.5);
  std::vector<float> x = a;
  cpu::linear_recurrence(x.begin(), x.end(), b.begin(), x.begin(), 0.5f);
  ASSERT_TRUE(close_to(x, want.x, want.magnitude, static_cast<double>(n))) << "x == a";
  x = b;
  cpu::linear_recurrence(a.data(), a.data() + n, x.data(), x.data(), 0.5f);
  ASSERT_TRUE(close_to(x, want.x, want.magnitude, static_cast<double>(n))) << "x == b";
  // exact in uint32
  auto g = make_rng(14);
  std::vector<std::uint32_t> ua(n), ub(n), wantu(n);
  for (std::size_t i = 0; i < n; ++i) {
    ua[i] = static_cast<std::uint32_t>(g());
    ub[i] = static_cast<std::uint32_t>(g());
  }
  std::uint32_t acc = 5u;
  for (std::size_t i = 0; i < n; ++i) wantu[i] = acc = ua[i] * acc + ub[i];
  std::vector<std::uint32_t> xu = ua;
  cpu::linear_recurrence(xu.data(), xu.data() + n, ub.data(), xu.data(), 5u);
  ASSERT_TRUE(same(xu, wantu)) << "uint32, x == a";
}

TEST(LinearRecurrence, BadArguments) {
  std::vector<float> a(8, 0.5f), b(8, 1.0f), x(8);
  const float* null = nullptr;
  float* null_out = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence(a.data() + 3, a.data() + 1, b.data(), x.data(), 0.0f);
                    }),
                    {"tally::cpu::linear_recurrence: argument 'a_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence(a.data(), a.data() + 8, null, x.data(), 0.0f);
                    }),
                    {"tally::cpu::linear_recurrence: argument 'b_first'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence(a.data(), a.data() + 8, b.data(), null_out, 0.0f);
                    }),
                    {"tally::cpu::linear_recurrence: argument 'x_first'", "null"}));
}

// ---- batched ---------------------------------------------------------------------------

// Every line of the view along `axis`, in double: x0s[line] (or x0 for every line).
recurrence_reference sequential_batched(const std::vector<float>& a, const std::vector<float>& b,
                                        const std::vector<i64>& shape, int axis,
                                        const std::vector<float>* x0s, double x0) {
  const tally::axis_view v = tally::check_shape("test", shape, axis);
  recurrence_reference r;
  r.x.assign(a.size(), 0.0);
  r.magnitude.assign(a.size(), 0.0);
  for (i64 o = 0; o < v.outer; ++o) {
    for (i64 j = 0; j < v.inner; ++j) {
      const i64 line = o * v.inner + j;
      const double start = x0s ? static_cast<double>((*x0s)[static_cast<std::size_t>(line)]) : x0;
      const i64 first = o * v.len * v.inner + j;
      const auto one = sequential_recurrence(a.data() + first, b.data() + first, v.len, start, v.inner);
      for (i64 k = 0; k < v.len; ++k) {
        r.x[static_cast<std::size_t>(first + k * v.inner)] = one.x[static_cast<std::size_t>(k)];
        r.magnitude[static_cast<std::size_t>(first + k * v.inner)] = one.magnitude[static_cast<std::size_t>(k)];
      }
    }
  }
  return r;
}

struct batched_case {
  std::vector<i64> shape;
  int axis;
};

std::string describe(const batched_case& c) {
  std::string s = "shape (";
  for (std::size_t i = 0; i < c.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(c.shape[i]);
  return s + ") axis " + std::to_string(c.axis);
}

std::vector<batched_case> batched_cases() {
  std::vector<batched_case> cases = {
      {{3, 5, 7}, 2},       {{3, 5, 7}, 0},       {{3, 5, 7}, 1},  // (batch, channels, length)
      {{4, 8, 20000}, 2},                                          // parallel along the last axis
      {{20000, 4, 8}, 0},                                          // parallel along the first axis
      {{2, 3000, 40}, 1},   {{1, 1, 1}, 2},       {{1000}, 0},     {{7, 1}, 1},
      {{1, 9}, 0},          {{2, 2, 2, 2, 300}, 3}};
  const i64 chain = quick() ? (i64{1} << 17) : (i64{1} << 20);
  cases.push_back({{2, chain}, 1});  // long chains along the last axis
  cases.push_back({{chain, 2}, 0});  // and along the first
  return cases;
}

TEST(LinearRecurrenceBatched, AgainstSequentialLines) {
  for (const auto& c : batched_cases()) {
    SCOPED_TRACE(describe(c));
    const tally::axis_view v = tally::check_shape("test", c.shape, c.axis);
    const auto n = static_cast<std::size_t>(v.total());
    const double along = static_cast<double>(v.len);
    std::vector<float> a, b;
    random_gates(a, b, n, 21 + static_cast<std::uint64_t>(c.axis));
    std::vector<float> x0s(static_cast<std::size_t>(v.outer * v.inner));
    auto g = make_rng(22 + n);
    for (auto& s : x0s) s = static_cast<float>(std::uniform_real_distribution<double>(-2.0, 2.0)(g));
    // one start value for every line
    std::vector<float> x(n, tally::test::poison<float>());
    auto end = cpu::linear_recurrence_batched(a.begin(), b.begin(), x.begin(),
                                              std::span<const i64>(c.shape), c.axis, -1.25f);
    ASSERT_TRUE(end == x.end());
    auto want = sequential_batched(a, b, c.shape, c.axis, nullptr, -1.25);
    ASSERT_TRUE(close_to(x, want.x, want.magnitude, along)) << "scalar x0";
    // one start value per line: a pointer, then an iterator
    std::fill(x.begin(), x.end(), tally::test::poison<float>());
    cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), std::span<const i64>(c.shape), c.axis,
                                   static_cast<const float*>(x0s.data()));
    want = sequential_batched(a, b, c.shape, c.axis, &x0s, 0.0);
    ASSERT_TRUE(close_to(x, want.x, want.magnitude, along)) << "x0 per line (pointer)";
    std::fill(x.begin(), x.end(), tally::test::poison<float>());
    cpu::linear_recurrence_batched(a.cbegin(), b.cbegin(), x.begin(), std::span<const i64>(c.shape), c.axis,
                                   x0s.cbegin());
    ASSERT_TRUE(close_to(x, want.x, want.magnitude, along)) << "x0 per line (iterator)";
    // in place, x == a, with x0 per line
    x = a;
    cpu::linear_recurrence_batched(x.data(), b.data(), x.data(), std::span<const i64>(c.shape), c.axis,
                                   x0s.data());
    ASSERT_TRUE(close_to(x, want.x, want.magnitude, along)) << "in place, x == a";
    x = b;
    cpu::linear_recurrence_batched(a.data(), x.data(), x.data(), std::span<const i64>(c.shape), c.axis,
                                   x0s.data());
    ASSERT_TRUE(close_to(x, want.x, want.magnitude, along)) << "in place, x == b";
  }
}

// uint32: exact, along the first, middle and last axis, in parallel and in place.
TEST(LinearRecurrenceBatched, Uint32Exact) {
  const std::vector<i64> shape{64, 3, 4096};
  const auto n = static_cast<std::size_t>(64 * 3 * 4096);
  auto g = make_rng(23);
  std::vector<std::uint32_t> a(n), b(n), x0s(64 * 4096);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint32_t>(g());
    b[i] = static_cast<std::uint32_t>(g());
  }
  for (auto& s : x0s) s = static_cast<std::uint32_t>(g());
  for (int axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE(::testing::Message() << "axis " << axis);
    const tally::axis_view v = tally::check_shape("test", shape, axis);
    std::vector<std::uint32_t> want(n);
    for (i64 o = 0; o < v.outer; ++o) {
      for (i64 j = 0; j < v.inner; ++j) {
        std::uint32_t acc = x0s[static_cast<std::size_t>(o * v.inner + j)];
        for (i64 k = 0; k < v.len; ++k) {
          const auto i = static_cast<std::size_t>((o * v.len + k) * v.inner + j);
          want[i] = acc = a[i] * acc + b[i];
        }
      }
    }
    std::vector<std::uint32_t> x(n, tally::test::poison<std::uint32_t>());
    cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), {64, 3, 4096}, axis, x0s.data());
    ASSERT_TRUE(same(x, want));
    x = a;
    cpu::linear_recurrence_batched(x.data(), b.data(), x.data(), {64, 3, 4096}, axis, x0s.data());
    ASSERT_TRUE(same(x, want)) << "in place";
  }
}

TEST(LinearRecurrenceBatched, EmptyShapesAndBadArguments) {
  std::vector<float> a(24, 0.5f), b(24, 1.0f), x(24, 7.0f);
  // a zero extent: nothing written
  EXPECT_EQ(cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), {3, 0, 4}, 1, 0.0f), x.data());
  EXPECT_EQ(x, std::vector<float>(24, 7.0f));
  const std::string fn = "tally::cpu::linear_recurrence_batched: argument ";
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), std::span<const i64>(), 0, 0.0f);
                    }),
                    {(fn + "'shape'").c_str()}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), {2, 3, 4}, 3, 0.0f);
                    }),
                    {(fn + "'axis'").c_str()}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), {2, -3, 4}, 0, 0.0f);
                    }),
                    {(fn + "'shape'").c_str(), "negative"}));
  const float* null = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence_batched(a.data(), null, x.data(), {2, 3, 4}, 2, 0.0f);
                    }),
                    {(fn + "'b_first'").c_str()}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::linear_recurrence_batched(a.data(), b.data(), x.data(), {2, 3, 4}, 2, null);
                    }),
                    {(fn + "'x0'").c_str()}));
}

// ============================================================================================
// line_of_sight
// ============================================================================================

// The visibility from point 0, sequentially, with the slope of the header in the slope type R.
template <class R, class A>
std::vector<std::uint8_t> sequential_visibility(const std::vector<A>& alt, R scale) {
  std::vector<std::uint8_t> vis(alt.size());
  R best = -std::numeric_limits<R>::infinity();
  for (std::size_t i = 0; i < alt.size(); ++i) {
    if (i == 0) {
      vis[0] = 1;
      continue;
    }
    const R slope = (static_cast<R>(alt[i]) - static_cast<R>(alt[0])) / (scale * static_cast<R>(i));
    vis[i] = slope > best ? 1 : 0;
    best = std::max(best, slope);
  }
  return vis;
}

TEST(LineOfSight, HandCheckedTerrain) {
  // slopes from point 0: 1, 1.5, 0.67, 1.5 (a tie: hidden), 0.8, 1.67, 1.29, 2.5
  const std::vector<float> terrain{10, 11, 13, 12, 16, 14, 20, 19, 30};
  const std::vector<std::uint8_t> seen{1, 1, 1, 0, 0, 0, 1, 0, 1};
  for (const float scale : {1.0f, 2.0f, 0.25f}) {
    std::vector<std::uint8_t> vis(terrain.size(), 0x5A);
    const auto end = cpu::line_of_sight(terrain.begin(), terrain.end(), scale, vis.begin());
    EXPECT_TRUE(end == vis.end());
    EXPECT_EQ(vis, seen) << "scale " << scale;
  }
  // an observer on a hill (scale 3): slopes -3.33, -0.83, -2.22, -0.083, -0.13, 1.67
  const std::vector<int> hill{100, 90, 95, 80, 99, 98, 130};
  std::vector<std::uint8_t> vis(hill.size(), 0x5A);
  cpu::line_of_sight(hill.begin(), hill.end(), 3, vis.begin());  // int altitudes: double slopes
  EXPECT_EQ(vis, (std::vector<std::uint8_t>{1, 1, 1, 0, 1, 0, 1}));
  // a flat terrain: every point ties with the first after the observer
  const std::vector<double> flat(6, 4.0);
  std::vector<int> vis_int(6, 5);
  cpu::line_of_sight(flat.begin(), flat.end(), 1.0, vis_int.begin());  // int outputs
  EXPECT_EQ(vis_int, (std::vector<int>{1, 1, 0, 0, 0, 0}));
  // one point: the observer; none: nothing written
  std::vector<std::uint8_t> one(1, 0x5A);
  cpu::line_of_sight(flat.begin(), flat.begin() + 1, 1.0, one.begin());
  EXPECT_EQ(one[0], 1);
  EXPECT_TRUE(cpu::line_of_sight(flat.begin(), flat.begin(), 1.0, one.begin()) == one.begin());
}

TEST(LineOfSight, RandomTerrainsAgainstSequential) {
  for (const std::size_t n : tally::test::test_sizes(std::size_t{1} << 21)) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    auto g = make_rng(31 + n);
    // a random walk with an upward drift, so that far points are seen now and then
    std::vector<float> alt(n);
    float h = 0.0f;
    for (auto& x : alt) x = h += static_cast<float>(std::uniform_real_distribution<double>(-1.0, 1.2)(g));
    std::vector<std::uint8_t> vis(n, 0x5A);
    cpu::line_of_sight(alt.data(), alt.data() + n, 1.5f, vis.data());
    ASSERT_TRUE(same(vis, sequential_visibility(alt, 1.5f)));
    // integer altitudes, many exact ties
    std::vector<std::int32_t> ialt(n);
    std::int32_t ih = 0;
    for (auto& x : ialt) x = ih += static_cast<std::int32_t>(g() % 7) - 2;
    std::fill(vis.begin(), vis.end(), std::uint8_t{0x5A});
    cpu::line_of_sight(ialt.begin(), ialt.end(), 2, vis.begin());
    ASSERT_TRUE(same(vis, sequential_visibility(ialt, 2.0))) << "int32 altitudes";
  }
}

TEST(LineOfSight, BadArguments) {
  const std::vector<float> alt(10, 1.0f);
  std::vector<std::uint8_t> vis(10);
  for (const float scale : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_EQ(invalid_argument_message([&] { cpu::line_of_sight(alt.begin(), alt.end(), scale, vis.begin()); }),
              "tally::cpu::line_of_sight: argument 'scale' must be > 0")
        << "scale " << scale;
  }
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::line_of_sight(alt.data() + 5, alt.data() + 2, 1.0f, vis.data());
                    }),
                    {"tally::cpu::line_of_sight: argument 'altitude_last'"}));
  std::uint8_t* null = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::line_of_sight(alt.data(), alt.data() + 10, 1.0f, null);
                    }),
                    {"tally::cpu::line_of_sight: argument 'visible_first'", "null"}));
}

// ============================================================================================
// lexicographic_compare
// ============================================================================================

template <class T>
int sequential_compare(const std::vector<T>& s, const std::vector<T>& t) {
  const std::size_t m = std::min(s.size(), t.size());
  for (std::size_t i = 0; i < m; ++i) {
    auto key = [](const T& c) {
      if constexpr (std::is_same_v<T, char>) {
        return static_cast<unsigned char>(c);
      } else {
        return c;
      }
    };
    if (key(s[i]) < key(t[i])) return -1;
    if (key(t[i]) < key(s[i])) return 1;
  }
  return s.size() < t.size() ? -1 : (t.size() < s.size() ? 1 : 0);
}

int sign(int x) { return (x > 0) - (x < 0); }

template <class S, class T>
void expect_both(const S& s, const T& t, int want, const std::string& what) {
  EXPECT_EQ(cpu::lexicographic_compare(s.begin(), s.end(), t.begin(), t.end()), want) << what;
  EXPECT_EQ(cpu::lexicographic_compare_by_compaction(s.begin(), s.end(), t.begin(), t.end()), want)
      << what << " (by compaction)";
}

TEST(LexicographicCompare, MaterialExampleAndSmallCases) {
  const std::string parallax = "parallax", parallel = "parallel";
  expect_both(parallax, parallel, -1, "parallax < parallel");
  expect_both(parallel, parallax, 1, "parallel > parallax");
  expect_both(parallax, parallax, 0, "parallax == parallax");
  expect_both(std::string("para"), parallax, -1, "a prefix is smaller");
  expect_both(parallax, std::string("para"), 1, "a prefix is smaller (reversed)");
  expect_both(std::string(), std::string(), 0, "empty == empty");
  expect_both(std::string(), std::string("a"), -1, "empty < a");
  expect_both(std::string("b"), std::string(), 1, "b > empty");
  expect_both(std::string("abd"), std::string("abcz"), 1, "the first difference decides, not the length");
  // char compares as unsigned char (as std::string and memcmp do): 0x80 > 'a'
  const std::string high("\x80"), low("a");
  expect_both(high, low, 1, "0x80 > a");
  EXPECT_EQ(sign(high.compare(low)), 1);
  // other element types compare with their <
  const std::vector<int> neg{-5, 3}, pos{2, 0};
  expect_both(neg, pos, -1, "int -5 < 2");
  const std::vector<signed char> sc{-1}, sc2{1};
  expect_both(sc, sc2, -1, "signed char -1 < 1");
  // the two strings may be of different iterator types
  const std::vector<char> vparallel(parallel.begin(), parallel.end());
  EXPECT_EQ(cpu::lexicographic_compare(parallax.data(), parallax.data() + 8, vparallel.begin(), vparallel.end()), -1);
}

template <class T>
void check_random_strings(std::size_t max_n, std::uint64_t salt) {
  for (const std::size_t n : tally::test::test_sizes(max_n)) {
    if (n == 0) continue;
    SCOPED_TRACE(::testing::Message() << "length " << n);
    auto g = make_rng(salt + n);
    std::vector<T> s(n);
    for (auto& c : s) c = static_cast<T>(g() % 200 + 20);
    // equal, then a difference at the first, a middle and the last position (both signs),
    // two differences of opposite signs (the first decides), then different lengths
    std::vector<std::vector<T>> ts;
    ts.push_back(s);
    for (const std::size_t p : {std::size_t{0}, n / 2, n / 3, n - 1}) {
      for (const int d : {1, -1}) {
        auto t = s;
        t[p] = static_cast<T>(t[p] + d);
        ts.push_back(t);
        if (p + 1 < n) {
          t[n - 1] = static_cast<T>(t[n - 1] - 3 * d);
          ts.push_back(t);
        }
      }
    }
    ts.emplace_back(s.begin(), s.end() - 1);
    auto longer = s;
    longer.push_back(static_cast<T>(1));
    ts.push_back(longer);
    for (std::size_t k = 0; k < ts.size(); ++k) {
      const int want = sequential_compare(s, ts[k]);
      expect_both(s, ts[k], want, "case " + std::to_string(k));
      expect_both(ts[k], s, -want, "case " + std::to_string(k) + " reversed");
    }
  }
}

TEST(LexicographicCompare, RandomStringsAgainstSequential) {
  check_random_strings<char>(std::size_t{1} << 21, 41);
  check_random_strings<std::int32_t>(std::size_t{1} << 19, 42);
}

TEST(LexicographicCompare, BadArguments) {
  const std::string s = "abc", t = "abd";
  // lengths of 2^61 and more cannot be keyed: refused before anything is read
  const auto huge = tally::make_transform_iterator(counting64(0), square_mod{});
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::lexicographic_compare(huge, huge + (i64{1} << 61), huge, huge + 5);
                    }),
                    {"tally::cpu::lexicographic_compare: argument 's_last'", "2^61"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::lexicographic_compare(huge, huge + 5, huge, huge + INT64_MAX);
                    }),
                    {"tally::cpu::lexicographic_compare: argument 't_last'", "2^61"}));
  EXPECT_EQ(cpu::lexicographic_compare(huge, huge + 5, huge, huge + 6), -1);
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::lexicographic_compare(s.data() + 2, s.data(), t.data(), t.data() + 3);
                    }),
                    {"tally::cpu::lexicographic_compare: argument 's_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::lexicographic_compare(s.data(), s.data() + 3, t.data() + 3, t.data());
                    }),
                    {"tally::cpu::lexicographic_compare: argument 't_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::lexicographic_compare_by_compaction(s.data() + 2, s.data(), t.data(), t.data() + 3);
                    }),
                    {"tally::cpu::lexicographic_compare_by_compaction: argument 's_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::lexicographic_compare_by_compaction(s.data(), s.data() + 3, t.data() + 1, t.data());
                    }),
                    {"tally::cpu::lexicographic_compare_by_compaction: argument 't_last'"}));
}

// ============================================================================================
// polynomial_evaluate
// ============================================================================================

// Horner's rule in long double, and sum |c_k| |x|^k (the scale of the rounding error).
template <class C>
std::pair<double, double> horner(const std::vector<C>& c, double x) {
  long double p = 0.0L, m = 0.0L;
  for (std::size_t k = c.size(); k-- > 0;) {
    p = p * static_cast<long double>(x) + static_cast<long double>(c[k]);
    m = m * std::abs(static_cast<long double>(x)) + std::abs(static_cast<long double>(c[k]));
  }
  return {static_cast<double>(p), static_cast<double>(m)};
}

template <class T>
std::vector<T> random_coefficients(std::size_t n, std::uint64_t salt) {
  auto g = make_rng(salt + n);
  std::vector<T> c(n);
  for (auto& x : c) x = static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(g) + 0.25);
  return c;
}

template <class T>
::testing::AssertionResult value_close(T got, std::pair<double, double> want, double n) {
  const double tol = std::numeric_limits<T>::epsilon() * (16.0 + 4.0 * std::sqrt(n)) * (want.second + 1.0);
  if (std::abs(static_cast<double>(got) - want.first) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want.first << " (tolerance " << tol
                                       << ", seed " << tally::test::seed() << ")";
}

std::vector<i64> polynomial_degrees() {
  // 10000: sequential leaves; 200000 maps of 16 bytes: the parallel reduction
  std::vector<i64> d{0, 1, 2, 5, 100, 10000};
  if (!quick()) d.push_back(200000);
  return d;
}

template <class T>
void check_polynomial_single() {
  for (const i64 degree : polynomial_degrees()) {
    const auto c = random_coefficients<T>(static_cast<std::size_t>(degree + 1), 51);
    for (const double x : {0.0, 0.5, -0.75, 1.0, -1.0, 0.999, -1.0001, 2.0}) {
      if (std::abs(x) > 1.0 && degree > 100) continue;  // the value itself overflows
      SCOPED_TRACE(::testing::Message() << "degree " << degree << " x = " << x);
      const T xt = static_cast<T>(x);
      const auto want = horner(c, static_cast<double>(xt));
      const double terms = static_cast<double>(degree + 1);
      const auto got = cpu::polynomial_evaluate(c.begin(), c.end(), xt);
      static_assert(std::is_same_v<decltype(got), const T>);
      EXPECT_TRUE(value_close(got, want, terms)) << "Horner as a reduction";
      const auto by_powers = cpu::polynomial_evaluate_by_powers(c.data(), c.data() + c.size(), xt);
      static_assert(std::is_same_v<decltype(by_powers), const T>);
      EXPECT_TRUE(value_close(by_powers, want, terms)) << "by powers";
    }
  }
}

TEST(PolynomialEvaluate, FloatAgainstHorner) { check_polynomial_single<float>(); }
TEST(PolynomialEvaluate, DoubleAgainstHorner) { check_polynomial_single<double>(); }

TEST(PolynomialEvaluate, HandCheckedAndTypes) {
  // p(x) = 1 + 2x + 3x^2: p(2) = 17, p(-1) = 2
  const std::vector<int> c{1, 2, 3};
  EXPECT_EQ(cpu::polynomial_evaluate(c.begin(), c.end(), 2), 17);
  EXPECT_EQ(cpu::polynomial_evaluate(c.begin(), c.end(), -1), 2);
  EXPECT_EQ(cpu::polynomial_evaluate_by_powers(c.begin(), c.end(), 2), 17);
  static_assert(std::is_same_v<decltype(cpu::polynomial_evaluate(c.begin(), c.end(), 2)), int>);
  // int coefficients at a double x: double values
  static_assert(std::is_same_v<decltype(cpu::polynomial_evaluate(c.begin(), c.end(), 0.5)), double>);
  EXPECT_EQ(cpu::polynomial_evaluate(c.begin(), c.end(), 0.5), 2.75);
  // degree 0: the constant
  EXPECT_EQ(cpu::polynomial_evaluate(c.begin(), c.begin() + 1, 12345), 1);
  EXPECT_EQ(cpu::polynomial_evaluate_by_powers(c.begin(), c.begin() + 1, 12345), 1);
  // int64, exact: 39 coefficients at x = 3 (the maps' gate ends at 3^39 < 2^63), against
  // Horner in int64
  std::vector<i64> c64(39);
  for (std::size_t k = 0; k < c64.size(); ++k) c64[k] = static_cast<i64>(k % 5) - 2;
  i64 want = 0;
  for (std::size_t k = c64.size(); k-- > 0;) want = want * 3 + c64[k];
  EXPECT_EQ(cpu::polynomial_evaluate(c64.begin(), c64.end(), i64{3}), want);
  EXPECT_EQ(cpu::polynomial_evaluate_by_powers(c64.begin(), c64.end(), i64{3}), want);
  // uint32 wraps the same way in any association: a long, parallel, exact check
  const std::size_t terms = quick() ? 100001 : 1000001;
  std::vector<std::uint32_t> cu(terms);
  auto g = make_rng(52);
  for (auto& x : cu) x = static_cast<std::uint32_t>(g());
  std::uint32_t wu = 0;
  for (std::size_t k = terms; k-- > 0;) wu = wu * 2654435761u + cu[k];
  EXPECT_EQ(cpu::polynomial_evaluate(cu.begin(), cu.end(), 2654435761u), wu);
  EXPECT_EQ(cpu::polynomial_evaluate_by_powers(cu.begin(), cu.end(), 2654435761u), wu);
}

// Many points: ys[j] = p(xs[j]) by one segmented reduction; every y compared.
TEST(PolynomialEvaluate, ManyPointsAgainstHorner) {
  struct shape {
    i64 degree, points;
  };
  std::vector<shape> shapes{{0, 1},   {0, 1000}, {1, 7},      {5, 1},      {5, 3333},
                            {100, 1}, {100, 1000}, {10000, 5}, {1, 100000}};
  if (!quick()) shapes.push_back({50000, 3});  // segments long enough for the nested reduction
  for (const auto& sh : shapes) {
    SCOPED_TRACE(::testing::Message() << "degree " << sh.degree << ", " << sh.points << " points");
    const auto c = random_coefficients<double>(static_cast<std::size_t>(sh.degree + 1), 53);
    auto g = make_rng(54 + static_cast<std::uint64_t>(sh.points));
    std::vector<double> xs(static_cast<std::size_t>(sh.points));
    for (auto& x : xs) x = std::uniform_real_distribution<double>(-1.0, 1.0)(g);
    std::vector<double> ys(xs.size(), tally::test::poison<double>());
    std::vector<double> exact(xs.size()), magnitude(xs.size());
    for (std::size_t j = 0; j < xs.size(); ++j) std::tie(exact[j], magnitude[j]) = horner(c, xs[j]);
    const auto end = cpu::polynomial_evaluate(c.begin(), c.end(), xs.begin(), xs.end(), ys.begin());
    ASSERT_TRUE(end == ys.end());
    ASSERT_TRUE(close_to(ys, exact, magnitude, static_cast<double>(sh.degree + 1)));
    // float coefficients and points, float values stored to double ys
    const std::vector<float> cf(c.begin(), c.end()), xf(xs.begin(), xs.end());
    std::vector<double> exact_f(xs.size()), magnitude_f(xs.size());
    for (std::size_t j = 0; j < xs.size(); ++j) std::tie(exact_f[j], magnitude_f[j]) = horner(cf, xf[j]);
    std::vector<float> yf(xs.size(), tally::test::poison<float>());
    cpu::polynomial_evaluate(cf.data(), cf.data() + cf.size(), xf.data(), xf.data() + xf.size(), yf.data());
    ASSERT_TRUE(close_to(yf, exact_f, magnitude_f, static_cast<double>(sh.degree + 1))) << "float";
  }
  // no points: nothing written
  const std::vector<double> c{1.0, 2.0};
  std::vector<double> ys(2, 5.0);
  EXPECT_TRUE(cpu::polynomial_evaluate(c.begin(), c.end(), ys.begin(), ys.begin(), ys.begin()) == ys.begin());
  EXPECT_EQ(ys, std::vector<double>(2, 5.0));
}

TEST(PolynomialEvaluate, BadArguments) {
  const std::vector<double> c{1.0, 2.0, 3.0}, xs{0.5, 0.25};
  std::vector<double> ys(2);
  EXPECT_EQ(invalid_argument_message([&] { (void)cpu::polynomial_evaluate(c.begin(), c.begin(), 2.0); }),
            "tally::cpu::polynomial_evaluate: argument 'c_last' must be after c_first (degree >= 0)");
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)cpu::polynomial_evaluate(c.end(), c.begin(), 2.0); }),
                    {"tally::cpu::polynomial_evaluate: argument 'c_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      (void)cpu::polynomial_evaluate_by_powers(c.begin(), c.begin(), 2.0);
                    }),
                    {"tally::cpu::polynomial_evaluate_by_powers: argument 'c_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::polynomial_evaluate(c.begin(), c.end(), xs.end(), xs.begin(), ys.begin());
                    }),
                    {"tally::cpu::polynomial_evaluate: argument 'xs_last'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::polynomial_evaluate(c.begin(), c.begin(), xs.begin(), xs.end(), ys.begin());
                    }),
                    {"tally::cpu::polynomial_evaluate: argument 'c_last'"}));
  double* null = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::polynomial_evaluate(c.data(), c.data() + 3, xs.data(), xs.data() + 2, null);
                    }),
                    {"tally::cpu::polynomial_evaluate: argument 'ys_first'", "null"}));
  // m (degree + 1) beyond int64: refused before anything is read
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::polynomial_evaluate(c.data(), c.data() + 3, counting64(0), counting64(i64{1} << 62),
                                               ys.data());
                    }),
                    {"tally::cpu::polynomial_evaluate: argument 'm'", "int64"}));
}

// ============================================================================================
// spmv_csr
// ============================================================================================

template <class Off>
struct csr {
  i64 rows = 0, cols = 0;
  std::vector<Off> offsets;
  std::vector<std::int32_t> columns;
  std::vector<double> values;
};

// Empty rows, one dense row, rows of random lengths; column indices random (repeats allowed).
template <class Off>
csr<Off> random_csr(i64 rows, i64 cols, i64 max_row, std::uint64_t salt) {
  csr<Off> m;
  m.rows = rows;
  m.cols = cols;
  auto g = make_rng(salt);
  m.offsets.push_back(0);
  for (i64 r = 0; r < rows; ++r) {
    i64 len;
    if (r % 5 == 1) {
      len = 0;  // empty rows, also the first and consecutive ones below
    } else if (r == rows / 2) {
      len = cols;  // one dense row
    } else {
      len = static_cast<i64>(g() % static_cast<std::uint64_t>(max_row + 1));
    }
    if (r == 0 || (r >= 10 && r < 14)) len = 0;
    for (i64 k = 0; k < len; ++k) {
      m.columns.push_back(static_cast<std::int32_t>(len == cols ? k : static_cast<i64>(g() % static_cast<std::uint64_t>(cols))));
      m.values.push_back(std::uniform_real_distribution<double>(-1.0, 1.0)(g));
    }
    m.offsets.push_back(static_cast<Off>(m.offsets.back() + static_cast<Off>(len)));
  }
  return m;
}

template <class Off, class V, class X>
void sequential_spmv(const csr<Off>& m, const std::vector<V>& values, const std::vector<X>& x,
                     std::vector<double>& exact, std::vector<double>& magnitude) {
  exact.assign(static_cast<std::size_t>(m.rows), 0.0);
  magnitude.assign(static_cast<std::size_t>(m.rows), 0.0);
  for (i64 r = 0; r < m.rows; ++r) {
    long double s = 0.0L, a = 0.0L;
    for (auto k = static_cast<i64>(m.offsets[static_cast<std::size_t>(r)]);
         k < static_cast<i64>(m.offsets[static_cast<std::size_t>(r + 1)]); ++k) {
      const long double p = static_cast<long double>(values[static_cast<std::size_t>(k)]) *
                            static_cast<long double>(x[static_cast<std::size_t>(m.columns[static_cast<std::size_t>(k)])]);
      s += p;
      a += std::abs(p);
    }
    exact[static_cast<std::size_t>(r)] = static_cast<double>(s);
    magnitude[static_cast<std::size_t>(r)] = static_cast<double>(a);
  }
}

template <class Off>
void check_spmv(i64 rows, i64 cols, i64 max_row, std::uint64_t salt) {
  const auto m = random_csr<Off>(rows, cols, max_row, salt);
  SCOPED_TRACE(::testing::Message() << rows << " x " << cols << ", nnz " << m.values.size());
  auto g = make_rng(salt + 1);
  std::vector<double> x(static_cast<std::size_t>(cols));
  for (auto& v : x) v = std::uniform_real_distribution<double>(-2.0, 2.0)(g);
  std::vector<double> exact, magnitude;
  // double
  sequential_spmv(m, m.values, x, exact, magnitude);
  std::vector<double> y(static_cast<std::size_t>(rows), tally::test::poison<double>());
  const auto end = cpu::spmv_csr(m.offsets.begin(), m.offsets.end(), m.columns.begin(), m.values.begin(),
                                 x.begin(), y.begin());
  ASSERT_TRUE(end == y.end());
  ASSERT_TRUE(close_to(y, exact, magnitude, static_cast<double>(cols)));
  for (i64 r = 0; r < rows; ++r) {  // empty rows give exactly 0
    if (m.offsets[static_cast<std::size_t>(r)] == m.offsets[static_cast<std::size_t>(r + 1)]) {
      ASSERT_EQ(y[static_cast<std::size_t>(r)], 0.0) << "empty row " << r;
    }
  }
  // float values and x
  const std::vector<float> vf(m.values.begin(), m.values.end()), xf(x.begin(), x.end());
  sequential_spmv(m, vf, xf, exact, magnitude);
  std::vector<float> yf(static_cast<std::size_t>(rows), tally::test::poison<float>());
  cpu::spmv_csr(m.offsets.data(), m.offsets.data() + m.offsets.size(), m.columns.data(), vf.data(), xf.data(),
                yf.data());
  ASSERT_TRUE(close_to(yf, exact, magnitude, static_cast<double>(cols))) << "float";
  // int64 values, int32 x: exact
  std::vector<i64> vi(m.values.size());
  std::vector<std::int32_t> xi(x.size());
  for (std::size_t k = 0; k < vi.size(); ++k) vi[k] = static_cast<i64>(g() % 2001) - 1000;
  for (auto& v : xi) v = static_cast<std::int32_t>(g() % 201) - 100;
  std::vector<i64> want(static_cast<std::size_t>(rows), 0), yi(static_cast<std::size_t>(rows), tally::test::poison<i64>());
  for (i64 r = 0; r < rows; ++r) {
    for (auto k = static_cast<i64>(m.offsets[static_cast<std::size_t>(r)]);
         k < static_cast<i64>(m.offsets[static_cast<std::size_t>(r + 1)]); ++k) {
      want[static_cast<std::size_t>(r)] += vi[static_cast<std::size_t>(k)] * xi[static_cast<std::size_t>(m.columns[static_cast<std::size_t>(k)])];
    }
  }
  cpu::spmv_csr(m.offsets.begin(), m.offsets.end(), m.columns.begin(), vi.begin(), xi.begin(), yi.begin());
  ASSERT_TRUE(same(yi, want)) << "int64";
}

TEST(SpmvCsr, Int32OffsetsAgainstSequential) {
  check_spmv<std::int32_t>(1, 1, 1, 61);
  check_spmv<std::int32_t>(50, 20, 8, 62);
  check_spmv<std::int32_t>(1000, 500, 40, 63);
  check_spmv<std::int32_t>(quick() ? 20000 : 200000, 3000, 30, 64);  // parallel
}

TEST(SpmvCsr, Int64OffsetsAgainstSequential) {
  check_spmv<i64>(3, 7, 7, 65);
  check_spmv<i64>(1000, 1000, 100, 66);
  check_spmv<i64>(quick() ? 20000 : 200000, 100000, 30, 67);  // parallel, a 10^5-long dense row
}

TEST(SpmvCsr, HandCheckedAndEdges) {
  // [1 0 2]   [1]   [ 7]
  // [0 0 0] x [2] = [ 0]
  // [0 3 0]   [3]   [ 6]
  const std::vector<int> offsets{0, 2, 2, 3}, cols{0, 2, 1};
  const std::vector<double> values{1, 2, 3}, x{1, 2, 3};
  std::vector<double> y(3, -1.0);
  cpu::spmv_csr(offsets.begin(), offsets.end(), cols.begin(), values.begin(), x.begin(), y.begin());
  EXPECT_EQ(y, (std::vector<double>{7, 0, 6}));
  // no rows: offsets {0}, or no offsets at all
  std::vector<double> untouched(2, 9.0);
  EXPECT_TRUE(cpu::spmv_csr(offsets.begin(), offsets.begin() + 1, cols.begin(), values.begin(), x.begin(),
                            untouched.begin()) == untouched.begin());
  EXPECT_TRUE(cpu::spmv_csr(offsets.begin(), offsets.begin(), cols.begin(), values.begin(), x.begin(),
                            untouched.begin()) == untouched.begin());
  EXPECT_EQ(untouched, std::vector<double>(2, 9.0));
  // bad offsets: std::invalid_argument naming the offsets
  const std::vector<int> decreasing{0, 2, 1, 3}, negative{-1, 2, 3};
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::spmv_csr(decreasing.begin(), decreasing.end(), cols.begin(), values.begin(), x.begin(),
                                    y.begin());
                    }),
                    {"offsets", "non-decreasing"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::spmv_csr(negative.begin(), negative.end(), cols.begin(), values.begin(), x.begin(),
                                    y.begin());
                    }),
                    {"offsets", "negative"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      cpu::spmv_csr(offsets.end(), offsets.begin(), cols.begin(), values.begin(), x.begin(),
                                    y.begin());
                    }),
                    {"offsets_last"}));
}

// ============================================================================================
// allocate
// ============================================================================================

TEST(Allocate, SausageCutting) {
  // ten workers ask for pieces of a 100-inch sausage
  const std::vector<int> sizes{3, 5, 2, 7, 28, 4, 3, 0, 8, 1};
  const std::vector<int> cuts{3, 8, 10, 17, 45, 49, 52, 52, 60, 61};
  std::vector<int> offsets(sizes.size(), tally::test::poison<int>());
  const int total = cpu::allocate(sizes.begin(), sizes.end(), offsets.begin());
  EXPECT_EQ(total, 61);
  EXPECT_EQ(100 - total, 39);  // inches left
  EXPECT_EQ(offsets, (std::vector<int>{0, 3, 8, 10, 17, 45, 49, 52, 52, 60}));
  for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(offsets[i] + sizes[i], cuts[i]) << "worker " << i;
  // int64 offsets of int32 sizes
  std::vector<i64> wide(sizes.size(), tally::test::poison<i64>());
  const auto wide_total = cpu::allocate(sizes.data(), sizes.data() + sizes.size(), wide.data());
  static_assert(std::is_same_v<decltype(wide_total), const i64>);
  EXPECT_EQ(wide_total, 61);
  EXPECT_EQ(wide, (std::vector<i64>{0, 3, 8, 10, 17, 45, 49, 52, 52, 60}));
  // in place
  std::vector<int> in_place = sizes;
  EXPECT_EQ(cpu::allocate(in_place.begin(), in_place.end(), in_place.begin()), 61);
  EXPECT_EQ(in_place, offsets);
  // none: total 0, nothing written; negative sizes are not checked
  EXPECT_EQ(cpu::allocate(sizes.begin(), sizes.begin(), offsets.begin()), 0);
  const std::vector<int> back{4, -1, 2};
  std::vector<int> back_offsets(3);
  EXPECT_EQ(cpu::allocate(back.begin(), back.end(), back_offsets.begin()), 5);
  EXPECT_EQ(back_offsets, (std::vector<int>{0, 4, 3}));
}

TEST(Allocate, RandomAgainstSequential) {
  for (const std::size_t n : tally::test::test_sizes(std::size_t{1} << 22)) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    auto g = make_rng(71 + n);
    std::vector<i64> sizes(n), want(n);
    for (auto& s : sizes) s = static_cast<i64>(g() % 1000);
    i64 acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      want[i] = acc;
      acc += sizes[i];
    }
    std::vector<i64> offsets(n, tally::test::poison<i64>());
    ASSERT_EQ(cpu::allocate(sizes.begin(), sizes.end(), offsets.begin()), acc);
    ASSERT_TRUE(same(offsets, want));
    // in place, large enough for the parallel scan the in-place call must not take
    std::vector<i64> in_place = sizes;
    ASSERT_EQ(cpu::allocate(in_place.data(), in_place.data() + n, in_place.data()), acc);
    ASSERT_TRUE(same(in_place, want)) << "in place";
    // sizes through an iterator (a transform of the index), uint8 -> int32 offsets
    std::vector<std::uint8_t> small(n);
    for (auto& s : small) s = static_cast<std::uint8_t>(g() % 256);
    std::vector<std::int32_t> off32(n, tally::test::poison<std::int32_t>()), want32(n);
    std::int32_t acc32 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      want32[i] = acc32;
      acc32 += small[i];
    }
    ASSERT_EQ(cpu::allocate(small.cbegin(), small.cend(), off32.begin()), acc32);
    ASSERT_TRUE(same(off32, want32)) << "uint8 sizes, int32 offsets";
  }
}

// int32 sizes whose sum passes 2^31: int64 offsets hold it.
TEST(Allocate, Int32SizesInt64OffsetsBeyondTwoToThe31) {
  const std::size_t n = quick() ? (std::size_t{1} << 18) : (std::size_t{1} << 21);
  auto g = make_rng(72);
  std::vector<std::int32_t> sizes(n);
  for (auto& s : sizes) s = static_cast<std::int32_t>((i64{1} << 14) + static_cast<i64>(g() % (1u << 14)));
  std::vector<i64> offsets(n, tally::test::poison<i64>()), want(n);
  i64 acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    want[i] = acc;
    acc += sizes[i];
  }
  ASSERT_GT(acc, i64{1} << 32);
  ASSERT_EQ(cpu::allocate(sizes.begin(), sizes.end(), offsets.begin()), acc);
  ASSERT_TRUE(same(offsets, want));
}

TEST(Allocate, BadArguments) {
  const std::vector<int> sizes{1, 2, 3};
  std::vector<int> offsets(3);
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      (void)cpu::allocate(sizes.data() + 2, sizes.data(), offsets.data());
                    }),
                    {"tally::cpu::allocate: argument 'sizes_last'"}));
  int* null = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      (void)cpu::allocate(sizes.data(), sizes.data() + 3, null);
                    }),
                    {"tally::cpu::allocate: argument 'offsets_first'", "null"}));
}

}  // namespace
