// tests/device/test_reduce.cu -- the public reduction API of device/reduce.cuh: tally::reduce
// (the value, waited for) and tally::reduce_into (device memory, asynchronous) for every
// type and operator, the accumulator rule, unaligned and iterator inputs (beyond 2^32
// elements too), transform-reduce, non-commutative operators, argmin/argmax with ties,
// the maximum segment sum, float rounding and run-to-run determinism, empty inputs, bad
// arguments, caller storage (no allocation, CUDA graph capture), asynchrony, reduce from
// several host threads at once, and the agreement with the CPU backend.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <atomic>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "test_support.hpp"
#include "test_reduce_common.cuh"
#include "tally/device/scan.cuh"

namespace {

using namespace tally_reduce_test;
using tally::test::affine;
using tally::test::compose;

// ---- every type and operator through reduce and reduce_into -------------------------------
template <class T, class Op>
void check_public(std::int64_t max_n) {
  constexpr bool is_max = std::is_same_v<Op, tally::maximum>;
  const auto sz = reduce_sizes<T>(max_n);
  const auto h = exact_input<T>(static_cast<std::size_t>(sz.back()), 500 + sizeof(T) + is_max, is_max);
  const T init = exact_input<T>(1, 501, is_max)[0];
  const auto want = references<T, Op>(h, init, sz);
  device_buffer<T> in(h), out(1);
  const T* d = in.data();
  static_assert(std::is_same_v<decltype(tally::reduce(d, 1, init, Op{})), T>);
  for (std::size_t k = 0; k < sz.size(); ++k) {
    const std::int64_t n = sz[k];
    const T got = tally::reduce(d, n, init, Op{});
    ASSERT_EQ(got, want[k]) << "reduce, n = " << n << " (seed " << seed() << ")";
    out.poison();
    tally::reduce_into(d, n, out.data(), init, Op{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(out.download()[0], want[k]) << "reduce_into, n = " << n;
  }
}

// The sizes reach the single pass's long-input grid (blocks_per_sm blocks on every SM, more
// than 2 x 256 on GPUs of over 128 SMs: the finishing threads' third read) for the packed
// finish (int32 plus) and the descriptor finish of 4-byte (int32 max, float) and 8-byte
// (uint64 plus) totals.
TEST(Reduce, Int32Plus) { check_public<std::int32_t, tally::plus>(std::int64_t{1} << 26); }
TEST(Reduce, Int32Max) { check_public<std::int32_t, tally::maximum>(std::int64_t{1} << 26); }
TEST(Reduce, Uint64Plus) { check_public<std::uint64_t, tally::plus>(std::int64_t{1} << 25); }
TEST(Reduce, Uint64Max) { check_public<std::uint64_t, tally::maximum>(std::int64_t{1} << 24); }
TEST(Reduce, FloatPlus) { check_public<float, tally::plus>(std::int64_t{1} << 26); }
TEST(Reduce, FloatMax) { check_public<float, tally::maximum>(std::int64_t{1} << 24); }
TEST(Reduce, DoublePlus) { check_public<double, tally::plus>(std::int64_t{1} << 24); }
TEST(Reduce, DoubleMax) { check_public<double, tally::maximum>(std::int64_t{1} << 24); }

// ---- float rounding: real-valued inputs against a double-double reference ------------------
// Each float addition rounds; the bound is (depth of the summation tree) x eps x sum|x|,
// and the single pass's depth is at most a few dozen plus n / (threads x lanes) (the
// sequential part of a thread), which 64 + 4 log2 n + n / 2^15 covers on any GPU with at
// least 8 SMs.
double rounding_tolerance(std::int64_t n, double eps, double sum_abs) {
  return (64.0 + 4.0 * std::log2(static_cast<double>(n) + 1.0) + static_cast<double>(n) / 32768.0) *
         eps * sum_abs;
}

template <class T>
void check_rounding(std::int64_t max_n) {
  const auto sz = reduce_sizes<T>(max_n);
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(sz.back()), 600 + sizeof(T));
  device_buffer<T> in(h);
  const T* d = in.data();
  double_double acc{0.0, 0.0};
  double sum_abs = 0.0;
  std::size_t i = 0;
  for (std::int64_t n : sz) {
    for (; i < static_cast<std::size_t>(n); ++i) {
      acc = double_double_plus{}(acc, double_double{static_cast<double>(h[i]), 0.0});
      sum_abs += std::fabs(static_cast<double>(h[i]));
    }
    const double want = acc.hi + acc.lo;
    const double tol = rounding_tolerance(n, std::numeric_limits<T>::epsilon(), sum_abs);
    const T got = tally::reduce(d, n, T(0));
    ASSERT_LE(std::fabs(static_cast<double>(got) - want), tol) << "n = " << n;
  }
}

TEST(Reduce, FloatRounding) { check_rounding<float>(std::int64_t{1} << 26); }
TEST(Reduce, DoubleRounding) { check_rounding<double>(std::int64_t{1} << 24); }

// ---- the accumulator rule ----------------------------------------------------------------
TEST(Reduce, AccumulatesInInitType) {
  const std::int64_t n = 100003;
  auto g = rng(11);
  std::vector<std::int32_t> h(n);
  for (auto& x : h) x = std::uniform_int_distribution<std::int32_t>(1 << 29, 1 << 30)(g);
  std::int64_t want = 5;
  for (auto x : h) want += x;  // about 8e13: far beyond int32
  device_buffer<std::int32_t> in(h);
  device_buffer<std::int64_t> out(1);
  const std::int32_t* d = in.data();
  static_assert(std::is_same_v<decltype(tally::reduce(d, n, std::int64_t{5})), std::int64_t>);
  EXPECT_EQ(tally::reduce(d, n, std::int64_t{5}), want);
  out.poison();
  tally::reduce_into(d, n, out.data(), std::int64_t{5});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.download()[0], want);
  for (algorithm a : tally::reduction::all_algorithms) {
    out.poison();
    tally::reduction::run(a, d, n, out.data(), std::int64_t{5});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(out.download()[0], want) << tally::reduction::algorithm_name(a);
  }
}

// ---- unaligned pointers: every offset within a 16-byte vector -----------------------------
template <class T>
void check_unaligned() {
  const std::int64_t max_n = quick() ? 50000 : 3000000;
  const auto h = exact_input<T>(static_cast<std::size_t>(max_n) + 16, 700 + sizeof(T), false);
  device_buffer<T> in(h);
  const T* d = in.data();
  for (int offset = 1; offset < static_cast<int>(16 / sizeof(T)); ++offset) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5},
                           std::int64_t{17}, std::int64_t{4097}, std::int64_t{70001}, max_n}) {
      if (n > max_n) continue;  // quick mode: the buffer holds max_n + 16 elements
      wide_t<T> want = 3;
      for (std::int64_t i = 0; i < n; ++i) want += static_cast<wide_t<T>>(h[offset + i]);
      ASSERT_EQ(tally::reduce(d + offset, n, T(3)), narrow<T>(want)) << "offset " << offset << ", n = " << n;
    }
  }
}

TEST(Reduce, UnalignedInt32) { check_unaligned<std::int32_t>(); }
TEST(Reduce, UnalignedFloat) { check_unaligned<float>(); }
TEST(Reduce, UnalignedUint64) { check_unaligned<std::uint64_t>(); }
TEST(Reduce, UnalignedDouble) { check_unaligned<double>(); }

// ---- iterator inputs and transform-reduce ----------------------------------------------------
struct mod_1000 {
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return i % 1000; }
};
struct square_int {
  __host__ __device__ std::int64_t operator()(std::int32_t x) const {
    return static_cast<std::int64_t>(x) * x;
  }
};

// sum of i % 1000 over i < n
std::int64_t sum_mod_1000(std::int64_t n) {
  const std::int64_t r = n % 1000;
  return n / 1000 * 499500 + r * (r - 1) / 2;
}

TEST(Reduce, IteratorInputs) {
  thrust::counting_iterator<std::int64_t> first(0);
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{1000003}, std::int64_t{1} << 24}) {
    EXPECT_EQ(tally::reduce(first, n, std::int64_t{0}), n * (n - 1) / 2) << n;
    auto mapped = thrust::make_transform_iterator(first, mod_1000{});
    EXPECT_EQ(tally::reduce(mapped, n, std::int64_t{7}), 7 + sum_mod_1000(n)) << n;
    auto mine = tally::make_transform_iterator(first, mod_1000{});
    EXPECT_EQ(tally::reduce(mine, n, std::int64_t{0}, tally::maximum{}), n >= 1000 ? 999 : n - 1) << n;
  }
  // transform_reduce and transform_reduce_into over a device pointer (sum of squares)
  const std::int64_t n = 777777;
  const auto h = exact_input<std::int32_t>(n, 800, false);
  std::int64_t want = -1;
  for (auto x : h) want += static_cast<std::int64_t>(x) * x;
  device_buffer<std::int32_t> in(h);
  device_buffer<std::int64_t> out(1);
  const std::int32_t* d = in.data();
  EXPECT_EQ(tally::transform_reduce(d, n, std::int64_t{-1}, tally::plus{}, square_int{}), want);
  out.poison();
  tally::transform_reduce_into(d, n, out.data(), std::int64_t{-1}, tally::plus{}, square_int{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.download()[0], want);
}

// More than 2^32 elements (64-bit n all the way down), from an iterator (no memory).
TEST(Reduce, MoreThan2To32Elements) {
  if (quick()) GTEST_SKIP() << "quick mode";
  const std::int64_t n = (std::int64_t{1} << 32) + 12345;
  auto mapped = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), mod_1000{});
  EXPECT_EQ(tally::reduce(mapped, n, std::int64_t{0}), sum_mod_1000(n));
}

// ---- non-commutative operators -----------------------------------------------------------
template <class T, class Op>
void check_noncommutative(std::int64_t max_n) {
  const auto sz = reduce_sizes<T>(max_n);
  auto g = rng(900 + sizeof(T));
  std::vector<T> h(static_cast<std::size_t>(sz.back()));
  for (auto& x : h) x = random_element<T>(g);
  const T init = random_element<T>(g);
  device_buffer<T> in(h), out(1);
  const T* d = in.data();
  T acc = init;
  std::size_t i = 0;
  for (std::int64_t n : sz) {
    for (; i < static_cast<std::size_t>(n); ++i) acc = Op{}(acc, h[i]);
    ASSERT_EQ(tally::reduce(d, n, init, Op{}), acc) << "n = " << n;
    out.poison();
    tally::reduce_into(d, n, out.data(), init, Op{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(out.download()[0], acc) << "reduce_into, n = " << n;
    ASSERT_EQ(tally::cpu::reduce(h.begin(), h.begin() + n, init, Op{}), acc) << "cpu, n = " << n;
  }
}

TEST(Reduce, AffineCompose) { check_noncommutative<affine, compose>(std::int64_t{1} << 24); }
TEST(Reduce, Mat2Product) { check_noncommutative<mat2, mat2_product>(std::int64_t{1} << 22); }

// ---- argmin / argmax: ties go to the first index -------------------------------------------
template <class T>
void check_arg(std::int64_t n) {
  auto g = rng(1000 + static_cast<std::uint64_t>(n));
  std::vector<T> h(static_cast<std::size_t>(n));
  for (auto& x : h) x = static_cast<T>(std::uniform_int_distribution<int>(0, 9)(g));  // many ties
  device_buffer<T> in(h);
  const T* d = in.data();
  const auto mn = tally::argmin(d, n);
  const auto mx = tally::argmax(d, n);
  if (n == 0) {
    EXPECT_EQ(mn.index, -1);
    EXPECT_EQ(mx.index, -1);
    return;
  }
  const auto min_it = std::min_element(h.begin(), h.end());  // the first smallest
  const auto max_it = std::max_element(h.begin(), h.end());  // the first largest
  EXPECT_EQ(mn.index, min_it - h.begin()) << "n = " << n;
  EXPECT_EQ(mn.value, *min_it);
  EXPECT_EQ(mx.index, max_it - h.begin()) << "n = " << n;
  EXPECT_EQ(mx.value, *max_it);
}

TEST(Reduce, ArgMinArgMaxFirstIndexWins) {
  for (std::int64_t n : reduce_sizes<std::int32_t>(std::int64_t{1} << 22)) {
    check_arg<std::int32_t>(n);
    if (n <= (std::int64_t{1} << 20)) check_arg<float>(n);
  }
  // the extreme only at the very end, and only at the very start
  const std::int64_t n = quick() ? 100003 : 1000003;
  std::vector<float> h(n, 5.0f);
  h[n - 1] = -1.0f;
  h[0] = 9.0f;
  device_buffer<float> in(h);
  const float* d = in.data();
  EXPECT_EQ(tally::argmin(d, n).index, n - 1);
  EXPECT_EQ(tally::argmax(d, n).index, 0);
}

// ---- the maximum segment sum (MSSP) --------------------------------------------------------
std::int64_t kadane(const std::vector<std::int32_t>& h, std::int64_t n) {
  std::int64_t best = 0;
  std::int64_t ending = 0;  // the best sum of a segment ending here (empty allowed)
  for (std::int64_t i = 0; i < n; ++i) {
    ending = std::max<std::int64_t>(0, ending + h[i]);
    best = std::max(best, ending);
  }
  return best;
}

TEST(Reduce, MaxSegmentSum) {
  const auto sz = reduce_sizes<std::int32_t>(std::int64_t{1} << 22);
  const auto h = exact_input<std::int32_t>(static_cast<std::size_t>(sz.back()), 1100, false);
  device_buffer<std::int32_t> in(h);
  const std::int32_t* d = in.data();
  for (std::int64_t n : sz) {
    ASSERT_EQ(tally::max_segment_sum(d, n), kadane(h, n)) << "n = " << n;
  }
  // only negative elements: the empty segment, 0
  std::vector<std::int32_t> negative(100000, -3);
  device_buffer<std::int32_t> neg(negative);
  EXPECT_EQ(tally::max_segment_sum(static_cast<const std::int32_t*>(neg.data()), 100000), 0);
  // the 4-tuple operator through tally::reduce, with a float input (integer-valued: exact)
  const std::int64_t n = std::min<std::int64_t>(300007, sz.back());
  std::vector<float> f(h.begin(), h.begin() + n);
  device_buffer<float> fin(f);
  auto mapped = tally::make_transform_iterator(static_cast<const float*>(fin.data()),
                                               tally::mssp_map<double>{});
  const auto r = tally::reduce(mapped, n, tally::mssp_value<double>{0, 0, 0, 0}, tally::mssp_op{});
  EXPECT_EQ(r.mss, static_cast<double>(kadane(h, n)));
  double total = 0;
  for (std::int64_t i = 0; i < n; ++i) total += h[i];
  EXPECT_EQ(r.ts, total);
}

// ---- determinism: identical float bits run to run -----------------------------------------
TEST(Reduce, DeterministicFloatBits) {
  const std::int64_t n = quick() ? (std::int64_t{1} << 18) : (std::int64_t{1} << 24);
  auto g = rng(1200);
  std::vector<float> h(static_cast<std::size_t>(n));
  double exact = 0.0;
  double sum_abs = 0.0;
  for (auto& x : h) {
    const double magnitude = std::pow(10.0, std::uniform_real_distribution<double>(-6.0, 6.0)(g));
    x = static_cast<float>((g() & 1) ? magnitude : -magnitude);  // mixed magnitudes and signs
    exact += x;
    sum_abs += std::fabs(x);
  }
  device_buffer<float> in(h);
  device_buffer<float> out(1);
  const float* d = in.data();
  tally::options o;
  o.deterministic = true;
  auto bits = [](float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  const float first = tally::reduce(d, n, 0.0f, tally::plus{}, o);
  EXPECT_LE(std::fabs(static_cast<double>(first) - exact),
            rounding_tolerance(n, std::numeric_limits<float>::epsilon(), sum_abs));
  for (int run = 0; run < 5; ++run) {
    EXPECT_EQ(bits(tally::reduce(d, n, 0.0f, tally::plus{}, o)), bits(first)) << "run " << run;
    out.poison();
    tally::reduce_into(d, n, out.data(), 0.0f, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(bits(out.download()[0]), bits(first)) << "reduce_into, run " << run;
  }
  for (algorithm a : tally::reduction::all_algorithms) {
    if (a == algorithm::atomic) {
      EXPECT_THROW(tally::reduction::atomic(d, n, out.data(), 0.0f, tally::plus{}, o),
                   std::invalid_argument);
      continue;
    }
    float reference = 0.0f;
    for (int run = 0; run < 5; ++run) {
      out.poison();
      tally::reduction::run(a, d, n, out.data(), 0.0f, tally::plus{}, o);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const float got = out.download()[0];
      if (run == 0) {
        reference = got;
        EXPECT_LE(std::fabs(static_cast<double>(got) - exact),
                  rounding_tolerance(n, std::numeric_limits<float>::epsilon(), sum_abs))
            << tally::reduction::algorithm_name(a);
      }
      EXPECT_EQ(bits(got), bits(reference)) << tally::reduction::algorithm_name(a) << " run " << run;
    }
  }
}

// ---- empty inputs ------------------------------------------------------------------------
TEST(Reduce, EmptyReturnsInit) {
  const std::int32_t* null_in = nullptr;
  EXPECT_EQ(tally::reduce(null_in, 0, 42), 42);
  EXPECT_EQ(tally::reduce(null_in, 0, std::int64_t{1} << 40), std::int64_t{1} << 40);
  EXPECT_EQ(tally::reduce(static_cast<const float*>(nullptr), 0, -2.5f, tally::maximum{}), -2.5f);
  const mat2 init = {{1, 2, 3, 4}};
  EXPECT_EQ(tally::reduce(static_cast<const mat2*>(nullptr), 0, init, mat2_product{}), init);
  device_buffer<std::int32_t> out(1);
  out.poison();
  tally::reduce_into(null_in, 0, out.data(), 42);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.download()[0], 42);
  for (algorithm a : tally::reduction::all_algorithms) {
    out.poison();
    tally::reduction::run(a, null_in, 0, out.data(), 43);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(out.download()[0], 43) << tally::reduction::algorithm_name(a);
  }
}

// ---- bad arguments -------------------------------------------------------------------------
TEST(Reduce, BadArguments) {
  device_buffer<std::int32_t> in(10);
  device_buffer<std::int32_t> out(1);
  const std::int32_t* d = in.data();
  const std::int32_t* null_in = nullptr;
  std::int32_t* null_out = nullptr;
  auto has = [](const std::string& message, const char* part) {
    return message.find(part) != std::string::npos;
  };
  std::string m = invalid_argument_message([&] { (void)tally::reduce(d, -1, 0); });
  EXPECT_TRUE(has(m, "tally::reduce") && has(m, "'n'")) << m;
  m = invalid_argument_message([&] { (void)tally::reduce(null_in, 5, 0); });
  EXPECT_TRUE(has(m, "tally::reduce") && has(m, "'in'")) << m;
  m = invalid_argument_message([&] { tally::reduce_into(d, -3, out.data(), 0); });
  EXPECT_TRUE(has(m, "tally::reduce_into") && has(m, "'n'")) << m;
  m = invalid_argument_message([&] { tally::reduce_into(null_in, 5, out.data(), 0); });
  EXPECT_TRUE(has(m, "tally::reduce_into") && has(m, "'in'")) << m;
  m = invalid_argument_message([&] { tally::reduce_into(d, 5, null_out, 0); });
  EXPECT_TRUE(has(m, "tally::reduce_into") && has(m, "'out'")) << m;
  m = invalid_argument_message([&] { tally::reduce_into(d, 0, null_out, 0); });
  EXPECT_TRUE(has(m, "'out'")) << m;
  m = invalid_argument_message([&] { (void)tally::reduce_storage_bytes<const std::int32_t*, int>(-1); });
  EXPECT_TRUE(has(m, "reduce_storage_bytes") && has(m, "'n'")) << m;
  m = invalid_argument_message([&] { (void)tally::argmin(null_in, 3); });
  EXPECT_TRUE(has(m, "tally::argmin") && has(m, "'in'")) << m;
  m = invalid_argument_message([&] { (void)tally::max_segment_sum(d, -1); });
  EXPECT_TRUE(has(m, "tally::max_segment_sum") && has(m, "'n'")) << m;
  for (algorithm a : tally::reduction::all_algorithms) {
    m = invalid_argument_message([&] { tally::reduction::run(a, d, -1, out.data(), 0); });
    EXPECT_TRUE(has(m, "tally::reduction::") && has(m, "'n'")) << m;
    m = invalid_argument_message([&] { tally::reduction::run(a, null_in, 4, out.data(), 0); });
    EXPECT_TRUE(has(m, "'in'")) << m;
    m = invalid_argument_message([&] { tally::reduction::run(a, d, 4, null_out, 0); });
    EXPECT_TRUE(has(m, "'out'")) << m;
    m = invalid_argument_message(
        [&] { (void)tally::reduction::storage_bytes<const std::int32_t*, int>(a, -2); });
    EXPECT_TRUE(has(m, "'n'")) << m;
  }
  // atomics that do not exist: a run-time error through run(), naming the argument
  const mat2* mats = nullptr;
  device_buffer<mat2> mat_out(1);
  m = invalid_argument_message([&] {
    tally::reduction::run(algorithm::atomic, mats, 0, mat_out.data(), mat2{{1, 0, 0, 1}}, mat2_product{});
  });
  EXPECT_TRUE(has(m, "'algorithm'")) << m;
  // too small caller storage
  const std::int64_t n = 1 << 22;
  device_buffer<std::int32_t> big(static_cast<std::size_t>(n));
  const std::size_t need = tally::reduce_storage_bytes<const std::int32_t*, int>(n);
  ASSERT_GT(need, 0u);
  caller_storage small(need - 1);
  tally::options o;
  o.storage = small.get();
  m = invalid_argument_message([&] {
    (void)tally::reduce(static_cast<const std::int32_t*>(big.data()), n, 0, tally::plus{}, o);
  });
  EXPECT_TRUE(has(m, "options.storage") && has(m, "reduce_storage_bytes")) << m;
}

// ---- caller storage: no allocation, garbage contents, reuse, graph capture -----------------
TEST(Reduce, CallerStorage) {
  const std::int64_t n = quick() ? 200000 : 5000000;
  const auto h = exact_input<std::int32_t>(static_cast<std::size_t>(n), 1300, false);
  std::int64_t wide = 0;
  for (auto x : h) wide += x;
  const std::int32_t want = narrow<std::int32_t>(wide);
  device_buffer<std::int32_t> in(h), out(1);
  const std::int32_t* d = in.data();
  EXPECT_EQ((tally::reduce_storage_bytes<const std::int32_t*, std::int32_t>(0)), 0u);
  const std::size_t bytes = tally::reduce_storage_bytes<const std::int32_t*, std::int32_t>(n);
  ASSERT_GT(bytes, 0u);
  caller_storage storage(bytes);  // garbage: the finish counter must not rely on it
  tally::options o;
  o.storage = storage.get();

  // No allocation from tally's pool: its high-water mark stays where it was (the memory in
  // use at the start: the per-stream tile states that earlier tests left in the pool); a
  // call without caller storage raises it, which shows the check can fail.
  cudaMemPool_t pool = tally::detail::scratch_pool("test");
  std::uint64_t zero = 0;
  std::uint64_t base = 0;
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  TALLY_TEST_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &base));
  TALLY_TEST_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  for (int run = 0; run < 3; ++run) {
    out.poison();
    tally::reduce_into(d, n, out.data(), 0, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(out.download()[0], want) << "reduce_into with caller storage, run " << run;
    EXPECT_EQ(tally::reduce(d, n, 0, tally::plus{}, o), want) << "reduce with caller storage, run " << run;
    EXPECT_EQ(tally::reduce(d, n / 3, 0, tally::plus{}, o),
              narrow<std::int32_t>(std::accumulate(h.begin(), h.begin() + n / 3, std::int64_t{0})));
  }
  std::uint64_t high = 1;
  TALLY_TEST_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  EXPECT_EQ(high, base) << "a call with caller storage allocated from the pool";
  // without caller storage the chunked reduction takes its partials from the pool (reduce
  // itself does not: its result goes to a pinned host slot, not the pool)
  tally::reduction::chunked(d, n, out.data(), 0);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.download()[0], want);
  TALLY_TEST_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high));
  EXPECT_GT(high, base) << "the pool check cannot see allocations";

  // Captured in a CUDA graph and replayed: the counter is zeroed inside the graph.
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  o.stream = stream;
  tally::reduce_into(d, n, out.data(), 0, tally::plus{}, o);  // warm the caches of the call
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  replay_captured(
      stream, cudaStreamCaptureModeGlobal,
      [&] { tally::reduce_into(d, n, out.data(), 0, tally::plus{}, o); },
      [&](int) { TALLY_TEST_CUDA(cudaMemsetAsync(out.data(), 0xA5, sizeof(std::int32_t), stream)); },
      [&](int replay) { EXPECT_EQ(out.download()[0], want) << "graph replay " << replay; });
  cudaStreamDestroy(stream);
}

// ---- the descriptor finish (float sums and every operator but integer plus) ------------------
// Its state lives in caller storage (garbage before the call), in a call-owned allocation
// while a graph is captured, or in the stream's tile state, which the single-pass scans on
// the same stream share: a reduce between two scans must leave it usable for both.
TEST(Reduce, DescriptorFinishStorage) {
  const std::int64_t n = quick() ? 300001 : 3000001;
  const auto h = exact_input<float>(static_cast<std::size_t>(n), 1350, false);
  double wide = 0.25;
  for (auto x : h) wide += x;
  const auto want = static_cast<float>(wide);
  device_buffer<float> in(h), out(1), scanned(static_cast<std::size_t>(n));
  const float* d = in.data();
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;

  caller_storage storage(tally::reduce_storage_bytes<const float*, float>(n));
  tally::options oc = o;
  oc.storage = storage.get();
  for (int run = 0; run < 3; ++run) {
    out.poison();
    tally::reduce_into(d, n, out.data(), 0.25f, tally::plus{}, oc);
    TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(out.download()[0], want) << "caller storage, run " << run;
  }

  // Interleaved with scans on the same stream (the same per-stream state).
  for (int run = 0; run < 3; ++run) {
    tally::inclusive_scan(d, scanned.data(), n, tally::plus{}, o);
    out.poison();
    tally::reduce_into(d, n, out.data(), 0.25f, tally::plus{}, o);
    tally::inclusive_scan(d, scanned.data(), n, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(out.download()[0], want) << "between scans, run " << run;
    EXPECT_EQ(static_cast<double>(scanned.download()[static_cast<std::size_t>(n - 1)]), wide - 0.25)
        << "the scan after a reduce, run " << run;
  }

  // 8-byte values: the scans' descriptors (one to a 128-byte line) and the reduce's finish
  // (packed) are two layouts of the tags (single_pass/tile_state.cuh), so two buffers of the stream;
  // interleaved, both stay right.
  {
    const std::vector<double> hd(h.begin(), h.end());  // the float inputs' sums are exact
    device_buffer<double> din(hd), dout(1), dscanned(static_cast<std::size_t>(n));
    for (int run = 0; run < 3; ++run) {
      tally::inclusive_scan(din.data(), dscanned.data(), n, tally::plus{}, o);
      dout.poison();
      tally::reduce_into(din.data(), n, dout.data(), 0.25, tally::plus{}, o);
      tally::inclusive_scan(din.data(), dscanned.data(), n, tally::plus{}, o);
      TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
      EXPECT_EQ(dout.download()[0], wide) << "double, between scans, run " << run;
      EXPECT_EQ(dscanned.download()[static_cast<std::size_t>(n - 1)], wide - 0.25)
          << "double, the scan after a reduce, run " << run;
    }
  }

  // Captured without caller storage, replayed.
  replay_captured(
      stream, cudaStreamCaptureModeGlobal,
      [&] { tally::reduce_into(d, n, out.data(), 0.25f, tally::plus{}, o); },
      [&](int) { out.poison(); },
      [&](int replay) { EXPECT_EQ(out.download()[0], want) << "graph replay " << replay; });
  cudaStreamDestroy(stream);
}

// ---- reduce_into does not wait; reduce waits -----------------------------------------------
TEST(Reduce, ReduceIntoIsAsynchronous) {
  const std::int64_t n = quick() ? 300001 : 3000001;
  const auto h = exact_input<float>(static_cast<std::size_t>(n), 1400, false);
  double want = 0.5;
  for (auto x : h) want += x;
  device_buffer<float> in(h), out(1);
  const float* d = in.data();
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  tally::reduce_into(d, n, out.data(), 0.5f, tally::plus{}, o);  // warm-up (first-use setup)
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  out.poison();
  hold_stream_kernel<<<1, 1, 0, stream>>>(300'000'000ull);  // 0.3 s
  tally::reduce_into(d, n, out.data(), 0.5f, tally::plus{}, o);
  EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady) << "reduce_into waited for the stream";
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ(static_cast<double>(out.download()[0]), want);
  // reduce on the same stream waits for the work before it and returns the value
  hold_stream_kernel<<<1, 1, 0, stream>>>(50'000'000ull);
  EXPECT_EQ(static_cast<double>(tally::reduce(d, n, 0.5f, tally::plus{}, o)), want);
  cudaStreamDestroy(stream);
}

// ---- reduce's wait: for its own call's value -----------------------------------------------
// tally::reduce waits for the number its kernel writes after the value (reduce_common.cuh,
// wait_for_result), not for the stream. The slot is shared by every reduce of one thread
// with the same accumulator type, whatever the input and operator types, so the number
// must tell this call's value from the last call's: here the last call left another value
// in the slot, and this call's kernel runs only after a 50 ms hold, so a wait that took
// the slot's old contents would return at once, with the other value. Input types
// (pointer, transform iterator) and operators alternate, with one Acc (int64).
struct times_two {
  __host__ __device__ std::int64_t operator()(std::int32_t x) const { return std::int64_t{2} * x; }
};

TEST(Reduce, ValueIsThisCallsAfterAnotherCallsValue) {
  const std::int64_t n = 100003;
  const auto h = exact_input<std::int32_t>(static_cast<std::size_t>(n), 1460, false);
  const std::int64_t sum = std::accumulate(h.begin(), h.end(), std::int64_t{0});
  const std::int64_t top = std::max<std::int64_t>(-1000, *std::max_element(h.begin(), h.end()));
  device_buffer<std::int32_t> in(h);
  const std::int32_t* d = in.data();
  const auto doubled = tally::make_transform_iterator(d, times_two{});
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(tally::reduce(d, n, std::int64_t{0}, tally::plus{}, o), sum);
    hold_stream_kernel<<<1, 1, 0, stream>>>(50'000'000ull);
    ASSERT_EQ(tally::reduce(doubled, n, std::int64_t{0}, tally::plus{}, o), 2 * sum) << "round " << round;
    hold_stream_kernel<<<1, 1, 0, stream>>>(50'000'000ull);
    ASSERT_EQ(tally::reduce(d, n, std::int64_t{-1000}, tally::maximum{}, o), top) << "round " << round;
    hold_stream_kernel<<<1, 1, 0, stream>>>(50'000'000ull);
    ASSERT_EQ(tally::reduce(d, 1000, std::int64_t{7}, tally::plus{}, o),  // one block
              7 + std::accumulate(h.begin(), h.begin() + 1000, std::int64_t{0}))
        << "round " << round;
  }
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// A graph cannot return a value to the host: reduce on a stream being captured refuses
// with std::invalid_argument naming options.stream, before it queues anything, so the
// capture is still valid and can be ended (an empty graph).
TEST(Reduce, ValueOnACapturedStreamIsRefused) {
  const std::int64_t n = 1 << 20;
  device_buffer<float> in(static_cast<std::size_t>(n));
  const float* d = in.data();
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const std::string m = invalid_argument_message([&] { (void)tally::reduce(d, n, 0.0f, tally::plus{}, o); });
  for (const char* part : {"tally::reduce", "'options.stream'", "reduce_into"}) {
    EXPECT_NE(m.find(part), std::string::npos) << m;
  }
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  std::size_t nodes = 1;
  if (graph != nullptr) {
    TALLY_TEST_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
    TALLY_TEST_CUDA(cudaGraphDestroy(graph));
  }
  EXPECT_EQ(nodes, 0u);
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// ---- reduce's result slot: one per host thread and accumulator type ---------------------------
// tally::reduce's kernel writes its result into pinned host memory kept per host thread and
// type (reduce_common.cuh, host_result_slot). Threads reducing different lengths at the same
// time, each on its own stream, int32 and float interleaved, must each read their own
// values: a slot shared between threads or types would hand one call another's result.
TEST(Reduce, ValuesFromManyThreads) {
  constexpr int threads = 4;
  const int rounds = quick() ? 40 : 200;
  const std::int64_t n = quick() ? 200003 : 2000003;
  const auto hi = exact_input<std::int32_t>(static_cast<std::size_t>(n), 1450, false);
  const auto hf = exact_input<float>(static_cast<std::size_t>(n), 1451, false);
  device_buffer<std::int32_t> di(hi);
  device_buffer<float> df(hf);
  const std::int32_t* pi = di.data();
  const float* pf = df.data();
  // thread t reduces the first n - 997 t int32 and n - 1009 t - 1 float values
  std::int32_t want_i[threads];
  float want_f[threads];
  for (int t = 0; t < threads; ++t) {
    const auto ni = static_cast<std::ptrdiff_t>(n - 997 * t);
    const auto nf = static_cast<std::ptrdiff_t>(n - 1009 * t - 1);
    want_i[t] = narrow<std::int32_t>(std::accumulate(hi.begin(), hi.begin() + ni, std::int64_t{0}));
    want_f[t] = static_cast<float>(std::accumulate(hf.begin(), hf.begin() + nf, 0.0));
  }
  std::atomic<int> wrong{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      cudaStream_t stream = nullptr;
      if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        ++failed;
        return;
      }
      tally::options o;
      o.stream = stream;
      try {
        for (int r = 0; r < rounds; ++r) {
          if (tally::reduce(pi, n - 997 * t, 0, tally::plus{}, o) != want_i[t]) ++wrong;
          if (tally::reduce(pf, n - 1009 * t - 1, 0.0f, tally::plus{}, o) != want_f[t]) ++wrong;
        }
      } catch (...) {
        ++failed;
      }
      cudaStreamDestroy(stream);
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(failed.load(), 0) << "a thread's stream or reduce failed";
  EXPECT_EQ(wrong.load(), 0) << "of " << threads * rounds * 2 << " values read by " << threads << " threads";
}

// ---- the CPU backend agrees ------------------------------------------------------------------
template <class T, class Op>
void check_cpu_agrees(std::int64_t n) {
  constexpr bool is_max = std::is_same_v<Op, tally::maximum>;
  const auto h = exact_input<T>(static_cast<std::size_t>(n), 1500 + sizeof(T) + is_max, is_max);
  const T init = exact_input<T>(1, 1501, is_max)[0];
  device_buffer<T> in(h);
  const T gpu = tally::reduce(static_cast<const T*>(in.data()), n, init, Op{});
  const T cpu = tally::cpu::reduce(h.begin(), h.end(), init, Op{});
  EXPECT_EQ(gpu, cpu) << "n = " << n;  // exact inputs: any order gives the same value
}

TEST(Reduce, AgreesWithCpuBackend) {
  const std::int64_t top = quick() ? (std::int64_t{1} << 17) : (std::int64_t{1} << 22);
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{100003}, top}) {
    check_cpu_agrees<std::int32_t, tally::plus>(n);
    check_cpu_agrees<std::int32_t, tally::maximum>(n);
    check_cpu_agrees<std::uint64_t, tally::plus>(n);
    check_cpu_agrees<float, tally::plus>(n);
    check_cpu_agrees<double, tally::maximum>(n);
  }
}

}  // namespace
