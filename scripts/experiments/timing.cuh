// What the experiment programs of this folder share: CK (a CUDA call that must succeed,
// else the program stops), time_us (the median time of a call behind a busy GPU) and
// interleaved_us (the same for several calls, sampled in turn).
//
// Behind a busy GPU: a spin kernel (40,000 clock cycles: about 20 us at 2 GHz) is queued
// before each timed call, so that the host has enqueued the call (and its start event)
// before the GPU reaches it, and the time between the events is the GPU's, not the
// host's enqueue (docs/perf-notes.md, "Mid sizes of the single-pass scan", item 2).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x)                                                                                \
  do {                                                                                       \
    cudaError_t e = (x);                                                                     \
    if (e != cudaSuccess) {                                                                  \
      std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e));               \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// Spins one thread for about `ns` nanoseconds (2 clock cycles a nanosecond, roughly).
__global__ void spin(long long ns) {
  const long long t0 = clock64();
  while (clock64() - t0 < ns * 2) {
  }
}

// The medians of `reps` samples of every call of fs, interleaved: each sample runs every
// call once, in order, each behind the spin kernel (`spin_ns`), so that all of them see the
// same state of the machine; microseconds, in the order of fs.
inline std::vector<double> interleaved_us(const std::vector<std::function<void()>>& fs, int reps,
                                          long long spin_ns = 20000) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<std::vector<float>> t(fs.size());
  for (int i = 0; i < reps; ++i) {
    for (std::size_t r = 0; r < fs.size(); ++r) {
      spin<<<1, 1>>>(spin_ns);
      CK(cudaEventRecord(a));
      fs[r]();
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      float ms;
      CK(cudaEventElapsedTime(&ms, a, b));
      t[r].push_back(ms * 1000.f);
    }
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::vector<double> medians;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

// The median of `reps` event-timed calls of f, each behind the spin kernel, after
// `warmup` untimed calls; microseconds.
inline double time_us(const std::function<void()>& f, int reps, int warmup = 3) {
  for (int i = 0; i < warmup; ++i) f();
  CK(cudaDeviceSynchronize());
  return interleaved_us({f}, reps)[0];
}
