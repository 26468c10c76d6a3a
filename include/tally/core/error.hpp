// tally/core/error.hpp -- the exceptions tally throws, and the argument checks.
//
//   tally::error            a CUDA call failed; code() is the cudaError_t value.
//   std::invalid_argument   a bad argument; the message names the function and argument.
//   tally::throw_argument_error, require_count, require_pointer: the argument checks, for
//                           code built on tally (device pointers: device/arguments.cuh).
// Library code never prints and never exits.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tally {

class error : public std::runtime_error {
 public:
  // `code` is a cudaError_t. It is kept as an int so that this header compiles without
  // the CUDA headers; compare it with cudaError_t values directly
  // (`e.code() == cudaErrorInvalidValue`) or cast it back with static_cast<cudaError_t>.
  error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {

[[noreturn]] inline void throw_invalid(const char* function, const char* argument,
                                       const std::string& why) {
  throw std::invalid_argument(std::string("tally::") + function + ": argument '" + argument +
                              "' " + why);
}

inline void check_count(const char* function, std::int64_t n) {
  if (n < 0) throw_invalid(function, "n", "must be >= 0, got " + std::to_string(n));
}

// A raw pointer may be null only when there are no elements. Iterators other than raw
// pointers are not checked (there is no general notion of a null iterator).
template <class It>
void check_pointer(const char* function, const char* argument, const It& it, std::int64_t n) {
  if constexpr (std::is_pointer_v<It>) {
    if (n > 0 && it == nullptr) throw_invalid(function, argument, "is a null pointer with n > 0");
  }
}

}  // namespace detail

// The same checks for code built on tally's calls (tally/algorithms/ uses them), with the
// messages of tally's own: "tally::<function>: argument '<argument>' <why>".
[[noreturn]] inline void throw_argument_error(const char* function, const char* argument,
                                              const std::string& why) {
  detail::throw_invalid(function, argument, why);
}
// `n` must be >= 0.
inline void require_count(const char* function, const char* argument, std::int64_t n) {
  if (n < 0) throw_argument_error(function, argument, "must be >= 0, got " + std::to_string(n));
}
// A raw pointer must not be null when it has elements (iterators are not checked).
template <class It>
void require_pointer(const char* function, const char* argument, const It& it, std::int64_t n) {
  detail::check_pointer(function, argument, it, n);
}

}  // namespace tally
