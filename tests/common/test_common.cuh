// tests/common/test_common.cuh -- shared helpers of the GPU tests: test types and operators,
// random inputs with a fixed printed seed, poisoned device buffers, the comparison with
// the sequential CPU oracle, and the size lists (reduced under TALLY_TEST_QUICK=1).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/tally.cuh"
#include "test_support.hpp"

namespace tally_test {

using tally::test::invalid_argument_message;

// ---- environment -----------------------------------------------------------------------

// TALLY_TEST_QUICK=1: fewer and smaller sizes (for compute-sanitizer runs).
inline bool quick() {
  const char* q = std::getenv("TALLY_TEST_QUICK");
  return q != nullptr && q[0] != '\0' && q[0] != '0';
}

// The seed of every random input: TALLY_TEST_SEED or a fixed default; printed once.
inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    const char* e = std::getenv("TALLY_TEST_SEED");
    const std::uint64_t v = e ? std::strtoull(e, nullptr, 10) : 20240611ull;
    std::cout << "[tally tests] seed " << v << " (set TALLY_TEST_SEED to change)"
              << (quick() ? ", quick mode" : "") << std::endl;
    return v;
  }();
  return s;
}

// A generator seeded from the test seed and a per-call salt (the size, say), so every
// run of a test sees the same inputs.
inline std::mt19937_64 rng(std::uint64_t salt) { return std::mt19937_64(seed() * 1000003ull + salt); }

// The stall test's hook (single-pass scans, the pipelined kernels): delays three chosen
// tiles and one chosen block (by blockIdx) by spinning on the clock for `cycles`, called
// by the kernels right after a block drew a tile's ticket.
struct stall {
  std::int64_t tile_a, tile_b, tile_c;
  unsigned block;
  long long cycles;
  __device__ void operator()(std::int64_t tile, unsigned block_index) const {
    if (tile == tile_a || tile == tile_b || tile == tile_c || block_index == block) {
      const long long start = clock64();
      while (clock64() - start < cycles) {
      }
    }
  }
};

// The stalls every stall test runs over `tiles` tiles, each delaying for about 1 ms at
// 1.8 GHz (a few microseconds in quick mode, which compute-sanitizer runs): the first
// two tiles and one in the middle; the last two, tile 5 and block 0; only block
// `lone_block` (all its tiles).
inline std::vector<stall> stall_cases(std::int64_t tiles, unsigned lone_block) {
  const long long cycles = quick() ? 20000 : 2000000;
  return {{0, 1, tiles / 2, ~0u, cycles},
          {tiles - 1, tiles - 2, 5, 0u, cycles},
          {-1, -1, -1, lone_block, cycles}};
}
// The stall, for a test's trace.
inline std::string describe(const stall& s) {
  return "stall tiles " + std::to_string(s.tile_a) + "," + std::to_string(s.tile_b) + "," +
         std::to_string(s.tile_c) + " block " + std::to_string(s.block);
}

#define TALLY_TEST_CUDA(call)                                                        \
  do {                                                                               \
    const cudaError_t tally_test_err_ = (call);                                      \
    ASSERT_EQ(tally_test_err_, cudaSuccess) << #call << ": "                         \
                                            << cudaGetErrorString(tally_test_err_);  \
  } while (0)

// ---- the non-commutative test type: 2x2 matrices of uint32 under the product ----------
// Entries wrap modulo 2^32, so the product is exact, associative and not commutative.
// No identity_of specialisation: the algorithms must work without an identity.
struct mat2 {
  std::uint32_t m[4];  // row-major: m[0] m[1] / m[2] m[3]
};
inline bool operator==(const mat2& a, const mat2& b) {
  return std::memcmp(a.m, b.m, sizeof a.m) == 0;
}
inline std::ostream& operator<<(std::ostream& os, const mat2& a) {
  return os << "[" << a.m[0] << " " << a.m[1] << "; " << a.m[2] << " " << a.m[3] << "]";
}

struct mat2_product {
  TALLY_HOST_DEVICE mat2 operator()(const mat2& a, const mat2& b) const {
    mat2 r;
    r.m[0] = a.m[0] * b.m[0] + a.m[1] * b.m[2];
    r.m[1] = a.m[0] * b.m[1] + a.m[1] * b.m[3];
    r.m[2] = a.m[2] * b.m[0] + a.m[3] * b.m[2];
    r.m[3] = a.m[2] * b.m[1] + a.m[3] * b.m[3];
    return r;
  }
};

// ---- random inputs (never all ones, never zeros) ---------------------------------------
template <class T, class Op>
T random_value(std::mt19937_64& g) {
  if constexpr (std::is_same_v<T, mat2>) {
    mat2 r;
    for (auto& e : r.m) e = static_cast<std::uint32_t>(g());
    return r;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<Op, tally::plus>) {
      // positive, so the tolerance scale (the prefix of |x|) is the prefix itself
      return static_cast<T>(std::uniform_real_distribution<double>(0.25, 1.25)(g));
    } else {
      return static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(g));
    }
  } else if constexpr (std::is_same_v<Op, tally::plus> && std::is_signed_v<T>) {
    // small non-zero values: an int32 sum of 2^24 of them cannot overflow
    T v = 0;
    while (v == 0) v = static_cast<T>(std::uniform_int_distribution<int>(-100, 100)(g));
    return v;
  } else {
    return static_cast<T>(g());  // full range (unsigned sums wrap, which is defined)
  }
}

template <class T, class Op>
std::vector<T> random_vector(std::size_t n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<T> v(n);
  for (auto& x : v) x = random_value<T, Op>(g);
  return v;
}

// n values of a trivially copyable T with every byte random and odd (never zero): inputs
// for struct types under operators that are exact on any bits (affine maps, matrices).
template <class T>
std::vector<T> bytes_random(std::size_t n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<T> v(n);
  for (auto& x : v) {
    unsigned char* p = reinterpret_cast<unsigned char*>(&x);
    for (std::size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<unsigned char>(g() | 1u);
  }
  return v;
}

// A non-trivial seed for exclusive scans.
template <class T, class Op>
T test_init() {
  auto g = rng(7777);
  return random_value<T, Op>(g);
}

// ---- device buffers ------------------------------------------------------------------
template <class T>
class device_buffer {
 public:
  explicit device_buffer(std::size_t n) : n_(n) {
    if (n_ > 0 && cudaMalloc(&p_, n_ * sizeof(T)) != cudaSuccess) {
      p_ = nullptr;
      throw std::runtime_error("test: cudaMalloc failed");
    }
  }
  explicit device_buffer(const std::vector<T>& h) : device_buffer(h.size()) { upload(h); }
  ~device_buffer() {
    if (p_) cudaFree(p_);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& h) {
    if (n_ && cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
      throw std::runtime_error("test: upload failed");
  }
  std::vector<T> download() const { return download(n_); }
  std::vector<T> download(std::size_t count) const {
    std::vector<T> h(count);
    if (count && cudaMemcpy(h.data(), p_, count * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
      throw std::runtime_error("test: download failed");
    return h;
  }
  static bool is_poison(const T& x) {
    const unsigned char byte = std::is_floating_point_v<T> ? 0xFF : 0xA5;
    const auto* p = reinterpret_cast<const unsigned char*>(&x);
    for (std::size_t i = 0; i < sizeof(T); ++i)
      if (p[i] != byte) return false;
    return true;
  }
  // Fills the buffer with a pattern no correct result is expected to have (NaN for
  // floating point), so that an element the code under test never writes fails.
  void poison() {
    const int byte = std::is_floating_point_v<T> ? 0xFF : 0xA5;
    // cudaMemset runs on the legacy default stream, which does not order itself with
    // non-blocking streams: wait for it, so that a scan on any stream sees the poison
    if (n_ && (cudaMemset(p_, byte, n_ * sizeof(T)) != cudaSuccess ||
               cudaDeviceSynchronize() != cudaSuccess))
      throw std::runtime_error("test: poison failed");
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// ---- the oracle and the comparison -----------------------------------------------------
// Expected results come from tally::cpu::sequential. For floating point the oracle runs
// in a wider type: float in double; double in a double-double (a Neumaier-compensated
// running sum, accurate to about one rounding of the stored double).
struct double_double {
  double hi, lo;
};
struct double_double_plus {
  double_double operator()(const double_double& a, const double_double& b) const {
    const double s = a.hi + b.hi;
    const double err = std::fabs(a.hi) >= std::fabs(b.hi) ? (a.hi - s) + b.hi : (b.hi - s) + a.hi;
    return {s, a.lo + b.lo + err};
  }
};

// Host-only stand-ins of tally::plus / tally::maximum for the reference types.
struct host_plus {
  template <class A>
  A operator()(const A& a, const A& b) const { return a + b; }
};
struct host_maximum {
  template <class A>
  A operator()(const A& a, const A& b) const { return a < b ? b : a; }
};

template <class T>
using value_t = std::conditional_t<std::is_floating_point_v<T>, double, T>;

template <class T, class Op>
struct expected {
  std::vector<value_t<T>> values;
  std::vector<double> scale;  // floating-point sums: the prefix of |x| (and |init|)
};

template <class R, class T, class Op>
std::vector<R> sequential_scan(const std::vector<T>& in, bool exclusive, T init, Op op) {
  std::vector<R> wide(in.size()), out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if constexpr (std::is_same_v<R, double_double>) {
      wide[i] = {static_cast<double>(in[i]), 0.0};
    } else {
      wide[i] = static_cast<R>(in[i]);
    }
  }
  R wide_init;
  if constexpr (std::is_same_v<R, double_double>) {
    wide_init = {static_cast<double>(init), 0.0};
  } else {
    wide_init = static_cast<R>(init);
  }
  if (exclusive) {
    tally::cpu::sequential::exclusive_scan(wide.begin(), wide.end(), out.begin(), wide_init, op);
  } else {
    tally::cpu::sequential::inclusive_scan(wide.begin(), wide.end(), out.begin(), op);
  }
  return out;
}

template <class T, class Op>
expected<T, Op> reference_scan(const std::vector<T>& in, bool exclusive, T init, Op op) {
  expected<T, Op> e;
  if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, tally::plus>) {
    const auto dd = sequential_scan<double_double>(in, exclusive, init, double_double_plus{});
    e.values.resize(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) e.values[i] = dd[i].hi + dd[i].lo;
    e.scale.resize(in.size());
    double s = exclusive ? std::fabs(static_cast<double>(init)) : 0.0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!exclusive) s += std::fabs(static_cast<double>(in[i]));
      e.scale[i] = s;
      if (exclusive) s += std::fabs(static_cast<double>(in[i]));
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    static_assert(std::is_same_v<Op, tally::maximum>, "floating point: plus or maximum");
    e.values = sequential_scan<double>(in, exclusive, init, host_maximum{});
  } else {
    e.values = sequential_scan<T>(in, exclusive, init, op);
  }
  return e;
}

// Compares `got` with the oracle; reports at most a few mismatches. Integers and matrices
// compare exactly; floating-point maximum is exact too; floating-point sums allow
// (32 + 4 log2 n) units of roundoff times the prefix of |x| (a bound for any order of
// summation whose depth is below that many operator applications).
template <class T, class Op>
::testing::AssertionResult matches(const std::vector<T>& got, const expected<T, Op>& want,
                                   std::size_t n) {
  if (got.size() < n || want.values.size() < n) return ::testing::AssertionFailure() << "size";
  std::size_t bad = 0;
  auto failure = ::testing::AssertionFailure();
  const double ulps = 32.0 + 4.0 * std::log2(static_cast<double>(n) + 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    bool ok;
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Op, tally::plus>) {
      const double tol = ulps * std::numeric_limits<T>::epsilon() * want.scale[i];
      const double diff = std::fabs(static_cast<double>(got[i]) - want.values[i]);
      ok = diff <= tol;  // false for NaN (the poison)
    } else if constexpr (std::is_floating_point_v<T>) {
      ok = got[i] == static_cast<T>(want.values[i]);
    } else {
      ok = got[i] == want.values[i];
    }
    if (!ok) {
      if (bad < 5) {
        failure << "\n  [" << i << "] got " << got[i] << ", expected " << want.values[i];
      }
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << n << " elements differ (seed " << seed() << ")";
}

// ---- sizes -----------------------------------------------------------------------------
// The size list of DESIGN.md for a tile of `tile` items: 0, 1, 2, 31, 32, 33, tile-1,
// tile, tile+1, random sizes, and large sizes up to `max_size` (several tiles of tiles,
// so the recursive scan of tile sums has at least two levels).
inline std::vector<std::int64_t> sizes(std::int64_t tile, std::int64_t max_size) {
  if (quick()) max_size = std::min<std::int64_t>(max_size, std::int64_t{1} << 17);
  std::set<std::int64_t> s{0, 1, 2, 31, 32, 33, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile,
                           2 * tile + 1, tile * tile - 1, tile * tile + 1};
  auto g = rng(424242 + static_cast<std::uint64_t>(tile));
  const int randoms = quick() ? 3 : 10;
  for (int i = 0; i < randoms; ++i) {
    s.insert(std::uniform_int_distribution<std::int64_t>(1, 20 * tile)(g));
  }
  s.insert(max_size);
  s.insert(max_size - 1 - static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(tile)));
  std::vector<std::int64_t> v;
  for (auto x : s)
    if (x >= 0 && x <= max_size) v.push_back(x);
  return v;
}

// Captures `call()` on `stream` into a CUDA graph (in `mode`) and replays the graph three
// times: `prepare(replay)` before each launch, `check(replay)` after the stream has
// finished it.
template <class Call, class Prepare, class Check>
void replay_captured(cudaStream_t stream, cudaStreamCaptureMode mode, Call call, Prepare prepare,
                     Check check) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, mode));
  call();
  TALLY_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  TALLY_TEST_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) {
    prepare(replay);
    TALLY_TEST_CUDA(cudaGraphLaunch(exec, stream));
    TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
    check(replay);
  }
  TALLY_TEST_CUDA(cudaGraphExecDestroy(exec));
  TALLY_TEST_CUDA(cudaGraphDestroy(graph));
}

// An N-d shape as "(2, 3, 4)" (test messages), and its number of elements.
inline std::string shape_string(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

inline std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t t = 1;
  for (const std::int64_t e : shape) t *= e;
  return t;
}

}  // namespace tally_test
