// bench/gpu_bench_reduce.cu -- the course's table: tree, block, chunked and atomic
// reductions (Oancea & Henriksen's course notes on reduce and scan measure these four at
// n = 1000 and 1,000,000) beside a copy of the same n, CUB's DeviceReduce::Sum and tally's
// single-pass reduce, for int32 and float sums, at the course's sizes and at 2^20, 2^24
// and 2^28.
//
// Method as the rest of the GPU part (gpu_bench.cu): CUDA events, a warm-up call, the
// median of config.reps samples, a spin kernel before each sample. CUB's temporary storage
// and tally's caller storage (sized by tally::reduction::storage_bytes) are allocated
// before timing. Every row's result is checked against the host reference (verify.hpp).
//
// Columns: a reduction reads n elements, so its GB/s counts n * sizeof(T) bytes and %copy
// compares that with the copy's read + write rate (100% = reading at the copy's total
// bandwidth); the note of every reduce row gives its time over the copy's time of the
// same n (the target of scripts/targets.py for n <= 2^20: at most 1.2x).
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <tally/device/reduce.cuh>
#include <vector>

#include "gpu_bench_common.cuh"
#include "gpu_bench_reduce.hpp"
#include "verify.hpp"

namespace tally_bench::gpu {

namespace {

template <class T>
class reduce_table {
 public:
  reduce_table(gpu_context& context, std::string type_name)
      : ctx_(context), config_(*context.config), type_name_(std::move(type_name)) {}

  void run(const std::vector<std::int64_t>& sizes) {
    if (sizes.empty()) return;
    const std::int64_t max_n = *std::max_element(sizes.begin(), sizes.end());
    host_in_.resize(static_cast<std::size_t>(max_n));
    fill_input(host_in_.data(), max_n, config_.seed);
    in_.grow(static_cast<std::size_t>(max_n) * sizeof(T));
    copy_out_.grow(static_cast<std::size_t>(max_n) * sizeof(T));
    result_.grow(sizeof(T));
    cuda_check(cudaMemcpy(in_.data(), host_in_.data(), static_cast<std::size_t>(max_n) * sizeof(T),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy (input)");
    for (std::int64_t n : sizes) {
      n_ = n;
      run_size();
    }
  }

 private:
  const T* in() const { return static_cast<const T*>(in_.data()); }
  T* result() const { return static_cast<T*>(result_.data()); }

  // Times `call`, checks `read_back()` against the reference, adds the row (what: copy or
  // reduce). Returns the median time (0 when the row was skipped or failed to run).
  double row(operation what, const std::string& impl, const std::function<void(cudaStream_t)>& call,
             const std::function<double()>& read_back, const checkpoints& reference) {
    if (what != operation::copy && !config_.selected(impl)) return 0;
    const cudaStream_t stream = ctx_.timer->stream();
    cuda_check(cudaMemsetAsync(result_.data(), 0x7F, sizeof(T), stream), "cudaMemsetAsync (poison)");
    cuda_check(cudaStreamSynchronize(stream), "poison");
    gpu_timing t;
    try {
      t = ctx_.timer->measure(call, config_.reps);
    } catch (const std::exception& e) {
      ctx_.out->note("error: " + impl + " " + type_name_ + " n=" + std::to_string(n_) + ": " + e.what());
      return 0;
    }
    result_row r;
    r.device = ctx_.device;
    r.what = what;
    r.type = type_name_;
    r.op = what == operation::copy ? "-" : "plus";
    r.n = n_;
    const double bytes = static_cast<double>(n_) * sizeof(T);
    r.bytes = what == operation::copy ? 2 * bytes : bytes;
    r.impl = impl;
    r.reps = t.reps;
    r.median_s = t.median_s;
    r.min_s = t.min_s;
    r.max_s = t.max_s;
    if (what == operation::copy) {
      r.check = check_status::not_checked;
      r.note = "course table";
    } else {
      std::string why;
      r.check = compare(reference, {read_back()}, &why);
      char text[96];
      std::snprintf(text, sizeof text, "course table; %.2fx copy time",
                    copy_s_ > 0 ? t.median_s / copy_s_ : 0.0);
      r.note = r.check == check_status::failed ? why : std::string(text);
    }
    ctx_.out->add(std::move(r));
    return t.median_s;
  }

  void run_size() {
    const std::int64_t n = n_;
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
    const checkpoints reference =
        make_checkpoints(host_in_.data(), n, operation::reduce, scan_op::plus, config_.seed);
    auto read_device = [this] {
      T v{};
      cuda_check(cudaMemcpy(&v, result(), sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (check)");
      return static_cast<double>(v);
    };

    // the copy of the same n: the reference of the time ratio
    copy_s_ = row(operation::copy, "cudaMemcpyAsync",
                  [=, this](cudaStream_t s) {
                    cuda_check(cudaMemcpyAsync(copy_out_.data(), in(), bytes,
                                               cudaMemcpyDeviceToDevice, s),
                               "cudaMemcpyAsync");
                  },
                  [] { return 0.0; }, reference);

    if (n <= INT_MAX) {
      std::size_t temp_bytes = 0;
      cuda_check(cub::DeviceReduce::Sum(nullptr, temp_bytes, in(), result(), static_cast<int>(n)),
                 "cub storage query");
      cub_temp_.grow(std::max<std::size_t>(temp_bytes, 1));
      void* temp = cub_temp_.data();
      row(operation::reduce, "cub::DeviceReduce::Sum",
          [=, this](cudaStream_t s) {
            std::size_t b = temp_bytes;
            cuda_check(cub::DeviceReduce::Sum(temp, b, in(), result(), static_cast<int>(n), s),
                       "cub::DeviceReduce::Sum");
          },
          read_device, reference);
    }

    using tally::reduction::algorithm;
    for (algorithm a : tally::reduction::all_algorithms) {
      const std::string impl = std::string("tally::reduction::") + tally::reduction::algorithm_name(a);
      if (!config_.selected(impl)) continue;
      const std::size_t need = tally::reduction::storage_bytes<const T*, T, tally::plus>(a, n);
      tally_temp_.grow(std::max<std::size_t>(need, 1));
      tally::options o;
      if (need > 0) o.storage = {tally_temp_.data(), tally_temp_.bytes()};
      row(operation::reduce, impl,
          [=, this](cudaStream_t s) {
            tally::options with_stream = o;
            with_stream.stream = s;
            tally::reduction::run(a, in(), n, result(), T(0), tally::plus{}, with_stream);
          },
          read_device, reference);
    }

    // tally's best: the single pass without caller storage (partials from tally's pool,
    // the finish counter from its ring: no memset), result in device memory ...
    row(operation::reduce, "tally::reduce_into",
        [=, this](cudaStream_t s) {
          tally::options o;
          o.stream = s;
          tally::reduce_into(in(), n, result(), T(0), tally::plus{}, o);
        },
        read_device, reference);
    // ... and the value returned to the host (the time includes the kernel's write into
    // pinned host memory and the host's wait for it)
    T host_result{};
    row(operation::reduce, "tally::reduce (value)",
        [=, this, &host_result](cudaStream_t s) {
          tally::options o;
          o.stream = s;
          host_result = tally::reduce(in(), n, T(0), tally::plus{}, o);
        },
        [&host_result] { return static_cast<double>(host_result); }, reference);
  }

  gpu_context& ctx_;
  const bench_config& config_;
  std::string type_name_;
  std::vector<T> host_in_;
  device_buffer in_;
  device_buffer copy_out_;
  device_buffer result_;
  device_buffer cub_temp_;
  device_buffer tally_temp_;
  std::int64_t n_ = 0;
  double copy_s_ = 0;
};

}  // namespace

void run_reduce_course_table(gpu_context& context) {
  const bench_config& config = *context.config;
  std::vector<std::int64_t> sizes = config.sizes;
  if (sizes.empty()) {
    sizes = {1000, 1000000, std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 28};
    const int top = config.max_log2.value_or(config.quick ? 24 : 28);
    std::erase_if(sizes, [top](std::int64_t n) { return n > (std::int64_t{1} << top); });
  }
  // the input and the copy's output must fit
  const std::int64_t max_fitting = context.free_bytes / 4 * 4 / 10;
  std::erase_if(sizes, [max_fitting](std::int64_t n) { return n > max_fitting; });
  context.out->note(
      "course table (Oancea & Henriksen): tree, block, chunked, atomic reductions beside the copy, "
      "CUB and tally's single pass; int32 and float sums");
  for (const std::string& type : config.types) {
    if (type == "int32") reduce_table<std::int32_t>(context, type).run(sizes);
    if (type == "float") reduce_table<float>(context, type).run(sizes);
  }
}

}  // namespace tally_bench::gpu
