// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// --extended-lambda -Iinclude -Iscripts/experiments -I.deps/usr/include -o column_words
// scripts/experiments/column_words.cu
// (session 53; docs/perf-notes.md, "Column words of 4: two chains where there was one").
// The experiment: batched scans along axis 0 of rows of several 128-byte lines ((2^20, 32)
// int64, (2^20, 64) int32 ...) by columns_kernel (strided_scan.cuh, one block a tile: what
// the public call took before), by the pipelined column tiles copied with one tensor copy
// a tile (pipelined_columns.cuh, called directly), and by the public call, beside a
// device-to-device copy of the same bytes, interleaved (timing.cuh: each sample runs
// every call once, in turn, behind a spin kernel). Every variant's output is checked
// first (integers exactly, floats against a double oracle), on small shapes at the edges
// and on every timed shape.
#include <tally/tally.cuh>
#include "timing.cuh"
#include <tally/device/detail/pipelined_columns.cuh>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace st = tally::detail::strided;
namespace pc = tally::detail::pipelined_columns;

template <class T>
std::vector<double> oracle(const std::vector<T>& h, std::int64_t outer, std::int64_t len, std::int64_t inner,
                           bool exclusive, double init) {
  std::vector<double> want(h.size());
  std::vector<double> acc(static_cast<std::size_t>(inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), init);
    for (std::int64_t r = 0; r < len; ++r)
      for (std::int64_t c = 0; c < inner; ++c) {
        const std::int64_t i = (o * len + r) * inner + c;
        if (exclusive) { want[i] = acc[c]; acc[c] += static_cast<double>(h[i]); }
        else { acc[c] += static_cast<double>(h[i]); want[i] = acc[c]; }
      }
  }
  return want;
}

template <class T>
bool close(T got, double want, std::int64_t len) {
  if constexpr (std::is_integral_v<T>) return static_cast<double>(got) == want;
  else {
    const double eps = std::is_same_v<T, float> ? 6e-8 : 1.2e-16;
    return std::fabs(static_cast<double>(got) - want) <=
           (64 + 8 * std::log2(double(len) + 1)) * eps * std::max(1.0, std::fabs(want)) * 8;
  }
}

// variant 0: the public call; 1: the pipelined tiles with 8 column words (128-byte tile
// rows: the library's); 2: with 4 column words (64-byte tile rows, 512 rows a tile: rows of
// one line become two column groups, two chains, tensor copies)
template <bool Exclusive, class T>
void run(int variant, const T* in, T* out, std::int64_t outer, std::int64_t len, std::int64_t inner, T init) {
  const tally::options o;
  const auto seed = tally::detail::make_seed<T, Exclusive>(init);
  const std::int64_t shape[3] = {outer, len, inner};
  using H = tally::detail::single_pass::no_stall;
  bool ok = true;
  switch (variant) {
    case 0:
      if constexpr (Exclusive) {
        tally::exclusive_scan_batched(in, out, std::span<const std::int64_t>(shape, 3), 1, init, tally::plus{}, o);
      } else {
        tally::inclusive_scan_batched(in, out, std::span<const std::int64_t>(shape, 3), 1, tally::plus{}, o);
      }
      break;
    case 1: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 8>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    default: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 4>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
  }
  if (!ok) { std::printf("the tensor map was refused\n"); std::exit(1); }
}

template <class T>
void input(std::vector<T>& h) {
  for (std::size_t i = 0; i < h.size(); ++i) {
    if constexpr (std::is_integral_v<T>) h[i] = static_cast<T>((i * 7 + 3) % 13) - 6;
    else h[i] = static_cast<T>(((i * 2654435761u) >> 7) % 1000) / static_cast<T>(97);
  }
}

template <class T, bool Exclusive>
void check(const char* name, const T* in, T* out, const std::vector<T>& h, std::int64_t outer, std::int64_t len,
           std::int64_t inner, int variants) {
  const T init = static_cast<T>(Exclusive ? 5 : 0);
  const auto want = oracle(h, outer, len, inner, Exclusive, static_cast<double>(init));
  std::vector<T> got(h.size());
  for (int v = 0; v < 3; ++v) {
    if (v == 1 && variants < 2) continue;
    CK(cudaMemset(out, 0xff, h.size() * sizeof(T)));
    run<Exclusive, T>(v, in, out, outer, len, inner, init);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), out, h.size() * sizeof(T), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (!close(got[i], want[i], len)) {
        std::printf("MISMATCH %s %s variant %d (%lld, %lld, %lld) at %zu: %g vs %g\n", name,
                    Exclusive ? "excl" : "incl", v, (long long)outer, (long long)len, (long long)inner, i,
                    (double)got[i], want[i]);
        std::exit(1);
      }
    }
  }
}

template <class T>
void check_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner) {
  const std::int64_t n = outer * len * inner;
  std::vector<T> h(n);
  input(h);
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const int variants = inner % pc::width<T> == 0 ? 2 : 1;
  check<T, false>(name, in, out, h, outer, len, inner, variants);
  check<T, true>(name, in, out, h, outer, len, inner, variants);
  std::printf("ok %-7s (%lld, %lld, %lld)\n", name, (long long)outer, (long long)len, (long long)inner);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

// checked (inclusive, every variant), then timed: copy, public, words 4, words 8
template <class T>
void time_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, int reps) {
  const std::int64_t n = outer * len * inner;
  std::vector<T> h(n);
  input(h);
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const bool words8 = inner % pc::width<T> == 0;
  check<T, false>(name, in, out, h, outer, len, inner, words8 ? 2 : 1);
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); },
      [&] { run<false, T>(0, in, out, outer, len, inner, T{}); },
      [&] { run<false, T>(2, in, out, outer, len, inner, T{}); }};
  if (words8) fs.push_back([&] { run<false, T>(1, in, out, outer, len, inner, T{}); });
  const auto t = interleaved_us(fs, reps);
  std::printf("time %-7s (%lld, %lld, %lld) %6.1f MiB: copy %7.2f us | public %.3fx | words 4 %.3fx | words 8 %.3fx\n",
              name, (long long)outer, (long long)len, (long long)inner, n * sizeof(T) / 1048576.0, t[0], t[1] / t[0],
              t[2] / t[0], words8 ? t[3] / t[0] : 0.0);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  check_case<int>("int32", 1, 100, 32);
  check_case<int>("int32", 1, 513, 32);
  check_case<int>("int32", 3, 1777, 32);
  check_case<int>("int32", 1, 100003, 16);
  check_case<float>("float", 2, 3000, 32);
  check_case<long long>("int64", 1, 50001, 16);
  check_case<long long>("int64", 5, 1000, 8);
  check_case<double>("double", 1, 60000, 16);
  for (int pass = 0; pass < 2; ++pass) {
    time_case<int>("int32", 1, 1 << 20, 32, reps);
    time_case<float>("float", 1, 1 << 20, 32, reps);
    time_case<long long>("int64", 1, 1 << 20, 16, reps);
    time_case<double>("double", 1, 1 << 20, 16, reps);
    time_case<int>("int32", 2, 1 << 19, 32, reps);
    time_case<int>("int32", 1, 1 << 22, 32, reps);
    time_case<int>("int32", 1, 1 << 18, 32, reps);
    time_case<int>("int32", 1, 1 << 21, 16, reps);       // 64-byte rows: strided_kernel publicly
    time_case<long long>("int64", 1, 1 << 21, 8, reps);  // the same
  }
  return 0;
}
