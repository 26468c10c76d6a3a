// tally/core/transform_iterator.hpp -- a random-access input that applies a function to
// each element when it is read: transform-reduce (and transform-scan) without storing
// the transformed values.
//
//   auto squares = tally::make_transform_iterator(d_in, square{});  // squares[i] = square{}(d_in[i])
//   tally::reduce(squares, n, 0.0);
//
// The function object must be callable on the device (__host__ __device__: the value
// type is deduced in host code, which an extended __device__ lambda does not allow).
// Any random-access input works as the base: a device pointer, another tally or Thrust
// iterator. Only reading is supported. Over a random-access base with a default-
// constructible, copy-assignable function object (a struct, or a lambda without
// captures) it satisfies std::random_access_iterator, so the CPU backend takes it too.
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <type_traits>

#include "tally/core/macros.hpp"

namespace tally {

template <class It, class F>
class transform_iterator {
 public:
  using value_type = std::remove_cvref_t<std::invoke_result_t<const F&, std::iter_reference_t<It>>>;
  using difference_type = std::ptrdiff_t;
  using reference = value_type;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  transform_iterator() = default;
  TALLY_HOST_DEVICE transform_iterator(It it, F f) : it_(it), f_(f) {}

  TALLY_HOST_DEVICE value_type operator[](difference_type i) const { return f_(it_[i]); }
  TALLY_HOST_DEVICE value_type operator*() const { return f_(*it_); }
  TALLY_HOST_DEVICE transform_iterator operator+(difference_type d) const {
    return transform_iterator(it_ + d, f_);
  }
  TALLY_HOST_DEVICE transform_iterator& operator+=(difference_type d) {
    it_ += d;
    return *this;
  }
  TALLY_HOST_DEVICE transform_iterator& operator-=(difference_type d) {
    it_ -= d;
    return *this;
  }
  TALLY_HOST_DEVICE transform_iterator& operator++() { return *this += 1; }
  TALLY_HOST_DEVICE transform_iterator& operator--() { return *this -= 1; }
  TALLY_HOST_DEVICE transform_iterator operator++(int) {
    transform_iterator before = *this;
    ++*this;
    return before;
  }
  TALLY_HOST_DEVICE transform_iterator operator--(int) {
    transform_iterator before = *this;
    --*this;
    return before;
  }
  TALLY_HOST_DEVICE friend transform_iterator operator+(difference_type d,
                                                        const transform_iterator& t) {
    return t + d;
  }
  TALLY_HOST_DEVICE transform_iterator operator-(difference_type d) const {
    return transform_iterator(it_ - d, f_);
  }
  TALLY_HOST_DEVICE difference_type operator-(const transform_iterator& o) const {
    return static_cast<difference_type>(it_ - o.it_);
  }
  TALLY_HOST_DEVICE bool operator==(const transform_iterator& o) const { return it_ == o.it_; }
  TALLY_HOST_DEVICE auto operator<=>(const transform_iterator& o) const { return it_ <=> o.it_; }

  TALLY_HOST_DEVICE It base() const { return it_; }
  TALLY_HOST_DEVICE const F& function() const { return f_; }

 private:
  It it_{};
  F f_{};
};

template <class It, class F>
TALLY_HOST_DEVICE transform_iterator<It, F> make_transform_iterator(It it, F f) {
  return transform_iterator<It, F>(it, f);
}

}  // namespace tally
