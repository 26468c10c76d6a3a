// tests/install/main.cu -- a GPU program against the installed tally::tally, compiled by
// plain nvcc flags (no experimental ones): tally::inclusive_scan on device memory.
// scripts/install-check.sh only builds it (CI has no GPU).
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include <tally/tally.cuh>

int main() {
  const int n = 1000;
  std::vector<int> h(n, 1);
  int* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "tally install check (GPU): cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  tally::inclusive_scan(d, d, n);
  cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  if (h[n - 1] != n) {
    std::fprintf(stderr, "tally install check (GPU): got %d, expected %d\n", h[n - 1], n);
    return 1;
  }
  std::printf("tally install check (GPU): tally::inclusive_scan of %d ones ends in %d\n", n,
              h[n - 1]);
  return 0;
}
