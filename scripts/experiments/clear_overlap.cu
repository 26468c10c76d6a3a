// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// --extended-lambda -Iinclude -I.deps/usr/include -o clear_overlap clear_overlap.cu
// (session 22; docs/perf-notes.md, "The clear and the kernel overlapped").
// The experiment: caller-storage scans on the ticket kernels and caller-storage
// reduces, with and without storage, beside CUB and the copy. Behind a busy GPU: a spin
// kernel is queued before each timed call. Medians of `reps`.
#include <tally/tally.cuh>
#include "timing.cuh"
#include <cub/cub.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

template <class T>
void scan_case(const char* name, std::int64_t n, int misalign, int reps) {
  std::vector<T> h(n);
  for (std::int64_t i = 0; i < n; ++i) h[i] = static_cast<T>((i * 7 + 3) % 13);
  T *in, *out; unsigned char* st;
  CK(cudaMalloc(&in, (n + 1) * sizeof(T))); CK(cudaMalloc(&out, (n + 1) * sizeof(T)));
  CK(cudaMemcpy(in + misalign, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const T* ci = in + misalign; T* co = out + misalign;
  tally::options o;
  const std::size_t bytes = tally::inclusive_scan_storage_bytes<const T*>(n, o);
  CK(cudaMalloc(&st, bytes + 16));
  tally::options os; os.storage = {st, bytes};
  std::size_t cb = 0; cub::DeviceScan::InclusiveSum(nullptr, cb, ci, co, (int)n);
  void* ct; CK(cudaMalloc(&ct, cb));
  // check
  std::vector<T> got(n);
  for (int v = 0; v < 2; ++v) {
    CK(cudaMemset(st, 0x5a, bytes));
    CK(cudaMemset(out, 0xff, (n + 1) * sizeof(T)));
    tally::inclusive_scan(ci, co, n, tally::plus{}, v ? os : o);
    CK(cudaMemcpy(got.data(), co, n * sizeof(T), cudaMemcpyDeviceToHost));
    T acc = 0; for (std::int64_t i = 0; i < n; ++i) { acc += h[i]; if (got[i] != acc) { std::printf("MISMATCH %s v%d at %lld\n", name, v, (long long)i); std::exit(1); } }
  }
  double copy = time_us([&] { CK(cudaMemcpyAsync(co, ci, n * sizeof(T), cudaMemcpyDeviceToDevice)); }, reps, 5);
  double cub = time_us([&] { cub::DeviceScan::InclusiveSum(ct, cb, ci, co, (int)n); }, reps, 5);
  double plain = time_us([&] { tally::inclusive_scan(ci, co, n, tally::plus{}, o); }, reps, 5);
  double stor = time_us([&] { tally::inclusive_scan(ci, co, n, tally::plus{}, os); }, reps, 5);
  std::printf("scan %-22s n=%9lld copy %6.2f cub %6.2f tally %6.2f storage %6.2f | cub/storage %.3f\n", name, (long long)n, copy, cub, plain, stor, cub / stor);
  cudaFree(in); cudaFree(out); cudaFree(st); cudaFree(ct);
}

template <class T>
void reduce_case(const char* name, std::int64_t n, int reps) {
  std::vector<T> h(n);
  double want = 0;
  for (std::int64_t i = 0; i < n; ++i) { h[i] = static_cast<T>((i * 7 + 3) % 13); want += h[i]; }
  T *in, *out; unsigned char* st;
  CK(cudaMalloc(&in, n * sizeof(T))); CK(cudaMalloc(&out, 2 * sizeof(T)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const T* ci = in;
  tally::options o;
  const std::size_t bytes = tally::reduce_storage_bytes<const T*, T>(n, o);
  CK(cudaMalloc(&st, bytes + 16));
  tally::options os; os.storage = {st, bytes};
  std::size_t cb = 0; cub::DeviceReduce::Sum(nullptr, cb, ci, out, (int)n);
  void* ct; CK(cudaMalloc(&ct, cb));
  for (int v = 0; v < 2; ++v) {
    CK(cudaMemset(st, 0x5a, bytes));
    tally::reduce_into(ci, n, out, T(0), tally::plus{}, v ? os : o);
    T g; CK(cudaMemcpy(&g, out, sizeof(T), cudaMemcpyDeviceToHost));
    if ((double)g != want) { std::printf("MISMATCH reduce %s v%d %f %f\n", name, v, (double)g, want); std::exit(1); }
  }
  T* co = out;
  T* buf; CK(cudaMalloc(&buf, n * sizeof(T)));
  double copy = time_us([&] { CK(cudaMemcpyAsync(buf, ci, n * sizeof(T), cudaMemcpyDeviceToDevice)); }, reps, 5);
  double cub = time_us([&] { cub::DeviceReduce::Sum(ct, cb, ci, co, (int)n); }, reps, 5);
  double plain = time_us([&] { tally::reduce_into(ci, n, co, T(0), tally::plus{}, o); }, reps, 5);
  double stor = time_us([&] { tally::reduce_into(ci, n, co, T(0), tally::plus{}, os); }, reps, 5);
  std::printf("reduce %-20s n=%9lld copy %6.2f cub %6.2f tally %6.2f storage %6.2f | cub/storage %.3f\n", name, (long long)n, copy, cub, plain, stor, cub / stor);
  cudaFree(in); cudaFree(out); cudaFree(st); cudaFree(ct); cudaFree(buf);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 201;
  CK(cudaFree(nullptr));
  scan_case<std::int64_t>("int64", 1 << 20, 0, reps);
  scan_case<std::int64_t>("int64", 1 << 21, 0, reps);
  scan_case<std::int64_t>("int64", 3 << 20, 0, reps);
  scan_case<double>("double", 1 << 21, 0, reps);
  scan_case<std::int32_t>("int32 misaligned", 1 << 16, 1, reps);
  scan_case<std::int32_t>("int32 misaligned", 1 << 20, 1, reps);
  scan_case<std::int32_t>("int32", 1 << 22, 0, reps);
  reduce_case<float>("float", 1 << 14, reps);
  reduce_case<float>("float", 1 << 16, reps);
  reduce_case<float>("float", 1 << 20, reps);
  reduce_case<std::int32_t>("int32", 1 << 16, reps);
  reduce_case<std::int32_t>("int32", 1 << 20, reps);
  reduce_case<double>("double", 1 << 18, reps);
  std::printf("done\n");
}
