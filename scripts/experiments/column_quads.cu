// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o column_quads scripts/experiments/column_quads.cu
// run: ./column_quads [reps] (session 55; docs/perf-notes.md, "Rows of four 4-byte columns").
//
// Rows of exactly 16 bytes of a 4-byte type ((rows, 4) int32 or float) along axis 0, in
// one slice: the public batched call (1-word swizzled column tiles from 16 MiB, the strided
// kernel below) against the public plain scan of the rows as 16-byte quads (one element a
// row, the operator column by column), as (rows, 2) of 8-byte types already run as 16-byte
// pairs (segmented.cuh, column_pairs). Beside a copy of the same bytes, interleaved; both
// outputs checked whole.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tally/tally.cuh"
#include "timing.cuh"

template <class T>
struct alignas(16) quad {
  T column[4];
};
struct quad_plus {
  template <class T>
  __host__ __device__ quad<T> operator()(const quad<T>& a, const quad<T>& b) const {
    return {{a.column[0] + b.column[0], a.column[1] + b.column[1], a.column[2] + b.column[2],
             a.column[3] + b.column[3]}};
  }
};

template <class T>
void run(const char* name, long long rows, int reps) {
  const long long n = rows * 4;
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  std::vector<T> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (T)((int)(i % 7) - 3);
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const auto* qi = reinterpret_cast<const quad<T>*>(in);
  auto* qo = reinterpret_cast<quad<T>*>(out);
  const std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
      [&] { tally::inclusive_scan_batched(in, out, rows, 4, 0, tally::plus{}); },
      [&] { tally::inclusive_scan(qi, qo, rows, quad_plus{}); }};
  const char* names[] = {"copy", "batched", "quads"};
  std::string wrong;
  std::vector<T> o(n);
  for (std::size_t f = 1; f < fs.size(); ++f) {
    CK(cudaMemset(out, 0x7f, n * sizeof(T)));
    fs[f]();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(o.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    T s[4] = {};
    for (long long i = 0; i < n; ++i) {
      s[i % 4] += h[i];
      if (o[i] != s[i % 4]) {
        wrong += std::string(" WRONG:") + names[f] + "@" + std::to_string(i);
        break;
      }
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-6s (%lld, 4) p%d: copy %8.1f us", name, rows, pass, t[0]);
    for (std::size_t f = 1; f < t.size(); ++f) std::printf(" | %s %.3fx", names[f], t[f] / t[0]);
    std::printf("%s\n", wrong.empty() ? " (both checked right)" : wrong.c_str());
  }
  std::fflush(stdout);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  for (long long rows : {1ll << 10, 1ll << 14, 1ll << 16, 1ll << 18, 1ll << 19, 1ll << 20, 1ll << 21,
                         1ll << 22, 1ll << 23, 1ll << 25}) {
    run<int>("int32", rows, reps);
  }
  for (long long rows : {1ll << 20, 1ll << 23}) run<float>("float", rows, reps);
  return 0;
}
