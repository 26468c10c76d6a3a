// bench/gpu_bench_select.cu -- the selection table: tally's stream compaction, partition,
// unique, run-length encoding and reduce-by-key (tally/device/select.cuh) beside CUB's
// calls for the same cases and a copy of the bytes each case must move, in one run.
//
// Cases (the row's variant; the operation column says which family member):
//   select_if P%        copy_if with a predicate on a hash of the value, P% kept
//   select_flagged 50%  copy_flagged by uint8 flags (copy_if rows as well)
//   partition 50%       the kept items, then the others
//   unique / run_length_encode / reduce_by_key, runs U[1,7]
//                       inputs made of runs of 1 to 7 equal items (4 on average)
// Input values are random; the predicate keeps x when hash(bits of x) % 100 < P, so the
// kept set is random as well.
//
// The floor. A case reads and writes B bytes, counted from the output the data actually
// produces (not the nominal percentage): the input (and flags, values) read, the kept
// items, runs, counts or aggregates written; the count's 8 bytes are not counted. The
// floor row is a cudaMemcpyAsync device to device of B / 2 bytes (B / 2 read, B / 2
// written): the time to move the case's bytes at the copy's bandwidth. Its GB/s and the
// case's rows count the same B.
//
// Method as the rest of the GPU part (gpu_bench.cu): CUDA events, a warm-up call, the
// median of config.reps samples, a spin kernel before each sample. CUB's temporary
// storage is queried and allocated before timing; tally takes no storage (its tile state
// lives in its per-stream buffer). Both write the count to device memory, nothing is
// waited for inside the timed call. The outputs and the count are poisoned before each
// row's warm-up and compared in full with the sequential oracle after its timed runs (CUB's
// partition writes the rejected items in reverse order: checked that way).
//
// Notes: every CUB and tally row's note gives its time over the floor's and the floor's
// time over its (the percent of the floor), tally's also CUB's time over its own (the
// speedup over CUB; the vs peer column says the same). The %copy column is the report's:
// this row's GB/s over the fastest copy of the type and n in the run.
#include <cub/device/device_partition.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/bit>
#include <cuda/std/functional>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <tally/cpu/sequential_select.hpp>
#include <tally/device/select.cuh>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu_bench_common.cuh"
#include "gpu_bench_select.hpp"
#include "verify.hpp"

namespace tally_bench::gpu {

namespace {

// ---- predicates (host and device: the oracle and both libraries call the same one) ------

// murmur3's 32-bit finaliser and its 64-bit one folded to 32 bits.
__host__ __device__ constexpr std::uint32_t hash32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  return x ^ (x >> 16);
}
__host__ __device__ constexpr std::uint32_t hash64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x ^ (x >> 32));
}

// Keeps x when the hash of its bits, modulo 100, is below `percent`.
template <class T>
struct keep_percent {
  std::uint32_t percent;
  __host__ __device__ bool operator()(const T& x) const {
    if constexpr (sizeof(T) == 4) {
      return hash32(cuda::std::bit_cast<std::uint32_t>(x)) % 100u < percent;
    } else {
      return hash64(cuda::std::bit_cast<std::uint64_t>(x)) % 100u < percent;
    }
  }
};

// ---- input data ---------------------------------------------------------------------------

// A random value of stream `salt` at index i (floats: multiples of 2^-10 in [-8192, 8192),
// all with distinct bit patterns).
template <class T>
T random_value(std::uint64_t seed, std::uint64_t salt, std::int64_t i) {
  const std::uint64_t bits = mix64(seed ^ mix64(salt ^ mix64(static_cast<std::uint64_t>(i))));
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(static_cast<std::int32_t>(bits >> 40) - (1 << 23)) * 0x1p-10f;
  } else {
    return static_cast<T>(sizeof(T) == 8 ? bits : bits >> 32);
  }
}

template <class T>
void fill_random(std::vector<T>& data, std::uint64_t seed, std::uint64_t salt) {
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = random_value<T>(seed, salt, static_cast<std::int64_t>(i));
  }
}

// Runs of 1 to 7 equal items (random lengths, 4 on average), each run's value random and
// different from the previous run's, so that every run is a maximal one.
template <class T>
void fill_runs(std::vector<T>& data, std::uint64_t seed) {
  std::size_t i = 0;
  T previous{};
  for (std::int64_t run = 0; i < data.size(); ++run) {
    const std::uint64_t length =
        1 + mix64(seed ^ 0x52554E5Full ^ mix64(static_cast<std::uint64_t>(run))) % 7;
    T value = random_value<T>(seed, 0x4B455953ull, run);
    if (run > 0 && value == previous) value = static_cast<T>(value + T{1});
    for (std::uint64_t k = 0; k < length && i < data.size(); ++k) data[i++] = value;
    previous = value;
  }
}

std::string mib_text(double bytes) {
  char text[48];
  if (bytes >= 1024.0 * 1024) {
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1024.0 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  }
  return text;
}

// ---- one case: its floor, CUB and tally ----------------------------------------------------

struct select_case {
  operation what = operation::copy_if;
  std::string op;         // the row's operator column: pred, flags, equal, plus
  std::string variant;    // "select_if 50%", "runs U[1,7]" ...
  std::string produced;   // what the oracle produced, for the floor's note: "524301 kept"
  std::size_t bytes = 0;  // bytes read + written by the operation, from the actual output
  std::string cub_impl;
  std::function<void(cudaStream_t)> cub_call;  // empty: no CUB row (n beyond CUB's int)
  std::function<std::string()> cub_check;      // "" when the output is the oracle's
  std::string tally_impl;
  std::function<void(cudaStream_t)> tally_call;
  std::function<std::string()> tally_check;
  std::vector<std::pair<void*, std::size_t>> outputs;  // poisoned before each row
};

template <class T>
class select_table {
 public:
  select_table(gpu_context& context, std::string type_name)
      : ctx_(context), config_(*context.config), type_name_(std::move(type_name)) {}

  // The host inputs and their device copies are made for `max_n` once, on first use;
  // every size uses their first n items.
  void set_sizes(std::int64_t max_n) { max_n_ = max_n; }
  void set_size(std::int64_t n) { n_ = n; }

  void case_select_if(int percent) {
    select_case c;
    c.what = operation::copy_if;
    c.op = "pred";
    c.variant = "select_if " + std::to_string(percent) + "%";
    c.cub_impl = "cub::DeviceSelect::If";
    c.tally_impl = "tally::copy_if";
    if (!wanted(c)) return;
    const T* in = random_input();
    const std::int64_t n = n_;
    const keep_percent<T> pred{static_cast<std::uint32_t>(percent)};
    std::vector<T> want(static_cast<std::size_t>(n));
    const std::int64_t kept =
        tally::cpu::sequential::copy_if(host_random_.begin(), host_random_.begin() + n,
                                        want.begin(), pred) -
        want.begin();
    c.produced = std::to_string(kept) + " kept";
    c.bytes = static_cast<std::size_t>(n + kept) * sizeof(T);
    T* out = out_as<T>(0, n);
    std::int64_t* count = count_ptr();
    c.outputs = {{out, static_cast<std::size_t>(n) * sizeof(T)}};
    const auto check = [&, out, kept] {
      std::string why = check_count(kept);
      return why.empty() ? check_range("out", out, want.data(), kept) : why;
    };
    void* temp = nullptr;
    const std::size_t temp_bytes = cub_storage(
        [&](void* t, std::size_t& b) {
          return cub::DeviceSelect::If(t, b, in, out, count, n, pred);
        },
        &temp);
    c.cub_call = [=](cudaStream_t s) {
      std::size_t b = temp_bytes;
      cuda_check(cub::DeviceSelect::If(temp, b, in, out, count, n, pred, s),
                 "cub::DeviceSelect::If");
    };
    c.cub_check = check;
    c.tally_call = [=](cudaStream_t s) {
      tally::options o;
      o.stream = s;
      tally::copy_if(in, out, n, pred, tally::count_to(count), o);
    };
    c.tally_check = check;
    run_case(c);
  }

  void case_select_flagged(int percent) {
    select_case c;
    c.what = operation::copy_if;
    c.op = "flags";
    c.variant = "select_flagged " + std::to_string(percent) + "%";
    c.cub_impl = "cub::DeviceSelect::Flagged";
    c.tally_impl = "tally::copy_flagged";
    if (!wanted(c)) return;
    const T* in = random_input();
    const std::uint8_t* flags = flag_input(percent);
    const std::int64_t n = n_;
    std::vector<T> want(static_cast<std::size_t>(n));
    const std::int64_t kept =
        tally::cpu::sequential::copy_flagged(host_random_.begin(), host_random_.begin() + n,
                                             host_flags_.begin(), want.begin()) -
        want.begin();
    c.produced = std::to_string(kept) + " kept";
    c.bytes = static_cast<std::size_t>(n + kept) * sizeof(T) + static_cast<std::size_t>(n);
    T* out = out_as<T>(0, n);
    std::int64_t* count = count_ptr();
    c.outputs = {{out, static_cast<std::size_t>(n) * sizeof(T)}};
    const auto check = [&, out, kept] {
      std::string why = check_count(kept);
      return why.empty() ? check_range("out", out, want.data(), kept) : why;
    };
    void* temp = nullptr;
    const std::size_t temp_bytes = cub_storage(
        [&](void* t, std::size_t& b) {
          return cub::DeviceSelect::Flagged(t, b, in, flags, out, count, n);
        },
        &temp);
    c.cub_call = [=](cudaStream_t s) {
      std::size_t b = temp_bytes;
      cuda_check(cub::DeviceSelect::Flagged(temp, b, in, flags, out, count, n, s),
                 "cub::DeviceSelect::Flagged");
    };
    c.cub_check = check;
    c.tally_call = [=](cudaStream_t s) {
      tally::options o;
      o.stream = s;
      tally::copy_flagged(in, flags, out, n, tally::count_to(count), o);
    };
    c.tally_check = check;
    run_case(c);
  }

  void case_partition(int percent) {
    select_case c;
    c.what = operation::partition;
    c.op = "pred";
    c.variant = "partition " + std::to_string(percent) + "%";
    c.cub_impl = "cub::DevicePartition::If";
    c.tally_impl = "tally::partition";
    if (!wanted(c)) return;
    const T* in = random_input();
    const std::int64_t n = n_;
    const keep_percent<T> pred{static_cast<std::uint32_t>(percent)};
    // want: the selected items, then the rejected ones, both in input order
    std::vector<T> want(static_cast<std::size_t>(n));
    const std::int64_t kept =
        tally::cpu::sequential::partition(host_random_.begin(), host_random_.begin() + n,
                                          want.begin(), pred) -
        want.begin();
    c.produced = std::to_string(kept) + " selected";
    c.bytes = 2 * static_cast<std::size_t>(n) * sizeof(T);
    T* out = out_as<T>(0, n);
    std::int64_t* count = count_ptr();
    c.outputs = {{out, static_cast<std::size_t>(n) * sizeof(T)}};
    // tally keeps the rejected items in input order, CUB reverses them
    const auto check = [&, out, kept, n](bool rejected_reversed) {
      std::string why = check_count(kept);
      if (why.empty()) why = check_range("out", out, want.data(), kept);
      if (why.empty()) {
        why = check_range("out", out + kept, want.data() + kept, n - kept, rejected_reversed, kept);
      }
      return why;
    };
    c.cub_check = [check] { return check(true); };
    c.tally_check = [check] { return check(false); };
    if (n <= INT_MAX) {
      const int items = static_cast<int>(n);
      void* temp = nullptr;
      const std::size_t temp_bytes = cub_storage(
          [&](void* t, std::size_t& b) {
            return cub::DevicePartition::If(t, b, in, out, count, items, pred);
          },
          &temp);
      c.cub_call = [=](cudaStream_t s) {
        std::size_t b = temp_bytes;
        cuda_check(cub::DevicePartition::If(temp, b, in, out, count, items, pred, s),
                   "cub::DevicePartition::If");
      };
    }
    c.tally_call = [=](cudaStream_t s) {
      tally::options o;
      o.stream = s;
      tally::partition(in, out, n, pred, tally::count_to(count), o);
    };
    run_case(c);
  }

  void case_unique() {
    select_case c;
    c.what = operation::unique;
    c.op = "equal";
    c.variant = "runs U[1,7]";
    c.cub_impl = "cub::DeviceSelect::Unique";
    c.tally_impl = "tally::unique";
    if (!wanted(c)) return;
    const T* in = run_input();
    const std::int64_t n = n_;
    std::vector<T> want(static_cast<std::size_t>(n));
    const std::int64_t runs =
        tally::cpu::sequential::unique(host_runs_.begin(), host_runs_.begin() + n, want.begin(),
                                       tally::equal_to{}) -
        want.begin();
    c.produced = std::to_string(runs) + " runs";
    c.bytes = static_cast<std::size_t>(n + runs) * sizeof(T);
    T* out = out_as<T>(0, n);
    std::int64_t* count = count_ptr();
    c.outputs = {{out, static_cast<std::size_t>(n) * sizeof(T)}};
    const auto check = [&, out, runs] {
      std::string why = check_count(runs);
      return why.empty() ? check_range("out", out, want.data(), runs) : why;
    };
    void* temp = nullptr;
    const std::size_t temp_bytes = cub_storage(
        [&](void* t, std::size_t& b) { return cub::DeviceSelect::Unique(t, b, in, out, count, n); },
        &temp);
    c.cub_call = [=](cudaStream_t s) {
      std::size_t b = temp_bytes;
      cuda_check(cub::DeviceSelect::Unique(temp, b, in, out, count, n, s),
                 "cub::DeviceSelect::Unique");
    };
    c.cub_check = check;
    c.tally_call = [=](cudaStream_t s) {
      tally::options o;
      o.stream = s;
      tally::unique(in, out, n, tally::equal_to{}, tally::count_to(count), o);
    };
    c.tally_check = check;
    run_case(c);
  }

  // The first item and the length of every run; lengths as int32 for both libraries.
  void case_run_length_encode() {
    select_case c;
    c.what = operation::run_length_encode;
    c.op = "equal";
    c.variant = "runs U[1,7]";
    c.cub_impl = "cub::DeviceRunLengthEncode::Encode";
    c.tally_impl = "tally::run_length_encode";
    if (!wanted(c)) return;
    const T* in = run_input();
    const std::int64_t n = n_;
    std::vector<T> want_unique(static_cast<std::size_t>(n));
    std::vector<std::int32_t> want_counts(static_cast<std::size_t>(n));
    const auto ends = tally::cpu::sequential::run_length_encode(
        host_runs_.begin(), host_runs_.begin() + n, want_unique.begin(), want_counts.begin(),
        tally::equal_to{});
    const std::int64_t runs = ends.first - want_unique.begin();
    c.produced = std::to_string(runs) + " runs";
    c.bytes = static_cast<std::size_t>(n) * sizeof(T) +
              static_cast<std::size_t>(runs) * (sizeof(T) + sizeof(std::int32_t));
    T* unique_out = out_as<T>(0, n);
    std::int32_t* counts_out = out_as<std::int32_t>(1, n);
    std::int64_t* count = count_ptr();
    c.outputs = {{unique_out, static_cast<std::size_t>(n) * sizeof(T)},
                 {counts_out, static_cast<std::size_t>(n) * sizeof(std::int32_t)}};
    const auto check = [&, unique_out, counts_out, runs] {
      std::string why = check_count(runs);
      if (why.empty()) why = check_range("unique_out", unique_out, want_unique.data(), runs);
      if (why.empty()) why = check_range("counts_out", counts_out, want_counts.data(), runs);
      return why;
    };
    if (n <= INT_MAX) {
      const int items = static_cast<int>(n);
      void* temp = nullptr;
      const std::size_t temp_bytes = cub_storage(
          [&](void* t, std::size_t& b) {
            return cub::DeviceRunLengthEncode::Encode(t, b, in, unique_out, counts_out, count,
                                                      items);
          },
          &temp);
      c.cub_call = [=](cudaStream_t s) {
        std::size_t b = temp_bytes;
        cuda_check(cub::DeviceRunLengthEncode::Encode(temp, b, in, unique_out, counts_out, count,
                                                      items, s),
                   "cub::DeviceRunLengthEncode::Encode");
      };
    }
    c.cub_check = check;
    c.tally_call = [=](cudaStream_t s) {
      tally::options o;
      o.stream = s;
      tally::run_length_encode(in, unique_out, counts_out, n, tally::equal_to{},
                               tally::count_to(count), o);
    };
    c.tally_check = check;
    run_case(c);
  }

  // Keys and values of type T, the values summed (unsigned: exact, wrapping).
  void case_reduce_by_key() {
    select_case c;
    c.what = operation::reduce_by_key;
    c.op = "plus";
    c.variant = "runs U[1,7]";
    c.cub_impl = "cub::DeviceReduce::ReduceByKey";
    c.tally_impl = "tally::reduce_by_key";
    if (!wanted(c)) return;
    const T* keys = run_input();
    const T* values = value_input();
    const std::int64_t n = n_;
    std::vector<T> want_keys(static_cast<std::size_t>(n));
    std::vector<T> want_values(static_cast<std::size_t>(n));
    const auto ends = tally::cpu::sequential::reduce_by_key(
        host_runs_.begin(), host_runs_.begin() + n, host_values_.begin(), want_keys.begin(),
        want_values.begin(), tally::plus{}, tally::equal_to{});
    const std::int64_t runs = ends.first - want_keys.begin();
    c.produced = std::to_string(runs) + " runs";
    c.bytes = static_cast<std::size_t>(n + runs) * 2 * sizeof(T);
    T* keys_out = out_as<T>(0, n);
    T* values_out = out_as<T>(1, n);
    std::int64_t* count = count_ptr();
    c.outputs = {{keys_out, static_cast<std::size_t>(n) * sizeof(T)},
                 {values_out, static_cast<std::size_t>(n) * sizeof(T)}};
    const auto check = [&, keys_out, values_out, runs] {
      std::string why = check_count(runs);
      if (why.empty()) why = check_range("keys_out", keys_out, want_keys.data(), runs);
      if (why.empty()) why = check_range("values_out", values_out, want_values.data(), runs);
      return why;
    };
    if (n <= INT_MAX) {
      const int items = static_cast<int>(n);
      void* temp = nullptr;
      const std::size_t temp_bytes = cub_storage(
          [&](void* t, std::size_t& b) {
            return cub::DeviceReduce::ReduceByKey(t, b, keys, keys_out, values, values_out, count,
                                                  cuda::std::plus<>{}, items);
          },
          &temp);
      c.cub_call = [=](cudaStream_t s) {
        std::size_t b = temp_bytes;
        cuda_check(cub::DeviceReduce::ReduceByKey(temp, b, keys, keys_out, values, values_out,
                                                  count, cuda::std::plus<>{}, items, s),
                   "cub::DeviceReduce::ReduceByKey");
      };
    }
    c.cub_check = check;
    c.tally_call = [=](cudaStream_t s) {
      tally::options o;
      o.stream = s;
      tally::reduce_by_key(keys, values, keys_out, values_out, n, tally::plus{}, tally::equal_to{},
                           tally::count_to(count), o);
    };
    c.tally_check = check;
    run_case(c);
  }

 private:
  // Whether any implementation of the case passes --filter (else the case is skipped,
  // its floor too).
  bool wanted(const select_case& c) const {
    return config_.selected(c.cub_impl) || config_.selected(c.tally_impl);
  }

  void note_once(const std::string& text) {
    if (ctx_.noted->insert(text).second) ctx_.out->note("note: " + text);
  }

  // ---- inputs (made for max_n_ on first use) ----
  template <class U>
  static void upload(device_buffer& device, const std::vector<U>& host) {
    device.grow(std::max<std::size_t>(host.size() * sizeof(U), 1));
    cuda_check(
        cudaMemcpy(device.data(), host.data(), host.size() * sizeof(U), cudaMemcpyHostToDevice),
        "cudaMemcpy (input)");
  }
  const T* random_input() {
    if (host_random_.empty()) {
      host_random_.resize(static_cast<std::size_t>(max_n_));
      fill_random(host_random_, config_.seed, 0x53454C45ull);
      upload(random_, host_random_);
    }
    return static_cast<const T*>(random_.data());
  }
  // flags[i] = pred(x[i]) of the random input, so that flagged and select_if keep the same
  const std::uint8_t* flag_input(int percent) {
    if (host_flags_.empty() || flags_percent_ != percent) {
      random_input();
      const keep_percent<T> pred{static_cast<std::uint32_t>(percent)};
      host_flags_.resize(host_random_.size());
      for (std::size_t i = 0; i < host_random_.size(); ++i) {
        host_flags_[i] = pred(host_random_[i]) ? 1 : 0;
      }
      upload(flags_, host_flags_);
      flags_percent_ = percent;
    }
    return static_cast<const std::uint8_t*>(flags_.data());
  }
  const T* run_input() {
    if (host_runs_.empty()) {
      host_runs_.resize(static_cast<std::size_t>(max_n_));
      fill_runs(host_runs_, config_.seed);
      upload(runs_, host_runs_);
    }
    return static_cast<const T*>(runs_.data());
  }
  const T* value_input() {
    if (host_values_.empty()) {
      host_values_.resize(static_cast<std::size_t>(max_n_));
      fill_random(host_values_, config_.seed, 0x56414C53ull);
      upload(values_, host_values_);
    }
    return static_cast<const T*>(values_.data());
  }

  // ---- outputs ----
  // Output buffer `which` (0 or 1) as n items of U.
  template <class U>
  U* out_as(int which, std::int64_t n) {
    device_buffer& b = which == 0 ? out_ : out2_;
    b.grow(std::max<std::size_t>(static_cast<std::size_t>(n) * sizeof(U), 1));
    return static_cast<U*>(b.data());
  }
  std::int64_t* count_ptr() {
    count_.grow(sizeof(std::int64_t));
    return static_cast<std::int64_t*>(count_.data());
  }

  // CUB's temporary storage: `call(nullptr, bytes)` is the size query; the buffer is
  // grown before timing and *temp set to it.
  template <class Call>
  std::size_t cub_storage(Call call, void** temp) {
    std::size_t bytes = 0;
    cuda_check(call(nullptr, bytes), "cub storage query");
    cub_temp_.grow(std::max<std::size_t>(bytes, 1));
    *temp = cub_temp_.data();
    return bytes;
  }

  // ---- checks ----
  std::string check_count(std::int64_t expected) const {
    std::int64_t got = 0;
    cuda_check(cudaMemcpy(&got, count_.data(), sizeof got, cudaMemcpyDeviceToHost),
               "cudaMemcpy (count)");
    if (got == expected) return {};
    return "count = " + std::to_string(got) + ", expected " + std::to_string(expected);
  }

  // Compares device[0, count) bit for bit with want[0, count) (reversed: with
  // want[count - 1 - k] at k). `first` is the position of device[0] in the named output.
  template <class U>
  static std::string check_range(const char* name, const U* device, const U* want,
                                 std::int64_t count, bool reversed = false,
                                 std::int64_t first = 0) {
    if (count <= 0) return {};
    std::vector<U> got(static_cast<std::size_t>(count));
    cuda_check(cudaMemcpy(got.data(), device, got.size() * sizeof(U), cudaMemcpyDeviceToHost),
               "cudaMemcpy (check)");
    if (!reversed && std::memcmp(got.data(), want, got.size() * sizeof(U)) == 0) return {};
    for (std::int64_t k = 0; k < count; ++k) {
      const U& w = want[reversed ? count - 1 - k : k];
      if (std::memcmp(&got[static_cast<std::size_t>(k)], &w, sizeof(U)) != 0) {
        return std::string(name) + "[" + std::to_string(first + k) +
               "] = " + std::to_string(got[static_cast<std::size_t>(k)]) + ", expected " +
               std::to_string(w);
      }
    }
    return {};
  }

  // ---- rows ----
  void run_case(const select_case& c) {
    const std::size_t copy_bytes = (c.bytes + 1) / 2;
    if (copy_src_.bytes() < copy_bytes) {
      copy_src_.grow(copy_bytes);
      cuda_check(cudaMemset(copy_src_.data(), 1, copy_bytes), "cudaMemset (copy source)");
      cuda_check(cudaDeviceSynchronize(), "cudaMemset (copy source)");
    }
    copy_dst_.grow(std::max<std::size_t>(copy_bytes, 1));
    void* dst = copy_dst_.data();
    const void* src = copy_src_.data();

    cub_s_ = 0;
    floor_s_ = row(
        c, operation::copy, "copy (same bytes)",
        [=](cudaStream_t s) {
          cuda_check(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, s),
                     "cudaMemcpyAsync");
        },
        2.0 * static_cast<double>(copy_bytes), {},
        "floor: " + mib_text(static_cast<double>(copy_bytes)) + " copied, half the " +
            mib_text(static_cast<double>(c.bytes)) + " the case reads + writes (" + c.produced +
            ")");
    if (c.cub_call) {
      cub_s_ =
          row(c, c.what, c.cub_impl, c.cub_call, static_cast<double>(c.bytes), c.cub_check, {});
    } else if (config_.selected(c.cub_impl)) {
      note_once(c.cub_impl + " skipped above n = INT_MAX (its item count is an int)");
    }
    row(c, c.what, c.tally_impl, c.tally_call, static_cast<double>(c.bytes), c.tally_check, {});
  }

  // Times `call` (outputs and count poisoned first), checks it with `check` (copies: not
  // checked) and adds the row. Returns the median time, 0 when the row did not run or
  // its check failed.
  double row(const select_case& c, operation what, const std::string& impl,
             const std::function<void(cudaStream_t)>& call, double bytes,
             const std::function<std::string()>& check, std::string note) {
    const bool is_copy = what == operation::copy;
    if (!is_copy && !config_.selected(impl)) return 0;
    const cudaStream_t stream = ctx_.timer->stream();
    gpu_timing t;
    try {
      if (!is_copy) {
        for (const auto& [pointer, size] : c.outputs) {
          cuda_check(cudaMemsetAsync(pointer, 0x7F, size, stream), "cudaMemsetAsync (poison)");
        }
        cuda_check(cudaMemsetAsync(count_.data(), 0x7F, sizeof(std::int64_t), stream),
                   "cudaMemsetAsync (poison)");
      }
      cuda_check(cudaStreamSynchronize(stream), "poison");
      t = ctx_.timer->measure(call, config_.reps);
    } catch (const std::invalid_argument& e) {
      note_once(impl + " skipped: " + e.what());
      return 0;
    } catch (const std::exception& e) {
      ctx_.out->note("error: " + impl + " " + type_name_ + " n=" + std::to_string(n_) + " [" +
                     c.variant + "]: " + e.what());
      return 0;
    }
    result_row r;
    r.device = ctx_.device;
    r.what = what;
    r.type = type_name_;
    r.op = is_copy ? "-" : c.op;
    r.n = n_;
    r.variant = c.variant;
    r.bytes = bytes;
    r.impl = impl;
    r.reps = t.reps;
    r.median_s = t.median_s;
    r.min_s = t.min_s;
    r.max_s = t.max_s;
    if (is_copy) {
      r.check = check_status::not_checked;
    } else {
      std::string why;
      try {
        why = check();
      } catch (const std::exception& e) {
        why = e.what();
      }
      r.check = why.empty() ? check_status::passed : check_status::failed;
      if (!why.empty()) {
        note = why;
      } else {
        note = ratio_note(t.median_s, impl == c.tally_impl);
      }
    }
    r.note = std::move(note);
    const bool passed = r.check != check_status::failed;
    ctx_.out->add(std::move(r));
    return passed ? t.median_s : 0.0;
  }

  // "1.10x floor time (90.9% of floor)" and, for tally's row beside a CUB row of the same
  // case, "; 1.25x speedup over CUB".
  std::string ratio_note(double median_s, bool is_tally) const {
    std::string note;
    char text[96];
    if (floor_s_ > 0 && median_s > 0) {
      std::snprintf(text, sizeof text, "%.2fx floor time (%.1f%% of floor)", median_s / floor_s_,
                    100.0 * floor_s_ / median_s);
      note = text;
    }
    if (is_tally && cub_s_ > 0 && median_s > 0) {
      std::snprintf(text, sizeof text, "%s%.2fx speedup over CUB", note.empty() ? "" : "; ",
                    cub_s_ / median_s);
      note += text;
    }
    return note;
  }

  gpu_context& ctx_;
  const bench_config& config_;
  std::string type_name_;
  std::int64_t max_n_ = 0;
  std::int64_t n_ = 0;
  double floor_s_ = 0;  // the current case's floor copy
  double cub_s_ = 0;    // the current case's CUB row (0: none, or its check failed)

  std::vector<T> host_random_;
  std::vector<std::uint8_t> host_flags_;
  int flags_percent_ = -1;
  std::vector<T> host_runs_;
  std::vector<T> host_values_;
  device_buffer random_;
  device_buffer flags_;
  device_buffer runs_;
  device_buffer values_;
  device_buffer out_;
  device_buffer out2_;
  device_buffer count_;
  device_buffer cub_temp_;
  device_buffer copy_src_;
  device_buffer copy_dst_;
};

// Runs `cases` on a table of T at every size that fits in the device's free memory.
template <class T, class Cases>
void run_type(gpu_context& context, const std::string& type_name, std::vector<std::int64_t> sizes,
              Cases cases) {
  // Per item at most: the random input, runs, values, two outputs (T each), the flags and
  // the floor copy's source and destination (half of at most 4 T read + written each).
  const std::int64_t per_element = 9 * static_cast<std::int64_t>(sizeof(T)) + 1;
  const std::int64_t max_fitting =
      (context.free_bytes / 10 * 8 - (std::int64_t{256} << 20)) / per_element;
  const auto before = sizes.size();
  std::erase_if(sizes, [max_fitting](std::int64_t n) { return n <= 0 || n > max_fitting; });
  if (sizes.size() != before) {
    const std::string text = "select table: " + type_name + " sizes above " +
                             std::to_string(max_fitting) +
                             " items skipped: they do not fit in the device's free memory";
    if (context.noted->insert(text).second) context.out->note("note: " + text);
  }
  if (sizes.empty()) return;
  select_table<T> table(context, type_name);
  table.set_sizes(*std::max_element(sizes.begin(), sizes.end()));
  for (std::int64_t n : sizes) {
    table.set_size(n);
    cases(table);
  }
}

}  // namespace

void run_select_table(gpu_context& context) {
  const bench_config& config = *context.config;
  std::vector<std::int64_t> sizes = config.sizes;
  if (sizes.empty()) {
    const std::int64_t k = 1;
    sizes = config.quick ? std::vector<std::int64_t>{k << 20, k << 24}
                         : std::vector<std::int64_t>{k << 10, k << 16, k << 20, k << 24, k << 28};
    const int top = config.max_log2.value_or(config.quick ? 24 : 28);
    std::erase_if(sizes, [top](std::int64_t n) { return n > (std::int64_t{1} << top); });
  }
  context.out->note(
      "select table: copy_if (select_if 50%, 10%; select_flagged 50%), partition 50%, unique, "
      "run_length_encode and reduce_by_key on runs U[1,7], each beside a floor copy of half the "
      "bytes it reads + writes and CUB; uint32 (all cases), float (select_if 50%), uint64 "
      "(select_if 50%, reduce_by_key)");
  std::set<std::string> done;
  for (const std::string& type : config.types) {
    // A failure outside a row (allocation, a CUB storage query) ends this type's rows,
    // not the run.
    try {
      if ((type == "int32" || type == "uint32") && done.insert("uint32").second) {
        run_type<std::uint32_t>(context, "uint32", sizes, [](select_table<std::uint32_t>& t) {
          t.case_select_if(50);
          t.case_select_if(10);
          t.case_select_flagged(50);
          t.case_partition(50);
          t.case_unique();
          t.case_run_length_encode();
          t.case_reduce_by_key();
        });
      }
      if (type == "float" && done.insert("float").second) {
        run_type<float>(context, "float", sizes,
                        [](select_table<float>& t) { t.case_select_if(50); });
      }
      if ((type == "int64" || type == "uint64") && done.insert("uint64").second) {
        run_type<std::uint64_t>(context, "uint64", sizes, [](select_table<std::uint64_t>& t) {
          t.case_select_if(50);
          t.case_reduce_by_key();
        });
      }
    } catch (const std::exception& e) {
      context.out->note("error: select table, " + type + ": " + e.what());
    }
  }
}

}  // namespace tally_bench::gpu
