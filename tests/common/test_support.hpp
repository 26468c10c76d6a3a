// tests/common/test_support.hpp -- inputs, the non-commutative test operators, and
// comparison helpers shared by the CPU and GPU tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/core/macros.hpp"

namespace tally::test {

// The seed of every random input: fixed, printed once, overridable by TALLY_TEST_SEED so
// a failure can be replayed.
inline std::uint64_t seed() {
  static const std::uint64_t value = [] {
    const char* env = std::getenv("TALLY_TEST_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 10) : 20261121ULL;
    std::cout << "[tally] random seed " << s << " (set TALLY_TEST_SEED to change)\n";
    return s;
  }();
  return value;
}

// Whether the reduced test set is asked for (TALLY_TEST_QUICK=1, used under sanitizers).
inline bool quick() {
  const char* env = std::getenv("TALLY_TEST_QUICK");
  return env != nullptr && std::string(env) == "1";
}

// ---- a non-commutative operator: composition of affine maps x -> a*x + b --------------
// Integer coefficients with wrap-around arithmetic, so every association gives the same
// exact result and any operand-order mistake shows.
struct affine {
  std::uint32_t a;
  std::uint32_t b;
  friend TALLY_HOST_DEVICE bool operator==(const affine& l, const affine& r) {
    return l.a == r.a && l.b == r.b;
  }
};
inline std::ostream& operator<<(std::ostream& os, const affine& f) {
  return os << "(" << f.a << "x+" << f.b << ")";
}
// compose(f, g) = "f first, then g": x -> g.a * (f.a * x + f.b) + g.b.
struct compose {
  TALLY_HOST_DEVICE affine operator()(const affine& f, const affine& g) const {
    return affine{g.a * f.a, g.a * f.b + g.b};
  }
};

// ---- a second one: 2x2 integer matrix product -------------------------------------------
struct mat2 {
  std::int32_t m[4];
  friend TALLY_HOST_DEVICE bool operator==(const mat2& l, const mat2& r) {
    return l.m[0] == r.m[0] && l.m[1] == r.m[1] && l.m[2] == r.m[2] && l.m[3] == r.m[3];
  }
};
inline std::ostream& operator<<(std::ostream& os, const mat2& x) {
  return os << "[" << x.m[0] << " " << x.m[1] << "; " << x.m[2] << " " << x.m[3] << "]";
}
struct mat2_product {  // wrap-around in uint32 so any association is exact
  TALLY_HOST_DEVICE mat2 operator()(const mat2& x, const mat2& y) const {
    auto mul = [](std::int32_t p, std::int32_t q) {
      return static_cast<std::uint32_t>(p) * static_cast<std::uint32_t>(q);
    };
    mat2 r;
    r.m[0] = static_cast<std::int32_t>(mul(x.m[0], y.m[0]) + mul(x.m[1], y.m[2]));
    r.m[1] = static_cast<std::int32_t>(mul(x.m[0], y.m[1]) + mul(x.m[1], y.m[3]));
    r.m[2] = static_cast<std::int32_t>(mul(x.m[2], y.m[0]) + mul(x.m[3], y.m[2]));
    r.m[3] = static_cast<std::int32_t>(mul(x.m[2], y.m[1]) + mul(x.m[3], y.m[3]));
    return r;
  }
};

// ---- random inputs ----------------------------------------------------------------------
// Never all ones or zeros. Integers in a range that keeps signed sums of up to 2^24
// elements far from overflow; floats in [-1, 1) plus an offset so prefix sums grow.
template <class T>
std::vector<T> random_input(std::size_t n, std::uint64_t salt = 0) {
  std::mt19937_64 rng(seed() * 0x9E3779B97F4A7C15ULL + salt + n);
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, affine>) {
    std::uniform_int_distribution<std::uint32_t> dist(0, 0xFFFFFFFFu);
    for (auto& x : v) x = affine{dist(rng) | 1u, dist(rng)};
  } else if constexpr (std::is_same_v<T, mat2>) {
    std::uniform_int_distribution<std::int32_t> dist(-3, 3);
    for (auto& x : v) x = mat2{{dist(rng), dist(rng), dist(rng), dist(rng)}};
  } else if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& x : v) x = static_cast<T>(dist(rng) + 0.25);
  } else if constexpr (std::is_signed_v<T>) {
    std::uniform_int_distribution<std::int64_t> dist(-100, 100);
    for (auto& x : v) x = static_cast<T>(dist(rng));
  } else {
    std::uniform_int_distribution<std::uint64_t> dist(0, 1000);
    for (auto& x : v) x = static_cast<T>(dist(rng));
  }
  return v;
}

// A value no correct scan produces from random_input here, written into outputs before
// each run so an unwritten element fails the comparison.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, affine>) {
    return affine{0u, 0xDEADBEEFu};  // a is always odd in products of odd numbers
  } else if constexpr (std::is_same_v<T, mat2>) {
    return mat2{{0x7EADBEEF, 0x7EADBEEF, 0x7EADBEEF, 0x7EADBEEF}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return static_cast<T>(0x5A5A5A5A5A5A5A5AULL);
  }
}

// Sizes of DESIGN.md for the CPU: 0, 1, 2, small odd sizes, powers of two and their
// neighbours, and random sizes up to `max`.
inline std::vector<std::size_t> test_sizes(std::size_t max) {
  std::vector<std::size_t> sizes = {0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 100, 127, 1000};
  for (std::size_t p = 256; p <= max; p *= 4) {
    sizes.push_back(p - 1);
    sizes.push_back(p);
    sizes.push_back(p + 1);
  }
  std::mt19937_64 rng(seed());
  std::uniform_int_distribution<std::size_t> dist(1, max);
  for (int i = 0; i < 6; ++i) sizes.push_back(dist(rng));
  sizes.push_back(max);
  return sizes;
}

// The message of the std::invalid_argument that `f` throws ("<no exception>" or
// "<other exception: ...>" otherwise), for tests of argument errors.
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<other exception: ") + e.what() + ">";
  }
  return "<no exception>";
}

// Characters print as numbers.
template <class T>
auto printable(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return +x;
  } else {
    return x;
  }
}

// Compares a result with the reference: exactly for everything but floating point;
// floating point against a double-precision reference with a tolerance that grows with
// n (the rounding error of a sum of n terms grows at most like n * eps * sum |x|).
template <class T>
::testing::AssertionResult matches(const std::vector<T>& got, const std::vector<T>& want,
                                   const std::vector<double>* exact = nullptr,
                                   const std::vector<double>* magnitude = nullptr) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  const std::size_t n = got.size();
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      const double ref = exact ? (*exact)[i] : static_cast<double>(want[i]);
      const double mag = magnitude ? (*magnitude)[i] : std::abs(ref);
      const double eps = std::numeric_limits<T>::epsilon();
      const double tol = eps * (16.0 + 4.0 * std::sqrt(static_cast<double>(n))) * (mag + 1.0);
      if (!(std::abs(static_cast<double>(got[i]) - ref) <= tol)) {
        return ::testing::AssertionFailure() << "element " << i << " of " << n << ": got "
                                             << got[i] << ", want " << ref << " (tolerance "
                                             << tol << ")";
      }
    } else {
      if (!(got[i] == want[i])) {
        return ::testing::AssertionFailure() << "element " << i << " of " << n << ": got "
                                             << printable(got[i]) << ", want "
                                             << printable(want[i]);
      }
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tally::test
