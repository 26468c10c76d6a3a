// bench/gpu_bench_segmented.cu -- the table of segmented and batched scans: what it
// measures, and the segment descriptions that its rows share. The rows themselves:
// gpu_bench_segmented.cuh.
//
// For int32, float, int64 and double sums (the targets of scripts/targets.py: int32 and
// float), in one run, on the same buffers:
//   copy      cudaMemcpyAsync device to device of the values (n * sizeof(T) read and
//             written) at every n of the table: the reference of %copy;
//   segmented_scan    at n = 2^26 and 2^28 (--quick: 2^26), for segments of uniform
//             lengths 1, 4, 32, 1024, 2^16 and n, and of random lengths uniform in
//             [1, 2000]: tally::inclusive_segmented_scan (int32 CSR offsets),
//             tally::inclusive_scan_by_flags (uint8 head flags), tally::inclusive_scan_by_key
//             (int32 keys = segment index); the peer cub::DeviceScan::InclusiveSumByKey on
//             the same keys. CUB 3.0 (the CCCL of CUDA 13.0) has no segmented scan over
//             offsets or flags (no cub/device/device_segmented_scan.cuh): by key is CUB's
//             only form, so it is the peer of all three;
//   segmented_reduce  for lengths 32, 1024, 2^16, n and random: tally::segmented_reduce,
//             peer cub::DeviceSegmentedReduce::Sum (begin offsets = offsets, end offsets =
//             offsets + 1);
//   batched_scan      shapes 2^20 x 32, 32 x 2^20, 16384 x 4096, 2^20 x 2, 2 x 2^20 along
//             axis 0 and axis 1: tally::inclusive_scan_batched (float also with
//             options.deterministic: the "/deterministic" rows); the peer
//             cub::DeviceScan::InclusiveSumByKey with keys = line index, which computes the
//             same thing along axis 1. Along axis 0 CUB has no strided form: the peer is the
//             same InclusiveSumByKey over the same n in contiguous lines of `rows` elements
//             (the transposed layout), a rough peer, said in the row's note.
// Only the call is timed: keys, flags and offsets are written on the device before (and
// kept for all the rows of a case); CUB's temporary storage is allocated before timing;
// tally's segmented forms take no caller storage and run as a user calls them.
// %copy counts the values only (2 n sizeof(T) bytes for a scan, n + segments values for a
// segmented reduce): for a scan it is the copy's time over the row's time, keys, flags
// and offsets being extra reads that the copy does not make.
// Every row's output is compared with a sequential reference (double) over windows of
// a few thousand elements (start, middle, end, random places, across segment boundaries),
// and for a segmented reduce over a few hundred segments.
#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "gpu_bench_common.cuh"
#include "gpu_bench_segmented.hpp"
#include "verify.hpp"

namespace tally_bench::gpu {

namespace segmented {

namespace {

constexpr int fill_threads = 256;

unsigned fill_blocks(std::int64_t count) {
  const std::int64_t blocks = (count + fill_threads - 1) / fill_threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 8192));
}

__global__ void uniform_offsets_kernel(std::int32_t* offsets, std::int64_t count,
                                       std::int64_t length, std::int64_t n) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k <= count;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    offsets[k] = static_cast<std::int32_t>(k * length < n ? k * length : n);
  }
}

__global__ void uniform_keys_flags_kernel(std::int32_t* keys, std::uint8_t* flags,
                                          std::int64_t n, std::int64_t length) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t k = i / length;
    if (keys != nullptr) keys[i] = static_cast<std::int32_t>(k);
    if (flags != nullptr) flags[i] = k * length == i ? 1 : 0;
  }
}

// keys[i] = the k with offsets[k] <= i < offsets[k + 1] (a binary search per element).
__global__ void offsets_keys_kernel(const std::int32_t* offsets, std::int64_t count,
                                    std::int32_t* keys, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t lo = 0;
    std::int64_t hi = count;  // offsets[lo] <= i < offsets[hi]
    while (hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (offsets[mid] <= i) lo = mid; else hi = mid;
    }
    keys[i] = static_cast<std::int32_t>(lo);
  }
}

__global__ void offsets_flags_kernel(const std::int32_t* offsets, std::int64_t count,
                                     std::uint8_t* flags) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < count;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    flags[offsets[k]] = 1;
  }
}

}  // namespace

segment_layout uniform_layout(std::int64_t n, std::int64_t length) {
  segment_layout s;
  s.n = n;
  s.length = std::max<std::int64_t>(length, 1);
  return s;
}

segment_layout random_layout(std::int64_t n, std::int64_t max_length, std::uint64_t seed) {
  segment_layout s;
  s.n = n;
  s.offsets.reserve(static_cast<std::size_t>(n / std::max<std::int64_t>(max_length / 2, 1) + 2));
  std::int64_t at = 0;
  s.offsets.push_back(0);
  for (std::uint64_t k = 0; at < n; ++k) {
    const auto length = static_cast<std::int64_t>(
        mix64(seed ^ mix64(k + 0x5E6D0000ull)) % static_cast<std::uint64_t>(max_length)) + 1;
    at = std::min(at + length, n);
    s.offsets.push_back(static_cast<std::int32_t>(at));
  }
  return s;
}

void write_layout(const segment_layout& layout, std::int32_t* offsets, std::uint8_t* flags,
                  std::int32_t* keys, cudaStream_t stream) {
  const std::int64_t n = layout.n;
  const std::int64_t count = layout.count();
  if (layout.length > 0) {
    if (offsets != nullptr) {
      uniform_offsets_kernel<<<fill_blocks(count + 1), fill_threads, 0, stream>>>(
          offsets, count, layout.length, n);
    }
    if ((keys != nullptr || flags != nullptr) && n > 0) {
      uniform_keys_flags_kernel<<<fill_blocks(n), fill_threads, 0, stream>>>(keys, flags, n,
                                                                               layout.length);
    }
  } else {
    // The offsets are needed on the device for the keys and flags too: they go to
    // `offsets` when given, else to a buffer of their own.
    device_buffer own;
    std::int32_t* device_offsets = offsets;
    if (device_offsets == nullptr) {
      own.grow(layout.offsets.size() * sizeof(std::int32_t));
      device_offsets = static_cast<std::int32_t*>(own.data());
    }
    cuda_check(cudaMemcpyAsync(device_offsets, layout.offsets.data(),
                               layout.offsets.size() * sizeof(std::int32_t),
                               cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync (offsets)");
    if (keys != nullptr && n > 0) {
      offsets_keys_kernel<<<fill_blocks(n), fill_threads, 0, stream>>>(device_offsets, count,
                                                                         keys, n);
    }
    if (flags != nullptr && n > 0) {
      cuda_check(cudaMemsetAsync(flags, 0, static_cast<std::size_t>(n), stream),
                 "cudaMemsetAsync (flags)");
      offsets_flags_kernel<<<fill_blocks(count), fill_threads, 0, stream>>>(device_offsets,
                                                                              count, flags);
    }
    // `own` is freed at the end of this scope: wait for its readers first
    cuda_check(cudaStreamSynchronize(stream), "segment layout");
  }
  cuda_check(cudaGetLastError(), "segment layout kernels");
  cuda_check(cudaStreamSynchronize(stream), "segment layout");
}

std::vector<window> check_windows(std::int64_t n, const segment_layout* layout,
                                  std::uint64_t seed) {
  constexpr std::int64_t width = 4096;
  if (n <= 0) return {};
  if (n <= width) return {window{0, n}};
  std::vector<std::int64_t> starts = {0, n / 2 - width / 2, n - width};
  for (std::uint64_t k = 0; k < 4; ++k) {
    starts.push_back(static_cast<std::int64_t>(mix64(seed + 104729u * (k + 1) + n) %
                                               static_cast<std::uint64_t>(n)));
  }
  if (layout != nullptr && layout->count() > 1) {
    for (std::uint64_t k = 0; k < 2; ++k) {
      const std::int64_t segment =
          1 + static_cast<std::int64_t>(mix64(seed + 7877u * (k + 1) + n) %
                                        static_cast<std::uint64_t>(layout->count() - 1));
      starts.push_back(layout->begin(segment) - width / 2);
    }
  }
  for (std::int64_t& s : starts) s = std::clamp<std::int64_t>(s, 0, n - width);
  std::sort(starts.begin(), starts.end());
  std::vector<window> windows;
  for (std::int64_t s : starts) {
    if (!windows.empty() && s <= windows.back().end) {
      windows.back().end = std::max(windows.back().end, s + width);
    } else {
      windows.push_back(window{s, s + width});
    }
  }
  return windows;
}

std::string size_text(std::int64_t n) {
  if (n >= (std::int64_t{1} << 16) && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t{1} << k) < n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

std::string segment_case::label() const {
  switch (kind) {
    case uniform: return "len " + size_text(length);
    case whole: return "len n";
    case random: return "len U[1," + std::to_string(length) + "]";
  }
  return "?";
}

segment_layout segment_case::layout(std::int64_t n, std::uint64_t seed) const {
  switch (kind) {
    case uniform: return uniform_layout(n, length);
    case whole: return uniform_layout(n, n);
    case random: return random_layout(n, length, seed);
  }
  return uniform_layout(n, n);
}

}  // namespace segmented

void run_segmented_table(gpu_context& context) {
  using namespace segmented;
  const bench_config& config = *context.config;
  segmented_plan plan;
  const std::int64_t k26 = std::int64_t{1} << 26;
  const std::int64_t k28 = std::int64_t{1} << 28;
  plan.sizes = config.sizes;
  if (plan.sizes.empty()) plan.sizes = config.quick ? std::vector<std::int64_t>{k26}
                                                    : std::vector<std::int64_t>{k26, k28};
  if (config.max_log2) {
    const std::int64_t top = std::int64_t{1} << *config.max_log2;
    std::erase_if(plan.sizes, [top](std::int64_t n) { return n > top; });
  }
  plan.cases = {
      {segment_case::uniform, 1, false},
      {segment_case::uniform, 4, false},
      {segment_case::uniform, 32, true},
      {segment_case::uniform, 1024, true},
      {segment_case::uniform, std::int64_t{1} << 16, true},
      {segment_case::whole, 0, true},
      {segment_case::random, 2000, true},
  };
  plan.shapes = {
      {std::int64_t{1} << 20, 32},
      {32, std::int64_t{1} << 20},
      {16384, 4096},
      {std::int64_t{1} << 20, 2},
      {2, std::int64_t{1} << 20},
  };
  if (config.max_log2) {
    const std::int64_t top = std::int64_t{1} << *config.max_log2;
    std::erase_if(plan.shapes, [top](const batched_shape& s) { return s.rows * s.cols > top; });
  }
  // A guard against a pathologically slow row (each sample of a normal row is a few ms).
  plan.budget_s = config.quick ? 1.0 : 10.0;

  context.out->note(
      "segmented table (issue 6): int32, float, int64 and double sums (the targets: int32 and "
      "float); segmented scans by offsets, flags and "
      "keys and segmented reductions for several segment lengths, batched scans along both "
      "axes; each beside a copy of the values and CUB. CUB of CUDA 13.0 has no segmented scan: "
      "its peer is cub::DeviceScan::InclusiveSumByKey (keys = segment or line index)");
  for (const std::string& type : config.types) {
    // A failure outside a row (allocation, the segment descriptions, a CUB storage query)
    // ends this type's rows, not the run.
    try {
      if (type == "int32") run_segmented_type<std::int32_t>(context, type, plan);
      if (type == "float") run_segmented_type<float>(context, type, plan);
      if (type == "int64") run_segmented_type<std::int64_t>(context, type, plan);
      if (type == "double") run_segmented_type<double>(context, type, plan);
    } catch (const std::exception& e) {
      context.out->note("error: segmented table, " + type + ": " + e.what());
    }
  }
}

}  // namespace tally_bench::gpu
