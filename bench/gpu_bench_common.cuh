// bench/gpu_bench_common.cuh -- what the GPU part's translation units share: device
// buffers, the event timer, and the per-type benchmark (declared here, defined in
// gpu_bench_type.cuh and instantiated once per element type in gpu_bench_<type>.cu, so
// that the two cores of a CI machine compile the heavy template code in parallel).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>

#include "bench_config.hpp"
#include "report.hpp"

namespace tally_bench::gpu {

// Throws std::runtime_error naming `what` when a CUDA call failed.
inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
  }
}

// A cudaMalloc'ed buffer, freed on destruction. grow() never shrinks: one buffer serves
// the temporary storage of every call of a type.
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t bytes) { grow(bytes); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  void grow(std::size_t bytes) {
    if (bytes <= bytes_) return;
    if (data_ != nullptr) cuda_check(cudaFree(data_), "cudaFree");
    data_ = nullptr;
    bytes_ = 0;
    cuda_check(cudaMalloc(&data_, bytes), "cudaMalloc");
    bytes_ = bytes;
  }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

struct gpu_timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int reps = 0;
};

// Times calls on one stream with CUDA events. Before each sample a short spin kernel
// holds the stream, so that the call's launches are queued behind it by the time the
// start event is reached: the sample measures the GPU's work, not the host's launch
// latency (unless the call itself waits for the device, as Thrust's allocation does).
class event_timer {
 public:
  event_timer();
  ~event_timer();
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // One warm-up call, then `reps` timed calls; throws on a CUDA error. With budget_s > 0
  // the sampling stops early, after at least 3 samples, once the samples add up to more
  // than budget_s seconds (a guard against a pathologically slow row; gpu_timing::reps
  // says how many were taken).
  gpu_timing measure(const std::function<void(cudaStream_t)>& call, int reps,
                     double budget_s = 0);

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// What every per-type run needs from the driver.
struct gpu_context {
  const bench_config* config = nullptr;
  report* out = nullptr;
  std::string device;               // the device's name: the rows' `device` column
  event_timer* timer = nullptr;
  std::set<std::string>* noted = nullptr;  // notes already printed (say each one once)
  std::int64_t free_bytes = 0;      // device memory free at the start
};

// The per-type benchmark (gpu_bench_type.cuh), one instantiation per translation unit.
template <class T>
void run_gpu_type(gpu_context& context, const std::string& type_name);

extern template void run_gpu_type<std::int32_t>(gpu_context&, const std::string&);
extern template void run_gpu_type<float>(gpu_context&, const std::string&);
extern template void run_gpu_type<std::int64_t>(gpu_context&, const std::string&);
extern template void run_gpu_type<double>(gpu_context&, const std::string&);

}  // namespace tally_bench::gpu
