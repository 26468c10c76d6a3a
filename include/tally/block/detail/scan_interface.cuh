// tally/block/detail/scan_interface.cuh -- the public overloads every block scan class
// shares, and raw shared-memory storage for types without a trivial constructor.
//
// A block scan class `Derived` implements two functions on a thread's items, held in
// the BLOCKED arrangement (thread t holds items t * ItemsPerThread ... +ItemsPerThread-1
// of the tile, in order):
//   T inclusive_scan_items(T (&items)[ItemsPerThread], Op& op)
//       scans the items in place; returns the block aggregate x_0 op ... op x_{N-1}
//   T exclusive_scan_items(T (&items)[ItemsPerThread], const T& init, Op& op)
//       items become init op x_0 op ... op x_{i-1}; returns the seeded total
//       init op x_0 op ... op x_{N-1} (what the next tile would be seeded with)
// Both return their total in every thread. This base adds the CUB-like overloads
// (separate input and output arrays, a single item per thread, with or without the
// aggregate).
//
// Reusing a TempStorage for a second call needs a __syncthreads() in between (as in CUB):
// the calls end while other threads may still read the storage.
#pragma once

#include <cstddef>

#include "tally/core/macros.hpp"

namespace tally::block::detail {

// N values of T in shared memory without running T's constructors (a __shared__
// variable cannot have a non-trivial constructor).
template <class T, int N>
struct uninitialized_array {
  alignas(T) unsigned char bytes[sizeof(T) * static_cast<std::size_t>(N)];
  TALLY_DEVICE TALLY_FORCEINLINE T* data() { return reinterpret_cast<T*>(bytes); }
  TALLY_DEVICE TALLY_FORCEINLINE T& operator[](int i) { return data()[i]; }
};

template <class Derived, class T, int ItemsPerThread>
class scan_interface {
 public:
  static constexpr int items_per_thread = ItemsPerThread;

  // ---- inclusive ----
  template <class Op>
  TALLY_DEVICE void inclusive_scan(const T (&input)[ItemsPerThread], T (&output)[ItemsPerThread],
                                   Op op, T& aggregate) {
    T items[ItemsPerThread];
    copy(input, items);  // input and output may be the same array
    aggregate = self().inclusive_scan_items(items, op);
    copy(items, output);
  }
  template <class Op>
  TALLY_DEVICE void inclusive_scan(const T (&input)[ItemsPerThread], T (&output)[ItemsPerThread],
                                   Op op) {
    T aggregate;
    inclusive_scan(input, output, op, aggregate);
  }
  template <class Op>
  TALLY_DEVICE T inclusive_scan(const T& item, Op op, T& aggregate) {
    static_assert(ItemsPerThread == 1, "the single-item overload needs ItemsPerThread == 1");
    T items[1] = {item};
    aggregate = self().inclusive_scan_items(items, op);
    return items[0];
  }
  template <class Op>
  TALLY_DEVICE T inclusive_scan(const T& item, Op op) {
    T aggregate;
    return inclusive_scan(item, op, aggregate);
  }

  // ---- exclusive, seeded with init (no identity needed) ----
  // `total` receives init op x_0 op ... op x_{N-1}.
  template <class Op>
  TALLY_DEVICE void exclusive_scan(const T (&input)[ItemsPerThread], T (&output)[ItemsPerThread],
                                   const T& init, Op op, T& total) {
    T items[ItemsPerThread];
    copy(input, items);
    total = self().exclusive_scan_items(items, init, op);
    copy(items, output);
  }
  template <class Op>
  TALLY_DEVICE void exclusive_scan(const T (&input)[ItemsPerThread], T (&output)[ItemsPerThread],
                                   const T& init, Op op) {
    T total;
    exclusive_scan(input, output, init, op, total);
  }
  template <class Op>
  TALLY_DEVICE T exclusive_scan(const T& item, const T& init, Op op, T& total) {
    static_assert(ItemsPerThread == 1, "the single-item overload needs ItemsPerThread == 1");
    T items[1] = {item};
    total = self().exclusive_scan_items(items, init, op);
    return items[0];
  }
  template <class Op>
  TALLY_DEVICE T exclusive_scan(const T& item, const T& init, Op op) {
    T total;
    return exclusive_scan(item, init, op, total);
  }

 private:
  TALLY_DEVICE TALLY_FORCEINLINE Derived& self() { return static_cast<Derived&>(*this); }
  TALLY_DEVICE TALLY_FORCEINLINE static void copy(const T (&from)[ItemsPerThread],
                                                  T (&to)[ItemsPerThread]) {
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) to[k] = from[k];
  }
};

// The linear thread index of the calling thread in a 1-, 2- or 3-dimensional block.
TALLY_DEVICE TALLY_FORCEINLINE int thread_rank() {
  return static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}

template <int N>
inline constexpr bool is_power_of_two_v = N > 0 && (N & (N - 1)) == 0;

}  // namespace tally::block::detail
