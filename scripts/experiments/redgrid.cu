// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -o redgrid scripts/experiments/redgrid.cu; run: ./redgrid [reps]
// (session 43; docs/perf-notes.md, "The reduce's grid where the finish reads descriptors").
// The first program of this folder that times its rows interleaved (each sample runs every
// row once, behind a spin kernel).
//
// reduce_into's grid: float, double and int32 maximum (the descriptor finish: one warp up to
// 64 blocks, a block finish past it) and int32 sums (the packed finish), launched through
// the library's own launch_single_pass with chosen grids, beside the public call (whose grid
// it prints), CUB and the copy. Every result is checked exactly, three times a row.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <functional>
#include <algorithm>
#include <limits>
#include <cub/cub.cuh>
#include "tally/tally.cuh"
#include "timing.cuh"  // CK, spin

template <class T, class Op = tally::plus>
void run(int lg, int reps) {
  constexpr bool is_max = std::is_same_v<Op, tally::maximum>;
  long long n = 1ll << lg;
  T *in, *out, *o2; CK(cudaMalloc(&in, n * sizeof(T))); CK(cudaMalloc(&out, 64)); CK(cudaMalloc(&o2, n * sizeof(T)));
  std::vector<T> h(n); double want = is_max ? -1e300 : 0; for (long long i = 0; i < n; ++i) { h[i] = (T)((i % 7) - 3 + (is_max ? (i * 7919) % 1000003 : 0)); want = is_max ? std::max(want, (double)h[i]) : want + h[i]; }
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  void* cubtmp = nullptr; size_t cubbytes = 0;
  if constexpr (is_max) cub::DeviceReduce::Max(cubtmp, cubbytes, in, out, (int)n); else cub::DeviceReduce::Sum(cubtmp, cubbytes, in, out, (int)n); CK(cudaMalloc(&cubtmp, cubbytes));
  const int def = tally::detail::reduction::single_pass::grid<T, const T*, T*, Op>("g", n);
  struct row { std::string name; std::function<void()> f; bool check; };
  std::vector<row> rows;
  rows.push_back({"copy", [=] { CK(cudaMemcpyAsync(o2, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); }, false});
  rows.push_back({"cub", [=]() mutable { if constexpr (is_max) cub::DeviceReduce::Max(cubtmp, cubbytes, in, out, (int)n); else cub::DeviceReduce::Sum(cubtmp, cubbytes, in, out, (int)n); }, true});
  rows.push_back({"public (grid " + std::to_string(def) + ")", [=] { tally::reduce_into(in, n, out, is_max ? std::numeric_limits<T>::lowest() : T{}, Op{}); }, true});
  for (int g : {8, 16, 32, 64, 128, 256, 512}) {
    if (g > def * 4 || g * 256LL * 4 * (16 / (long long)sizeof(T)) > 64 * n) continue;
    rows.push_back({"grid " + std::to_string(g), [=] {
      tally::detail::reduction::reduce_pieces<T> p;
      tally::detail::reduction::launch_single_pass("g", (const T*)in, n, out, is_max ? std::numeric_limits<T>::lowest() : T{}, Op{}, g, p, false, (cudaStream_t)0);
    }, true});
  }
  for (auto& r : rows) {
    for (int k = 0; k < 3; ++k) {
      CK(cudaMemset(out, 0, 64)); r.f(); CK(cudaDeviceSynchronize());
      if (!r.check) continue;
      T got; CK(cudaMemcpy(&got, out, sizeof(T), cudaMemcpyDeviceToHost));
      if ((double)got != want) { printf("CHECK FAILED %s: %f vs %f\n", r.name.c_str(), (double)got, want); break; }
    }
  }
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::vector<float>> t(rows.size());
    for (int i = 0; i < reps; ++i)
      for (size_t r = 0; r < rows.size(); ++r) {
        spin<<<1, 1>>>(30000);  // 60,000 cycles
        CK(cudaEventRecord(a)); rows[r].f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); t[r].push_back(ms * 1000);
      }
    float copy = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      auto v = t[r]; std::sort(v.begin(), v.end()); float m = v[v.size() / 2]; if (r == 0) copy = m;
      printf("%s 2^%d pass %d %-18s %7.2f us %5.2fx copy\n", is_max ? "int32max" : std::is_same_v<T, float> ? "float" : std::is_same_v<T, double> ? "double" : "int32", lg, pass, rows[r].name.c_str(), m, m / copy);
    }
  }
  CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(o2)); CK(cudaFree(cubtmp));
}

int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 101;
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("GPU %s\n", p.name);
  for (int lg : {18, 19, 20, 21}) run<float>(lg, reps);
  for (int lg : {18, 19, 20}) run<int>(lg, reps);
  for (int lg : {17, 18, 19, 20}) run<double>(lg, reps);
  for (int lg : {18, 19, 20, 21}) run<int, tally::maximum>(lg, reps);
  return 0;
}
