// tally/algorithms/support.cuh -- what the GPU applications share beyond tally's public
// calls: CUDA errors as tally::error, and a value the device computes, returned to the host.
//
//   algorithms_support::cuda_check(status, function, call)
//   algorithms_support::fetch<T>(function, o, run)
//       runs run(T* d_value) on o.stream, copies *d_value back and waits for the stream;
//       refused (std::invalid_argument) while o.stream is being captured into a graph,
//       before anything is queued: the forms that return a value wait for it, and the
//       *_into forms are the ones to capture.
#pragma once

#include <string>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"

namespace tally::algorithms_support {

inline void cuda_check(cudaError_t status, const char* function, const char* call) {
  if (status != cudaSuccess) {
    throw tally::error(static_cast<int>(status), std::string("tally::") + function + ": " + call +
                                                     " failed: " + cudaGetErrorString(status) +
                                                     " (" + cudaGetErrorName(status) + ")");
  }
}

inline void refuse_capture(const char* function, const options& o) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  cuda_check(cudaStreamIsCapturing(o.stream, &capture), function, "cudaStreamIsCapturing");
  if (capture != cudaStreamCaptureStatusNone) {
    throw_argument_error(function, "options.stream",
                         "is being captured into a graph: this form waits for its result; "
                         "capture the form that writes it to device memory instead");
  }
}

template <class T, class Run>
T fetch(const char* function, const options& o, Run&& run) {
  refuse_capture(function, o);
  void* d = nullptr;
  cuda_check(cudaMallocAsync(&d, sizeof(T), o.stream), function, "cudaMallocAsync");
  T result{};
  try {
    run(static_cast<T*>(d));
    cuda_check(cudaMemcpyAsync(&result, d, sizeof(T), cudaMemcpyDeviceToHost, o.stream), function,
               "cudaMemcpyAsync");
  } catch (...) {
    (void)cudaFreeAsync(d, o.stream);
    throw;
  }
  cuda_check(cudaFreeAsync(d, o.stream), function, "cudaFreeAsync");
  cuda_check(cudaStreamSynchronize(o.stream), function, "cudaStreamSynchronize");
  return result;
}

}  // namespace tally::algorithms_support
