// tests/algorithms/test_algorithms.cu -- the applications of tally/algorithms/*.cuh on the GPU
// against sequential loops on the host (double or long double for floating point, with a
// tolerance that grows with n; exact for integers, visibility and comparisons): linear
// recurrences (plain, batched along any axis, per-line start values, in place, long chains,
// deterministic), line of sight, string comparison (both algorithms, 1 to 2^30 bytes, beyond
// 2^32 through iterators), polynomial evaluation (Horner, by powers, many points), CSR SpMV
// (int32 and int64 offsets, with and without nnz), allocation (the sausage example, in
// place, totals beyond 2^31, a graph replay). Every output is poisoned before each call and
// compared element by element. Also: a non-blocking stream, the returning forms refused
// during a graph capture, host (pageable) pointers refused, n == 0, bad arguments.
// Instantiations are kept to a few types per application (CI compiles this on 2 cores).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "test_common.cuh"

namespace tally_test {
namespace {

using i64 = std::int64_t;

// ---- helpers ------------------------------------------------------------------------------

bool device_reads_pageable_memory() {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, 0) != cudaSuccess) return false;
  return v != 0;
}

// Whether `message` holds every part; the message itself in the failure.
::testing::AssertionResult names(const std::string& message, std::initializer_list<const char*> parts) {
  for (const char* p : parts) {
    if (message.find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << p << "' not in: " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

// got[i] against exact[i] within eps(T) (16 + 4 sqrt(n)) (magnitude[i] + 1) for the
// got.size() first elements; a NaN (the poison) never passes.
template <class T>
::testing::AssertionResult close_to(const std::vector<T>& got, const std::vector<double>& exact,
                                    const std::vector<double>& magnitude, double n_for_tolerance) {
  if (exact.size() < got.size() || magnitude.size() < got.size()) {
    return ::testing::AssertionFailure() << "reference shorter than the result";
  }
  const double eps = std::numeric_limits<T>::epsilon();
  const double grow = 16.0 + 4.0 * std::sqrt(n_for_tolerance);
  std::size_t bad = 0;
  auto failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tol = eps * grow * (magnitude[i] + 1.0);
    if (!(std::abs(static_cast<double>(got[i]) - exact[i]) <= tol)) {
      if (bad < 5) failure << "\n  [" << i << "] got " << got[i] << ", want " << exact[i] << " (tolerance " << tol << ")";
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << got.size() << " elements differ (seed " << seed() << ")";
}

template <class T>
::testing::AssertionResult same(const std::vector<T>& got, const std::vector<T>& want, std::size_t n) {
  if (got.size() < n || want.size() < n) return ::testing::AssertionFailure() << "size";
  std::size_t bad = 0;
  auto failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < n; ++i) {
    if (!(got[i] == want[i])) {
      if (bad < 5) failure << "\n  [" << i << "] got " << +got[i] << ", want " << +want[i];
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << n << " elements differ (seed " << seed() << ")";
}

// The legacy stream's copies (device_buffer::upload) do not order themselves with
// non-blocking streams: wait for them.
template <class T>
void upload_and_wait(device_buffer<T>& d, const std::vector<T>& h) {
  d.upload(h);
  if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("test: synchronize failed");
}

// Ends a capture begun by a test and checks that nothing was queued into it (a refused call
// leaves the capture valid and empty).
::testing::AssertionResult end_empty_capture(cudaStream_t stream) {
  cudaGraph_t graph = nullptr;
  const cudaError_t e = cudaStreamEndCapture(stream, &graph);
  if (e != cudaSuccess) return ::testing::AssertionFailure() << "cudaStreamEndCapture: " << cudaGetErrorString(e);
  std::size_t nodes = 0;
  if (graph != nullptr) {
    cudaGraphGetNodes(graph, nullptr, &nodes);
    cudaGraphDestroy(graph);
  }
  if (nodes != 0) return ::testing::AssertionFailure() << nodes << " nodes captured";
  return ::testing::AssertionSuccess();
}

i64 max_size() { return quick() ? (i64{1} << 17) : (i64{1} << 24); }

// ============================================================================================
// linear_recurrence
// ============================================================================================

struct recurrence_reference {
  std::vector<double> x, magnitude;
};

// x[i] = a[i] x[i-1] + b[i] in double, and |a| m + |b| (m[-1] = |x0|), the scale of the
// rounding error of any association. A prefix of the result is the result of the prefix.
template <class T>
recurrence_reference sequential_recurrence(const T* a, const T* b, i64 n, double x0, i64 stride = 1) {
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

// Gates of magnitude in [0.5, 1) with random signs, inputs in [-1, 1).
template <class T>
void random_gates(std::vector<T>& a, std::vector<T>& b, std::size_t n, std::uint64_t salt) {
  auto g = rng(salt + n);
  std::uniform_real_distribution<double> mag(0.5, 1.0), in(-1.0, 1.0);
  a.resize(n);
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>((g() & 1) ? mag(g) : -mag(g));
    b[i] = static_cast<T>(in(g));
  }
}

template <class T>
void check_linear_recurrence(std::uint64_t salt) {
  const auto ns = sizes(4096, max_size());
  const i64 max_n = ns.back();
  std::vector<T> a, b;
  random_gates(a, b, static_cast<std::size_t>(max_n), salt);
  device_buffer<T> da(a), db(b), dx(static_cast<std::size_t>(max_n));
  for (const double x0 : {0.0, 0.75}) {
    const auto want = sequential_recurrence(a.data(), b.data(), max_n, x0);
    for (const i64 n : ns) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", x0 = " + std::to_string(x0));
      dx.poison();
      tally::linear_recurrence(static_cast<const T*>(da.data()), static_cast<const T*>(db.data()), dx.data(), n,
                               static_cast<T>(x0));
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(close_to(dx.download(static_cast<std::size_t>(n)), want.x, want.magnitude, static_cast<double>(n)));
    }
  }
}

TEST(GpuLinearRecurrence, FloatAgainstSequentialDouble) { check_linear_recurrence<float>(101); }
TEST(GpuLinearRecurrence, DoubleAgainstSequentialDouble) { check_linear_recurrence<double>(102); }

// x == a and x == b (in place), then a call on a non-blocking stream.
TEST(GpuLinearRecurrence, InPlaceAndNonBlockingStream) {
  const i64 n = quick() ? 100003 : 5000011;
  std::vector<float> a, b;
  random_gates(a, b, static_cast<std::size_t>(n), 103);
  const auto want = sequential_recurrence(a.data(), b.data(), n, -0.5);
  device_buffer<float> da(a), db(b), dx(static_cast<std::size_t>(n));
  // (const pointers to the same memory: the same instantiation as the other calls)
  tally::linear_recurrence(static_cast<const float*>(da.data()), static_cast<const float*>(db.data()), da.data(), n,
                           -0.5f);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(close_to(da.download(), want.x, want.magnitude, static_cast<double>(n))) << "x == a";
  upload_and_wait(da, a);
  tally::linear_recurrence(static_cast<const float*>(da.data()), static_cast<const float*>(db.data()), db.data(), n,
                           -0.5f);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(close_to(db.download(), want.x, want.magnitude, static_cast<double>(n))) << "x == b";
  upload_and_wait(db, b);
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  dx.poison();
  tally::linear_recurrence(static_cast<const float*>(da.data()), static_cast<const float*>(db.data()), dx.data(), n,
                           -0.5f, o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
  ASSERT_TRUE(close_to(dx.download(), want.x, want.magnitude, static_cast<double>(n))) << "non-blocking stream";
}

// options.deterministic: the same bits in every run (and the right values).
TEST(GpuLinearRecurrence, DeterministicBitForBit) {
  const i64 n = quick() ? (i64{1} << 20) + 7 : (i64{1} << 25) + 7;
  std::vector<float> a, b;
  random_gates(a, b, static_cast<std::size_t>(n), 104);
  const auto want = sequential_recurrence(a.data(), b.data(), n, 0.25);
  device_buffer<float> da(a), db(b), dx(static_cast<std::size_t>(n));
  tally::options o;
  o.deterministic = true;
  std::vector<float> first;
  for (int run = 0; run < 4; ++run) {
    dx.poison();
    tally::linear_recurrence(static_cast<const float*>(da.data()), static_cast<const float*>(db.data()), dx.data(), n,
                             0.25f, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto got = dx.download();
    if (run == 0) {
      ASSERT_TRUE(close_to(got, want.x, want.magnitude, static_cast<double>(n)));
      first = std::move(got);
    } else {
      ASSERT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0) << "run " << run;
    }
  }
}

// Every line of the view along `axis`, in double: x0s[line] (or x0 for every line).
recurrence_reference sequential_batched(const std::vector<float>& a, const std::vector<float>& b,
                                        const std::vector<i64>& shape, int axis, const std::vector<float>* x0s,
                                        double x0) {
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

// Shapes (batch, channels, length) along the last axis as the sequence models use them, the
// first and a middle axis, long chains (2^20 along the axis outside quick mode); a scalar
// x0, x0 per line (device pointer), and in place with x0 per line.
TEST(GpuLinearRecurrence, BatchedAgainstSequentialLines) {
  const i64 chain = quick() ? (i64{1} << 17) : (i64{1} << 20);
  const std::vector<std::pair<std::vector<i64>, int>> cases = {
      {{3, 5, 7}, 2},     {{4, 16, 3000}, 2}, {{3000, 4, 16}, 0}, {{3, 5, 7}, 0},  {{2, 3000, 40}, 1},
      {{1, 1, 1}, 2},     {{100000}, 0},      {{7, 1}, 1},        {{1, 9}, 0},     {{2, 2, 2, 2, 300}, 3},
      {{2, chain}, 1},    {{chain, 2}, 0},    {{64, 1, 4096}, 2}};
  for (const auto& [shape, axis] : cases) {
    SCOPED_TRACE(shape_string(shape) + " axis " + std::to_string(axis));
    const tally::axis_view v = tally::check_shape("test", shape, axis);
    const auto n = static_cast<std::size_t>(v.total());
    const double along = static_cast<double>(v.len);
    std::vector<float> a, b;
    random_gates(a, b, n, 105 + static_cast<std::uint64_t>(axis));
    std::vector<float> x0s(static_cast<std::size_t>(v.outer * v.inner));
    auto g = rng(106 + n);
    for (auto& s : x0s) s = static_cast<float>(std::uniform_real_distribution<double>(-2.0, 2.0)(g));
    device_buffer<float> da(a), db(b), dx(n), dx0(x0s);
    const float* ca = da.data();
    const float* cb = db.data();
    dx.poison();
    tally::linear_recurrence_batched(ca, cb, dx.data(), std::span<const i64>(shape), axis, 1.25f);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto want = sequential_batched(a, b, shape, axis, nullptr, 1.25);
    ASSERT_TRUE(close_to(dx.download(), want.x, want.magnitude, along)) << "scalar x0";
    dx.poison();
    tally::linear_recurrence_batched(ca, cb, dx.data(), std::span<const i64>(shape), axis,
                                     static_cast<const float*>(dx0.data()));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    want = sequential_batched(a, b, shape, axis, &x0s, 0.0);
    ASSERT_TRUE(close_to(dx.download(), want.x, want.magnitude, along)) << "x0 per line";
    // in place: x == a (a is no longer const: the same kernel types as above but for A)
    tally::linear_recurrence_batched(static_cast<const float*>(da.data()), cb, da.data(),
                                     std::span<const i64>(shape), axis, static_cast<const float*>(dx0.data()));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(close_to(da.download(), want.x, want.magnitude, along)) << "in place, x == a";
  }
  // a braced shape, a zero extent (nothing to do, null pointers allowed)
  const float* null = nullptr;
  float* null_out = nullptr;
  EXPECT_NO_THROW(tally::linear_recurrence_batched(null, null, null_out, {3, 0, 4}, 1, 0.0f));
  EXPECT_NO_THROW(tally::linear_recurrence_batched(null, null, null_out, {0}, 0, null));
}

TEST(GpuLinearRecurrence, EmptyAndBadArguments) {
  device_buffer<float> d(64);
  const float* c = d.data();
  const float* null = nullptr;
  float* null_out = nullptr;
  // n == 0: nothing to do, null pointers allowed
  EXPECT_NO_THROW(tally::linear_recurrence(null, null, null_out, 0, 1.0f));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::linear_recurrence(c, c, d.data(), -1, 0.0f); }),
                    {"tally::linear_recurrence: argument 'n'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::linear_recurrence(null, c, d.data(), 64, 0.0f); }),
                    {"tally::linear_recurrence: argument 'a'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::linear_recurrence(c, null, d.data(), 64, 0.0f); }),
                    {"tally::linear_recurrence: argument 'b'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::linear_recurrence(c, c, null_out, 64, 0.0f); }),
                    {"tally::linear_recurrence: argument 'x'"}));
  const std::string batched = "tally::linear_recurrence_batched: argument ";
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      tally::linear_recurrence_batched(c, c, d.data(), {4, 4, 4}, 3, 0.0f);
                    }),
                    {(batched + "'axis'").c_str()}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      tally::linear_recurrence_batched(c, c, d.data(), std::span<const i64>(), 0, 0.0f);
                    }),
                    {(batched + "'shape'").c_str()}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      tally::linear_recurrence_batched(c, c, d.data(), {4, -4, 4}, 0, 0.0f);
                    }),
                    {(batched + "'shape'").c_str()}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      tally::linear_recurrence_batched(c, c, d.data(), {4, 16}, 1, null);
                    }),
                    {(batched + "'x0'").c_str()}));
  if (!device_reads_pageable_memory()) {
    const std::vector<float> host(64, 0.5f);
    EXPECT_TRUE(names(invalid_argument_message([&] { tally::linear_recurrence(c, host.data(), d.data(), 64, 0.0f); }),
                      {"tally::linear_recurrence: argument 'b'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] {
                        tally::linear_recurrence_batched(c, c, d.data(), {4, 16}, 1, host.data());
                      }),
                      {(batched + "'x0'").c_str(), "host memory"}));
    // the context is still usable: no kernel read host memory
    tally::linear_recurrence(c, c, d.data(), 64, 0.0f);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
  }
}

// ============================================================================================
// line_of_sight
// ============================================================================================

// Visibility from point 0 in the slope type (float here), with the header's slope formula.
std::vector<std::uint8_t> sequential_visibility(const std::vector<float>& alt, float scale) {
  std::vector<std::uint8_t> vis(alt.size());
  float best = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < alt.size(); ++i) {
    if (i == 0) {
      vis[0] = 1;
      continue;
    }
    const float slope = (alt[i] - alt[0]) / (scale * static_cast<float>(static_cast<i64>(i)));
    vis[i] = slope > best ? 1 : 0;
    best = std::max(best, slope);
  }
  return vis;
}

void run_line_of_sight(const device_buffer<float>& alt, i64 n, float scale, device_buffer<std::uint8_t>& vis,
                       const tally::options& o = {}) {
  tally::line_of_sight(static_cast<const float*>(alt.data()), n, scale, vis.data(), o);
}

TEST(GpuLineOfSight, HandCheckedTerrain) {
  // slopes from point 0: 1, 1.5, 0.67, 1.5 (a tie: hidden), 0.8, 1.67, 1.29, 2.5
  const std::vector<float> terrain{10, 11, 13, 12, 16, 14, 20, 19, 30};
  const std::vector<std::uint8_t> seen{1, 1, 1, 0, 0, 0, 1, 0, 1};
  device_buffer<float> d(terrain);
  device_buffer<std::uint8_t> vis(terrain.size());
  for (const float scale : {1.0f, 2.0f, 0.25f}) {
    vis.poison();
    run_line_of_sight(d, 9, scale, vis);
    EXPECT_EQ(vis.download(), seen) << "scale " << scale;
  }
  // an observer on a hill (scale 3): slopes -3.33, -0.83, -2.22, -0.083, -0.13, 1.67
  const std::vector<float> hill{100, 90, 95, 80, 99, 98, 130};
  device_buffer<float> dh(hill);
  device_buffer<std::uint8_t> vh(hill.size());
  vh.poison();
  run_line_of_sight(dh, 7, 3.0f, vh);
  EXPECT_EQ(vh.download(), (std::vector<std::uint8_t>{1, 1, 1, 0, 1, 0, 1}));
  // flat: every point after the first ties with it
  device_buffer<float> flat(std::vector<float>(6, 4.0f));
  device_buffer<std::uint8_t> vf(6);
  vf.poison();
  run_line_of_sight(flat, 6, 1.0f, vf);
  EXPECT_EQ(vf.download(), (std::vector<std::uint8_t>{1, 1, 0, 0, 0, 0}));
  // one point: the observer
  vf.poison();
  run_line_of_sight(flat, 1, 1.0f, vf);
  EXPECT_EQ(vf.download(1)[0], 1);
}

TEST(GpuLineOfSight, RandomTerrainsAgainstSequential) {
  const auto ns = sizes(4096, max_size());
  const i64 max_n = ns.back();
  auto g = rng(201);
  // a random walk with an upward drift, so that far points are seen now and then; and a
  // walk of small integers (many exact ties)
  std::vector<float> walk(static_cast<std::size_t>(max_n)), steps(static_cast<std::size_t>(max_n));
  float h = 0.0f, k = 0.0f;
  for (std::size_t i = 0; i < walk.size(); ++i) {
    walk[i] = h += static_cast<float>(std::uniform_real_distribution<double>(-1.0, 1.2)(g));
    steps[i] = k += static_cast<float>(static_cast<int>(g() % 7) - 2);
  }
  for (const auto* alt : {&walk, &steps}) {
    const auto want = sequential_visibility(*alt, 1.5f);  // a prefix's answer is the prefix of this
    device_buffer<float> d(*alt);
    device_buffer<std::uint8_t> vis(alt->size());
    for (const i64 n : ns) {
      SCOPED_TRACE(std::string(alt == &walk ? "walk" : "integer steps") + ", n = " + std::to_string(n));
      vis.poison();
      run_line_of_sight(d, n, 1.5f, vis);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(same(vis.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n)));
    }
  }
}

TEST(GpuLineOfSight, EmptyAndBadArguments) {
  device_buffer<float> d(std::vector<float>(16, 1.0f));
  device_buffer<std::uint8_t> vis(16);
  const float* null = nullptr;
  std::uint8_t* null_vis = nullptr;
  EXPECT_NO_THROW(tally::line_of_sight(null, 0, 1.0f, null_vis));
  for (const float scale : {0.0f, -2.0f, std::numeric_limits<float>::quiet_NaN()}) {
    EXPECT_EQ(invalid_argument_message([&] { run_line_of_sight(d, 16, scale, vis); }),
              "tally::line_of_sight: argument 'scale' must be > 0")
        << "scale " << scale;
  }
  EXPECT_TRUE(names(invalid_argument_message([&] { run_line_of_sight(d, -1, 1.0f, vis); }),
                    {"tally::line_of_sight: argument 'n'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::line_of_sight(null, 16, 1.0f, vis.data()); }),
                    {"tally::line_of_sight: argument 'altitude'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] {
                      tally::line_of_sight(static_cast<const float*>(d.data()), 16, 1.0f, null_vis);
                    }),
                    {"tally::line_of_sight: argument 'visible'", "null"}));
  if (!device_reads_pageable_memory()) {
    const std::vector<float> host(16, 1.0f);
    std::vector<std::uint8_t> host_vis(16);
    EXPECT_TRUE(names(invalid_argument_message([&] { tally::line_of_sight(host.data(), 16, 1.0f, vis.data()); }),
                      {"tally::line_of_sight: argument 'altitude'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] {
                        tally::line_of_sight(static_cast<const float*>(d.data()), 16, 1.0f, host_vis.data());
                      }),
                      {"tally::line_of_sight: argument 'visible'", "host memory"}));
  }
}

// ============================================================================================
// lexicographic_compare
// ============================================================================================

// The sign of the comparison of s[0, s_len) and t[0, t_len), bytes as unsigned char.
int sequential_compare(const char* s, i64 s_len, const char* t, i64 t_len) {
  const i64 m = std::min(s_len, t_len);
  const int c = m > 0 ? std::memcmp(s, t, static_cast<std::size_t>(m)) : 0;
  if (c != 0) return c < 0 ? -1 : 1;
  return s_len < t_len ? -1 : (t_len < s_len ? 1 : 0);
}

int compare_on_gpu(bool by_compaction, const char* s, i64 s_len, const char* t, i64 t_len,
                   const tally::options& o = {}) {
  return by_compaction ? tally::lexicographic_compare_by_compaction(s, s_len, t, t_len, o)
                       : tally::lexicographic_compare(s, s_len, t, t_len, o);
}

device_buffer<char> device_string(const std::string& s) { return device_buffer<char>(std::vector<char>(s.begin(), s.end())); }

TEST(GpuLexicographicCompare, MaterialExample) {
  const auto parallax = device_string("parallax"), parallel = device_string("parallel");
  const auto para = device_string("para"), high = device_string("\x80"), low = device_string("a");
  for (const bool by_compaction : {false, true}) {
    SCOPED_TRACE(by_compaction ? "by compaction" : "reduction");
    EXPECT_EQ(compare_on_gpu(by_compaction, parallax.data(), 8, parallel.data(), 8), -1) << "parallax < parallel";
    EXPECT_EQ(compare_on_gpu(by_compaction, parallel.data(), 8, parallax.data(), 8), 1);
    EXPECT_EQ(compare_on_gpu(by_compaction, parallax.data(), 8, parallax.data(), 8), 0);
    EXPECT_EQ(compare_on_gpu(by_compaction, para.data(), 4, parallax.data(), 8), -1) << "a prefix is smaller";
    EXPECT_EQ(compare_on_gpu(by_compaction, parallax.data(), 8, para.data(), 4), 1);
    EXPECT_EQ(compare_on_gpu(by_compaction, parallax.data(), 5, parallel.data(), 5), 0) << "'paral' twice";
    EXPECT_EQ(compare_on_gpu(by_compaction, high.data(), 1, low.data(), 1), 1) << "bytes compare unsigned";
    // empty strings (null pointers allowed)
    EXPECT_EQ(compare_on_gpu(by_compaction, nullptr, 0, nullptr, 0), 0);
    EXPECT_EQ(compare_on_gpu(by_compaction, nullptr, 0, low.data(), 1), -1);
    EXPECT_EQ(compare_on_gpu(by_compaction, low.data(), 1, nullptr, 0), 1);
  }
  // on a non-blocking stream
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  EXPECT_EQ(compare_on_gpu(false, parallax.data(), 8, parallel.data(), 8, o), -1);
  EXPECT_EQ(compare_on_gpu(true, parallax.data(), 8, parallel.data(), 8, o), -1);
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// Random byte strings of 1 to 2^30 bytes (2^24 in quick mode): equal, different lengths,
// one difference at the first, a middle or the last position (both signs), two differences
// of opposite signs (the first decides); both algorithms against memcmp.
TEST(GpuLexicographicCompare, StringsUpToTwoToThe30) {
  const i64 longest = quick() ? (i64{1} << 20) : (i64{1} << 30);
  std::vector<i64> lengths{1,     2,     3,       31,      32,           33,      255,     256,
                           4095,  4096,  4097,    65537,   i64{1} << 20, (i64{1} << 20) + 1, i64{1} << 24,
                           longest};
  auto g = rng(301);
  for (int i = 0; i < 4; ++i) lengths.push_back(1 + static_cast<i64>(g() % static_cast<std::uint64_t>(longest)));
  std::erase_if(lengths, [&](i64 n) { return n > longest; });
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  std::vector<char> s(static_cast<std::size_t>(longest) + 1);
  for (std::size_t i = 0; i < s.size(); i += 8) {
    const std::uint64_t r = g();
    std::memcpy(s.data() + i, &r, std::min<std::size_t>(8, s.size() - i));
  }
  std::vector<char> t = s;
  device_buffer<char> ds(s), dt(t);
  // t[p] = value on both copies
  auto set_t = [&](i64 p, char value) {
    t[static_cast<std::size_t>(p)] = value;
    if (cudaMemcpy(dt.data() + p, &value, 1, cudaMemcpyHostToDevice) != cudaSuccess) throw std::runtime_error("set_t");
  };
  for (const i64 n : lengths) {
    struct change {
      i64 p;
      int d;
    };
    const std::vector<std::vector<change>> variants = {
        {}, {{0, 1}}, {{0, -1}}, {{n / 2, 1}}, {{n / 2, -1}}, {{n - 1, 1}}, {{n - 1, -1}}, {{n / 3, -1}, {n - 1, 1}}};
    for (std::size_t k = 0; k < variants.size(); ++k) {
      for (const auto& c : variants[k]) {
        set_t(c.p, static_cast<char>(static_cast<unsigned char>(s[static_cast<std::size_t>(c.p)]) + c.d));
      }
      // equal lengths; t one longer or shorter; s shorter
      const std::vector<std::pair<i64, i64>> lens = {{n, n}, {n, n + 1}, {n, n - 1}, {n - 1, n}};
      for (const auto& [sl, tl] : lens) {
        const int want = sequential_compare(s.data(), sl, t.data(), tl);
        for (const bool by_compaction : {false, true}) {
          SCOPED_TRACE("length " + std::to_string(n) + ", variant " + std::to_string(k) + ", lengths " +
                       std::to_string(sl) + " / " + std::to_string(tl) + (by_compaction ? ", by compaction" : ""));
          ASSERT_EQ(compare_on_gpu(by_compaction, ds.data(), sl, dt.data(), tl), want);
          ASSERT_EQ(compare_on_gpu(by_compaction, dt.data(), tl, ds.data(), sl), -want);
        }
      }
      for (const auto& c : variants[k]) set_t(c.p, s[static_cast<std::size_t>(c.p)]);
    }
  }
}

// A string as a function of the index (nothing stored), one position bumped.
struct byte_at {
  i64 bumped = -1;
  TALLY_HOST_DEVICE char operator()(i64 i) const {
    return static_cast<char>((i * 7) % 251 + (i == bumped ? 1 : 0));
  }
};

// 64-bit lengths: strings of more than 2^32 bytes that differ only near their end.
TEST(GpuLexicographicCompare, BeyondTwoToThe32) {
  if (quick()) GTEST_SKIP() << "quick mode";
  const i64 n = (i64{1} << 32) + 11;
  const auto s = tally::make_transform_iterator(tally::counting_iterator<i64>(0), byte_at{});
  const auto t = tally::make_transform_iterator(tally::counting_iterator<i64>(0), byte_at{n - 5});
  EXPECT_EQ(tally::lexicographic_compare(s, n, t, n), -1);
  EXPECT_EQ(tally::lexicographic_compare(t, n, s, n - 7), 1);
  EXPECT_EQ(tally::lexicographic_compare(s, n - 5, t, n - 5), 0);
}

TEST(GpuLexicographicCompare, CaptureRefusedAndBadArguments) {
  const auto a = device_string("parallax"), b = device_string("parallel");
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  for (const bool by_compaction : {false, true}) {
    SCOPED_TRACE(by_compaction ? "by compaction" : "reduction");
    TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const std::string m =
        invalid_argument_message([&] { (void)compare_on_gpu(by_compaction, a.data(), 8, b.data(), 8, o); });
    ASSERT_TRUE(end_empty_capture(stream));
    EXPECT_TRUE(names(m, {"'options.stream'", "captured"}));
    // after the refusal, the stream works
    EXPECT_EQ(compare_on_gpu(by_compaction, a.data(), 8, b.data(), 8, o), -1);
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
  for (const char* fn : {"tally::lexicographic_compare:", "tally::lexicographic_compare_by_compaction:"}) {
    const bool by_compaction = std::string(fn).find("compaction") != std::string::npos;
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)compare_on_gpu(by_compaction, a.data(), -1, b.data(), 8); }),
                      {fn, "argument 's_len'"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)compare_on_gpu(by_compaction, a.data(), 8, b.data(), -2); }),
                      {fn, "argument 't_len'"}));
    EXPECT_TRUE(names(invalid_argument_message([&] {
                        (void)compare_on_gpu(by_compaction, a.data(), i64{1} << 61, b.data(), 8);
                      }),
                      {fn, "argument 's_len'", "2^61"}));
    EXPECT_TRUE(names(invalid_argument_message([&] {
                        (void)compare_on_gpu(by_compaction, a.data(), 8, b.data(), INT64_MAX);
                      }),
                      {fn, "argument 't_len'", "2^61"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)compare_on_gpu(by_compaction, nullptr, 3, b.data(), 8); }),
                      {fn, "argument 's'", "null"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)compare_on_gpu(by_compaction, a.data(), 8, nullptr, 1); }),
                      {fn, "argument 't'", "null"}));
    if (!device_reads_pageable_memory()) {
      const std::string host = "parallel";
      EXPECT_TRUE(names(invalid_argument_message([&] {
                          (void)compare_on_gpu(by_compaction, a.data(), 8, host.data(), 8);
                        }),
                        {fn, "argument 't'", "host memory"}));
      EXPECT_TRUE(names(invalid_argument_message([&] {
                          (void)compare_on_gpu(by_compaction, host.data(), 8, b.data(), 8);
                        }),
                        {fn, "argument 's'", "host memory"}));
    }
  }
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
  auto g = rng(salt + n);
  std::vector<T> c(n);
  for (auto& x : c) x = static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(g) + 0.25);
  return c;
}

template <class T>
::testing::AssertionResult value_close(T got, std::pair<double, double> want, double n) {
  const double tol = std::numeric_limits<T>::epsilon() * (16.0 + 4.0 * std::sqrt(n)) * (want.second + 1.0);
  if (std::abs(static_cast<double>(got) - want.first) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want.first << " (tolerance " << tol
                                       << ", seed " << seed() << ")";
}

// Horner (float and double) and by powers (double) at single points, degrees 0 to 2^20.
template <class T>
void check_polynomial_single(std::uint64_t salt) {
  for (const i64 degree : {i64{0}, i64{1}, i64{5}, i64{100}, i64{10000}, i64{1} << 20}) {
    const auto c = random_coefficients<T>(static_cast<std::size_t>(degree + 1), salt);
    device_buffer<T> dc(c);
    const T* coeffs = dc.data();
    for (const double x : {0.0, 0.5, -0.75, 1.0, -1.0, 0.999, -1.0001, 2.0}) {
      if (std::abs(x) > 1.0 && degree > 100) continue;  // the value itself overflows
      SCOPED_TRACE("degree " + std::to_string(degree) + ", x = " + std::to_string(x));
      const T xt = static_cast<T>(x);
      const auto want = horner(c, static_cast<double>(xt));
      const double terms = static_cast<double>(degree + 1);
      const T got = tally::polynomial_evaluate(coeffs, degree, xt);
      EXPECT_TRUE(value_close(got, want, terms)) << "Horner as a reduction";
      if constexpr (std::is_same_v<T, double>) {
        const double by_powers = tally::polynomial_evaluate_by_powers(coeffs, degree, xt);
        EXPECT_TRUE(value_close(by_powers, want, terms)) << "by powers";
      }
    }
  }
}

TEST(GpuPolynomial, FloatSinglePointAgainstHorner) { check_polynomial_single<float>(401); }
TEST(GpuPolynomial, DoubleSinglePointAgainstHorner) { check_polynomial_single<double>(402); }

TEST(GpuPolynomial, ManyPointsAgainstHorner) {
  const std::vector<std::pair<i64, i64>> shapes{{0, 1},    {0, 1000},  {1, 7},      {5, 1},   {5, 3333},
                                                {100, 1},  {100, 1000}, {10000, 5}, {1, 100000}, {3, 1000003},
                                                {50000, 3}};
  for (const auto& [degree, points] : shapes) {
    SCOPED_TRACE("degree " + std::to_string(degree) + ", " + std::to_string(points) + " points");
    const auto c = random_coefficients<double>(static_cast<std::size_t>(degree + 1), 403);
    auto g = rng(404 + static_cast<std::uint64_t>(points));
    std::vector<double> xs(static_cast<std::size_t>(points));
    for (auto& x : xs) x = std::uniform_real_distribution<double>(-1.0, 1.0)(g);
    std::vector<double> exact(xs.size()), magnitude(xs.size());
    for (std::size_t j = 0; j < xs.size(); ++j) std::tie(exact[j], magnitude[j]) = horner(c, xs[j]);
    device_buffer<double> dc(c), dxs(xs), dys(xs.size());
    dys.poison();
    tally::polynomial_evaluate(static_cast<const double*>(dc.data()), degree, static_cast<const double*>(dxs.data()),
                               points, dys.data());
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(close_to(dys.download(), exact, magnitude, static_cast<double>(degree + 1)));
  }
  // no points: nothing written, null pointers allowed for xs and ys
  const double* null = nullptr;
  double* null_out = nullptr;
  device_buffer<double> dc(std::vector<double>{1.0, 2.0});
  EXPECT_NO_THROW(tally::polynomial_evaluate(static_cast<const double*>(dc.data()), 1, null, 0, null_out));
}

TEST(GpuPolynomial, CaptureRefusedAndBadArguments) {
  device_buffer<double> dc(std::vector<double>{1.0, 2.0, 3.0});
  const double* c = dc.data();
  device_buffer<double> xs(std::vector<double>{0.5, 0.25}), ys(2);
  const double* cx = xs.data();
  // the value forms are refused while the stream is captured
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const std::string horner_m = invalid_argument_message([&] { (void)tally::polynomial_evaluate(c, 2, 2.0, o); });
  const std::string powers_m =
      invalid_argument_message([&] { (void)tally::polynomial_evaluate_by_powers(c, 2, 2.0, o); });
  ASSERT_TRUE(end_empty_capture(stream));
  EXPECT_TRUE(names(horner_m, {"'options.stream'", "captured"}));
  EXPECT_TRUE(names(powers_m, {"tally::polynomial_evaluate_by_powers", "'options.stream'", "captured"}));
  // p(x) = 1 + 2x + 3x^2 at 2: 17, on that stream
  EXPECT_EQ(tally::polynomial_evaluate(c, 2, 2.0, o), 17.0);
  EXPECT_EQ(tally::polynomial_evaluate_by_powers(c, 2, 2.0, o), 17.0);
  ys.poison();
  tally::polynomial_evaluate(c, 2, cx, 2, ys.data(), o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ(ys.download(), (std::vector<double>{2.75, 1.6875}));
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
  // bad arguments
  const double* null = nullptr;
  double* null_out = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::polynomial_evaluate(c, -1, 2.0); }),
                    {"tally::polynomial_evaluate: argument 'degree'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::polynomial_evaluate(c, INT64_MAX, 2.0); }),
                    {"tally::polynomial_evaluate: argument 'degree'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::polynomial_evaluate(null, 2, 2.0); }),
                    {"tally::polynomial_evaluate: argument 'coeffs'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::polynomial_evaluate_by_powers(c, -3, 2.0); }),
                    {"tally::polynomial_evaluate_by_powers: argument 'degree'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::polynomial_evaluate(c, 2, cx, -1, ys.data()); }),
                    {"tally::polynomial_evaluate: argument 'm'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::polynomial_evaluate(c, -1, cx, 2, ys.data()); }),
                    {"tally::polynomial_evaluate: argument 'degree'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::polynomial_evaluate(c, 2, cx, i64{1} << 62, ys.data()); }),
                    {"tally::polynomial_evaluate: argument 'm'", "int64"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::polynomial_evaluate(c, 2, null, 2, ys.data()); }),
                    {"tally::polynomial_evaluate: argument 'xs'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::polynomial_evaluate(c, 2, cx, 2, null_out); }),
                    {"tally::polynomial_evaluate: argument 'ys'"}));
  if (!device_reads_pageable_memory()) {
    const std::vector<double> host{1.0, 2.0, 3.0};
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::polynomial_evaluate(host.data(), 2, 2.0); }),
                      {"tally::polynomial_evaluate: argument 'coeffs'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::polynomial_evaluate_by_powers(host.data(), 2, 2.0); }),
                      {"tally::polynomial_evaluate_by_powers: argument 'coeffs'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { tally::polynomial_evaluate(c, 2, host.data(), 2, ys.data()); }),
                      {"tally::polynomial_evaluate: argument 'xs'", "host memory"}));
  }
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

// Empty rows (the first, a run of four, every fifth), one dense row, random rows.
template <class Off>
csr<Off> random_csr(i64 rows, i64 cols, i64 max_row, std::uint64_t salt) {
  csr<Off> m;
  m.rows = rows;
  m.cols = cols;
  auto g = rng(salt);
  m.offsets.push_back(0);
  for (i64 r = 0; r < rows; ++r) {
    i64 len;
    if (r % 5 == 1) {
      len = 0;
    } else if (r == rows / 2) {
      len = cols;
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

template <class Off, class V>
void sequential_spmv(const csr<Off>& m, const std::vector<V>& values, const std::vector<V>& x,
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

// V values and x (double with int32 offsets, float with int64 offsets), both forms.
template <class Off, class V>
void check_spmv(i64 rows, i64 cols, i64 max_row, std::uint64_t salt) {
  const auto m = random_csr<Off>(rows, cols, max_row, salt);
  SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + ", nnz " + std::to_string(m.values.size()));
  auto g = rng(salt + 1);
  std::vector<V> x(static_cast<std::size_t>(cols));
  for (auto& v : x) v = static_cast<V>(std::uniform_real_distribution<double>(-2.0, 2.0)(g));
  const std::vector<V> values(m.values.begin(), m.values.end());
  std::vector<double> exact, magnitude;
  sequential_spmv(m, values, x, exact, magnitude);
  const i64 nnz = static_cast<i64>(values.size());
  device_buffer<Off> doff(m.offsets);
  device_buffer<std::int32_t> dcols(m.columns);
  device_buffer<V> dvals(values), dx(x), dy(static_cast<std::size_t>(rows));
  const Off* off = doff.data();
  const std::int32_t* cl = dcols.data();
  const V* vl = dvals.data();
  const V* xv = dx.data();
  for (const bool with_nnz : {true, false}) {
    SCOPED_TRACE(with_nnz ? "with nnz" : "nnz read from row_offsets[rows]");
    dy.poison();
    if (with_nnz) {
      tally::spmv_csr(off, cl, vl, xv, dy.data(), rows, nnz);
    } else {
      tally::spmv_csr(off, cl, vl, xv, dy.data(), rows);
    }
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto y = dy.download();
    ASSERT_TRUE(close_to(y, exact, magnitude, static_cast<double>(cols)));
    for (i64 r = 0; r < rows; ++r) {  // empty rows give exactly 0
      if (m.offsets[static_cast<std::size_t>(r)] == m.offsets[static_cast<std::size_t>(r + 1)]) {
        ASSERT_EQ(y[static_cast<std::size_t>(r)], V(0)) << "empty row " << r;
      }
    }
  }
}

TEST(GpuSpmv, Int32OffsetsDoubleAgainstSequential) {
  check_spmv<std::int32_t, double>(1, 1, 1, 501);
  check_spmv<std::int32_t, double>(50, 20, 8, 502);
  check_spmv<std::int32_t, double>(1000, 500, 40, 503);
  check_spmv<std::int32_t, double>(quick() ? 20000 : 300000, 3000, 30, 504);
}

TEST(GpuSpmv, Int64OffsetsFloatAgainstSequential) {
  check_spmv<i64, float>(3, 7, 7, 505);
  check_spmv<i64, float>(1000, 1000, 100, 506);
  check_spmv<i64, float>(quick() ? 20000 : 300000, 200000, 30, 507);  // a 2 * 10^5-long dense row
}

TEST(GpuSpmv, EmptyCaptureAndBadArguments) {
  // [1 0 2]   [1]   [ 7]
  // [0 0 0] x [2] = [ 0]
  // [0 3 0]   [3]   [ 6]
  device_buffer<std::int32_t> off(std::vector<std::int32_t>{0, 2, 2, 3}), cols(std::vector<std::int32_t>{0, 2, 1});
  device_buffer<double> vals(std::vector<double>{1, 2, 3}), x(std::vector<double>{1, 2, 3}), y(3);
  const std::int32_t* o = off.data();
  const std::int32_t* c = cols.data();
  const double* v = vals.data();
  const double* xv = x.data();
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options opt;
  opt.stream = stream;
  y.poison();
  tally::spmv_csr(o, c, v, xv, y.data(), 3, opt);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ(y.download(), (std::vector<double>{7, 0, 6}));
  // the form that reads nnz waits for it: refused while capturing
  TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const std::string m = invalid_argument_message([&] { tally::spmv_csr(o, c, v, xv, y.data(), 3, opt); });
  ASSERT_TRUE(end_empty_capture(stream));
  EXPECT_TRUE(names(m, {"tally::spmv_csr", "'options.stream'", "captured"}));
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
  // no rows: nothing written (offsets {0})
  y.poison();
  EXPECT_NO_THROW(tally::spmv_csr(o, c, v, xv, y.data(), 0));
  EXPECT_NO_THROW(tally::spmv_csr(o, c, v, xv, y.data(), 0, 0));
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  for (const double e : y.download()) EXPECT_TRUE(std::isnan(e));
  // bad arguments
  const std::int32_t* null_i = nullptr;
  const double* null_d = nullptr;
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, v, xv, y.data(), -1, 3); }),
                    {"tally::spmv_csr: argument 'rows'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, v, xv, y.data(), -1); }),
                    {"tally::spmv_csr: argument 'rows'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, v, xv, y.data(), 3, -1); }),
                    {"tally::spmv_csr: argument 'nnz'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(null_i, c, v, xv, y.data(), 3, 3); }),
                    {"tally::spmv_csr: argument 'row_offsets'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, null_i, v, xv, y.data(), 3, 3); }),
                    {"tally::spmv_csr: argument 'cols'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, null_d, xv, y.data(), 3, 3); }),
                    {"tally::spmv_csr: argument 'values'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, v, null_d, y.data(), 3, 3); }),
                    {"tally::spmv_csr: argument 'x'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, v, xv, static_cast<double*>(nullptr), 3, 3); }),
                    {"tally::spmv_csr: argument 'y'", "null"}));
  if (!device_reads_pageable_memory()) {
    const std::vector<std::int32_t> host_off{0, 2, 2, 3};
    const std::vector<double> host_vals{1, 2, 3};
    EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(host_off.data(), c, v, xv, y.data(), 3, 3); }),
                      {"tally::spmv_csr: argument 'row_offsets'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(host_off.data(), c, v, xv, y.data(), 3); }),
                      {"tally::spmv_csr: argument 'row_offsets'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { tally::spmv_csr(o, c, host_vals.data(), xv, y.data(), 3, 3); }),
                      {"tally::spmv_csr: argument 'values'", "host memory"}));
  }
}

// x in pageable host memory must be refused like the other arguments (spmv.cuh: "null or
// host pointers -> std::invalid_argument"). The call runs in a child process: if it is not
// refused, its kernel reads host memory, and that fault would end this process's context.
// The child's exit code: 0 refused naming 'x', 1 not refused, 2 refused naming something
// else, 3 another exception.
int spmv_with_host_x() {
  device_buffer<std::int32_t> off(std::vector<std::int32_t>{0, 2, 2, 3});
  device_buffer<std::int32_t> cols(std::vector<std::int32_t>{0, 2, 1});
  device_buffer<double> vals(std::vector<double>{1, 2, 3});
  device_buffer<double> y(3);
  const std::vector<double> host_x{1, 2, 3};
  try {
    tally::spmv_csr(static_cast<const std::int32_t*>(off.data()), static_cast<const std::int32_t*>(cols.data()),
                    static_cast<const double*>(vals.data()), host_x.data(), y.data(), 3, 3);
    (void)cudaDeviceSynchronize();
  } catch (const std::invalid_argument& e) {
    return std::string(e.what()).find("'x'") != std::string::npos ? 0 : 2;
  } catch (...) {
    return 3;
  }
  return 1;
}

TEST(GpuSpmv, HostXIsRefused) {
  if (device_reads_pageable_memory()) GTEST_SKIP() << "the device reads pageable memory";
  // quick mode is the set run under compute-sanitizer, where a child that reads host
  // memory does not exit; the check is on the host and needs no sanitizer
  if (quick()) GTEST_SKIP() << "quick mode";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(spmv_with_host_x()), ::testing::ExitedWithCode(0), "");
}

// ============================================================================================
// allocate
// ============================================================================================

std::vector<i64> exclusive_sums(const std::vector<std::int32_t>& sizes, i64& total) {
  std::vector<i64> out(sizes.size());
  total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    out[i] = total;
    total += sizes[i];
  }
  return out;
}

TEST(GpuAllocate, SausageCutting) {
  const std::vector<std::int32_t> sizes{3, 5, 2, 7, 28, 4, 3, 0, 8, 1};
  const std::vector<i64> cuts{3, 8, 10, 17, 45, 49, 52, 52, 60, 61};
  device_buffer<std::int32_t> ds(sizes);
  device_buffer<i64> offsets(sizes.size()), total(1);
  offsets.poison();
  const i64 got = tally::allocate(static_cast<const std::int32_t*>(ds.data()), 10, offsets.data());
  EXPECT_EQ(got, 61);
  EXPECT_EQ(100 - got, 39);  // inches left of the 100-inch sausage
  const auto off = offsets.download();
  EXPECT_EQ(off, (std::vector<i64>{0, 3, 8, 10, 17, 45, 49, 52, 52, 60}));
  for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(off[i] + sizes[i], cuts[i]) << "worker " << i;
  // the form that writes the total to device memory
  offsets.poison();
  total.poison();
  tally::allocate_into(static_cast<const std::int32_t*>(ds.data()), 10, offsets.data(), total.data());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(total.download()[0], 61);
  EXPECT_EQ(offsets.download(), off);
  // in place (int64 sizes and offsets)
  device_buffer<i64> in_place(std::vector<i64>(sizes.begin(), sizes.end()));
  EXPECT_EQ(tally::allocate(in_place.data(), 10, in_place.data()), 61);
  EXPECT_EQ(in_place.download(), off);
}

TEST(GpuAllocate, RandomAgainstSequentialAndInPlace) {
  const auto ns = sizes(4096, max_size());
  const i64 max_n = ns.back();
  auto g = rng(601);
  std::vector<std::int32_t> h(static_cast<std::size_t>(max_n));
  for (auto& s : h) s = static_cast<std::int32_t>(g() % 1000);
  device_buffer<std::int32_t> ds(h);
  device_buffer<i64> offsets(static_cast<std::size_t>(max_n)), total(1);
  const std::vector<i64> h64(h.begin(), h.end());
  device_buffer<i64> in_place(static_cast<std::size_t>(max_n));
  i64 all = 0;
  const auto want = exclusive_sums(h, all);  // a prefix's offsets are the prefix of these
  for (const i64 n : ns) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const i64 expected_total = n < max_n ? want[static_cast<std::size_t>(n)] : all;
    offsets.poison();
    ASSERT_EQ(tally::allocate(static_cast<const std::int32_t*>(ds.data()), n, offsets.data()), expected_total);
    ASSERT_TRUE(same(offsets.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n)));
    offsets.poison();
    total.poison();
    tally::allocate_into(static_cast<const std::int32_t*>(ds.data()), n, offsets.data(), total.data());
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(total.download()[0], expected_total) << "allocate_into";
    ASSERT_TRUE(same(offsets.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n))) << "allocate_into";
    in_place.upload(h64);
    ASSERT_EQ(tally::allocate(in_place.data(), n, in_place.data()), expected_total) << "in place";
    ASSERT_TRUE(same(in_place.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n))) << "in place";
  }
}

// int32 sizes whose sum passes 2^32: the int64 offsets hold it.
TEST(GpuAllocate, Int32SizesInt64OffsetsBeyondTwoToThe31) {
  const std::size_t n = quick() ? (std::size_t{1} << 18) + 3 : (std::size_t{1} << 22) + 3;
  auto g = rng(602);
  std::vector<std::int32_t> h(n);
  for (auto& s : h) s = static_cast<std::int32_t>((i64{1} << 14) + static_cast<i64>(g() % (1u << 14)));
  i64 all = 0;
  const auto want = exclusive_sums(h, all);
  ASSERT_GT(all, i64{1} << 32);
  device_buffer<std::int32_t> ds(h);
  device_buffer<i64> offsets(n);
  offsets.poison();
  ASSERT_EQ(tally::allocate(static_cast<const std::int32_t*>(ds.data()), static_cast<i64>(n), offsets.data()), all);
  ASSERT_TRUE(same(offsets.download(), want, n));
}

// allocate on a non-blocking stream; refused while capturing; allocate_into captured into a
// graph and replayed with new sizes each time.
TEST(GpuAllocate, NonBlockingStreamAndGraphReplay) {
  const i64 n = 100003;
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  std::vector<std::vector<std::int32_t>> replays(3, std::vector<std::int32_t>(static_cast<std::size_t>(n)));
  auto g = rng(603);
  for (auto& r : replays)
    for (auto& s : r) s = static_cast<std::int32_t>(g() % 100000);
  device_buffer<std::int32_t> ds(replays[0]);
  device_buffer<i64> offsets(static_cast<std::size_t>(n)), total(1);
  const std::int32_t* sizes = ds.data();
  i64 all = 0;
  auto want = exclusive_sums(replays[0], all);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  offsets.poison();
  ASSERT_EQ(tally::allocate(sizes, n, offsets.data(), o), all);
  ASSERT_TRUE(same(offsets.download(), want, static_cast<std::size_t>(n))) << "non-blocking stream";
  // the returning form waits for its total: refused while the stream is captured
  TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const std::string m = invalid_argument_message([&] { (void)tally::allocate(sizes, n, offsets.data(), o); });
  ASSERT_TRUE(end_empty_capture(stream));
  EXPECT_TRUE(names(m, {"tally::allocate", "'options.stream'", "captured"}));
  // allocate_into: captured once, replayed with other sizes
  replay_captured(
      stream, cudaStreamCaptureModeThreadLocal, [&] { tally::allocate_into(sizes, n, offsets.data(), total.data(), o); },
      [&](int replay) {
        upload_and_wait(ds, replays[static_cast<std::size_t>(replay)]);
        offsets.poison();
        total.poison();
      },
      [&](int replay) {
        i64 t = 0;
        const auto w = exclusive_sums(replays[static_cast<std::size_t>(replay)], t);
        ASSERT_EQ(total.download()[0], t) << "replay " << replay;
        ASSERT_TRUE(same(offsets.download(), w, static_cast<std::size_t>(n))) << "replay " << replay;
      });
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

TEST(GpuAllocate, EmptyAndBadArguments) {
  device_buffer<std::int32_t> ds(std::vector<std::int32_t>{1, 2, 3});
  device_buffer<i64> offsets(3), total(1);
  const std::int32_t* sizes = ds.data();
  const std::int32_t* null = nullptr;
  i64* null_out = nullptr;
  // n == 0: total 0, written by allocate_into; null pointers allowed for sizes and offsets
  EXPECT_EQ(tally::allocate(null, 0, null_out), 0);
  total.poison();
  tally::allocate_into(null, 0, null_out, total.data());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(total.download()[0], 0);
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::allocate(sizes, -1, offsets.data()); }),
                    {"tally::allocate: argument 'n'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::allocate(null, 3, offsets.data()); }),
                    {"tally::allocate: argument 'sizes'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::allocate(sizes, 3, null_out); }),
                    {"tally::allocate: argument 'offsets'", "null"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::allocate_into(sizes, -2, offsets.data(), total.data()); }),
                    {"tally::allocate_into: argument 'n'"}));
  EXPECT_TRUE(names(invalid_argument_message([&] { tally::allocate_into(sizes, 3, offsets.data(), null_out); }),
                    {"tally::allocate_into: argument 'total'", "null"}));
  if (!device_reads_pageable_memory()) {
    const std::vector<std::int32_t> host_sizes{1, 2, 3};
    std::vector<i64> host_offsets(3);
    i64 host_total = 0;
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::allocate(host_sizes.data(), 3, offsets.data()); }),
                      {"tally::allocate: argument 'sizes'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] { (void)tally::allocate(sizes, 3, host_offsets.data()); }),
                      {"tally::allocate: argument 'offsets'", "host memory"}));
    EXPECT_TRUE(names(invalid_argument_message([&] {
                        tally::allocate_into(sizes, 3, offsets.data(), &host_total);
                      }),
                      {"tally::allocate_into: argument 'total'", "host memory"}));
  }
}

}  // namespace
}  // namespace tally_test
