// tally/core/counting_iterator.hpp -- the sequence first, first + 1, first + 2, ... as a
// random-access input that stores nothing: the index space of an algorithm that reads
// several arrays at once (a transform_iterator over it gathers them), on the GPU and in
// the CPU backend (it satisfies std::random_access_iterator).
//
//   auto maps = tally::make_transform_iterator(tally::counting_iterator<std::int64_t>(0), f);
//   // maps[i] = f(i)
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <type_traits>

#include "tally/core/macros.hpp"

namespace tally {

template <class I = std::int64_t>
class counting_iterator {
  static_assert(std::is_integral_v<I>, "counting_iterator counts in an integer type");

 public:
  using value_type = I;
  using difference_type = std::ptrdiff_t;
  using reference = I;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  constexpr counting_iterator() = default;
  TALLY_HOST_DEVICE constexpr explicit counting_iterator(I first) : i_(first) {}

  TALLY_HOST_DEVICE constexpr I operator*() const { return i_; }
  TALLY_HOST_DEVICE constexpr I operator[](difference_type d) const {
    return static_cast<I>(i_ + d);
  }
  TALLY_HOST_DEVICE constexpr counting_iterator& operator+=(difference_type d) {
    i_ = static_cast<I>(i_ + d);
    return *this;
  }
  TALLY_HOST_DEVICE constexpr counting_iterator& operator-=(difference_type d) {
    return *this += -d;
  }
  TALLY_HOST_DEVICE constexpr counting_iterator& operator++() { return *this += 1; }
  TALLY_HOST_DEVICE constexpr counting_iterator& operator--() { return *this -= 1; }
  TALLY_HOST_DEVICE constexpr counting_iterator operator++(int) {
    counting_iterator before = *this;
    ++*this;
    return before;
  }
  TALLY_HOST_DEVICE constexpr counting_iterator operator--(int) {
    counting_iterator before = *this;
    --*this;
    return before;
  }
  TALLY_HOST_DEVICE constexpr counting_iterator operator+(difference_type d) const {
    return counting_iterator(static_cast<I>(i_ + d));
  }
  TALLY_HOST_DEVICE friend constexpr counting_iterator operator+(difference_type d,
                                                                 counting_iterator it) {
    return it + d;
  }
  TALLY_HOST_DEVICE constexpr counting_iterator operator-(difference_type d) const {
    return counting_iterator(static_cast<I>(i_ - d));
  }
  TALLY_HOST_DEVICE constexpr difference_type operator-(const counting_iterator& o) const {
    return static_cast<difference_type>(i_) - static_cast<difference_type>(o.i_);
  }
  TALLY_HOST_DEVICE constexpr bool operator==(const counting_iterator& o) const {
    return i_ == o.i_;
  }
  TALLY_HOST_DEVICE constexpr std::strong_ordering operator<=>(const counting_iterator& o) const {
    return i_ <=> o.i_;
  }

 private:
  I i_ = 0;
};

}  // namespace tally
