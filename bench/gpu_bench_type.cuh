// bench/gpu_bench_type.cuh -- the GPU benchmark of one element type.
//
// For every size and operator, on the same device buffers and in one run:
//   copy     cudaMemcpyAsync device-to-device of the same bytes: the practical limit of a
//            scan (which reads n and writes n), the reference of the percent column;
//   CUB      cub::DeviceScan::InclusiveSum / InclusiveScan, ExclusiveSum / ExclusiveScan,
//            cub::DeviceReduce::Sum / Max, temporary storage allocated before timing:
//            the peer of the speedup column;
//   Thrust   thrust::inclusive_scan / exclusive_scan / reduce on the stream
//            (thrust::cuda::par_nosync); Thrust allocates its temporary storage inside
//            the call, and that is part of its time;
//   tally    tally::inclusive_scan / exclusive_scan through the public API, for
//            `automatic` and for every strategy x block algorithm pair of the lists
//            below. The multi-pass strategies run with caller storage sized by the
//            *_storage_bytes queries (so no allocation is timed); the single-pass ones
//            (chained, decoupled_lookback: warp_scans only) as a user calls them, with
//            the tile state tally keeps per stream (one launch, nothing allocated after
//            the first call); `automatic` both ways, and decoupled look-back with
//            options.deterministic. A pair the library does not offer
//            (std::invalid_argument) is skipped with a note. Reductions: tally::reduce_into
//            (result in device memory, as CUB's) and tally::reduce (the value returned:
//            its time includes the host's wait, as Thrust's does).
// Every row's output is checked against the host reference (verify.hpp).
//
// Compile time: the public tally calls instantiate every strategy x block pair, so each
// (type, operator) costs a lot of device code. The operators are plus for every type and
// max for int32 only (kept in step with bench_config's default).
#pragma once

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <tally/tally.cuh>
#include <type_traits>
#include <vector>

#include "gpu_bench_common.cuh"
#include "verify.hpp"

// tally's device-wide reduce is measured where its header is present.
#if __has_include(<tally/device/reduce.cuh>)
#include <tally/device/reduce.cuh>
#define TALLY_BENCH_HAS_DEVICE_REDUCE 1
#else
#define TALLY_BENCH_HAS_DEVICE_REDUCE 0
#endif

namespace tally_bench::gpu {

// ---- the tally configurations measured (data, not code: add a strategy here) ------------
struct strategy_entry {
  tally::scan_strategy value;
  const char* name;
};
inline constexpr strategy_entry tally_strategies[] = {
    {tally::scan_strategy::scan_then_propagate, "scan_then_propagate"},
    {tally::scan_strategy::reduce_then_scan, "reduce_then_scan"},
    {tally::scan_strategy::chained, "chained"},
    {tally::scan_strategy::decoupled_lookback, "decoupled_lookback"},
};

struct block_entry {
  tally::block_scan value;
  const char* name;
};
inline constexpr block_entry tally_blocks[] = {
    {tally::block_scan::kogge_stone, "kogge_stone"},
    {tally::block_scan::kogge_stone_double_buffered, "kogge_stone_double_buffered"},
    {tally::block_scan::brent_kung, "brent_kung"},
    {tally::block_scan::brent_kung_conflict_free, "brent_kung_conflict_free"},
    {tally::block_scan::coarsened, "coarsened"},
    {tally::block_scan::warp_scans, "warp_scans"},
    // teaching baselines (tally::textbook only; the rows' notes say so)
    {tally::block_scan::blelloch, "blelloch"},
    {tally::block_scan::brent_kung_divergent, "brent_kung_divergent"},
};

// The naive O(n^2) scan (scan_strategy::naive, a teaching baseline) runs up to this n only.
inline constexpr std::int64_t naive_scan_max_n = std::int64_t{1} << 16;

// Whether the max operator is compiled for T (see the compile-time note above).
template <class T>
inline constexpr bool max_compiled_for = std::is_same_v<T, std::int32_t>;

template <class T>
class gpu_type_bench {
 public:
  gpu_type_bench(gpu_context& context, std::string type_name)
      : ctx_(context), config_(*context.config), type_name_(std::move(type_name)) {}

  void run() {
    std::vector<std::int64_t> sizes = config_.sizes_for(sizeof(T), 28, {12, 16, 20, 24, 28}, true);
    // Both buffers and some temporary storage must fit in the device's free memory.
    const std::int64_t max_fitting = ctx_.free_bytes / static_cast<std::int64_t>(sizeof(T)) * 4 / 10;
    const auto too_large = std::remove_if(sizes.begin(), sizes.end(),
                                          [&](std::int64_t n) { return n > max_fitting; });
    if (too_large != sizes.end()) {
      note_once(type_name_ + " sizes above " + std::to_string(max_fitting) +
                " elements skipped: they do not fit in the device's free memory");
      sizes.erase(too_large, sizes.end());
    }
    if (sizes.empty()) return;
    const std::int64_t max_n = *std::max_element(sizes.begin(), sizes.end());

    host_in_.resize(static_cast<std::size_t>(max_n));
    fill_input(host_in_.data(), max_n, config_.seed);
    in_.grow(static_cast<std::size_t>(max_n) * sizeof(T));
    out_.grow(static_cast<std::size_t>(max_n) * sizeof(T));
    result_.grow(sizeof(T));
    cuda_check(cudaMemcpy(in_.data(), host_in_.data(), static_cast<std::size_t>(max_n) * sizeof(T),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy (input)");

    for (std::int64_t n : sizes) {
      n_ = n;
      run_copy();
      for (scan_op op : config_.ops_for(type_name_)) {
        if (op == scan_op::plus) {
          run_operator(op, tally::plus{}, cuda::std::plus<T>{});
        } else if constexpr (max_compiled_for<T>) {
          run_operator(op, tally::maximum{}, cuda::maximum<T>{});
        } else {
          note_once("max is compiled for int32 only on the GPU (bench compile time): " +
                    type_name_ + " max skipped");
        }
      }
    }
  }

 private:
  const T* in() const { return static_cast<const T*>(in_.data()); }
  T* out() const { return static_cast<T*>(out_.data()); }
  T* result() const { return static_cast<T*>(result_.data()); }
  std::size_t bytes() const { return static_cast<std::size_t>(n_) * sizeof(T); }

  // Prints `text` as a note unless a note of the same `key` was printed already.
  void note_once(const std::string& text, const std::string& key = {}) {
    if (ctx_.noted->insert(key.empty() ? text : key).second) ctx_.out->note("note: " + text);
  }

  // The output at the check positions of `reference`, read back from the device.
  std::vector<double> read_scan_output(const checkpoints& reference) const {
    std::vector<double> values;
    for (std::int64_t i : reference.index) {
      T v{};
      cuda_check(cudaMemcpy(&v, out() + i, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (check)");
      values.push_back(static_cast<double>(v));
    }
    return values;
  }

  // Times `call`, checks what `read_back` returns against `reference`, adds the row. A
  // std::invalid_argument (an unimplemented tally configuration) skips the row with a
  // note; another failure is noted and the run goes on.
  void measure_row(operation what, const std::string& op_name, const std::string& impl,
                   const std::function<void(cudaStream_t)>& call,
                   const std::function<std::vector<double>()>& read_back,
                   const checkpoints& reference, std::string note = {}) {
    if (what != operation::copy && !config_.selected(impl)) return;
    // Poison the outputs: an element (or a reduction) never written fails the check. On
    // the timer's stream, which does not synchronise with the legacy default stream.
    const cudaStream_t stream = ctx_.timer->stream();
    cuda_check(cudaMemsetAsync(out_.data(), 0x7F, bytes(), stream), "cudaMemsetAsync (poison)");
    cuda_check(cudaMemsetAsync(result_.data(), 0x7F, sizeof(T), stream), "cudaMemsetAsync (poison)");
    cuda_check(cudaStreamSynchronize(stream), "poison");
    gpu_timing t;
    try {
      t = ctx_.timer->measure(call, config_.reps);
    } catch (const std::invalid_argument& e) {
      note_once(impl + " skipped: " + e.what());
      return;
    } catch (const std::exception& e) {
      ctx_.out->note("error: " + impl + " " + type_name_ + " " + op_name + " n=" +
                     std::to_string(n_) + ": " + e.what());
      return;
    }

    result_row row;
    row.device = ctx_.device;
    row.what = what;
    row.type = type_name_;
    row.op = op_name;
    row.n = n_;
    row.bytes = static_cast<double>(what == operation::reduce ? bytes() : 2 * bytes());
    row.impl = impl;
    row.threads = 0;
    row.reps = t.reps;
    row.median_s = t.median_s;
    row.min_s = t.min_s;
    row.max_s = t.max_s;
    std::string why;
    row.check = compare(reference, read_back(), &why);
    row.note = row.check == check_status::failed ? why : std::move(note);
    ctx_.out->add(std::move(row));
  }

  void run_copy() {
    const checkpoints reference = make_checkpoints(host_in_.data(), n_, operation::copy,
                                                   scan_op::plus, config_.seed);
    const std::size_t size = bytes();
    measure_row(
        operation::copy, "-", "cudaMemcpyAsync",
        [=, this](cudaStream_t s) {
          cuda_check(cudaMemcpyAsync(out(), in(), size, cudaMemcpyDeviceToDevice, s),
                     "cudaMemcpyAsync");
        },
        [&] { return read_scan_output(reference); }, reference);
  }

  // CUB needs its temporary storage size first; the query runs outside the timing.
  template <class Query>
  void* cub_storage(Query&& query, std::size_t& bytes_needed) {
    bytes_needed = 0;
    cuda_check(query(nullptr, bytes_needed), "cub storage query");
    cub_temp_.grow(std::max<std::size_t>(bytes_needed, 1));
    return cub_temp_.data();
  }

  template <class TallyOp, class CudaOp>
  void run_operator(scan_op op, TallyOp tally_op, CudaOp cuda_op) {
    constexpr bool is_sum = std::is_same_v<TallyOp, tally::plus>;
    const std::string op_name = scan_op_name(op);
    const T init = is_sum ? T(0) : std::numeric_limits<T>::lowest();
    const std::int64_t n = n_;
    const bool fits_int = n <= INT_MAX;  // CUB and Thrust are called with int sizes
    const std::vector<operation> gpu_default = {operation::inclusive_scan,
                                                operation::exclusive_scan, operation::reduce};
    if (!fits_int) note_once("n above INT_MAX: CUB and Thrust rows skipped");

    // ---- inclusive scans ----
    if (config_.wants(operation::inclusive_scan, gpu_default)) {
      const checkpoints reference = make_checkpoints(host_in_.data(), n, operation::inclusive_scan,
                                                     op, config_.seed);
      auto read = [&] { return read_scan_output(reference); };
      if (fits_int) {
        std::size_t temp_bytes = 0;
        void* temp = nullptr;
        if constexpr (is_sum) {
          temp = cub_storage([&](void* p, std::size_t& b) {
            return cub::DeviceScan::InclusiveSum(p, b, in(), out(), static_cast<int>(n));
          }, temp_bytes);
          measure_row(operation::inclusive_scan, op_name, "cub::DeviceScan::InclusiveSum",
                      [=, this](cudaStream_t s) {
                        std::size_t b = temp_bytes;
                        cuda_check(cub::DeviceScan::InclusiveSum(temp, b, in(), out(),
                                                                 static_cast<int>(n), s),
                                   "cub::DeviceScan::InclusiveSum");
                      },
                      read, reference);
        } else {
          temp = cub_storage([&](void* p, std::size_t& b) {
            return cub::DeviceScan::InclusiveScan(p, b, in(), out(), cuda_op, static_cast<int>(n));
          }, temp_bytes);
          measure_row(operation::inclusive_scan, op_name, "cub::DeviceScan::InclusiveScan",
                      [=, this](cudaStream_t s) {
                        std::size_t b = temp_bytes;
                        cuda_check(cub::DeviceScan::InclusiveScan(temp, b, in(), out(), cuda_op,
                                                                  static_cast<int>(n), s),
                                   "cub::DeviceScan::InclusiveScan");
                      },
                      read, reference);
        }
        measure_row(operation::inclusive_scan, op_name, "thrust::inclusive_scan",
                    [=, this](cudaStream_t s) {
                      thrust::inclusive_scan(thrust::cuda::par_nosync.on(s), in(), in() + n,
                                             out(), cuda_op);
                    },
                    read, reference, "allocates in the call");
      }
      run_tally_rows(operation::inclusive_scan, op_name, read, reference,
                     [=, this](const tally::options& o) {
                       if (production(o)) return tally::inclusive_scan_storage_bytes<const T*, TallyOp>(n, o);
                       return tally::textbook::inclusive_scan_storage_bytes<const T*, TallyOp>(n, o);
                     },
                     [=, this](const tally::options& o) {
                       return plan_of<tally::inclusive_accumulator_t<TallyOp, T>>(n, o);
                     },
                     [=, this](const tally::options& o) {
                       if (production(o)) {
                         tally::inclusive_scan(in(), out(), n, tally_op, o);
                       } else {
                         tally::textbook::inclusive_scan(in(), out(), n, tally_op, o);
                       }
                     });
    }

    // ---- exclusive scans (from the operator's identity, as CUB's ExclusiveSum) ----
    if (config_.wants(operation::exclusive_scan, gpu_default)) {
      const checkpoints reference = make_checkpoints(host_in_.data(), n, operation::exclusive_scan,
                                                     op, config_.seed);
      auto read = [&] { return read_scan_output(reference); };
      if (fits_int) {
        std::size_t temp_bytes = 0;
        void* temp = nullptr;
        if constexpr (is_sum) {
          temp = cub_storage([&](void* p, std::size_t& b) {
            return cub::DeviceScan::ExclusiveSum(p, b, in(), out(), static_cast<int>(n));
          }, temp_bytes);
          measure_row(operation::exclusive_scan, op_name, "cub::DeviceScan::ExclusiveSum",
                      [=, this](cudaStream_t s) {
                        std::size_t b = temp_bytes;
                        cuda_check(cub::DeviceScan::ExclusiveSum(temp, b, in(), out(),
                                                                 static_cast<int>(n), s),
                                   "cub::DeviceScan::ExclusiveSum");
                      },
                      read, reference);
        } else {
          temp = cub_storage([&](void* p, std::size_t& b) {
            return cub::DeviceScan::ExclusiveScan(p, b, in(), out(), cuda_op, init,
                                                  static_cast<int>(n));
          }, temp_bytes);
          measure_row(operation::exclusive_scan, op_name, "cub::DeviceScan::ExclusiveScan",
                      [=, this](cudaStream_t s) {
                        std::size_t b = temp_bytes;
                        cuda_check(cub::DeviceScan::ExclusiveScan(temp, b, in(), out(), cuda_op,
                                                                  init, static_cast<int>(n), s),
                                   "cub::DeviceScan::ExclusiveScan");
                      },
                      read, reference);
        }
        measure_row(operation::exclusive_scan, op_name, "thrust::exclusive_scan",
                    [=, this](cudaStream_t s) {
                      thrust::exclusive_scan(thrust::cuda::par_nosync.on(s), in(), in() + n,
                                             out(), init, cuda_op);
                    },
                    read, reference, "allocates in the call");
      }
      run_tally_rows(operation::exclusive_scan, op_name, read, reference,
                     [=, this](const tally::options& o) {
                       if (production(o)) return tally::exclusive_scan_storage_bytes<const T*, T, TallyOp>(n, o);
                       return tally::textbook::exclusive_scan_storage_bytes<const T*, T, TallyOp>(n, o);
                     },
                     [=, this](const tally::options& o) {
                       return plan_of<tally::exclusive_accumulator_t<TallyOp, T, T>>(n, o);
                     },
                     [=, this](const tally::options& o) {
                       if (production(o)) {
                         tally::exclusive_scan(in(), out(), n, init, tally_op, o);
                       } else {
                         tally::textbook::exclusive_scan(in(), out(), n, init, tally_op, o);
                       }
                     });
    }

    // ---- reductions (bytes: n read) ----
    if (config_.wants(operation::reduce, gpu_default)) {
      const checkpoints reference =
          make_checkpoints(host_in_.data(), n, operation::reduce, op, config_.seed);
      auto read_device = [&] {
        T v{};
        cuda_check(cudaMemcpy(&v, result(), sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy (check)");
        return std::vector<double>{static_cast<double>(v)};
      };
      T host_result{};
      auto read_host = [&] { return std::vector<double>{static_cast<double>(host_result)}; };
      if (fits_int) {
        std::size_t temp_bytes = 0;
        void* temp = nullptr;
        if constexpr (is_sum) {
          temp = cub_storage([&](void* p, std::size_t& b) {
            return cub::DeviceReduce::Sum(p, b, in(), result(), static_cast<int>(n));
          }, temp_bytes);
          measure_row(operation::reduce, op_name, "cub::DeviceReduce::Sum",
                      [=, this](cudaStream_t s) {
                        std::size_t b = temp_bytes;
                        cuda_check(cub::DeviceReduce::Sum(temp, b, in(), result(),
                                                          static_cast<int>(n), s),
                                   "cub::DeviceReduce::Sum");
                      },
                      read_device, reference);
        } else {
          temp = cub_storage([&](void* p, std::size_t& b) {
            return cub::DeviceReduce::Max(p, b, in(), result(), static_cast<int>(n));
          }, temp_bytes);
          measure_row(operation::reduce, op_name, "cub::DeviceReduce::Max",
                      [=, this](cudaStream_t s) {
                        std::size_t b = temp_bytes;
                        cuda_check(cub::DeviceReduce::Max(temp, b, in(), result(),
                                                          static_cast<int>(n), s),
                                   "cub::DeviceReduce::Max");
                      },
                      read_device, reference);
        }
        measure_row(operation::reduce, op_name, "thrust::reduce",
                    [=, this, &host_result](cudaStream_t s) {
                      host_result = thrust::reduce(thrust::cuda::par_nosync.on(s), in(),
                                                   in() + n, init, cuda_op);
                    },
                    read_host, reference, "returns the value: waits for it");
      }
      run_tally_reduce(op_name, tally_op, init, host_result, read_device, read_host, reference);
    }
  }

  // tally's reduce (where its header is present), both forms:
  //   reduce_into  the result in device memory, nothing waited for: the form CUB's
  //                DeviceReduce has, so this row's ratio to CUB compares like with like;
  //   reduce       returns the value, so the time includes the host's wait and the
  //                result's way to the host, as Thrust's does (its ratio to CUB's row,
  //                the speedup column's peer, counts that wait against tally).
  template <class TallyOp>
  void run_tally_reduce(const std::string& op_name, TallyOp tally_op, T init, T& host_result,
                        const std::function<std::vector<double>()>& read_device,
                        const std::function<std::vector<double>()>& read_host,
                        const checkpoints& reference) {
#if TALLY_BENCH_HAS_DEVICE_REDUCE
    const std::int64_t n = n_;
    measure_row(operation::reduce, op_name, "tally::reduce_into/automatic",
                [=, this](cudaStream_t s) {
                  tally::options o;
                  o.stream = s;
                  tally::reduce_into(in(), n, result(), init, tally_op, o);
                },
                read_device, reference);
    measure_row(operation::reduce, op_name, "tally::reduce/automatic",
                [=, this, &host_result](cudaStream_t s) {
                  tally::options o;
                  o.stream = s;
                  host_result = tally::reduce(in(), n, init, tally_op, o);
                },
                read_host, reference, "returns the value: waits for it");
#else
    (void)op_name, (void)tally_op, (void)init, (void)host_result, (void)read_device,
        (void)read_host, (void)reference;
    note_once("tally::reduce not measured: include/tally/device/reduce.cuh does not exist yet");
#endif
  }

  // `automatic` (with caller storage, then with its own stream-ordered allocation) and
  // every strategy x block pair of the lists at the top of this file.
  template <class Query, class Plan, class Call>
  void run_tally_rows(operation what, const std::string& op_name,
                      const std::function<std::vector<double>()>& read,
                      const checkpoints& reference, Query query, Plan plan, Call call) {
    auto run_one = [&](const std::string& impl, const std::string& strategy_name,
                       tally::scan_strategy strategy, tally::block_scan block,
                       bool caller_storage, bool deterministic = false) {
      if (!config_.selected(impl)) return;
      tally::options o;
      o.strategy = strategy;
      o.block = block;
      o.deterministic = deterministic;
      std::string note = caller_storage ? "" : "no caller storage (the library's own)";
      if (strategy == tally::scan_strategy::naive || block == tally::block_scan::blelloch ||
          block == tally::block_scan::brent_kung_divergent) {
        note += std::string(note.empty() ? "" : "; ") + "teaching baseline";
      }
      try {
        // throws std::invalid_argument for a pair the library does not offer
        const std::size_t needed = query(o);
        if (caller_storage) {
          tally_temp_.grow(std::max<std::size_t>(needed, 1));
          o.storage = {tally_temp_.data(), tally_temp_.bytes()};
        }
      } catch (const std::invalid_argument& e) {
        note_once("tally/" + strategy_name + "/" + tally_block_name(block) + " skipped: " + e.what(),
                  "skipped " + strategy_name + "/" + tally_block_name(block));
        return;
      }
      // the production call's plan (device/detail/dispatch.cuh, scan_plan_for)
      if (production(o)) note += std::string(note.empty() ? "" : "; ") + "plan " + plan(o);
      measure_row(what, op_name, impl,
                  [=](cudaStream_t s) {
                    tally::options with_stream = o;
                    with_stream.stream = s;
                    call(with_stream);
                  },
                  read, reference, note);
    };
    // What a user gets by default: the single-pass scans keep their tile state per stream
    // (one launch, no allocation); with caller storage they add a memset of it.
    run_one("tally/automatic", "automatic", tally::scan_strategy::automatic,
            tally::block_scan::automatic, false);
    run_one("tally/automatic+storage", "automatic", tally::scan_strategy::automatic,
            tally::block_scan::automatic, true);
    run_one("tally/decoupled_lookback/deterministic", "decoupled_lookback",
            tally::scan_strategy::decoupled_lookback, tally::block_scan::automatic, false, true);
    for (const strategy_entry& s : tally_strategies) {
      const bool single_pass = s.value == tally::scan_strategy::chained ||
                               s.value == tally::scan_strategy::decoupled_lookback;
      for (const block_entry& b : tally_blocks) {
        // single-pass: one tile pipeline (warp shuffles), the default state; multi-pass:
        // caller storage, so that no allocation is timed
        if (single_pass && b.value != tally::block_scan::warp_scans) continue;
        run_one(std::string("tally/") + s.name + "/" + b.name, s.name, s.value, b.value,
                !single_pass);
      }
    }
    // the naive scan (each output sums its whole prefix): O(n^2) work, small n only
    if (n_ <= naive_scan_max_n) {
      run_one("tally/naive", "naive", tally::scan_strategy::naive, tally::block_scan::automatic, true);
    }
  }

  // The plan tally::inclusive_scan / exclusive_scan takes for n values of T under o.
  template <class Acc>
  std::string plan_of(std::int64_t n, const tally::options& o) {
    return tally::detail::scan_plan_name(
        tally::detail::scan_plan_for<tally::detail::decoupled_lookback::strategy, Acc>(
            "tally-bench", in(), out(), n, o));
  }

  // The pairs tally::inclusive_scan runs (its production plans); tally::textbook runs the rest.
  static bool production(const tally::options& o) {
    return (o.strategy == tally::scan_strategy::automatic ||
            o.strategy == tally::scan_strategy::decoupled_lookback) &&
           (o.block == tally::block_scan::automatic || o.block == tally::block_scan::warp_scans);
  }

  static std::string tally_block_name(tally::block_scan b) {
    for (const block_entry& e : tally_blocks) {
      if (e.value == b) return e.name;
    }
    return "automatic";
  }

  gpu_context& ctx_;
  const bench_config& config_;
  std::string type_name_;
  std::vector<T> host_in_;
  device_buffer in_;
  device_buffer out_;
  device_buffer result_;
  device_buffer cub_temp_;
  device_buffer tally_temp_;
  std::int64_t n_ = 0;
};

template <class T>
void run_gpu_type(gpu_context& context, const std::string& type_name) {
  gpu_type_bench<T>(context, type_name).run();
}

}  // namespace tally_bench::gpu
