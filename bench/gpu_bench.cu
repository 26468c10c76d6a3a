// bench/gpu_bench.cu -- the GPU part of tally-bench: the device description, the event
// timer, and the loop over element types (each type's rows: gpu_bench_type.cuh).
//
// Method (DESIGN.md): CUDA events around each call, a warm-up call first, the median of
// >= 20 samples; sizes 2^10 .. 2^28 elements (2^27 for 8-byte types: the same 1 GiB per
// buffer), far beyond the L2 cache (50 to 60 MB on an sm_90 GPU) at the large sizes.
#include <chrono>
#include <cstdio>
#include <sstream>
#include <tally/tally.cuh>

#include "gpu_bench.hpp"
#include "gpu_bench_algorithms.hpp"
#include "gpu_bench_common.cuh"
#include "gpu_bench_reduce.hpp"
#include "gpu_bench_segmented.hpp"
#include "gpu_bench_select.hpp"

namespace tally_bench {

namespace gpu {

namespace {

// Holds the stream for `ns` nanoseconds (the GPU's global timer), so that the work queued
// behind it is all in the queue when it ends.
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned long long now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
}

// Long enough for the host to queue a call's launches (tally's multi-pass strategies
// launch several kernels), short against any timing that matters.
constexpr unsigned long long spin_ns = 30'000;

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t m = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[m] : 0.5 * (samples[m - 1] + samples[m]);
}

std::string format_bytes(double bytes) {
  char text[64];
  if (bytes >= 1024.0 * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / (1024.0 * 1024));
  }
  return text;
}

// tally's default tuning (threads per block x items per thread) of each block
// algorithm, for 4- and 8-byte accumulators.
template <tally::block_scan Block>
std::string tuning_of(const char* name) {
  constexpr auto t4 = tally::detail::default_tuning<Block, std::int32_t>();
  constexpr auto t8 = tally::detail::default_tuning<Block, std::int64_t>();
  std::ostringstream s;
  s << name << " " << t4.block_threads << "x" << t4.items_per_thread << " (4 B), "
    << t8.block_threads << "x" << t8.items_per_thread << " (8 B)";
  return s.str();
}

std::string tally_tuning_line() {
  using tally::block_scan;
  return "tally tuning (threads x items per thread): " +
         tuning_of<block_scan::kogge_stone>("kogge_stone") + "; " +
         tuning_of<block_scan::kogge_stone_double_buffered>("kogge_stone_double_buffered") +
         "; " + tuning_of<block_scan::brent_kung>("brent_kung") + "; " +
         tuning_of<block_scan::brent_kung_conflict_free>("brent_kung_conflict_free") + "; " +
         tuning_of<block_scan::coarsened>("coarsened") + "; " +
         tuning_of<block_scan::warp_scans>("warp_scans") + "; " +
         tuning_of<block_scan::blelloch>("blelloch") + "; " +
         tuning_of<block_scan::brent_kung_divergent>("brent_kung_divergent");
}

}  // namespace

event_timer::event_timer() {
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
}

event_timer::~event_timer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

gpu_timing event_timer::measure(const std::function<void(cudaStream_t)>& call, int reps,
                                double budget_s) {
  call(stream_);  // warm-up: module loading, first-touch of the pages, caches
  cuda_check(cudaStreamSynchronize(stream_), "warm-up");
  cuda_check(cudaGetLastError(), "warm-up launch");
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  double sampled_s = 0;
  for (int r = 0; r < reps; ++r) {
    if (budget_s > 0 && r >= 3 && sampled_s > budget_s) break;
    spin_kernel<<<1, 1, 0, stream_>>>(spin_ns);
    cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    call(stream_);
    cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    samples.push_back(ms * 1e-3);
    sampled_s += ms * 1e-3;
  }
  cuda_check(cudaGetLastError(), "timed launches");
  gpu_timing t;
  t.median_s = median_of(samples);
  t.min_s = *std::min_element(samples.begin(), samples.end());
  t.max_s = *std::max_element(samples.begin(), samples.end());
  t.reps = static_cast<int>(samples.size());
  return t;
}

}  // namespace gpu

int gpu_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error: no driver or no device is not fatal here
    return 0;
  }
  return count;
}

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no usable CUDA device: ") + cudaGetErrorString(status);
  }
  return count == 0 ? "no CUDA device found" : "";
}

void run_gpu_bench(const bench_config& config, report& out) {
  using namespace gpu;
  cuda_check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  int runtime_version = 0;
  int driver_version = 0;
  cudaRuntimeGetVersion(&runtime_version);
  cudaDriverGetVersion(&driver_version);

  char line[512];
  std::snprintf(line, sizeof line,
                "gpu: %s, sm_%d%d, %d SMs, L2 %s, memory %s (%s free), CUDA runtime %d.%d, "
                "driver %d.%d",
                prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                format_bytes(prop.l2CacheSize).c_str(), format_bytes(double(total_bytes)).c_str(),
                format_bytes(double(free_bytes)).c_str(), runtime_version / 1000,
                (runtime_version % 1000) / 10, driver_version / 1000, (driver_version % 1000) / 10);
  out.note(line);
  out.note(tally_tuning_line());
  {
    std::string thresholds = "tally plan thresholds (device/detail/thresholds.cuh):";
    tally::detail::for_each_threshold([&](const char* name, long long value) {
      thresholds += ' ';
      thresholds += name;
      thresholds += '=';
      thresholds += std::to_string(value);
    });
    out.note(thresholds);
  }
  out.set_peers(prop.name, peer_names{"cub::", "", "", 53});

  event_timer timer;
  {
    // The achieved copy bandwidth: 2 x 512 MiB (far beyond L2), cudaMemcpyAsync D2D.
    const std::size_t bytes = std::min<std::size_t>(std::size_t{512} << 20, free_bytes / 4);
    device_buffer a(bytes);
    device_buffer b(bytes);
    cuda_check(cudaMemset(a.data(), 1, bytes), "cudaMemset");
    cuda_check(cudaDeviceSynchronize(), "cudaMemset");  // the timer's stream does not wait for it
    const gpu_timing t = timer.measure(
        [&](cudaStream_t s) {
          cuda_check(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s),
                     "cudaMemcpyAsync");
        },
        config.reps);
    std::snprintf(line, sizeof line,
                  "copy bandwidth: %.0f GB/s (cudaMemcpyAsync device to device of %s, read + "
                  "written, median of %d)",
                  2.0 * double(bytes) / t.median_s / 1e9, format_bytes(double(bytes)).c_str(),
                  t.reps);
    out.note(line);

    // What the device-pointer check of every call (device/detail/pointer_check.cuh: one
    // cudaPointerGetAttributes a pointer) costs the host.
    constexpr int checks = 100000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < checks; ++i) {
      tally::detail::check_device_pointer("tally-bench", "in", static_cast<const int*>(a.data()), 1);
    }
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                                start).count() / checks;
    std::snprintf(line, sizeof line, "pointer check: %.3f us a pointer (host, mean of %d)", us,
                  checks);
    out.note(line);
  }

  std::set<std::string> noted;
  gpu_context context;
  context.config = &config;
  context.out = &out;
  context.device = prop.name;
  context.timer = &timer;
  context.noted = &noted;
  context.free_bytes = static_cast<std::int64_t>(free_bytes);
  // The GPU part's default operations: all of them (--operations picks some).
  const std::vector<operation> gpu_default = {operation::inclusive_scan, operation::exclusive_scan,
                                              operation::reduce, operation::segmented_scan};
  // The per-type sweep (gpu_bench_type.cuh) when one of its operations is asked for.
  if (config.wants(operation::inclusive_scan, gpu_default) ||
      config.wants(operation::exclusive_scan, gpu_default) ||
      config.wants(operation::reduce, gpu_default)) {
    for (const std::string& type : config.types) {
      if (type == "int32") run_gpu_type<std::int32_t>(context, type);
      if (type == "float") run_gpu_type<float>(context, type);
      if (type == "int64") run_gpu_type<std::int64_t>(context, type);
      if (type == "double") run_gpu_type<double>(context, type);
    }
  }
  // The course's table of reductions (gpu_bench_reduce.cu): with the GPU default
  // operations, or --operations reduce.
  if (config.wants(operation::reduce, gpu_default)) run_reduce_course_table(context);
  // The segmented and batched scans (gpu_bench_segmented.cu): with the GPU default
  // operations, or --operations segmented.
  if (config.wants(operation::segmented_scan, gpu_default)) run_segmented_table(context);
  // The selection table (gpu_bench_select.cu): with --operations select only.
  if (config.wants(operation::copy_if, {})) run_select_table(context);
  // The applications table (gpu_bench_algorithms.cu): with --operations applications, or
  // the applications it names, only.
  run_applications_table(context);
}

}  // namespace tally_bench
