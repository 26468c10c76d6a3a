// tally/block/tile_io.cuh -- coalesced, bounds-checked loads and stores of one tile.
//
// A tile is BlockThreads * ItemsPerThread consecutive elements starting at `base`. The
// block scans want the BLOCKED arrangement (thread t holds tile items t*I .. t*I + I - 1);
// reading that arrangement straight from global memory would make each warp access
// 32 * I scattered words per instruction. So, as in PMPP 11.5 phase 1, the tile is read
// in the STRIPED arrangement (in step k, thread t reads item k * BlockThreads + t: one
// contiguous, coalesced run per warp), stored to shared memory, and read back blocked.
// Stores go the other way.
//
// Partial tiles (valid < tile size): loads read only the `valid` first elements; the
// places past them get a copy of the last valid element. Every block scan in tally is
// causal (the result at position j depends on positions <= j only), so this padding
// never changes a valid result, and it needs no identity. Stores write only the valid
// elements.
//
// Barriers: each function starts with a barrier, because its shared storage may still be
// read by threads finishing a previous use (the previous tile's store, say), and has one
// in the middle, between the shared-memory writes and the reads of other threads' values.
// Between the global reads of a load and the global writes of a later store there are
// always barriers, which is what makes in-place scans (in == out) safe within a tile.
//
// Shared addresses are padded (position i at i + i / 32) so that the blocked reads,
// which stride by ItemsPerThread, do not all fall into one bank.
#pragma once

#include <cstdint>

#include "tally/block/detail/scan_interface.cuh"

namespace tally::block {

template <class T, int BlockThreads, int ItemsPerThread>
class tile_io {
 public:
  static constexpr int tile_items = BlockThreads * ItemsPerThread;

  struct TempStorage {
    detail::uninitialized_array<T, tile_items + tile_items / 32> exchange;
  };

  TALLY_DEVICE explicit tile_io(TempStorage& storage) : s_(storage), tid_(detail::thread_rank()) {}

  // items[k] = T(in[base + tid * ItemsPerThread + k]); places >= valid get a copy of the
  // last valid element. Requires 1 <= valid <= tile_items.
  template <class In>
  TALLY_DEVICE void load(In in, std::int64_t base, int valid, T (&items)[ItemsPerThread]) {
    load_shifted_impl<false>(in, base, valid, items, nullptr);
  }

  // The shifted load: place 0 gets `first`, place i > 0 gets in[base + i - 1] (so the
  // last element of the tile, in[base + tile_items - 1], is not read). Places >= valid
  // are padded as above. An inclusive scan of the result is the exclusive scan seeded
  // with `first`. Reads only inside [base, base + valid - 1): safe in place.
  template <class In>
  TALLY_DEVICE void load_shifted(In in, std::int64_t base, int valid, const T& first,
                                 T (&items)[ItemsPerThread]) {
    load_shifted_impl<true>(in, base, valid, items, &first);
  }

  // out[base + i] = tile item i for shift <= i < valid, where tile item i is
  // items_of_thread[(i - shift) / I][(i - shift) % I]: with shift = 1 the tile is stored
  // one place to the right and place 0 is left untouched (the shifted store of an
  // exclusive scan). Requires 0 <= valid <= tile_items, shift in {0, 1}.
  template <class Out>
  TALLY_DEVICE void store(Out out, std::int64_t base, int valid, const T (&items)[ItemsPerThread],
                          int shift = 0) {
    T* smem = s_.exchange.data();
    __syncthreads();  // a previous use of the exchange storage has finished reading it
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) smem[pad(tid_ * ItemsPerThread + k)] = items[k];
    __syncthreads();  // the whole tile is in shared memory before the striped reads
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int i = k * BlockThreads + tid_;
      if (i >= shift && i < valid) out[base + i] = smem[pad(i - shift)];
    }
  }

 private:
  TALLY_DEVICE TALLY_FORCEINLINE static int pad(int i) { return i + i / 32; }

  template <bool Shifted, class In>
  TALLY_DEVICE void load_shifted_impl(In in, std::int64_t base, int valid,
                                      T (&items)[ItemsPerThread], const T* first) {
    T* smem = s_.exchange.data();
    __syncthreads();  // a previous use of the exchange storage has finished reading it
    // the number of elements read from `in`, and the offset of the first one in the tile
    constexpr int offset = Shifted ? 1 : 0;
    const int reads = valid - offset;
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) {
      const int i = k * BlockThreads + tid_;
      if (Shifted && i == 0) {
        smem[pad(0)] = *first;
      } else if (reads > 0) {
        // i - offset is the element index; past the valid ones, repeat the last one
        const int e = i - offset < reads ? i - offset : reads - 1;
        smem[pad(i)] = static_cast<T>(in[base + e]);
      } else {
        smem[pad(i)] = *first;  // shifted load of a one-element tile: only the seed
      }
    }
    __syncthreads();  // the whole tile is in shared memory before the blocked reads
#pragma unroll
    for (int k = 0; k < ItemsPerThread; ++k) items[k] = smem[pad(tid_ * ItemsPerThread + k)];
  }

  TempStorage& s_;
  int tid_;
};

}  // namespace tally::block
