// tally/core/store_iterator.hpp -- an output that hands each stored value, with its
// index, to a function instead of writing it: the fused epilogue of a scan or a
// selection (a result stored as a different type, one field of an accumulator, a value
// combined with the input it came from, the last element stored somewhere else).
//
//   struct take_b { float* x;
//     TALLY_HOST_DEVICE void operator()(std::int64_t i, const tally::affine_map<float>& f) const {
//       x[i] = f.b; } };
//   tally::inclusive_scan(maps, tally::make_store_iterator(take_b{d_x}), n, tally::affine{});
//
// `out[i] = v` (and `*(out + i) = v`) calls f(first_index + i, v). f must be callable on
// the device for GPU calls (__host__ __device__), and it runs once for each element the
// algorithm stores. The iterator satisfies std::random_access_iterator, so the CPU
// backend runs it in parallel: there f may be called from several threads at once, for
// different indices. Reading an element back is not supported (the algorithms that read
// their output, such as the textbook scan_then_propagate, cannot take it).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>

#include "tally/core/macros.hpp"

namespace tally {

template <class F>
class store_iterator {
 public:
  // The proxy returned by out[i]: assigning a value to it calls f(i, value).
  class element {
   public:
    // F is copied (it is a few pointers): a pointer to the iterator's copy would make a
    // kernel take the address of its parameter, which moves the parameter to local memory.
    TALLY_HOST_DEVICE element(const F& f, std::int64_t i) : f_(f), i_(i) {}
    template <class V>
    TALLY_HOST_DEVICE const element& operator=(const V& v) const {
      f_(i_, v);
      return *this;
    }

   private:
    F f_;
    std::int64_t i_;
  };

  // The proxy is its own value type: what std::indirectly_readable asks of an output
  // that is written through a returned object (nothing can be read from it).
  using value_type = element;
  using difference_type = std::ptrdiff_t;
  using reference = element;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  store_iterator() = default;
  TALLY_HOST_DEVICE explicit store_iterator(F f, std::int64_t first_index = 0)
      : f_(std::move(f)), i_(first_index) {}

  TALLY_HOST_DEVICE element operator*() const { return element(f_, i_); }
  TALLY_HOST_DEVICE element operator[](difference_type d) const { return element(f_, i_ + d); }
  TALLY_HOST_DEVICE store_iterator& operator+=(difference_type d) {
    i_ += d;
    return *this;
  }
  TALLY_HOST_DEVICE store_iterator& operator-=(difference_type d) { return *this += -d; }
  TALLY_HOST_DEVICE store_iterator& operator++() { return *this += 1; }
  TALLY_HOST_DEVICE store_iterator& operator--() { return *this -= 1; }
  TALLY_HOST_DEVICE store_iterator operator++(int) {
    store_iterator before = *this;
    ++*this;
    return before;
  }
  TALLY_HOST_DEVICE store_iterator operator--(int) {
    store_iterator before = *this;
    --*this;
    return before;
  }
  TALLY_HOST_DEVICE store_iterator operator+(difference_type d) const {
    store_iterator r = *this;
    return r += d;
  }
  TALLY_HOST_DEVICE friend store_iterator operator+(difference_type d, const store_iterator& it) {
    return it + d;
  }
  TALLY_HOST_DEVICE store_iterator operator-(difference_type d) const { return *this + -d; }
  TALLY_HOST_DEVICE difference_type operator-(const store_iterator& o) const {
    return static_cast<difference_type>(i_ - o.i_);
  }
  TALLY_HOST_DEVICE bool operator==(const store_iterator& o) const { return i_ == o.i_; }
  TALLY_HOST_DEVICE std::strong_ordering operator<=>(const store_iterator& o) const {
    return i_ <=> o.i_;
  }

  TALLY_HOST_DEVICE const F& function() const { return f_; }

 private:
  F f_{};
  std::int64_t i_ = 0;
};

template <class F>
TALLY_HOST_DEVICE store_iterator<F> make_store_iterator(F f, std::int64_t first_index = 0) {
  return store_iterator<F>(std::move(f), first_index);
}

}  // namespace tally
