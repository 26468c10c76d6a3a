// tests/device/select/select_common.cuh -- what the selection tests share: inputs with a
// chosen selectivity or run length, the predicates, and the comparison with the CPU
// oracle (tally::cpu::sequential, tally/cpu/sequential_select.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tally/cpu/sequential_select.hpp>
#include <tally/device/select.cuh>

#include "test_common.cuh"

namespace tally_test {

// The tiles of the compactions (32-bit counts below 2^32 items), of the run forms
// (16-byte states) and of reduce_by_key: the size lists hit their edges.
template <class Acc>
inline constexpr std::int64_t program_tile = tally::detail::select::program_tuning<Acc>().tile_items();
inline constexpr std::int64_t count_tile = program_tile<tally::detail::select::short_count_t>;
inline constexpr std::int64_t run_tile = program_tile<tally::detail::select::run_state<tally::detail::select::short_count_t>>;

// Keeps about `percent` % of values: a hash of the value below the threshold.
struct keep_percent {
  unsigned percent;
  template <class T>
  __host__ __device__ bool operator()(const T& x) const {
    auto bits = static_cast<std::uint64_t>(x);
    bits = (bits ^ (bits >> 17)) * 0x9E3779B97F4A7C15ull;
    return static_cast<unsigned>((bits >> 40) % 100u) < percent;
  }
};

struct is_odd {
  template <class T>
  __host__ __device__ bool operator()(const T& x) const {
    return (x % 2) != 0;
  }
};

// A value for every index: random 32-bit values.
inline std::vector<std::uint32_t> random_u32(std::size_t n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = static_cast<std::uint32_t>(g());
  return v;
}

// Runs of random lengths in [1, max_run]; consecutive runs differ.
inline std::vector<std::uint32_t> random_runs(std::size_t n, std::int64_t max_run,
                                              std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<std::uint32_t> v(n);
  std::uint32_t value = 7;
  std::size_t i = 0;
  while (i < n) {
    const auto len = static_cast<std::size_t>(1 + g() % static_cast<std::uint64_t>(max_run));
    value += 1 + static_cast<std::uint32_t>(g() % 3);
    for (std::size_t k = 0; k < len && i < n; ++k) v[i++] = value;
  }
  return v;
}

// The device count written by a count_to form.
class device_count_slot {
 public:
  device_count_slot() : buffer_(1) {}
  std::int64_t* data() const { return buffer_.data(); }
  std::int64_t read() const { return buffer_.download()[0]; }
  void poison() { buffer_.poison(); }

 private:
  device_buffer<std::int64_t> buffer_;
};

// got[0, count) equals want, and got[count] (if inside the buffer) is still poison.
template <class T>
::testing::AssertionResult same_prefix(const std::vector<T>& got, const std::vector<T>& want,
                                       std::size_t count) {
  if (want.size() != count) {
    return ::testing::AssertionFailure() << "count " << count << ", expected " << want.size();
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (!(got[i] == want[i])) {
      return ::testing::AssertionFailure() << "element " << i << " of " << count;
    }
  }
  if (count < got.size() && !device_buffer<T>::is_poison(got[count])) {
    return ::testing::AssertionFailure() << "element " << count << " past the count was written";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tally_test
