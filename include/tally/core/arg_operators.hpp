// tally/core/arg_operators.hpp -- argmin / argmax as reductions over (value, index) pairs.
//
//   tally::indexed<V, I>        {value, index}; index < 0 means "no element"
//   tally::arg_min, arg_max     the operators: the smaller (larger) value wins; equal
//                               values: the SMALLER index wins (the first occurrence)
//   tally::indexed_iterator     in[i] -> indexed{in[i], i}: turns any random-access input
//                               into (value, index) pairs without storing them
//
// Both operators are associative and commutative, and {any, -1} is their identity
// (identity_of is specialised below), so an empty input reduces to index -1. Because
// the tie-break is by index, the first occurrence wins whatever order a reduction
// combines the pairs in. Values are compared with `<` only; with NaN values (for which
// `<` is false both ways) which index is returned is unspecified.
//
// Usage (tally/device/reduce.cuh has tally::argmin / tally::argmax that do this):
//   auto r = tally::reduce(tally::indexed_iterator(d_in), n,
//                          tally::indexed<float>{0.0f, -1}, tally::arg_min{});
//   // r.index: the position of the first minimum, r.value: the minimum
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"

namespace tally {

template <class Value, class Index = std::int64_t>
struct indexed {
  Value value;
  Index index;  // < 0: no element
};

struct arg_min {
  template <class V, class I>
  TALLY_HOST_DEVICE constexpr indexed<V, I> operator()(const indexed<V, I>& a,
                                                       const indexed<V, I>& b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (b.value < a.value) return b;
    if (a.value < b.value) return a;
    return b.index < a.index ? b : a;  // equal values: the first occurrence
  }
};

struct arg_max {
  template <class V, class I>
  TALLY_HOST_DEVICE constexpr indexed<V, I> operator()(const indexed<V, I>& a,
                                                       const indexed<V, I>& b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (a.value < b.value) return b;
    if (b.value < a.value) return a;
    return b.index < a.index ? b : a;  // equal values: the first occurrence
  }
};

template <class V, class I>
struct identity_of<arg_min, indexed<V, I>> {
  TALLY_HOST_DEVICE static constexpr indexed<V, I> value() { return indexed<V, I>{V{}, I(-1)}; }
};
template <class V, class I>
struct identity_of<arg_max, indexed<V, I>> {
  TALLY_HOST_DEVICE static constexpr indexed<V, I> value() { return indexed<V, I>{V{}, I(-1)}; }
};

// A random-access input whose element i is indexed{in[i], first_index + i}.
template <class It, class Index = std::int64_t>
class indexed_iterator {
 public:
  // (not named element_type: with both element_type and value_type, std::iter_value_t
  // would not be defined)
  using base_value_type = std::remove_cvref_t<std::iter_value_t<It>>;
  using value_type = indexed<base_value_type, Index>;
  using difference_type = std::ptrdiff_t;
  using reference = value_type;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  TALLY_HOST_DEVICE explicit indexed_iterator(It it, Index first_index = 0)
      : it_(it), first_(first_index) {}

  TALLY_HOST_DEVICE value_type operator[](difference_type i) const {
    return value_type{static_cast<base_value_type>(it_[i]), static_cast<Index>(first_ + i)};
  }
  TALLY_HOST_DEVICE value_type operator*() const { return (*this)[0]; }
  TALLY_HOST_DEVICE indexed_iterator operator+(difference_type d) const {
    return indexed_iterator(it_ + d, static_cast<Index>(first_ + d));
  }
  TALLY_HOST_DEVICE indexed_iterator& operator+=(difference_type d) {
    it_ += d;
    first_ = static_cast<Index>(first_ + d);
    return *this;
  }
  TALLY_HOST_DEVICE indexed_iterator& operator++() { return *this += 1; }
  TALLY_HOST_DEVICE difference_type operator-(const indexed_iterator& o) const {
    return static_cast<difference_type>(first_ - o.first_);
  }
  TALLY_HOST_DEVICE bool operator==(const indexed_iterator& o) const { return first_ == o.first_; }

 private:
  It it_;
  Index first_;
};

template <class It>
indexed_iterator(It) -> indexed_iterator<It, std::int64_t>;

}  // namespace tally
