// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// --extended-lambda -Iinclude -Iscripts/experiments -I.deps/usr/include -o pipelined_columns
// scripts/experiments/pipelined_columns.cu
// (session 23; docs/perf-notes.md, "Version 9 (session 23): the pipelined columns").
// The experiment: batched scans along axis 0 (a middle axis) by columns_kernel
// (strided_scan.cuh, one block per tile) and by pipelined_columns_kernel, called
// directly, beside a device-to-device copy of the same bytes. Every result is checked
// (integers exactly, floats against a double oracle). Behind a busy GPU: a spin kernel is queued before each timed call.
// Medians of `reps`.
#include <tally/tally.cuh>
#include "columns_common.cuh"  // oracle, close, input
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

// variant 0: columns_kernel; 1: pipelined (the default: 4 tiles a look-back slot a
// round); 2-4: pipelined, each slot reading 1, 2, 8 tiles a round
template <bool Exclusive, class T>
void run_kernel(int variant, const T* in, T* out, std::int64_t outer, std::int64_t len, std::int64_t inner,
                T init, const tally::options& o) {
  auto seed = tally::detail::make_seed<T, Exclusive>(init);
  using H = tally::detail::single_pass::no_stall;
  using P = tally::plus;
  switch (variant) {
    case 0: st::columns<Exclusive, T>("experiment", in, out, outer, len, inner, seed, P{}, o); break;
    case 1: pc::scan<Exclusive, T>("experiment", in, out, outer, len, inner, seed, P{}, o); break;
    case 2: pc::scan<Exclusive, T, P, H, 1>("experiment", in, out, outer, len, inner, seed, P{}, o); break;
    case 3: pc::scan<Exclusive, T, P, H, 2>("experiment", in, out, outer, len, inner, seed, P{}, o); break;
    default: pc::scan<Exclusive, T, P, H, 8>("experiment", in, out, outer, len, inner, seed, P{}, o); break;
  }
}

// correctness of one case, both kernels (and the pipelined one in place, and its bits in 3 runs)
template <class T, bool Exclusive>
void check_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner) {
  const std::int64_t n = outer * len * inner;
  std::vector<T> h(n);
  input(h);
  const T init = static_cast<T>(Exclusive ? 5 : 0);
  const auto want = oracle(h, outer, len, inner, Exclusive, static_cast<double>(init));
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T))); CK(cudaMalloc(&out, n * sizeof(T)));
  tally::options o;
  std::vector<T> got(n);
  // runs: columns_kernel, pipelined, pipelined in place, and the variants 2-4
  const int variants[] = {0, 1, 1, 2, 3, 4};
  for (int v = 0; v < 6; ++v) {
    const int variant = variants[v];
    const bool in_place = v == 2;
    CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemset(out, 0xff, n * sizeof(T)));
    run_kernel<Exclusive, T>(variant, in, in_place ? in : out, outer, len, inner, init, o);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), in_place ? in : out, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (std::int64_t i = 0; i < n; ++i) {
      if (!close(got[i], want[i], len)) {
        std::printf("MISMATCH %s %s v%d at %lld: %g vs %g\n", name, Exclusive ? "excl" : "incl", v, (long long)i,
                    (double)got[i], want[i]);
        std::exit(1);
      }
    }
  }
  std::printf("ok %-10s %s (%lld, %lld, %lld)\n", name, Exclusive ? "excl" : "incl", (long long)outer, (long long)len,
              (long long)inner);
  cudaFree(in); cudaFree(out);
}

template <class T>
void time_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, int reps) {
  const std::int64_t n = outer * len * inner;
  std::vector<T> h(n);
  input(h);
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T))); CK(cudaMalloc(&out, n * sizeof(T)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  tally::options o;
  const double copy = time_us([&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); }, reps);
  std::printf("time %-7s (%lld, %lld, %lld) %6.1f MiB copy %7.2f |", name, (long long)outer, (long long)len,
              (long long)inner, n * sizeof(T) / 1048576.0, copy);
  const char* names[] = {"columns", "pipelined", "K1", "K2", "K8"};
  for (int v = 0; v < 5; ++v) {
    const double t = time_us([&] { run_kernel<false, T>(v, in, out, outer, len, inner, T{}, o); }, reps);
    std::printf(" %s %.2f (%.2fx)", names[v], t, t / copy);
  }
  std::printf("\n");
  cudaFree(in); cudaFree(out);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  check_case<int, false>("int32", 1, 1000, 32);
  check_case<int, true>("int32", 3, 777, 32);
  check_case<int, false>("int32", 8, 4096, 32);
  check_case<int, true>("int32", 1, 100003, 32);
  check_case<float, false>("float", 1, 70000, 32);
  check_case<float, true>("float", 2, 3000, 32);
  check_case<long long, false>("int64", 2, 513, 16);
  check_case<long long, true>("int64", 1, 50001, 16);
  check_case<double, false>("double", 1, 60000, 16);
  check_case<double, true>("double", 5, 1000, 16);
  for (int pass = 0; pass < 2; ++pass) {
    time_case<int>("int32", 1, 1 << 20, 32, reps);
    time_case<float>("float", 1, 1 << 20, 32, reps);
    time_case<long long>("int64", 1, 1 << 20, 16, reps);
    time_case<double>("double", 1, 1 << 20, 16, reps);
    time_case<int>("int32", 2, 1 << 19, 32, reps);
    time_case<int>("int32", 4, 1 << 18, 32, reps);
    time_case<int>("int32", 8, 1 << 17, 32, reps);
    time_case<int>("int32", 16, 1 << 16, 32, reps);
    time_case<int>("int32", 64, 1 << 14, 32, reps);
    time_case<long long>("int64", 8, 1 << 17, 16, reps);
    time_case<long long>("int64", 16, 1 << 16, 16, reps);
    time_case<int>("int32", 1, 1 << 16, 32, reps);
    time_case<int>("int32", 1, 1 << 17, 32, reps);
    time_case<int>("int32", 1, 1 << 18, 32, reps);
    time_case<int>("int32", 1, 1 << 22, 32, reps);
  }
  return 0;
}
