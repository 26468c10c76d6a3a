// tests/common/test_affine.cuh -- non-commutative test operators of 4- and 8-byte values for
// the segmented GPU tests: affine maps x -> a x + b (mod 2^16 or 2^32) composed in order,
// so that an operand taken in the wrong order, or a prefix from the wrong tile, changes
// the result; and show(), which prints them (or any streamable value) in a failure.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "tally/tally.cuh"

namespace tally_test::affine {

struct affine16 {
  std::uint16_t a, b;
  bool operator==(const affine16&) const = default;
};
struct compose16 {
  TALLY_HOST_DEVICE affine16 operator()(const affine16& f, const affine16& g) const {
    return {static_cast<std::uint16_t>(g.a * f.a), static_cast<std::uint16_t>(g.a * f.b + g.b)};
  }
};
struct affine32 {
  std::uint32_t a, b;
  bool operator==(const affine32&) const = default;
};
struct compose32 {
  TALLY_HOST_DEVICE affine32 operator()(const affine32& f, const affine32& g) const {
    return {g.a * f.a, g.a * f.b + g.b};
  }
};

template <class T>
std::string show(const T& x) {
  std::ostringstream s;
  if constexpr (requires { x.a; }) {
    s << "(" << +x.a << ", " << +x.b << ")";
  } else {
    s << x;
  }
  return s.str();
}

}  // namespace tally_test::affine
