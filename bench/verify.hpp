// bench/verify.hpp -- benchmark input data and the check of every timed output.
//
// A benchmark must not time something wrong: after an implementation's timed runs its
// output is compared with a reference at a few positions (first, second, middle, last
// and some random ones). Computing the reference at those positions takes one
// sequential pass over the input, and holds no reference array.
//
// The input is random integers in [-64, 64] for every type (never all equal, never all
// zero), so every prefix of a sum is an integer well inside 2^53: the reference is exact
// in double for every type. That also makes float sums exact in practice: any
// associative algorithm only ever adds contiguous ranges, whose sums are integers of
// magnitude at most 2 * max|prefix|, so while that stays below 2^24 (float) or 2^53
// (double) no addition rounds and the comparison can be exact. Beyond it (a float sum of
// a long, unlucky walk) the tolerance becomes the classical bound eps * sum|x|.
//
// Shared by the C++ and CUDA translation units: standard library only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "report.hpp"

namespace tally_bench {

// The operators the benchmark measures.
enum class scan_op { plus, max };

inline const char* scan_op_name(scan_op op) { return op == scan_op::plus ? "plus" : "max"; }

// ---- input data (data.cpp; filled in parallel, which also first-touches the pages) -----
void fill_input(std::int32_t* data, std::int64_t n, std::uint64_t seed);
void fill_input(std::int64_t* data, std::int64_t n, std::uint64_t seed);
void fill_input(float* data, std::int64_t n, std::uint64_t seed);
void fill_input(double* data, std::int64_t n, std::uint64_t seed);

// Sets every byte to 0x7F: an int32 of 2139062143, a float of 3.4e38, values that no
// scan of the input can produce, so an element an implementation never wrote fails.
void poison(void* data, std::size_t bytes);

// A deterministic 64-bit mix (splitmix64's finaliser): input values and check positions
// are a function of (seed, index) alone, so any run can be repeated exactly.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The value of input element i: an integer in [-64, 64].
constexpr int input_value(std::uint64_t seed, std::int64_t i) {
  return static_cast<int>(mix64(seed ^ mix64(static_cast<std::uint64_t>(i))) % 129) - 64;
}

// ---- the reference at a few positions ---------------------------------------------------
struct checkpoints {
  std::vector<std::int64_t> index;  // positions in the output, ascending
  std::vector<double> expected;     // exact (see above)
  std::vector<double> tolerance;    // 0: exact comparison
};

namespace detail {

// Positions 0, 1, 2, n/2, n-2, n-1 and `random_count` random ones (for a reduce, the one
// result at position 0).
inline std::vector<std::int64_t> check_positions(std::int64_t n, std::uint64_t seed,
                                                 int random_count = 10) {
  std::vector<std::int64_t> positions = {0, 1, 2, n / 2, n - 2, n - 1};
  for (int k = 0; k < random_count; ++k) {
    positions.push_back(static_cast<std::int64_t>(mix64(seed + 7919u * (k + 1) + n) %
                                                  static_cast<std::uint64_t>(n)));
  }
  std::erase_if(positions, [n](std::int64_t i) { return i < 0 || i >= n; });
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

}  // namespace detail

// The reference of `what` with `op` over in[0, n) at the check positions. An exclusive
// scan starts from the operator's identity (0, or the lowest value for max), as CUB's
// ExclusiveSum does; a reduce from the same identity.
template <class T>
checkpoints make_checkpoints(const T* in, std::int64_t n, operation what, scan_op op,
                             std::uint64_t seed) {
  checkpoints c;
  if (n <= 0) return c;
  c.index = what == operation::reduce ? std::vector<std::int64_t>{0}
                                      : detail::check_positions(n, seed);
  const double identity =
      op == scan_op::plus ? 0.0 : static_cast<double>(std::numeric_limits<T>::lowest());
  auto combine = [op](double a, double b) { return op == scan_op::plus ? a + b : std::max(a, b); };

  // One pass: `running` is in[0] op ... op in[i]; the magnitudes feed the tolerance.
  double running = identity;
  double max_abs_prefix = 0;
  double sum_abs = 0;
  std::size_t next = 0;
  const std::int64_t last = what == operation::reduce ? n - 1 : c.index.back();
  for (std::int64_t i = 0; i <= last && next < c.index.size(); ++i) {
    const double x = static_cast<double>(in[i]);
    const double before = running;  // in[0] op ... op in[i-1]: the exclusive value
    running = combine(running, x);
    sum_abs += std::abs(x);
    max_abs_prefix = std::max(max_abs_prefix, std::abs(running));
    const bool at_result = what == operation::reduce ? i == n - 1 : i == c.index[next];
    if (!at_result) continue;
    double expected = x;
    if (what == operation::inclusive_scan || what == operation::reduce) expected = running;
    if (what == operation::exclusive_scan) expected = before;
    double tolerance = 0;
    if (std::is_floating_point_v<T> && op == scan_op::plus && what != operation::copy &&
        2 * max_abs_prefix + 64 >= std::ldexp(1.0, std::numeric_limits<T>::digits)) {
      tolerance = std::numeric_limits<T>::epsilon() * sum_abs;
    }
    c.expected.push_back(expected);
    c.tolerance.push_back(tolerance);
    ++next;
  }
  return c;
}

// Compares `actual` (the output at c.index, in order) with the reference; on a mismatch
// `why` names the first bad position.
inline check_status compare(const checkpoints& c, const std::vector<double>& actual,
                            std::string* why) {
  for (std::size_t k = 0; k < c.index.size(); ++k) {
    const double error = std::abs(actual[k] - c.expected[k]);
    if (!(error <= c.tolerance[k])) {  // also catches NaN
      if (why != nullptr) {
        *why = "out[" + std::to_string(c.index[k]) + "] = " + std::to_string(actual[k]) +
               ", expected " + std::to_string(c.expected[k]);
      }
      return check_status::failed;
    }
  }
  return check_status::passed;
}

}  // namespace tally_bench
