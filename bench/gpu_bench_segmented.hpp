// bench/gpu_bench_segmented.hpp -- the table of segmented and batched scans and segmented
// reductions: the plan of the table, the description of the segments that the
// rows share, and the per-type runs (gpu_bench_segmented.cuh, instantiated in
// gpu_bench_segmented_<type>.cu so that the types compile in parallel).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace tally_bench::gpu {

struct gpu_context;

// For int32, float, int64 and double sums, in one run (see gpu_bench_segmented.cu for the
// rows):
// segmented scans (offsets, flags, keys) and segmented reductions at n = 2^26 and 2^28
// (--quick: 2^26; --sizes replaces the list, --max-log2 caps it) for several segment
// lengths, and batched scans along both axes of a few 2-d shapes; each beside a copy of
// the values of the same n and CUB. Rows go to the report as segmented_scan,
// segmented_reduce and batched_scan rows, the case in their `variant`.
void run_segmented_table(gpu_context& context);

namespace segmented {

// How the elements [0, n) are cut into segments: every segment `length` long (the last
// one shorter when length does not divide n), or the CSR `offsets` (count() + 1 entries,
// every segment non-empty). The host's copy of what the device buffers of a row describe.
struct segment_layout {
  std::int64_t n = 0;
  std::int64_t length = 0;            // > 0: uniform segments
  std::vector<std::int32_t> offsets;  // length == 0: the offsets

  std::int64_t count() const {
    if (length > 0) return (n + length - 1) / length;
    return static_cast<std::int64_t>(offsets.size()) - 1;
  }
  std::int64_t begin(std::int64_t k) const {
    if (length > 0) return std::min(k * length, n);
    return offsets[static_cast<std::size_t>(k)];
  }
  std::int64_t end(std::int64_t k) const { return begin(k + 1); }
  std::int64_t segment_of(std::int64_t i) const {
    if (length > 0) return i / length;
    return (std::upper_bound(offsets.begin(), offsets.end(), i) - offsets.begin()) - 1;
  }
};

// Uniform segments of `length`, or segments of random lengths uniform in [1, max_length]
// (a function of the seed; the last one cut at n).
segment_layout uniform_layout(std::int64_t n, std::int64_t length);
segment_layout random_layout(std::int64_t n, std::int64_t max_length, std::uint64_t seed);

// Writes the device form of `layout` on `stream` and waits for it: the offsets
// (count() + 1 int32), the head flags (n uint8, 1 where a segment starts) and the keys
// (n int32, the segment's index). A null pointer skips that form.
void write_layout(const segment_layout& layout, std::int32_t* offsets, std::uint8_t* flags,
                  std::int32_t* keys, cudaStream_t stream);

// A range [begin, end) of output positions that a row's check compares.
struct window {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// The checked positions of a scan of n elements: windows of a few thousand elements at
// the start, the middle, the end, at random places and across random segment boundaries
// of `layout` (when not null); sorted and disjoint.
std::vector<window> check_windows(std::int64_t n, const segment_layout* layout,
                                  std::uint64_t seed);

// One segmentation of the table.
struct segment_case {
  enum kind_t { uniform, whole, random } kind = uniform;
  std::int64_t length = 0;  // uniform: the length; random: the largest length
  bool reduce = false;      // segmented_reduce rows too

  std::string label() const;  // the rows' variant: "len 32", "len n", "len U[1,2000]"
  segment_layout layout(std::int64_t n, std::uint64_t seed) const;
};

struct batched_shape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
};

// What the table measures (gpu_bench_segmented.cu fills it from the command line).
struct segmented_plan {
  std::vector<std::int64_t> sizes;          // n of the segmented scans and reductions
  std::vector<segment_case> cases;          // the segmentations at each n
  std::vector<batched_shape> shapes;        // the batched scans (both axes)
  double budget_s = 0;                      // per-row sampling budget (event_timer::measure)
};

// "2^20" for powers of two from 2^16 up, the plain number otherwise ("1024").
std::string size_text(std::int64_t n);

// The rows of one element type.
template <class T>
void run_segmented_type(gpu_context& context, const std::string& type_name,
                        const segmented_plan& plan);

extern template void run_segmented_type<std::int32_t>(gpu_context&, const std::string&,
                                                      const segmented_plan&);
extern template void run_segmented_type<float>(gpu_context&, const std::string&,
                                               const segmented_plan&);
extern template void run_segmented_type<std::int64_t>(gpu_context&, const std::string&,
                                                      const segmented_plan&);
extern template void run_segmented_type<double>(gpu_context&, const std::string&,
                                                const segmented_plan&);

}  // namespace segmented

}  // namespace tally_bench::gpu
