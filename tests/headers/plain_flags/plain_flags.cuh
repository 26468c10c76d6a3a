// tests/headers/plain_flags/plain_flags.cuh -- what the plain-flags tests share: a device buffer
// and the host copy of a result.
//
// The plain-flags tests are compiled by nvcc without --expt-relaxed-constexpr and
// --extended-lambda (no target in the build adds them), so they check that the public
// calls compile under the flags a user of the installed package has. They also run each
// call once on a small input.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

namespace tally_plain {

template <class T>
class buffer {
 public:
  explicit buffer(std::size_t n) : n_(n) {
    if (cudaMalloc(&p_, (n_ == 0 ? 1 : n_) * sizeof(T)) != cudaSuccess) {
      throw std::runtime_error("plain_flags: cudaMalloc failed");
    }
  }
  explicit buffer(const std::vector<T>& h) : buffer(h.size()) {
    if (cudaMemcpy(p_, h.data(), n_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw std::runtime_error("plain_flags: upload failed");
    }
  }
  ~buffer() { cudaFree(p_); }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;

  T* data() const { return p_; }
  std::vector<T> download() const {
    // the calls are asynchronous on the default stream; cudaMemcpy waits for them
    std::vector<T> h(n_);
    if (cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) {
      throw std::runtime_error("plain_flags: download failed");
    }
    return h;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// -3, -2, ..., 3, -3, ...: small values whose sums are exact in every tested type.
template <class T>
std::vector<T> small_values(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>(i % 7) - 3);
  return v;
}

}  // namespace tally_plain
