// tally/algorithms/lexicographic_compare.hpp -- comparing two strings (or any two
// sequences) in dictionary order with a reduction (Blelloch 1990, "Prefix sums and their
// applications", and the course's string-comparison example: parallax < parallel).
//
//   result = -1 if s < t, 0 if equal, 1 if s > t   (the sign of std::string::compare)
//
// Two algorithms, both here for the CPU (tally::cpu) and in lexicographic_compare.cuh for
// the GPU:
//   lexicographic_compare                 (the default) one reduction over the common
//       length m = min(s_len, t_len): the sign of position i is -1, 0 or 1 as s[i] is
//       below, equal to or above t[i], and a minimum of (position, sign) keys finds the
//       first position with a non-zero sign: the first difference decides. No
//       difference: the shorter string is the smaller. Reads each string once, stores
//       nothing. Lengths must be below 2^61.
//   lexicographic_compare_by_compaction   the method as the material teaches it: the
//       per-position signs, a compaction that removes the zeros (tally::copy_if), and the
//       first survivor decides. It writes the m signs' survivors (m bytes of scratch) and
//       reads them back: about twice the work and memory traffic of the reduction.
// Elements are compared with `<` of their type, except `char`, which is compared as
// unsigned char (as std::char_traits<char>, memcmp and std::string do).
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>
#include <vector>

#include "tally/core/counting_iterator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/reduce.hpp"
#include "tally/cpu/select.hpp"

namespace tally::algorithms_support {

// A difference as one integer: position * 4 + (sign + 1), so that the smallest key is the
// first difference (positions fit 61 bits: lengths below 2^61 are required) and its low
// bits carry the sign; positions where the strings agree get the largest key, m * 4 + 1
// (sign 0 at the common length m). The reduction is a plain minimum of int64 keys:
// commutative, with an identity, so it takes the reductions' fastest cut.
TALLY_HOST_DEVICE constexpr std::int64_t difference_key(std::int64_t position, int sign) {
  return position * 4 + (sign + 1);
}
TALLY_HOST_DEVICE constexpr int key_sign(std::int64_t key) { return static_cast<int>(key & 3) - 1; }

template <class T>
TALLY_HOST_DEVICE auto comparable(const T& c) {
  if constexpr (std::is_same_v<T, char>) {
    return static_cast<unsigned char>(c);
  } else {
    return c;
  }
}

template <class S, class T>
TALLY_HOST_DEVICE int sign_at(const S& s, const T& t, std::int64_t i) {
  const auto a = comparable(s[i]);
  const auto b = comparable(t[i]);
  return a < b ? -1 : (b < a ? 1 : 0);
}

// i -> the key of position i: its difference, or m's key where the strings agree.
template <class S, class T>
struct difference_at {
  S s{};
  T t{};
  std::int64_t m = 0;
  TALLY_HOST_DEVICE std::int64_t operator()(std::int64_t i) const {
    const int sign = sign_at(s, t, i);
    return sign != 0 ? difference_key(i, sign) : difference_key(m, 0);
  }
};

// i -> the sign at i, as a byte (the material's sign array).
template <class S, class T>
struct sign_of {
  S s{};
  T t{};
  TALLY_HOST_DEVICE std::int8_t operator()(std::int64_t i) const {
    return static_cast<std::int8_t>(sign_at(s, t, i));
  }
};

struct non_zero {
  TALLY_HOST_DEVICE bool operator()(std::int8_t x) const { return x != 0; }
};

// The answer from the first difference over the common length, or from the lengths.
inline int compare_result(int first_sign, std::int64_t s_len, std::int64_t t_len) {
  if (first_sign != 0) return first_sign;
  return s_len < t_len ? -1 : (t_len < s_len ? 1 : 0);
}

inline constexpr std::int64_t max_length = std::int64_t{1} << 61;

inline void check_length(const char* function, const char* argument, std::int64_t len) {
  require_count(function, argument, len);
  if (len >= max_length) throw_argument_error(function, argument, "must be < 2^61");
}

template <class S, class T>
auto difference_input(S s, T t, std::int64_t m) {
  return make_transform_iterator(counting_iterator<std::int64_t>(0), difference_at<S, T>{s, t, m});
}

template <class S, class T>
auto sign_input(S s, T t) {
  return make_transform_iterator(counting_iterator<std::int64_t>(0), sign_of<S, T>{s, t});
}

}  // namespace tally::algorithms_support

namespace tally::cpu {

template <std::random_access_iterator SIt, std::random_access_iterator TIt>
int lexicographic_compare(SIt s_first, SIt s_last, TIt t_first, TIt t_last) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::lexicographic_compare";
  const std::int64_t s_len = static_cast<std::int64_t>(s_last - s_first);
  const std::int64_t t_len = static_cast<std::int64_t>(t_last - t_first);
  if (s_len < 0) throw_argument_error(function, "s_last", "is before s_first");
  if (t_len < 0) throw_argument_error(function, "t_last", "is before t_first");
  check_length(function, "s_last", s_len);
  check_length(function, "t_last", t_len);
  require_pointer(function, "s_first", s_first, s_len);
  require_pointer(function, "t_first", t_first, t_len);
  const std::int64_t m = s_len < t_len ? s_len : t_len;
  const auto in = difference_input(s_first, t_first, m);
  const std::int64_t first = tally::cpu::reduce(in, in + m, difference_key(m, 0), minimum{});
  return compare_result(key_sign(first), s_len, t_len);
}

template <std::random_access_iterator SIt, std::random_access_iterator TIt>
int lexicographic_compare_by_compaction(SIt s_first, SIt s_last, TIt t_first, TIt t_last) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::lexicographic_compare_by_compaction";
  const std::int64_t s_len = static_cast<std::int64_t>(s_last - s_first);
  const std::int64_t t_len = static_cast<std::int64_t>(t_last - t_first);
  if (s_len < 0) throw_argument_error(function, "s_last", "is before s_first");
  if (t_len < 0) throw_argument_error(function, "t_last", "is before t_first");
  require_pointer(function, "s_first", s_first, s_len);
  require_pointer(function, "t_first", t_first, t_len);
  const std::int64_t m = s_len < t_len ? s_len : t_len;
  const auto signs = sign_input(s_first, t_first);
  std::vector<std::int8_t> survivors(static_cast<std::size_t>(m));
  const auto end = tally::cpu::copy_if(signs, signs + m, survivors.begin(), non_zero{});
  return compare_result(end == survivors.begin() ? 0 : survivors.front(), s_len, t_len);
}

}  // namespace tally::cpu
