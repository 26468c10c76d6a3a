// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o reduce_steps scripts/experiments/reduce_steps.cu
// run: ./reduce_steps [reps] (session 57; docs/perf-notes.md, "The reduce's block step at small n").
//
// Issue 5 asks reduce_into of int32 and float sums for at most 1.2x the copy's time up to
// 2^20. The single-pass reduce's grid (single_pass_reduction.cuh, grid()) gives a block one
// step of 256 threads x 4 16-byte vectors (16 KiB) at least, so 2^16 values take 16 blocks
// on 16 SMs, each SM reading 16 KiB, where the copy spreads the bytes over the whole GPU
// (session 28: a copy kernel of 16 blocks takes 1.2x the copy at 2^16). Session 43 swept the
// grid with that step (more blocks only idle there). Here the step itself: the library's
// strided_kernel with 1, 2 or 4 vectors a thread and step, one step a block (grid = the
// steps), finished by the library's packed word (int32) or descriptors (float), beside the
// public reduce_into, CUB's DeviceReduce::Sum and the copy, interleaved. Every sum is
// checked exactly (small integers) three times a row.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "tally/tally.cuh"
#include "timing.cuh"

namespace R = tally::detail::reduction;
namespace RS = tally::detail::reduction::single_pass;
namespace SP = tally::detail::single_pass;

// The library's launch_single_pass (reduce.cuh) with strided_kernel of V vectors a thread.
template <int V, class T>
void launch(const T* in, long long n, T* out, int grid) {
  using Op = tally::plus;
  constexpr auto kernel = &RS::strided_kernel<256, V, RS::unroll, T, const T*, T*, Op>;
  RS::finish_target<T> target;
  if constexpr (RS::packed_finish_v<Op, T>) {
    target.word = R::finish_word("reduce_steps");
    kernel<<<grid, 256>>>(in, n, out, T{}, Op{}, target);
  } else {
    const auto lease = SP::tile_state_registry::instance().acquire(
        "reduce_steps", nullptr, grid, SP::state_layout<T, RS::finish_spacing>,
        [](std::int64_t capacity) { return SP::state_bytes<T, RS::finish_spacing>(capacity); });
    target.state = RS::finish_state<T>::at(lease.data, lease.capacity);
    kernel<<<grid, 256>>>(in, n, out, T{}, Op{}, target);
  }
  CK(cudaGetLastError());
}

template <class T>
void run(const char* type, int lg, int reps) {
  const long long n = 1ll << lg;
  T *in, *out, *copy_out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, 64));
  CK(cudaMalloc(&copy_out, n * sizeof(T)));
  std::vector<T> h(n);
  double want = 0;
  for (long long i = 0; i < n; ++i) {
    h[i] = static_cast<T>((i % 7) - 3);
    want += h[i];
  }
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  void* cub_tmp = nullptr;
  std::size_t cub_bytes = 0;
  CK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, in, out, n));
  CK(cudaMalloc(&cub_tmp, cub_bytes));
  const int def = RS::grid<T, const T*, T*, tally::plus>("reduce_steps", n);

  struct row {
    std::string name;
    std::function<void()> f;
    bool check;
  };
  std::vector<row> rows;
  rows.push_back({"copy", [=] { CK(cudaMemcpyAsync(copy_out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); }, false});
  rows.push_back({"CUB", [=]() mutable { CK(cub::DeviceReduce::Sum(cub_tmp, cub_bytes, in, out, n)); }, true});
  rows.push_back({"public (grid " + std::to_string(def) + ")", [=] { tally::reduce_into(in, n, out, T{}); }, true});
  const auto add = [&](int v, int grid, auto launcher) {
    rows.push_back({"V" + std::to_string(v) + " grid " + std::to_string(grid), [=] { launcher(grid); }, true});
  };
  const long long per_vector = 16 / sizeof(T);
  for (int v : {1, 2, 4}) {
    const long long steps = (n + 256 * v * per_vector - 1) / (256 * v * per_vector);
    std::vector<long long> grids = {steps};
    if (steps > 64) grids.push_back(64);  // the descriptor finish's warp, several steps a block
    for (long long g : grids) {
      if (g > 768 || g < 2) continue;
      if (v == 1) add(1, static_cast<int>(g), [=](int grid) { launch<1>(in, n, out, grid); });
      if (v == 2) add(2, static_cast<int>(g), [=](int grid) { launch<2>(in, n, out, grid); });
      if (v == 4) add(4, static_cast<int>(g), [=](int grid) { launch<4>(in, n, out, grid); });
    }
  }
  for (auto& r : rows) {
    for (int k = 0; k < 3; ++k) {
      CK(cudaMemset(out, 0, 64));
      r.f();
      CK(cudaDeviceSynchronize());
      if (!r.check) continue;
      T got;
      CK(cudaMemcpy(&got, out, sizeof(T), cudaMemcpyDeviceToHost));
      if (static_cast<double>(got) != want) {
        std::printf("WRONG %s 2^%d %s: %f against %f\n", type, lg, r.name.c_str(), static_cast<double>(got), want);
        std::exit(1);
      }
    }
  }
  std::vector<std::function<void()>> fs;
  for (auto& r : rows) fs.push_back(r.f);
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      std::printf("%s 2^%d pass %d %-18s %7.3f us  %.3fx copy  %.3fx CUB\n", type, lg, pass, rows[r].name.c_str(),
                  t[r], t[r] / t[0], t[1] / t[r]);
    }
  }
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(copy_out));
  CK(cudaFree(cub_tmp));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 101;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
  for (int lg : {14, 15, 16, 17, 18, 19, 20}) run<int>("int32", lg, reps);
  for (int lg : {15, 16, 17, 18, 19, 20}) run<float>("float", lg, reps);
  std::printf("all sums right\n");
  return 0;
}
