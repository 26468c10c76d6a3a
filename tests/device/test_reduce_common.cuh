// tests/device/test_reduce_common.cuh -- what the reduction tests share: exact test inputs,
// the sequential reference at every tested size, the size lists, caller storage, and a
// kernel that holds a stream (to show that a call does not wait).
//
// Exact inputs: sums of integers are exact in every type, whatever order a reduction
// adds in, so every algorithm (the atomic one included) can be compared bit for bit:
//   int32 plus    integers in [-100, 100] \ {0} (a sum of 2^26 of them stays in int32)
//   uint64 plus   the full range (the sum wraps modulo 2^64, which is exact)
//   float/double plus  integers in [-64, 64] \ {0}: every partial sum of a random walk of
//                 this length stays far below 2^24, so no float addition rounds
//   max           the full range for integers, reals in [-1e6, 1e6] for floating point
// The rounding of real-valued float sums is tested separately (test_reduce.cu).
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/device/reduce.cuh"
#include "test_common.cuh"

namespace tally_reduce_test {

using namespace tally_test;
using tally::reduction::algorithm;

// Random non-commutative elements: affine maps with odd slopes, 2x2 matrices.
template <class T>
T random_element(std::mt19937_64& g) {
  if constexpr (std::is_same_v<T, tally::test::affine>) {
    return tally::test::affine{static_cast<std::uint32_t>(g()) | 1u, static_cast<std::uint32_t>(g())};
  } else {
    return random_value<mat2, mat2_product>(g);
  }
}

template <class T>
std::vector<T> exact_input(std::size_t n, std::uint64_t salt, bool is_max) {
  auto g = rng(salt);
  std::vector<T> v(n);
  for (auto& x : v) {
    if (is_max) {
      if constexpr (std::is_floating_point_v<T>) {
        x = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(g));
      } else {
        x = static_cast<T>(g());
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      int k = 0;
      while (k == 0) k = std::uniform_int_distribution<int>(-64, 64)(g);
      x = static_cast<T>(k);
    } else if constexpr (std::is_signed_v<T>) {
      int k = 0;
      while (k == 0) k = std::uniform_int_distribution<int>(-100, 100)(g);
      x = static_cast<T>(k);
    } else {
      x = static_cast<T>(g());
    }
  }
  return v;
}

// The type the reference folds in: exact for every input above.
template <class T>
using wide_t = std::conditional_t<std::is_floating_point_v<T>, double,
                                  std::conditional_t<std::is_signed_v<T>, std::int64_t, T>>;

// A wide value back to T (int32 sums wrap as the device's two's complement adds do).
template <class T, class W>
T narrow(W w) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<std::uint64_t>(w)));
  } else {
    return static_cast<T>(w);
  }
}

// init op x_0 op ... op x_{n-1} for every n of `sizes` (ascending, <= h.size()), one pass.
template <class T, class Op>
std::vector<T> references(const std::vector<T>& h, T init, const std::vector<std::int64_t>& sizes) {
  constexpr bool is_max = std::is_same_v<Op, tally::maximum>;
  std::vector<T> out;
  wide_t<T> acc = static_cast<wide_t<T>>(init);
  std::size_t i = 0;
  for (std::int64_t n : sizes) {
    for (; i < static_cast<std::size_t>(n); ++i) {
      const auto x = static_cast<wide_t<T>>(h[i]);
      acc = is_max ? (acc < x ? x : acc) : static_cast<wide_t<T>>(acc + x);
    }
    out.push_back(narrow<T>(acc));
  }
  return out;
}

template <class T>
std::string show(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return std::to_string(+x);
  } else {
    std::ostringstream s;
    s << x;
    return s.str();
  }
}

// The DESIGN.md size list for a reduction whose tile (consecutive tile, vector step) is
// `tile`: 0, 1, 2, 31, 32, 33, tile +- 1, 2 tile +- 1, tile^2 +- 1, random sizes, around
// the single-block limit of the single pass, and max_n (2^17 at most in quick mode).
template <class T>
std::vector<std::int64_t> reduce_sizes(std::int64_t max_n) {
  const std::int64_t tile = 4096 * 4 / static_cast<std::int64_t>(sizeof(T) < 4 ? 4 : sizeof(T));
  auto v = sizes(tile, max_n);
  if (quick()) max_n = std::min<std::int64_t>(max_n, std::int64_t{1} << 17);
  using tuning = tally::detail::reduction::reduce_tuning;
  // one block up to these (the larger where the grid would finish through descriptors)
  const std::int64_t single_block = tuning::single_block_max_bytes / static_cast<std::int64_t>(sizeof(T));
  const std::int64_t descriptor_single_block =
      tuning::descriptor_single_block_max_bytes / static_cast<std::int64_t>(sizeof(T));
  std::set<std::int64_t> s(v.begin(), v.end());
  // where the single pass's grid passes paired_reads x 32 blocks of one vector step (`tile`)
  // each (the descriptor finish in one warp up to there), reaches paired_reads x threads
  // blocks, and where it turns to blocks_per_sm blocks on every SM (single_pass/reduce.cuh,
  // grid(), warp_finish), just below and above
  const std::int64_t one_warp = tile * tuning::paired_reads * 32;
  const std::int64_t capped = tile * tuning::paired_reads * tuning::threads;
  const std::int64_t even_blocks =
      std::min<std::int64_t>(std::int64_t{tuning::blocks_per_sm} * tally::detail::multiprocessors("test"),
                             std::int64_t{tuning::threads} * tuning::finish_reads);
  const std::int64_t even = tile * tuning::even_grid_min_steps * even_blocks;
  for (std::int64_t k : {single_block - 1, single_block, single_block + 1, descriptor_single_block - 1,
                         descriptor_single_block, descriptor_single_block + 1, one_warp - 1, one_warp,
                         one_warp + 1, std::int64_t{1000},
                         std::int64_t{1000000}, std::int64_t{1} << 20, capped - 1, capped + 1,
                         even - 1, even}) {
    if (k >= 0 && k <= max_n) s.insert(k);
  }
  return std::vector<std::int64_t>(s.begin(), s.end());
}

// Holds a stream for about `ns` nanoseconds. (A template, so that the header defines it
// in every unit that includes it without an `inline` nvcc ignores on a kernel.)
template <int = 0>
__global__ void hold_stream_kernel(unsigned long long ns) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned long long now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

// A cudaMalloc'ed block of caller storage, filled with garbage (0xA5) so that a call
// relying on its contents (a counter that should be zero) fails.
class caller_storage {
 public:
  explicit caller_storage(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) {
      if (cudaMalloc(&p_, bytes_) != cudaSuccess) throw std::runtime_error("test: cudaMalloc failed");
      if (cudaMemset(p_, 0xA5, bytes_) != cudaSuccess) throw std::runtime_error("test: memset failed");
    }
  }
  ~caller_storage() {
    if (p_) cudaFree(p_);
  }
  caller_storage(const caller_storage&) = delete;
  caller_storage& operator=(const caller_storage&) = delete;
  tally::temporary_storage get() const { return {p_, bytes_}; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Every algorithm of tally::reduction on T with Op over the size list, into a poisoned
// device result; then from a pointer offset by one element (no 16-byte alignment) and
// with caller storage full of garbage. Atomics where they do not exist must throw.
template <class T, class Op>
void check_algorithm(algorithm a, std::int64_t max_n) {
  constexpr bool is_max = std::is_same_v<Op, tally::maximum>;
  const Op op{};
  const auto sz = reduce_sizes<T>(max_n);
  const std::int64_t top = sz.back();
  const auto h = exact_input<T>(static_cast<std::size_t>(top) + 1, 1000 + sizeof(T) * 7 + is_max, is_max);
  const T init = exact_input<T>(1, 99, is_max)[0];
  device_buffer<T> in(h), out(1);
  const T* d = in.data();  // one input type (const T*) for every call: fewer instantiations

  if (a == algorithm::atomic && !tally::reduction::supports_atomic_v<Op, T>) {
    EXPECT_THROW(tally::reduction::run(a, d, 10, out.data(), init, op), std::invalid_argument);
    return;
  }

  const auto want = references<T, Op>(h, init, sz);
  for (std::size_t k = 0; k < sz.size(); ++k) {
    const std::int64_t n = sz[k];
    out.poison();
    tally::reduction::run(a, d, n, out.data(), init, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const T got = out.download()[0];
    ASSERT_TRUE(got == want[k]) << tally::reduction::algorithm_name(a) << " n = " << n << ": got "
                                    << show(got) << ", expected " << show(want[k]) << " (seed "
                                    << seed() << ")";
  }

  // in + 1: the vector loads have a head of 3 (4-byte) or 1 (8-byte) elements
  std::vector<std::int64_t> shifted;
  for (std::int64_t n : sz)
    if (n <= std::min<std::int64_t>(top, std::int64_t{1} << 20)) shifted.push_back(n);
  std::vector<T> tail(h.begin() + 1, h.end());
  const auto want_shifted = references<T, Op>(tail, init, shifted);
  for (std::size_t k = 0; k < shifted.size(); ++k) {
    out.poison();
    tally::reduction::run(a, d + 1, shifted[k], out.data(), init, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const T got = out.download()[0];
    ASSERT_TRUE(got == want_shifted[k]) << tally::reduction::algorithm_name(a) << " from in + 1, n = "
                                            << shifted[k] << ": got " << show(got) << ", expected "
                                            << show(want_shifted[k]);
  }

  // caller storage full of garbage, used three times (different sizes) without refilling
  const std::int64_t big = top;
  const std::size_t bytes = tally::reduction::storage_bytes<const T*, T, Op>(a, big);
  caller_storage storage(bytes);
  tally::options o;
  o.storage = storage.get();
  for (std::size_t k : {sz.size() - 1, sz.size() / 2, sz.size() - 1}) {
    out.poison();
    ASSERT_LE((tally::reduction::storage_bytes<const T*, T, Op>(a, sz[k])), bytes);
    tally::reduction::run(a, d, sz[k], out.data(), init, op, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const T got = out.download()[0];
    ASSERT_TRUE(got == want[k]) << tally::reduction::algorithm_name(a) << " with caller storage, n = "
                                    << sz[k] << ": got " << show(got) << ", expected " << show(want[k]);
  }
}

}  // namespace tally_reduce_test

// One test per algorithm for a type and operator: ReduceVariants.<Name>_<algorithm>.
#define TALLY_REDUCE_VARIANT_TESTS(Name, T, Op, MaxLog2)                                        \
  TEST(ReduceVariants, Name##_tree) {                                                          \
    tally_reduce_test::check_algorithm<T, Op>(tally::reduction::algorithm::tree,                \
                                              std::int64_t{1} << (MaxLog2));                   \
  }                                                                                            \
  TEST(ReduceVariants, Name##_block) {                                                         \
    tally_reduce_test::check_algorithm<T, Op>(tally::reduction::algorithm::block,               \
                                              std::int64_t{1} << (MaxLog2));                   \
  }                                                                                            \
  TEST(ReduceVariants, Name##_chunked) {                                                       \
    tally_reduce_test::check_algorithm<T, Op>(tally::reduction::algorithm::chunked,             \
                                              std::int64_t{1} << (MaxLog2));                   \
  }                                                                                            \
  TEST(ReduceVariants, Name##_chunked_consecutive) {                                           \
    tally_reduce_test::check_algorithm<T, Op>(tally::reduction::algorithm::chunked_consecutive, \
                                              std::int64_t{1} << (MaxLog2));                   \
  }                                                                                            \
  TEST(ReduceVariants, Name##_atomic) {                                                        \
    tally_reduce_test::check_algorithm<T, Op>(tally::reduction::algorithm::atomic,              \
                                              std::int64_t{1} << (MaxLog2));                   \
  }                                                                                            \
  TEST(ReduceVariants, Name##_single_pass) {                                                   \
    tally_reduce_test::check_algorithm<T, Op>(tally::reduction::algorithm::single_pass,         \
                                              std::int64_t{1} << (MaxLog2));                   \
  }
