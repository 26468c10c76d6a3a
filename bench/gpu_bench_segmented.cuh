// bench/gpu_bench_segmented.cuh -- the rows of the segmented table for one element type
// (what they are and why: gpu_bench_segmented.cu). Instantiated in
// gpu_bench_segmented_<type>.cu.
#pragma once

#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
// The umbrella first: tally/device/segmented.cuh does not compile alone (its single-pass
// scan uses the block headers that tally/device/scan.cuh brings).
#include <tally/tally.cuh>
#include <tally/device/segmented.cuh>
#include <type_traits>
#include <vector>

#include "gpu_bench_common.cuh"
#include "gpu_bench_segmented.hpp"
#include "verify.hpp"

namespace tally_bench::gpu::segmented {

namespace seg = tally::detail::segmented;

// ---- the references at the checked positions (double: exact for the bench's integer
// inputs while no float partial sum rounds, see verify.hpp) ------------------------------

// The tolerance of a float sum whose partial sums reached max_abs_prefix (verify.hpp's rule:
// exact while every sum of a contiguous range is a float integer, eps * sum|x| beyond).
template <class T>
double sum_tolerance(double max_abs_prefix, double sum_abs) {
  if constexpr (std::is_floating_point_v<T>) {
    if (2 * max_abs_prefix + 64 >= std::ldexp(1.0, std::numeric_limits<T>::digits)) {
      return std::numeric_limits<T>::epsilon() * sum_abs;
    }
  }
  return 0;
}

// The copy: the input itself.
template <class T>
checkpoints copy_reference(const T* x, const std::vector<window>& windows) {
  checkpoints c;
  for (const window& w : windows) {
    for (std::int64_t i = w.begin; i < w.end; ++i) {
      c.index.push_back(i);
      c.expected.push_back(static_cast<double>(x[i]));
      c.tolerance.push_back(0);
    }
  }
  return c;
}

// The inclusive segmented sum over contiguous segments, at the windows. One forward walk,
// which jumps to the start of a window's segment when that lies beyond where the walk is:
// about n steps for one long segment, a few windows' worth for short ones.
template <class T>
checkpoints segmented_scan_reference(const T* x, const segment_layout& s,
                                     const std::vector<window>& windows) {
  checkpoints c;
  std::int64_t i = 0;
  std::int64_t segment = -1;
  std::int64_t segment_end = 0;
  double running = 0, sum_abs = 0, max_abs_prefix = 0;
  for (const window& w : windows) {
    const std::int64_t k = s.segment_of(w.begin);
    if (segment < 0 || s.begin(k) > i) {
      i = s.begin(k);
      segment = k;
      segment_end = s.end(k);
      running = sum_abs = max_abs_prefix = 0;
    }
    for (; i < w.end; ++i) {
      while (i >= segment_end) {  // the next segment starts here
        ++segment;
        segment_end = s.end(segment);
        running = sum_abs = max_abs_prefix = 0;
      }
      const double v = static_cast<double>(x[i]);
      running += v;
      sum_abs += std::abs(v);
      max_abs_prefix = std::max(max_abs_prefix, std::abs(running));
      if (i >= w.begin) {
        c.index.push_back(i);
        c.expected.push_back(running);
        c.tolerance.push_back(sum_tolerance<T>(max_abs_prefix, sum_abs));
      }
    }
  }
  return c;
}

// The inclusive sum down the columns of a rows x cols row-major array (axis 0), at the
// windows: one walk over the rows up to the last window, a running sum per column.
template <class T>
checkpoints column_scan_reference(const T* x, std::int64_t rows, std::int64_t cols,
                                  const std::vector<window>& windows) {
  checkpoints c;
  if (windows.empty()) return c;
  std::vector<double> running(static_cast<std::size_t>(cols), 0.0);
  std::vector<double> sum_abs(running), max_abs_prefix(running);
  const std::int64_t last = windows.back().end;
  std::size_t w = 0;
  for (std::int64_t r = 0, i = 0; r < rows && i < last; ++r) {
    for (std::int64_t col = 0; col < cols && i < last; ++col, ++i) {
      const auto j = static_cast<std::size_t>(col);
      const double v = static_cast<double>(x[i]);
      running[j] += v;
      sum_abs[j] += std::abs(v);
      max_abs_prefix[j] = std::max(max_abs_prefix[j], std::abs(running[j]));
      while (w < windows.size() && i >= windows[w].end) ++w;
      if (w < windows.size() && i >= windows[w].begin) {
        c.index.push_back(i);
        c.expected.push_back(running[j]);
        c.tolerance.push_back(sum_tolerance<T>(max_abs_prefix[j], sum_abs[j]));
      }
    }
  }
  return c;
}

// The sums of a few hundred segments (the first, middle and last 64 and 8 random ones),
// indexed by segment.
template <class T>
checkpoints segmented_reduce_reference(const T* x, const segment_layout& s, std::uint64_t seed) {
  const std::int64_t count = s.count();
  std::vector<std::int64_t> chosen;
  auto add_range = [&](std::int64_t from, std::int64_t to) {
    for (std::int64_t k = std::max<std::int64_t>(from, 0); k < std::min(to, count); ++k) {
      chosen.push_back(k);
    }
  };
  add_range(0, 64);
  add_range(count / 2 - 32, count / 2 + 32);
  add_range(count - 64, count);
  for (std::uint64_t k = 0; k < 8 && count > 0; ++k) {
    chosen.push_back(static_cast<std::int64_t>(mix64(seed + 3571u * (k + 1) + count) %
                                               static_cast<std::uint64_t>(count)));
  }
  std::sort(chosen.begin(), chosen.end());
  chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
  checkpoints c;
  for (std::int64_t k : chosen) {
    double sum = 0, sum_abs = 0, max_abs_prefix = 0;
    for (std::int64_t i = s.begin(k); i < s.end(k); ++i) {
      const double v = static_cast<double>(x[i]);
      sum += v;
      sum_abs += std::abs(v);
      max_abs_prefix = std::max(max_abs_prefix, std::abs(sum));
    }
    c.index.push_back(k);
    c.expected.push_back(sum);
    c.tolerance.push_back(sum_tolerance<T>(max_abs_prefix, sum_abs));
  }
  return c;
}

// ---- the rows of one type -----------------------------------------------------------------

template <class T>
class segmented_table {
 public:
  segmented_table(gpu_context& context, std::string type_name, const segmented_plan& plan)
      : ctx_(context), config_(*context.config), type_name_(std::move(type_name)), plan_(plan) {}

  void run() {
    // int32 keys and offsets, and CUB's int sizes: n up to INT_MAX.
    std::vector<std::int64_t> sizes = plan_.sizes;
    std::vector<batched_shape> shapes = plan_.shapes;
    std::erase_if(sizes, [](std::int64_t n) { return n > INT_MAX; });
    std::erase_if(shapes, [](const batched_shape& s) { return s.rows * s.cols > INT_MAX; });
    if (sizes.size() != plan_.sizes.size() || shapes.size() != plan_.shapes.size()) {
      note_once("segmented table: sizes above INT_MAX skipped (int32 keys and offsets)");
    }
    // in, out (T), keys and offsets (int32, offsets up to n + 1 for segments of 1), flags
    // (uint8), the segmented reduction's results (n / 32 at most) and tally's temporary
    // storage (segmented_reduce: n accumulators) must fit beside CUB's storage.
    const std::int64_t per_element = 3 * static_cast<std::int64_t>(sizeof(T)) + 4 + 4 + 1 + 1;
    const std::int64_t max_fitting =
        (ctx_.free_bytes / 10 * 8 - (std::int64_t{256} << 20)) / per_element;
    const auto before = sizes.size() + shapes.size();
    std::erase_if(sizes, [&](std::int64_t n) { return n > max_fitting; });
    std::erase_if(shapes, [&](const batched_shape& s) { return s.rows * s.cols > max_fitting; });
    if (sizes.size() + shapes.size() != before) {
      note_once("segmented table: " + type_name_ + " sizes above " + std::to_string(max_fitting) +
                " elements skipped: they do not fit in the device's free memory");
    }
    std::int64_t max_n = 0;
    for (std::int64_t n : sizes) max_n = std::max(max_n, n);
    for (const batched_shape& s : shapes) max_n = std::max(max_n, s.rows * s.cols);
    if (max_n == 0) return;

    host_in_.resize(static_cast<std::size_t>(max_n));
    fill_input(host_in_.data(), max_n, config_.seed);
    const auto max_bytes = static_cast<std::size_t>(max_n) * sizeof(T);
    in_.grow(max_bytes);
    out_.grow(max_bytes);
    keys_.grow(static_cast<std::size_t>(max_n) * sizeof(std::int32_t));
    flags_.grow(static_cast<std::size_t>(max_n));
    cuda_check(cudaMemcpy(in_.data(), host_in_.data(), max_bytes, cudaMemcpyHostToDevice),
               "cudaMemcpy (input)");

    for (std::int64_t n : sizes) {
      n_ = n;
      run_copy();
      for (const segment_case& c : plan_.cases) {
        if (c.kind == segment_case::uniform && c.length > n) continue;
        run_segmented_case(c);
      }
    }
    for (const batched_shape& shape : shapes) {
      n_ = shape.rows * shape.cols;
      run_copy();
      run_batched(shape);
    }
  }

 private:
  const T* in() const { return static_cast<const T*>(in_.data()); }
  T* out() const { return static_cast<T*>(out_.data()); }
  T* segment_out() const { return static_cast<T*>(segment_out_.data()); }
  std::int32_t* keys() const { return static_cast<std::int32_t*>(keys_.data()); }
  std::uint8_t* flags() const { return static_cast<std::uint8_t*>(flags_.data()); }
  std::int32_t* offsets() const { return static_cast<std::int32_t*>(offsets_.data()); }
  std::size_t bytes() const { return static_cast<std::size_t>(n_) * sizeof(T); }

  void note_once(const std::string& text) {
    if (ctx_.noted->insert(text).second) ctx_.out->note("note: " + text);
  }

  // The values of `device` at the positions of `reference` (one copy per run of
  // consecutive positions).
  std::vector<double> read_back(const T* device, const checkpoints& reference) const {
    std::vector<double> values;
    values.reserve(reference.index.size());
    std::vector<T> chunk;
    for (std::size_t k = 0; k < reference.index.size();) {
      std::size_t e = k + 1;
      while (e < reference.index.size() && reference.index[e] == reference.index[e - 1] + 1) ++e;
      chunk.resize(e - k);
      cuda_check(cudaMemcpy(chunk.data(), device + reference.index[k], chunk.size() * sizeof(T),
                            cudaMemcpyDeviceToHost),
                 "cudaMemcpy (check)");
      for (T v : chunk) values.push_back(static_cast<double>(v));
      k = e;
    }
    return values;
  }

  // Times `call`, compares `result` (device memory, poisoned before the warm-up over
  // `result_bytes`) with `reference`, adds the row. A std::invalid_argument skips the row
  // with a note; another failure is noted and the run goes on. Returns the median time
  // (0 when the row did not run).
  double row(operation what, const std::string& variant, const std::string& impl,
             const std::function<void(cudaStream_t)>& call, T* result, std::size_t result_bytes,
             const checkpoints& reference, double counted_bytes, std::string note = {}) {
    if (what != operation::copy && !config_.selected(impl)) return 0;
    const cudaStream_t stream = ctx_.timer->stream();
    gpu_timing t;
    try {
      cuda_check(cudaMemsetAsync(result, 0x7F, result_bytes, stream), "cudaMemsetAsync (poison)");
      cuda_check(cudaStreamSynchronize(stream), "poison");
      t = ctx_.timer->measure(call, config_.reps, plan_.budget_s);
    } catch (const std::invalid_argument& e) {
      note_once(impl + " skipped: " + e.what());
      return 0;
    } catch (const std::exception& e) {
      ctx_.out->note("error: " + impl + " " + type_name_ + " n=" + std::to_string(n_) + " [" +
                     variant + "]: " + e.what());
      return 0;
    }
    result_row r;
    r.device = ctx_.device;
    r.what = what;
    r.type = type_name_;
    r.op = what == operation::copy ? "-" : "plus";
    r.n = n_;
    r.variant = variant;
    r.bytes = counted_bytes;
    r.impl = impl;
    r.reps = t.reps;
    r.median_s = t.median_s;
    r.min_s = t.min_s;
    r.max_s = t.max_s;
    std::string why;
    try {
      r.check = compare(reference, read_back(result, reference), &why);
    } catch (const std::exception& e) {
      r.check = check_status::failed;
      why = e.what();
    }
    if (r.check == check_status::failed) {
      note = why;
    } else if (what == operation::segmented_reduce && copy_s_[n_] > 0) {
      // %copy counts the values moved ((n + segments) sizeof(T)): say the time ratio too
      char text[64];
      std::snprintf(text, sizeof text, "; %.2fx copy time", t.median_s / copy_s_[n_]);
      note += text;
    }
    if (t.reps < config_.reps && r.check != check_status::failed) {
      note += std::string(note.empty() ? "" : "; ") + std::to_string(t.reps) +
              " samples (the row's sampling budget)";
    }
    r.note = std::move(note);
    ctx_.out->add(std::move(r));
    return t.median_s;
  }

  // CUB's temporary storage, sized by its query before timing.
  template <class Query>
  void* cub_storage(Query&& query, std::size_t& bytes_needed) {
    bytes_needed = 0;
    cuda_check(query(nullptr, bytes_needed), "cub storage query");
    cub_temp_.grow(std::max<std::size_t>(bytes_needed, 1));
    return cub_temp_.data();
  }

  // The copy of the values of n_ (once per n and type: the reference of %copy).
  void run_copy() {
    if (!copied_.insert(n_).second) return;
    const std::int64_t n = n_;
    const checkpoints reference = copy_reference(host_in_.data(), check_windows(n, nullptr, config_.seed));
    const std::size_t size = bytes();
    copy_s_[n] = row(operation::copy, "", "cudaMemcpyAsync",
                     [=, this](cudaStream_t s) {
                       cuda_check(cudaMemcpyAsync(out(), in(), size, cudaMemcpyDeviceToDevice, s),
                                  "cudaMemcpyAsync");
                     },
                     out(), size, reference, 2.0 * static_cast<double>(size));
  }

  // cub::DeviceScan::InclusiveSumByKey over the keys in keys_ (written by the caller).
  void cub_by_key_row(operation what, const std::string& variant, const checkpoints& reference,
                      std::string note) {
    const std::int64_t n = n_;
    std::size_t temp_bytes = 0;
    void* temp = cub_storage([&](void* p, std::size_t& b) {
      return cub::DeviceScan::InclusiveSumByKey(p, b, keys(), in(), out(), static_cast<int>(n));
    }, temp_bytes);
    row(what, variant, "cub::DeviceScan::InclusiveSumByKey",
        [=, this](cudaStream_t s) {
          std::size_t b = temp_bytes;
          cuda_check(cub::DeviceScan::InclusiveSumByKey(temp, b, keys(), in(), out(),
                                                        static_cast<int>(n),
                                                        ::cuda::std::equal_to<>{}, s),
                     "cub::DeviceScan::InclusiveSumByKey");
        },
        out(), bytes(), reference, 2.0 * static_cast<double>(bytes()), std::move(note));
  }

  // The plan a production call takes (device/detail/segmented_plans.cuh), for the row's note.
  static std::string plan_note(tally::detail::segmented::plan p, int cols = 0) {
    std::string text = std::string("; plan ") + tally::detail::segmented::plan_name(p);
    if (cols > 0) text += " of " + std::to_string(cols);
    return text;
  }

  void run_segmented_case(const segment_case& c) {
    const std::int64_t n = n_;
    const segment_layout layout = c.layout(n, config_.seed);
    const std::int64_t count = layout.count();
    offsets_.grow(static_cast<std::size_t>(count + 1) * sizeof(std::int32_t));
    write_layout(layout, offsets(), flags(), keys(), ctx_.timer->stream());
    const std::string variant = c.label();
    const checkpoints reference = segmented_scan_reference(
        host_in_.data(), layout, check_windows(n, &layout, config_.seed));
    const double scan_bytes = 2.0 * static_cast<double>(bytes());
    const std::string segments = std::to_string(count) + (count == 1 ? " segment" : " segments");

    // ---- segmented scans: the peer first, so that the table shows its ratio at once ----
    cub_by_key_row(operation::segmented_scan, variant, reference, segments + ", int32 keys");
    row(operation::segmented_scan, variant, "tally::inclusive_segmented_scan",
        [=, this](cudaStream_t s) {
          tally::options o;
          o.stream = s;
          tally::inclusive_segmented_scan(in(), out(), n, offsets(), count, tally::plus{}, o);
        },
        out(), bytes(), reference, scan_bytes,
        "int32 offsets" + plan_note(seg::offsets_plan_for<T, false>(in(), out(), n, offsets(), count)));
    row(operation::segmented_scan, variant, "tally::inclusive_scan_by_flags",
        [=, this](cudaStream_t s) {
          tally::options o;
          o.stream = s;
          tally::inclusive_scan_by_flags(in(), flags(), out(), n, tally::plus{}, o);
        },
        out(), bytes(), reference, scan_bytes,
        "uint8 flags" + plan_note(seg::flags_plan_for<T>(in(), flags(), out(), n)));
    row(operation::segmented_scan, variant, "tally::inclusive_scan_by_key",
        [=, this](cudaStream_t s) {
          tally::options o;
          o.stream = s;
          tally::inclusive_scan_by_key(keys(), in(), out(), n, tally::plus{}, std::equal_to<>{}, o);
        },
        out(), bytes(), reference, scan_bytes,
        "int32 keys" + plan_note(seg::keys_plan_for<T>(keys(), in(), out(), n, seg::device_equal_to<void>{})));

    if (!c.reduce) return;
    // ---- segmented reductions: n values read, one per segment written ----
    segment_out_.grow(static_cast<std::size_t>(count) * sizeof(T));
    const checkpoints sums = segmented_reduce_reference(host_in_.data(), layout, config_.seed);
    const double reduce_bytes = static_cast<double>(n + count) * sizeof(T);
    const std::size_t out_bytes = static_cast<std::size_t>(count) * sizeof(T);
    std::size_t temp_bytes = 0;
    void* temp = cub_storage([&](void* p, std::size_t& b) {
      return cub::DeviceSegmentedReduce::Sum(p, b, in(), segment_out(), count, offsets(),
                                             offsets() + 1);
    }, temp_bytes);
    row(operation::segmented_reduce, variant, "cub::DeviceSegmentedReduce::Sum",
        [=, this](cudaStream_t s) {
          std::size_t b = temp_bytes;
          cuda_check(cub::DeviceSegmentedReduce::Sum(temp, b, in(), segment_out(), count,
                                                     offsets(), offsets() + 1, s),
                     "cub::DeviceSegmentedReduce::Sum");
        },
        segment_out(), out_bytes, sums, reduce_bytes, segments + ", int32 offsets");
    row(operation::segmented_reduce, variant, "tally::segmented_reduce",
        [=, this](cudaStream_t s) {
          tally::options o;
          o.stream = s;
          tally::segmented_reduce(in(), n, offsets(), count, segment_out(), T(0), tally::plus{},
                                  o);
        },
        segment_out(), out_bytes, sums, reduce_bytes,
        segments + ", int32 offsets" + plan_note(seg::reduce_plan_for<T>(in(), n, count)));
  }

  void run_batched(const batched_shape& shape) {
    const std::int64_t rows = shape.rows;
    const std::int64_t cols = shape.cols;
    tally::options deterministic;
    deterministic.deterministic = true;
    const auto batched_plan_note = [&](int axis, const tally::options& o) {
      const std::int64_t dims[] = {rows, cols};
      const tally::detail::axis_view v = tally::detail::checked_shape("tally-bench", dims, axis);
      const seg::batched_plan p = seg::batched_plan_for<T>(in(), out(), v, o);
      return plan_note(p.kind, p.cols);
    };
    const std::int64_t n = rows * cols;
    const segment_layout row_lines = uniform_layout(n, cols);     // axis 1: the rows
    const segment_layout column_runs = uniform_layout(n, rows);   // the transposed layout
    const std::vector<window> windows = check_windows(n, &row_lines, config_.seed);
    const double scan_bytes = 2.0 * static_cast<double>(bytes());
    const std::string shape_text = size_text(rows) + "x" + size_text(cols);
    for (int axis = 0; axis < 2; ++axis) {
      const std::string variant = shape_text + " axis " + std::to_string(axis);
      const checkpoints reference =
          axis == 1 ? segmented_scan_reference(host_in_.data(), row_lines, windows)
                    : column_scan_reference(host_in_.data(), rows, cols, windows);
      if (axis == 1) {
        write_layout(row_lines, nullptr, nullptr, keys(), ctx_.timer->stream());
        cub_by_key_row(operation::batched_scan, variant, reference,
                       "keys = row index: the same scan");
      } else {
        // CUB has no strided (column) scan: the same InclusiveSumByKey over contiguous
        // lines of `rows` elements, the work of the transposed problem, checked as that.
        write_layout(column_runs, nullptr, nullptr, keys(), ctx_.timer->stream());
        const checkpoints transposed =
            segmented_scan_reference(host_in_.data(), column_runs, windows);
        cub_by_key_row(operation::batched_scan, variant, transposed,
                       "rough peer: contiguous lines of " + size_text(rows) +
                           " (the transposed layout; CUB has no strided scan)");
      }
      row(operation::batched_scan, variant, "tally::inclusive_scan_batched",
          [=, this](cudaStream_t s) {
            tally::options o;
            o.stream = s;
            tally::inclusive_scan_batched(in(), out(), rows, cols, axis, tally::plus{}, o);
          },
          out(), bytes(), reference, scan_bytes, shape_text + " row-major" + batched_plan_note(axis, {}));
      if constexpr (std::is_floating_point_v<T>) {
        // the price of options.deterministic (float sums: the association fixed run to run)
        row(operation::batched_scan, variant, "tally::inclusive_scan_batched/deterministic",
            [=, this](cudaStream_t s) {
              tally::options o;
              o.stream = s;
              o.deterministic = true;
              tally::inclusive_scan_batched(in(), out(), rows, cols, axis, tally::plus{}, o);
            },
            out(), bytes(), reference, scan_bytes,
            shape_text + " row-major, deterministic" + batched_plan_note(axis, deterministic));
      }
    }
  }

  gpu_context& ctx_;
  const bench_config& config_;
  std::string type_name_;
  const segmented_plan& plan_;
  std::vector<T> host_in_;
  device_buffer in_;
  device_buffer out_;
  device_buffer keys_;
  device_buffer flags_;
  device_buffer offsets_;
  device_buffer segment_out_;
  device_buffer cub_temp_;
  std::int64_t n_ = 0;
  std::set<std::int64_t> copied_;
  std::map<std::int64_t, double> copy_s_;
};

template <class T>
void run_segmented_type(gpu_context& context, const std::string& type_name,
                        const segmented_plan& plan) {
  segmented_table<T>(context, type_name, plan).run();
}

}  // namespace tally_bench::gpu::segmented
