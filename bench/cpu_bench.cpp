// bench/cpu_bench.cpp -- the CPU part of tally-bench.
//
// For every type, size and operator, in one run and on the same buffers:
//   copies     memcpy and a non-temporal-store copy on one thread, and both split over
//              oneTBB's threads at each thread count: the fastest is the "copy" that the
//              percent column compares with (a scan reads n and writes n, as a copy does);
//   peers      std::inclusive_scan sequential (the speedup column's peer) and with
//              std::execution::par (libstdc++'s parallel STL, on oneTBB), and
//              tbb::parallel_scan with a range body (pre_scan / final_scan);
//   tally      tally::cpu::inclusive_scan.
// (--operations adds the exclusive scans and the reductions, with the same peers.)
// Threaded implementations run once per thread count of the sweep, each under a
// tbb::global_control that caps oneTBB at that many threads.
//
// Timing: std::chrono::steady_clock around a batch of calls (one call for large sizes;
// enough calls for ~0.2 ms at small sizes, whose data is then in cache, which is what a
// small scan sees in practice); one warm-up call first; the median of the samples is
// reported. The buffers are allocated once per type at the largest size and every page
// is written (first touch) before any timing. After each implementation's timed runs its
// output is checked against the reference (verify.hpp).
#include "cpu_bench.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_scan.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <execution>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <tally/cpu/select.hpp>
#include <tally/tally.hpp>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>  // SSE2 non-temporal stores (part of every x86-64 processor)
#define TALLY_BENCH_HAS_STREAMING_STORES 1
#else
#define TALLY_BENCH_HAS_STREAMING_STORES 0
#endif

namespace tally_bench {

namespace {

using clock_type = std::chrono::steady_clock;

// ---- buffers ------------------------------------------------------------------------------

struct free_deleter {
  void operator()(void* p) const { std::free(p); }
};

// Page-aligned memory (2 MiB aligned when large, so that transparent huge pages can back
// it); `T` must be trivially copyable. The pages are not touched here.
template <class T>
std::unique_ptr<T[], free_deleter> allocate(std::int64_t n) {
  const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(n, 1)) * sizeof(T);
  const std::size_t alignment = bytes >= (std::size_t{4} << 20) ? (std::size_t{2} << 20) : 4096;
  const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  return std::unique_ptr<T[], free_deleter>(static_cast<T*>(p));
}

// ---- timing -------------------------------------------------------------------------------

struct timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int reps = 0;
};

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t m = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[m] : 0.5 * (samples[m - 1] + samples[m]);
}

// Runs `call` once to warm up, then `reps` timed samples, each a batch of calls long
// enough (>= min_sample_s) for the clock's resolution not to matter.
timing measure(const std::function<void()>& call, int reps) {
  constexpr double min_sample_s = 200e-6;
  call();  // warm-up: caches, page tables, oneTBB's worker threads
  const auto t0 = clock_type::now();
  call();
  const double single_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  const int batch = single_s >= min_sample_s
                        ? 1
                        : static_cast<int>(std::min(1e5, std::ceil(min_sample_s / std::max(single_s, 1e-9))));
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    const auto start = clock_type::now();
    for (int b = 0; b < batch; ++b) call();
    samples.push_back(std::chrono::duration<double>(clock_type::now() - start).count() / batch);
  }
  timing t;
  t.median_s = median_of(samples);
  t.min_s = *std::min_element(samples.begin(), samples.end());
  t.max_s = *std::max_element(samples.begin(), samples.end());
  t.reps = reps;
  return t;
}

// ---- copies -------------------------------------------------------------------------------

// Copies with non-temporal (streaming) stores, which write whole cache lines to memory
// without first reading them into the cache: a copy that moves 2 bytes per byte copied
// instead of 3. `dst` should be 16-byte aligned for the bulk of it to stream.
void copy_non_temporal(void* dst, const void* src, std::size_t bytes) {
#if TALLY_BENCH_HAS_STREAMING_STORES
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Head: up to the first 16-byte boundary of the destination.
  const std::size_t head =
      std::min(bytes, (16 - reinterpret_cast<std::uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {  // a cache line per iteration
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  std::memcpy(d + i, s + i, bytes - i);
  // Streaming stores are weakly ordered: make them visible before the copy "returns".
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

// A copy split over oneTBB's threads in page-aligned pieces, one piece per thread
// (static partitioner: no work stealing to pay for in a perfectly balanced job).
void copy_parallel(void* dst, const void* src, std::size_t bytes, bool non_temporal) {
  constexpr std::size_t page = 4096;
  const std::size_t pages = (bytes + page - 1) / page;
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, pages, 16),
      [&](const tbb::blocked_range<std::size_t>& r) {
        const std::size_t begin = r.begin() * page;
        const std::size_t end = std::min(bytes, r.end() * page);
        if (non_temporal) {
          copy_non_temporal(d + begin, s + begin, end - begin);
        } else {
          std::memcpy(d + begin, s + begin, end - begin);
        }
      },
      tbb::static_partitioner{});
}

// ---- tbb::parallel_scan --------------------------------------------------------------------
//
// oneTBB's parallel_scan runs a body over subranges in two kinds of passes: pre_scan
// (compute the subrange's aggregate only) and final_scan (write the outputs, starting
// from the aggregate of everything to the left). It splits bodies to run subranges in
// parallel, then reverse_join folds a left neighbour's aggregate into a body and assign
// copies the final state back. `Exclusive` shifts the output by one (out[i] excludes
// in[i]) and starts from `init`.

template <class T, class Op, bool Exclusive>
class tbb_scan_body {
 public:
  tbb_scan_body(const T* in, T* out, Op op, T init) : in_(in), out_(out), op_(op), sum_(init) {}
  tbb_scan_body(tbb_scan_body& other, tbb::split)
      : in_(other.in_), out_(other.out_), op_(other.op_), sum_(tally::identity<Op, T>()) {}

  void operator()(const tbb::blocked_range<std::int64_t>& r, tbb::pre_scan_tag) {
    T acc = sum_;
    for (std::int64_t i = r.begin(); i < r.end(); ++i) acc = op_(acc, in_[i]);
    sum_ = acc;
  }
  void operator()(const tbb::blocked_range<std::int64_t>& r, tbb::final_scan_tag) {
    T acc = sum_;
    for (std::int64_t i = r.begin(); i < r.end(); ++i) {
      if constexpr (Exclusive) {
        const T x = in_[i];  // read before the write: in place stays correct
        out_[i] = acc;
        acc = op_(acc, x);
      } else {
        acc = op_(acc, in_[i]);
        out_[i] = acc;
      }
    }
    sum_ = acc;
  }
  // `left` covers the elements just before this body's: its aggregate comes first.
  void reverse_join(tbb_scan_body& left) { sum_ = op_(left.sum_, sum_); }
  void assign(tbb_scan_body& other) { sum_ = other.sum_; }

 private:
  const T* in_;
  T* out_;
  Op op_;
  T sum_;
};

// Grain of the oneTBB peers: large enough that a subrange costs more than its task.
constexpr std::int64_t tbb_grain = 16384;

template <bool Exclusive, class T, class Op>
void tbb_scan(const T* in, T* out, std::int64_t n, Op op, T init) {
  tbb_scan_body<T, Op, Exclusive> body(in, out, op, init);
  tbb::parallel_scan(tbb::blocked_range<std::int64_t>(0, n, tbb_grain), body);
}

template <class T, class Op>
T tbb_reduce(const T* in, std::int64_t n, Op op, T init) {
  const T total = tbb::parallel_reduce(
      tbb::blocked_range<std::int64_t>(0, n, tbb_grain), tally::identity<Op, T>(),
      [&](const tbb::blocked_range<std::int64_t>& r, T acc) {
        for (std::int64_t i = r.begin(); i < r.end(); ++i) acc = op(acc, in[i]);
        return acc;
      },
      op);
  return op(init, total);
}

// ---- one implementation -----------------------------------------------------------------

struct candidate {
  std::string impl;
  bool threaded = false;        // run at each thread count of the sweep
  std::function<void()> call;   // one run over the current size
};

template <class T>
class type_bench {
 public:
  type_bench(const bench_config& config, report& out, std::string type_name)
      : config_(config), out_(out), type_name_(std::move(type_name)) {}

  void run() {
    const std::vector<std::int64_t> sizes =
        config_.sizes_for(sizeof(T), default_max_log2(), {12, 16, 20, 24}, false);
    if (sizes.empty()) return;
    const std::int64_t max_n = *std::max_element(sizes.begin(), sizes.end());
    in_ = allocate<T>(max_n);
    out_buffer_ = allocate<T>(max_n);
    fill_input(in_.get(), max_n, config_.seed);           // also the first touch of `in`
    poison(out_buffer_.get(), static_cast<std::size_t>(max_n) * sizeof(T));  // and of `out`

    for (std::int64_t n : sizes) {
      n_ = n;
      run_copies();
      for (scan_op op : config_.ops_for(type_name_)) {
        // The std:: algorithms get std::plus for a sum (the form libstdc++ knows best),
        // the others tally's operator objects.
        if (op == scan_op::plus) {
          run_operations(op, std::plus<T>{}, tally::plus{});
        } else {
          run_operations(op, tally::maximum{}, tally::maximum{});
        }
      }
      if (config_.wants(operation::copy_if, {})) {
        for (int percent : {50, 10}) run_copy_if(percent);
      }
    }
    in_.reset();
    out_buffer_.reset();
  }

 private:
  static int default_max_log2() {
    // 2^26 on small machines (a full run there must stay within minutes), 2^28 otherwise.
    return std::thread::hardware_concurrency() >= 8 ? 28 : 26;
  }

  std::size_t bytes() const { return static_cast<std::size_t>(n_) * sizeof(T); }

  void run_copies() {
    const T* in = in_.get();
    T* out = out_buffer_.get();
    const std::size_t size = bytes();
    const std::vector<candidate> copies = {
        {"memcpy", false, [=] { std::memcpy(out, in, size); }},
        {"nt_store_copy", false, [=] { copy_non_temporal(out, in, size); }},
        {"tbb_copy", true, [=] { copy_parallel(out, in, size, false); }},
        {"tbb_nt_store_copy", true, [=] { copy_parallel(out, in, size, true); }},
    };
    const checkpoints reference =
        make_checkpoints(in, n_, operation::copy, scan_op::plus, config_.seed);
    for (const candidate& c : copies) run_candidate(c, operation::copy, "-", reference, nullptr);
  }

  template <class StdOp, class TallyOp>
  void run_operations(scan_op op, StdOp std_op, TallyOp tally_op) {
    const T* in = in_.get();
    T* out = out_buffer_.get();
    const std::int64_t n = n_;
    // Exclusive scans and reductions start from the operator's identity as verify.hpp
    // (and CUB) define it: 0 for a sum, the lowest finite value for max.
    const T init = op == scan_op::plus ? T(0) : std::numeric_limits<T>::lowest();
    const std::string op_name = scan_op_name(op);

    if (config_.wants(operation::inclusive_scan, {operation::inclusive_scan})) {
      const std::vector<candidate> scans = {
          {"std::inclusive_scan(seq)", false,
           [=] { std::inclusive_scan(in, in + n, out, std_op); }},
          {"std::inclusive_scan(par)", true,
           [=] { std::inclusive_scan(std::execution::par, in, in + n, out, std_op); }},
          {"tbb::parallel_scan", true, [=] { tbb_scan<false>(in, out, n, tally_op, init); }},
          {"tally::cpu::inclusive_scan", true,
           [=] { tally::cpu::inclusive_scan(in, in + n, out, tally_op); }},
      };
      const checkpoints reference =
          make_checkpoints(in, n, operation::inclusive_scan, op, config_.seed);
      for (const candidate& c : scans) {
        run_candidate(c, operation::inclusive_scan, op_name, reference, nullptr);
      }
    }

    if (config_.wants(operation::exclusive_scan, {operation::inclusive_scan})) {
      const std::vector<candidate> scans = {
          {"std::exclusive_scan(seq)", false,
           [=] { std::exclusive_scan(in, in + n, out, init, std_op); }},
          {"std::exclusive_scan(par)", true,
           [=] { std::exclusive_scan(std::execution::par, in, in + n, out, init, std_op); }},
          {"tbb::parallel_scan", true, [=] { tbb_scan<true>(in, out, n, tally_op, init); }},
          {"tally::cpu::exclusive_scan", true,
           [=] { tally::cpu::exclusive_scan(in, in + n, out, init, tally_op); }},
      };
      const checkpoints reference =
          make_checkpoints(in, n, operation::exclusive_scan, op, config_.seed);
      for (const candidate& c : scans) {
        run_candidate(c, operation::exclusive_scan, op_name, reference, nullptr);
      }
    }

    if (config_.wants(operation::reduce, {operation::inclusive_scan})) {
      // A reduction reads n elements and writes one: its bytes are n * sizeof(T).
      T* result = &reduce_result_;
      const std::vector<candidate> reductions = {
          {"std::reduce(seq)", false, [=] { *result = std::reduce(in, in + n, init, std_op); }},
          {"std::reduce(par)", true,
           [=] { *result = std::reduce(std::execution::par, in, in + n, init, std_op); }},
          {"tbb::parallel_reduce", true, [=] { *result = tbb_reduce(in, n, tally_op, init); }},
          {"tally::cpu::reduce", true,
           [=] { *result = tally::cpu::reduce(in, in + n, init, tally_op); }},
      };
      const checkpoints reference = make_checkpoints(in, n, operation::reduce, op, config_.seed);
      for (const candidate& c : reductions) {
        run_candidate(c, operation::reduce, op_name, reference, result);
      }
    }
  }

  // Keeps a value where a hash of its bits falls below percent% of the hash range: about
  // percent% of the random input, scattered evenly, the same values in every run.
  struct keep_percent {
    std::uint32_t below;
    bool operator()(const T& x) const {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &x, sizeof(T));
      const auto h = static_cast<std::uint32_t>((bits * 0x9E3779B97F4A7C15ull) >> 32);
      return h < below;
    }
  };

  // Stream compaction: the std:: algorithm (sequential and parallel) against
  // tally::cpu::copy_if. A row moves n values read and the kept ones written; its check
  // compares the returned count and sampled outputs with the sequential reference.
  void run_copy_if(int percent) {
    const T* in = in_.get();
    T* out = out_buffer_.get();
    const std::int64_t n = n_;
    const keep_percent pred{static_cast<std::uint32_t>(4294967296.0 * percent / 100.0)};
    std::vector<T> want(static_cast<std::size_t>(n));
    const std::int64_t kept = tally::cpu::sequential::copy_if(in, in + n, want.begin(), pred) - want.begin();
    checkpoints reference;
    if (kept > 0) {
      reference.index = detail::check_positions(kept, config_.seed);
      std::sort(reference.index.begin(), reference.index.end());
      reference.index.erase(std::unique(reference.index.begin(), reference.index.end()), reference.index.end());
      std::erase_if(reference.index, [kept](std::int64_t i) { return i < 0 || i >= kept; });
      for (std::int64_t i : reference.index) {
        reference.expected.push_back(static_cast<double>(want[static_cast<std::size_t>(i)]));
        reference.tolerance.push_back(0.0);
      }
    }
    std::int64_t* count = &select_count_;
    const std::vector<candidate> selections = {
        {"std::copy_if(seq)", false, [=] { *count = std::copy_if(in, in + n, out, pred) - out; }},
        {"std::copy_if(par)", true,
         [=] { *count = std::copy_if(std::execution::par, in, in + n, out, pred) - out; }},
        {"tally::cpu::copy_if", true, [=] { *count = tally::cpu::copy_if(in, in + n, out, pred) - out; }},
    };
    const std::string op_name = "keep " + std::to_string(percent) + "%";
    for (const candidate& c : selections) {
      run_candidate(c, operation::copy_if, op_name, reference, nullptr,
                    static_cast<double>(n + kept) * sizeof(T), kept);
    }
  }

  // Times `c` (at each thread count when it is threaded), checks its output and adds a
  // row. `reduce_result` is where a reduction leaves its value (nullptr for the others).
  // `bytes` (0: the operation's usual count) and `expected_count` (-1: none) serve the
  // compactions, whose output length depends on the data.
  void run_candidate(const candidate& c, operation what, const std::string& op_name,
                     const checkpoints& reference, const T* reduce_result, double bytes_moved = 0,
                     std::int64_t expected_count = -1) {
    if (what != operation::copy && !config_.selected(c.impl)) return;
    const std::vector<int> thread_counts = c.threaded ? config_.threads : std::vector<int>{1};
    for (int threads : thread_counts) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                                      static_cast<std::size_t>(threads));
      // An element never written, or a reduction never stored, fails the check.
      if (reduce_result == nullptr) poison(out_buffer_.get(), bytes());
      reduce_result_ = static_cast<T>(2139062143);  // the poison value, see verify.hpp
      const timing t = measure(c.call, config_.reps);

      result_row row;
      row.device = "cpu";
      row.what = what;
      row.type = type_name_;
      row.op = op_name;
      row.n = n_;
      row.bytes = bytes_moved > 0 ? bytes_moved
                                  : static_cast<double>(what == operation::reduce ? bytes() : 2 * bytes());
      row.impl = c.impl;
      row.threads = threads;
      row.reps = t.reps;
      row.median_s = t.median_s;
      row.min_s = t.min_s;
      row.max_s = t.max_s;

      std::vector<double> actual;
      if (reduce_result != nullptr) {
        actual.push_back(static_cast<double>(*reduce_result));
      } else {
        for (std::int64_t i : reference.index) actual.push_back(static_cast<double>(out_buffer_[i]));
      }
      std::string why;
      row.check = compare(reference, actual, &why);
      if (expected_count >= 0 && select_count_ != expected_count) {
        row.check = check_status::failed;
        why = "produced " + std::to_string(select_count_) + " values, want " + std::to_string(expected_count);
      }
      if (row.check == check_status::failed) row.note = why;
      out_.add(std::move(row));
    }
  }

  const bench_config& config_;
  report& out_;
  std::string type_name_;
  std::unique_ptr<T[], free_deleter> in_;
  std::unique_ptr<T[], free_deleter> out_buffer_;
  std::int64_t n_ = 0;
  T reduce_result_{};
  std::int64_t select_count_ = 0;
};

}  // namespace

std::vector<int> default_thread_counts() {
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> counts;
  for (int k = 1; k <= hardware; k *= 2) counts.push_back(k);
  if (counts.back() != hardware) counts.push_back(hardware);
  return counts;
}

void run_cpu_bench(const bench_config& config, report& out) {
  // The CPU part measures scans, reductions and (when asked) copy_if; it has no segmented
  // table: nothing to do when --operations asks for none of them (copies alone would be
  // measured).
  const std::vector<operation> cpu_default = {operation::inclusive_scan};
  if (!config.wants(operation::inclusive_scan, cpu_default) &&
      !config.wants(operation::exclusive_scan, cpu_default) &&
      !config.wants(operation::reduce, cpu_default) && !config.wants(operation::copy_if, {})) {
    out.note("cpu: skipped (--operations names no CPU operation)");
    return;
  }
  out.set_peers("cpu", peer_names{"(seq)", "tbb::parallel_", "(par)", 26});
  out.note(fmt::format(
      "cpu: {} hardware threads; thread counts {}; streaming stores {}; {} samples per row",
      std::thread::hardware_concurrency(), fmt::join(config.threads, ","),
      TALLY_BENCH_HAS_STREAMING_STORES ? "SSE2" : "unavailable (nt copies are memcpy)",
      config.reps));
  out.note(fmt::format("tally::cpu tuning: tile {} KiB, parallel from {} KiB, streaming stores from {} MiB",
                       tally::cpu::cpu_tuning::tile_bytes >> 10,
                       tally::cpu::cpu_tuning::parallel_min_bytes >> 10,
                       tally::cpu::cpu_tuning::stream_min_bytes >> 20));
  for (const std::string& type : config.types) {
    if (type == "int32") type_bench<std::int32_t>(config, out, type).run();
    if (type == "float") type_bench<float>(config, out, type).run();
    if (type == "int64") type_bench<std::int64_t>(config, out, type).run();
    if (type == "double") type_bench<double>(config, out, type).run();
  }
}

}  // namespace tally_bench
