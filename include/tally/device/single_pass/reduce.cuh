// tally/device/single_pass/reduce.cuh -- the single-pass reduction: the chunked
// reduction in one launch, finished by the last block to arrive.
//
// Algorithm: Brent's chunked reduction (multi_pass/chunked_reduction.cuh) with the second kernel
// folded into the first, after the "threadfence reduction" of the CUDA programming guide
// (memory fence functions; NVIDIA CUDA samples, threadFenceReduction): every block
// publishes its total and takes a ticket from an atomic counter; the block that draws the
// last ticket reduces the totals and writes init op total.
//
// The finish is where a small reduce spends its time, and a fenced finish costs a large
// share of it (docs/performance.md, "What each path earns"). So there is no fence and no
// counter to reset:
//   - integer sums of at most 32 bits: one 64-bit atomic per block carries both the
//     arrival count and the sum (packed_finish_v below);
//   - everything else: each block stores its total as an epoch-tagged descriptor and
//     draws a ticket from the tile state the single-pass scans use (single_pass/tile_state.cuh); the
//     last ticket polls the tags, which say by themselves that the values are there
//     (grids of at most 64 blocks: in one warp, warp_finish).
//
// Per block, as multi_pass/chunked_reduction.cuh:
//   - commutative operators with an identity (plus, min, max, bit ops on arithmetic
//     types) take the strided cut. Contiguous inputs of arithmetic types (a pointer; any
//     element size dividing 16) are read with 16-byte vector loads (__ldg of uint4),
//     `vectors_per_thread` per thread and step (on long inputs the next step's issued
//     before this one's are combined), each lane of the vector kept in its own
//     accumulator; the elements before the first 16-byte boundary (a pointer offset by one
//     element) and after the last whole vector are read one by one by block 0 and the last
//     block. Iterators use scalar loads, `scalar_unroll` in flight.
//   - every other operator takes the consecutive cut (tiles through shared memory, in
//     order), correct for any associative operator.
// Small inputs (up to 32 KiB, or 64 KiB where the grid would finish through descriptors:
// single_block_max_bytes()) use one block, which writes the result itself: no
// descriptors, no ticket, no finish (one_block_kernel for the strided cut).
//
// Deterministic: the cut of the input into blocks and threads depends only on n and the
// device (its SM count and resident grid: grid()), and the last block combines the totals in an order fixed by
// the grid (block order for operators that are not commutative), whichever block arrives
// last (the packed finish adds integers, exact in any order).
// Float results are identical run to run on a device.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/block/block_reduce.cuh"
#include "tally/core/math.hpp"
#include "tally/device/detail/dependent_launch.cuh"
#include "tally/device/detail/reduce_common.cuh"
#include "tally/device/multi_pass/chunked_reduction.cuh"
#include "tally/device/single_pass/tile_state.cuh"

namespace tally::detail::reduction::single_pass {

// A contiguous input of arithmetic elements that 16-byte vectors can hold whole.
template <class In>
struct vector_input {
  static constexpr bool value = false;
};
template <class T>
struct vector_input<T*> {
  using element = std::remove_cv_t<T>;
  static constexpr bool value = std::is_arithmetic_v<element> && 16 % sizeof(element) == 0;
};

// ---- the vectorised strided body ---------------------------------------------------------
// This thread's partial over the 16-byte vectors of in[head, head + vectors * W), plus the
// unaligned head (block 0) and tail (the last block), starting from the identity.
template <int Threads, int Vectors, class Acc, class T, class Op>
TALLY_DEVICE Acc vector_thread_partial(const T* in, std::int64_t n, Op op) {
  using element = std::remove_cv_t<T>;
  constexpr int width = static_cast<int>(16 / sizeof(element));
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  std::int64_t head = static_cast<std::int64_t>(((16 - address % 16) % 16) / sizeof(element));
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / width;
  const std::int64_t tail_begin = head + vectors * width;
  const uint4* v = reinterpret_cast<const uint4*>(in + head);  // 16-byte aligned

  Acc acc[width];
#pragma unroll
  for (int w = 0; w < width; ++w) acc[w] = identity<Op, Acc>();
  auto combine = [&](const uint4& raw) {
    element x[width];
    memcpy(x, &raw, 16);
#pragma unroll
    for (int w = 0; w < width; ++w) acc[w] = static_cast<Acc>(op(acc[w], static_cast<Acc>(x[w])));
  };

  // Two loops over the whole steps (Vectors loads per thread each), the same additions in
  // the same order, so both give the same bits:
  //   - plain (fewer than pipelined_min_steps steps per thread): load a step, combine it;
  //   - software pipelined (longer inputs): the next step's loads are issued before this
  //     step's are combined, so every thread has loads in flight while it adds.
  // Why both: written as the plain loop, ptxas issues the double kernel's four loads two
  // at a time, reusing the registers of the first two for the last two (the int32, float
  // and int64 kernels issue all four together), and long double sums fall behind CUB;
  // pipelined they match it. But where each thread takes only a few steps the pipelined
  // loop is slower than the plain one, so it runs only where there are enough steps to
  // pipeline (docs/performance.md, "What each path earns").
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * Threads * Vectors;
  std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Threads * Vectors + threadIdx.x;
  if (vectors < std::int64_t{reduce_tuning::pipelined_min_steps} * step) {
    for (; i + (Vectors - 1) * Threads < vectors; i += step) {
      uint4 raw[Vectors];
#pragma unroll
      for (int u = 0; u < Vectors; ++u) raw[u] = __ldg(v + i + u * Threads);  // all in flight
#pragma unroll
      for (int u = 0; u < Vectors; ++u) combine(raw[u]);
    }
  } else if (i + (Vectors - 1) * Threads < vectors) {
    uint4 next[Vectors];
#pragma unroll
    for (int u = 0; u < Vectors; ++u) next[u] = __ldg(v + i + u * Threads);  // all in flight
    for (;;) {
      uint4 raw[Vectors];
#pragma unroll
      for (int u = 0; u < Vectors; ++u) raw[u] = next[u];
      i += step;
      const bool more = i + (Vectors - 1) * Threads < vectors;
      if (more) {
#pragma unroll
        for (int u = 0; u < Vectors; ++u) next[u] = __ldg(v + i + u * Threads);
      }
#pragma unroll
      for (int u = 0; u < Vectors; ++u) combine(raw[u]);
      if (!more) break;
    }
  }
  // i: the first step that is not whole (or past the end); its vectors one by one.
#pragma unroll
  for (int u = 0; u < Vectors; ++u) {
    if (i + u * Threads < vectors) combine(__ldg(v + i + u * Threads));
  }

  Acc total = acc[0];
#pragma unroll
  for (int w = 1; w < width; ++w) total = static_cast<Acc>(op(total, acc[w]));
  // fewer than `width` elements each: one per thread
  if (blockIdx.x == 0 && threadIdx.x < head) {
    total = static_cast<Acc>(op(total, static_cast<Acc>(in[threadIdx.x])));
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n - tail_begin) {
    total = static_cast<Acc>(op(total, static_cast<Acc>(in[tail_begin + threadIdx.x])));
  }
  return total;
}

// ---- the finish ------------------------------------------------------------------------------
// Integer sums of at most 32 bits finish with one atomic: a 64-bit word that is 0 at launch
// holds the number of blocks that have arrived in bits 52..63 and the sum of their totals,
// each zero-extended to 32 bits, in bits 0..51 (at most 1024 blocks x (2^32 - 1) < 2^52:
// the sum never carries into the count). A block adds (1 << 52) + its total with one
// atomicAdd; the one that sees count == gridDim.x - 1 in the old value holds every total
// in old + its own addition, whose low bits are the wrapping sum. No fence and no second
// read: the atomic carries the data. Integer addition is exact, so the order of arrival
// does not change the result.
template <class Op, class Acc>
inline constexpr bool packed_finish_v = std::is_same_v<Op, tally::plus> && std::is_integral_v<Acc> &&
                                        !std::is_same_v<Acc, bool> && sizeof(Acc) <= 4;
inline constexpr int packed_count_shift = 52;

// Where the blocks meet: the packed word, or (every other operator and type) the tile state
// of the single-pass scans (single_pass/tile_state.cuh: a ticket header and one descriptor per block),
// packed: the finishing block reads all of them at once (single_pass/tile_state.cuh, spacing).
inline constexpr ::tally::detail::single_pass::spacing finish_spacing =
    ::tally::detail::single_pass::spacing::packed;
template <class Acc>
using finish_state = ::tally::detail::single_pass::tile_state<Acc, finish_spacing>;

template <class Acc>
struct finish_target {
  unsigned long long* word = nullptr;  // packed finish: 0 at launch, left 0
  finish_state<Acc> state{};           // descriptor finish
  // In caller storage: zeroed by a clear kernel that may still run when this kernel's
  // blocks start (run(), dependent_launch.cuh); the finish waits for it before it touches
  // the word or the state.
  bool after_clear = false;
};

template <class Acc, int Threads>
struct finish_storage {
  in_order_storage<Acc, Threads> reduce;                        // no identity: maybe<Acc>
  typename block::block_reduce<Acc, Threads, 1>::TempStorage plain;  // identity padding
  unsigned epoch;
  bool last;
};

// Thread 0 of every block (descriptor finish): the state's current epoch, read with a
// relaxed load at the start of the kernel so that its latency hides behind the input
// loads (after a clear: not read, the clear left it 0). The epoch changes only when the call's last ticket is drawn, and this block has
// not drawn yet, so the value read is this call's epoch (draw_ticket's answer confirms it).
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE unsigned long long read_header(const finish_target<Acc>& f) {
  return f.state.header != nullptr ? ::tally::detail::single_pass::load_relaxed(f.state.header) : 0ull;
}

// Thread 0 of a block (descriptor finish): stores the block's total as an `aggregate`
// descriptor tagged with the call's epoch (from read_header), then draws a ticket and
// returns the header's value before the draw (epoch in the high word, ticket in the low).
// The last ticket opens the next epoch. Shared by finish() and warp_finish() below; the
// steps are described at finish().
template <class Acc>
TALLY_DEVICE unsigned long long store_and_draw_ticket(const Acc& block_total, const finish_target<Acc>& f,
                                                      unsigned long long header) {
  namespace sp = ::tally::detail::single_pass;
  const std::int64_t blocks = gridDim.x;
  const auto epoch = static_cast<unsigned>(header >> 32);
  f.state.descriptors.store(blockIdx.x, sp::make_tag(epoch, sp::status_aggregate), block_total);
  // Relaxed: the descriptor's tag, not this atomic, tells the reader the value is there.
  const unsigned long long old = atomicAdd(f.state.header, 1ull);
  const auto ticket = static_cast<std::int64_t>(old & 0xffffffffull);
  // Another epoch or count means the state changed under the call (two streams shared it,
  // or a kernel of it was killed half-way): stop rather than reduce garbage.
  if (static_cast<unsigned>(old >> 32) != epoch || ticket >= blocks) __trap();
  if (ticket == blocks - 1) sp::store_relaxed(f.state.header, static_cast<unsigned long long>(epoch + 1u) << 32);
  return old;
}

// Every 2^29 calls (the epoch says which): zero the descriptors past this call's blocks
// (single_pass/tile_state.cuh); this call reads only descriptors < gridDim.x. `Threads` threads of each
// block take part (thread index threadIdx.x).
template <int Threads, class Acc>
TALLY_DEVICE void clear_past_grid(const finish_target<Acc>& f, unsigned epoch) {
  const std::int64_t blocks = gridDim.x;
  if (::tally::detail::single_pass::is_clearing_epoch(epoch)) {
    for (std::int64_t i = blocks + blockIdx.x * std::int64_t{Threads} + threadIdx.x; i < f.state.capacity;
         i += blocks * Threads) {
      f.state.descriptors.clear(i);
    }
  }
}

// The finishing block's reads (strided cut): this thread's Slots totals, of the blocks
// block_of(0) .. block_of(Slots - 1) (past the grid: the identity), combined in slot order.
// Every load is issued before any is waited for (a thread that waits for its totals one
// after another is slower). Each block stored its total before drawing its ticket, so the
// wait is short and cannot deadlock.
template <int Slots, class Acc, class Op, class BlockOf>
TALLY_DEVICE TALLY_FORCEINLINE Acc combine_totals(const finish_target<Acc>& f, unsigned epoch, Op op,
                                                  BlockOf block_of) {
  namespace sp = ::tally::detail::single_pass;
  const std::int64_t blocks = gridDim.x;
  Acc v[Slots];
  bool ready[Slots];
#pragma unroll
  for (int k = 0; k < Slots; ++k) {
    const std::int64_t b = block_of(k);
    ready[k] = b >= blocks;
    if (ready[k]) {
      v[k] = identity<Op, Acc>();
    } else {
      ready[k] = f.state.descriptors.load(b, epoch, v[k]) == sp::status_aggregate;
    }
  }
#pragma unroll
  for (int k = 0; k < Slots; ++k) {
    while (!ready[k]) ready[k] = f.state.descriptors.load(block_of(k), epoch, v[k]) == sp::status_aggregate;
  }
  Acc mine = v[0];
#pragma unroll
  for (int k = 1; k < Slots; ++k) mine = static_cast<Acc>(op(mine, v[k]));
  return mine;
}

// The descriptor finish of grids of at most paired_reads x 32 blocks, where the finishing
// block needs one warp (each lane reads the totals of paired_reads consecutive blocks):
// warp 0 does it all, the other warps are done. Thread 0 stores the descriptor and draws
// the ticket as in finish() below, and hands the ticket's answer (epoch and number) to its
// warp with a shuffle instead of shared memory and a block barrier; the warp with the last
// ticket reads the totals and combines them with a warp butterfly (warp::reduce), where
// the block path's block_reduce takes two barriers. Commutative operators with an identity
// only (the strided cut): the order is fixed by the grid (each lane's blocks in order,
// then the butterfly), so floats give the same bits run to run. Faster than the block
// path for small float and double sums (docs/performance.md, "What each path earns").
template <class Acc, class Out, class Op>
TALLY_DEVICE void warp_finish(const Acc& block_total, const Acc& init, Op op, Out out,
                              const finish_target<Acc>& f, unsigned long long header) {
  constexpr int P = reduce_tuning::paired_reads;
  if (threadIdx.x >= warp::warp_threads) return;
  unsigned long long old = 0;
  if (threadIdx.x == 0) old = store_and_draw_ticket(block_total, f, header);
  old = __shfl_sync(0xffffffffu, old, 0);  // the ticket's answer, to every lane
  const auto epoch = static_cast<unsigned>(old >> 32);
  clear_past_grid<warp::warp_threads>(f, epoch);
  if (static_cast<std::int64_t>(old & 0xffffffffull) != std::int64_t{gridDim.x} - 1) return;  // not the last
  // Lane t reads the totals of blocks P t .. P t + P - 1.
  Acc mine = combine_totals<P>(f, epoch, op, [](int k) { return std::int64_t{P} * threadIdx.x + k; });
  mine = warp::reduce(mine, op);  // the same value in every lane
  if (threadIdx.x == 0) *out = static_cast<Acc>(op(init, mine));
}

// Called by every thread of every block with the block's total (in every thread) and, in
// thread 0, the header from read_header. With one block it writes the result directly.
// Otherwise (grid <= Threads x finish_reads, so each thread of the finishing block reads at
// most finish_reads descriptors):
//   packed:      see packed_finish_v above.
//   descriptor:  (grids of at most paired_reads x 32 blocks, strided cut: warp_finish
//                above, the same steps in warp 0) thread 0 stores the block total as an
//                `aggregate` descriptor tagged with the epoch (one relaxed word, or
//                value + release tag for types over 8 bytes), then draws a ticket (relaxed atomicAdd on the header). The block
//                with the last ticket polls the descriptors of all blocks until each
//                carries this epoch's tag (each was stored before its block's ticket, so
//                the wait is short and cannot deadlock: every block it waits for has
//                already run to its ticket), reduces them in an order fixed by the grid
//                (block order where the operator is not commutative) and writes init
//                op total. No fence: the tag in the descriptor word tells the reader the
//                value is there (a word read whole, or acquire/release for the split
//                format). The last ticket opens the next epoch with a plain relaxed store
//                (every ticket of the call is drawn, nothing else touches the header in
//                this launch; an atomicExch would make the finishing thread wait for
//                its reply; single_pass/tile_state.cuh's open_ticket does the same for the scans), so
//                the next call on the state needs no reset.
template <int Threads, class Acc, class Out, class Op>
TALLY_DEVICE void finish(const Acc& block_total, const Acc& init, Op op, Out out,
                         const finish_target<Acc>& f, unsigned long long header,
                         finish_storage<Acc, Threads>& s) {
  namespace sp = ::tally::detail::single_pass;
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = static_cast<Acc>(op(init, block_total));
    return;
  }
  if (f.after_clear) {
    // The clear of the word or state has completed and its stores are visible (every
    // thread: the finishing block's threads read descriptors). The header it left is 0
    // (epoch 0, no ticket drawn), which is what `header` holds here: not read.
    wait_for_prerequisite_grid();
  }
  if constexpr (packed_finish_v<Op, Acc>) {
    static_assert(Threads * reduce_tuning::finish_reads < 4096, "the packed word counts at most 4095 blocks");
    if (threadIdx.x == 0) {
      using bits_t = std::make_unsigned_t<Acc>;
      const unsigned long long mine = (1ull << packed_count_shift) +
                                      static_cast<unsigned long long>(static_cast<bits_t>(block_total));
      const unsigned long long old = atomicAdd(f.word, mine);
      if ((old >> packed_count_shift) == gridDim.x - 1) {
        const Acc total = static_cast<Acc>(static_cast<bits_t>(old + mine));
        *out = static_cast<Acc>(op(init, total));
        // Every block has added: nothing touches the word again in this launch. Zero it for
        // the next call that uses it (ordered after this kernel by its stream).
        *f.word = 0ull;
      }
    }
  } else {
    const std::int64_t blocks = gridDim.x;
    if constexpr (strided_ok_v<Op, Acc>) {
      if (blocks <= std::int64_t{reduce_tuning::paired_reads} * warp::warp_threads) {
        warp_finish(block_total, init, op, out, f, header);
        return;
      }
    }
    if (threadIdx.x == 0) {
      const unsigned long long old = store_and_draw_ticket(block_total, f, header);
      s.epoch = static_cast<unsigned>(old >> 32);
      s.last = static_cast<std::int64_t>(old & 0xffffffffull) == blocks - 1;
    }
    // Hands `last` and the epoch to the block.
    __syncthreads();
    const unsigned epoch = s.epoch;
    clear_past_grid<Threads>(f, epoch);
    if (!s.last) return;  // uniform across the block
    Acc total;
    if constexpr (strided_ok_v<Op, Acc>) {
      // Thread t reads the totals of blocks 2t and 2t + 1 and, past 2 x Threads blocks, of
      // block 2 x Threads + t (and so on: finish_reads slots). (The pairs are faster than
      // one total per thread.)
      // The order of the combination is fixed for a given grid (each thread's slots in
      // order, then the block reduce in thread order): the operator is commutative here,
      // and floats give the same bits run to run.
      constexpr int K = reduce_tuning::finish_reads;
      constexpr int P = reduce_tuning::paired_reads;
      static_assert(K >= P, "the finish reads blocks in pairs first");
      const Acc mine = combine_totals<K>(f, epoch, op, [](int k) {
        return k < P ? std::int64_t{P} * threadIdx.x + k : std::int64_t{k} * Threads + threadIdx.x;
      });
      total = block::block_reduce<Acc, Threads, 1>(s.plain).reduce(mine, op);
    } else {
      // No identity: the in-order reduce of `maybe` values (reduce_common.cuh).
      auto read = [&](std::int64_t b) {
        Acc v;
        while (f.state.descriptors.load(b, epoch, v) != sp::status_aggregate) {
        }
        return v;
      };
      total = reduce_in_order<Threads>(blocks, read, op, s.reduce);
    }
    if (threadIdx.x == 0) *out = static_cast<Acc>(op(init, total));
  }
}

// ---- the kernels ---------------------------------------------------------------------------
// Inputs of at most this many bytes take one block (one_block_kernel). Twice as many where
// the grid would finish through descriptors (a second round trip after the ticket's) and
// the loads are 16-byte vectors: there one block of a few steps is faster than the grid
// (docs/performance.md, "Plans and thresholds"). Not for the packed finish (int32 sums:
// the grid's one atomic is as fast) nor for scalar loads (4 in flight per thread).
template <class Acc, class In, class Op>
TALLY_HOST_DEVICE constexpr std::int64_t single_block_max_bytes() {
  if constexpr (strided_ok_v<Op, Acc> && vector_input<In>::value && !packed_finish_v<Op, Acc>) {
    return reduce_tuning::descriptor_single_block_max_bytes;
  } else {
    return reduce_tuning::single_block_max_bytes;
  }
}

// Whether n elements of In are at most single_block_max_bytes(): the inputs grid() gives
// one block, and the most one_block_kernel reads.
template <class Acc, class In, class Op>
constexpr bool fits_one_block(std::int64_t n) {
  using element = std::remove_cvref_t<std::iter_value_t<In>>;
  return n * static_cast<std::int64_t>(sizeof(element)) <= single_block_max_bytes<Acc, In, Op>();
}

// One block's thread partial for vector inputs of elements of at most 4 bytes (inputs of
// at most single_block_max_bytes(), so at most Steps steps of Vectors 16-byte loads a
// thread). The same additions in the same order as vector_thread_partial (the whole
// steps, the partial step, then the head and the tail element), so the same bits, but:
//   - the head and tail elements are loaded first, beside the first step's vectors, not
//     after the last step;
//   - the steps are unrolled, each step's vectors predicated (no separate pass for the
//     partial step), the indices 32-bit.
// Faster than vector_thread_partial for small int32 and float inputs, which brings the
// small int32 sum level with CUB (docs/performance.md, "What each path earns"). Not for
// 8-byte elements: ptxas then issues the loads one at a time, each waited for before the
// next, so those keep the loop.
template <int Threads, int Vectors, int Steps, class Acc, class T, class Op>
TALLY_DEVICE TALLY_FORCEINLINE Acc one_block_vector_partial(const T* in, std::int64_t n, Op op) {
  using element = std::remove_cv_t<T>;
  constexpr int width = static_cast<int>(16 / sizeof(element));
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const int count = static_cast<int>(n);  // at most single_block_max_bytes() of elements
  const int head = min_of(count, static_cast<int>(((16 - address % 16) % 16) / sizeof(element)));
  const int vectors = (count - head) / width;
  const int tail_begin = head + vectors * width;
  const uint4* v = reinterpret_cast<const uint4*>(in + head);  // 16-byte aligned
  const int t = static_cast<int>(threadIdx.x);
  // Fewer than `width` elements each: one per thread, loaded now so that their latency
  // overlaps the vectors'.
  const bool has_head = t < head;
  const bool has_tail = t < count - tail_begin;
  element head_x{}, tail_x{};
  if (has_head) head_x = in[t];
  if (has_tail) tail_x = in[tail_begin + t];

  Acc acc[width];
#pragma unroll
  for (int w = 0; w < width; ++w) acc[w] = identity<Op, Acc>();
#pragma unroll
  for (int s = 0; s < Steps; ++s) {
    if (s * Threads * Vectors >= vectors) break;  // uniform: the input ends before this step
    uint4 raw[Vectors];
#pragma unroll
    for (int u = 0; u < Vectors; ++u) {  // all in flight
      const int i = t + (s * Vectors + u) * Threads;
      raw[u] = i < vectors ? __ldg(v + i) : uint4{};
    }
#pragma unroll
    for (int u = 0; u < Vectors; ++u) {
      if (t + (s * Vectors + u) * Threads < vectors) {
        element x[width];
        memcpy(x, &raw[u], 16);
#pragma unroll
        for (int w = 0; w < width; ++w) acc[w] = static_cast<Acc>(op(acc[w], static_cast<Acc>(x[w])));
      }
    }
  }
  Acc total = acc[0];
#pragma unroll
  for (int w = 1; w < width; ++w) total = static_cast<Acc>(op(total, acc[w]));
  if (has_head) total = static_cast<Acc>(op(total, static_cast<Acc>(head_x)));
  if (has_tail) total = static_cast<Acc>(op(total, static_cast<Acc>(tail_x)));
  return total;
}

// One block, strided cut (inputs up to single_block_max_bytes()): the per-thread partials
// of strided_kernel (for vectors of elements of at most 4 bytes, the same partials with
// every load issued early: one_block_vector_partial above), then only what thread 0
// needs. A kernel of its own, without the finish: strided_kernel launched with one block
// is slower.
// One barrier: every warp's total is in shared memory before thread 0 combines them in
// warp order (a fixed order: the same bits run to run).
template <int Threads, int Vectors, int Unroll, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    one_block_kernel(In in, std::int64_t n, Out out, Acc init, Op op) {
  constexpr int warps = Threads / warp::warp_threads;
  static_assert(Threads % warp::warp_threads == 0 && warps <= warp::warp_threads);
  __shared__ block::detail::uninitialized_array<Acc, warps> warp_totals;
  Acc mine;
  if constexpr (vector_input<In>::value && sizeof(std::iter_value_t<In>) <= 4) {
    constexpr std::int64_t step_bytes = std::int64_t{Threads} * Vectors * 16;
    constexpr int steps =
        static_cast<int>((single_block_max_bytes<Acc, In, Op>() + step_bytes - 1) / step_bytes);
    mine = one_block_vector_partial<Threads, Vectors, steps, Acc>(in, n, op);
  } else if constexpr (vector_input<In>::value) {
    mine = vector_thread_partial<Threads, Vectors, Acc>(in, n, op);
  } else {
    mine = chunked::strided_thread_partial<Threads, Unroll, Acc>(in, n, op);
  }
  mine = warp::reduce(mine, op);
  if (warp::lane_id() == 0) warp_totals[threadIdx.x / warp::warp_threads] = mine;
  __syncthreads();  // every warp's total is stored before thread 0 reads them
  if (threadIdx.x == 0) {  // a few dependent operations: cheaper than a warp's shuffles
    Acc total = warp_totals[0];
#pragma unroll
    for (int w = 1; w < warps; ++w) total = static_cast<Acc>(op(total, warp_totals[w]));
    *out = static_cast<Acc>(op(init, total));
  }
}

template <int Threads, int Vectors, int Unroll, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    strided_kernel(In in, std::int64_t n, Out out, Acc init, Op op, finish_target<Acc> f) {
  __shared__ typename block::block_reduce<Acc, Threads, 1>::TempStorage reduce_storage;
  __shared__ finish_storage<Acc, Threads> finish_s;
  unsigned long long header = 0;
  if (!packed_finish_v<Op, Acc> && gridDim.x > 1 && threadIdx.x == 0 && !f.after_clear) {
    header = read_header(f);
  }
  Acc mine;
  if constexpr (vector_input<In>::value) {
    mine = vector_thread_partial<Threads, Vectors, Acc>(in, n, op);
  } else {
    mine = chunked::strided_thread_partial<Threads, Unroll, Acc>(in, n, op);
  }
  const Acc total = block::block_reduce<Acc, Threads, 1>(reduce_storage).reduce(mine, op);
  finish<Threads>(total, init, op, out, f, header, finish_s);
}

template <int Threads, int Items, class Acc, class In, class Out, class Op>
__global__ void __launch_bounds__(Threads)
    consecutive_kernel(In in, std::int64_t n, Out out, Acc init, Op op, finish_target<Acc> f) {
  __shared__ chunked::consecutive_storage<Acc, Threads, Items> storage;
  __shared__ finish_storage<Acc, Threads> finish_s;
  unsigned long long header = 0;
  if (gridDim.x > 1 && threadIdx.x == 0 && !f.after_clear) header = read_header(f);
  const Acc total = chunked::consecutive_block_partial<Threads, Items, Acc>(in, n, op, storage);
  finish<Threads>(total, init, op, out, f, header, finish_s);
}

// ---- host side ------------------------------------------------------------------------------
inline constexpr int vectors = reduce_tuning::vectors_per_thread;
inline constexpr int unroll = reduce_tuning::scalar_unroll;

template <class Acc, class Op>
constexpr int threads() {
  return reduce_tuning::threads;
}

// The most blocks the finish takes: finish_reads totals per thread where the operator has
// an identity (strided), one per thread otherwise (the consecutive kernel's in-order finish
// reads any number, one after another: more blocks would cost it time, not correctness).
template <class Acc, class Op>
constexpr int max_blocks() {
  return threads<Acc, Op>() * (strided_ok_v<Op, Acc> ? reduce_tuning::finish_reads : 1);
}

template <class Acc, class In, class Out, class Op>
constexpr auto kernel() {
  if constexpr (strided_ok_v<Op, Acc>) {
    return &strided_kernel<threads<Acc, Op>(), vectors, unroll, Acc, In, Out, Op>;
  } else {
    return &consecutive_kernel<threads<Acc, Op>(), consecutive_items<Acc>(), Acc, In, Out, Op>;
  }
}

// Elements one block reads per step (strided) or per tile (consecutive).
template <class Acc, class In, class Op>
constexpr std::int64_t elements_per_block_step() {
  constexpr std::int64_t t = threads<Acc, Op>();
  if constexpr (strided_ok_v<Op, Acc>) {
    if constexpr (vector_input<In>::value) {
      return t * vectors * static_cast<std::int64_t>(16 / sizeof(typename vector_input<In>::element));
    } else {
      return t * unroll;
    }
  } else {
    return t * consecutive_items<Acc>();
  }
}

// The grid for n >= 1 elements: 1 for small inputs; for long ones (at least
// even_grid_min_steps block steps per block) blocks_per_sm blocks on every SM; for the
// descriptor finish of vector inputs of at most warp_finish_max_steps x paired_reads x 32
// block steps, paired_reads x 32 blocks (the warp finish's grid); else as many blocks as
// there are block steps, at most paired_reads x threads. Never more than the device runs at
// once or than max_blocks() (what the finish reads).
template <class Acc, class In, class Out, class Op>
int grid(const char* function, std::int64_t n) {
  if (fits_one_block<Acc, In, Op>(n)) return 1;
  constexpr int t = threads<Acc, Op>();
  const std::int64_t cap = std::min<std::int64_t>(
      resident_grid<kernel<Acc, In, Out, Op>()>(t, function), max_blocks<Acc, Op>());
  const std::int64_t work = ceil_div(n, elements_per_block_step<Acc, In, Op>());
  const std::int64_t even =
      std::min(std::int64_t{reduce_tuning::blocks_per_sm} * multiprocessors(function), cap);
  if (work >= std::int64_t{reduce_tuning::even_grid_min_steps} * even) return static_cast<int>(even);
  if constexpr (!packed_finish_v<Op, Acc> && strided_ok_v<Op, Acc> && vector_input<In>::value) {
    constexpr std::int64_t warp_grid = std::int64_t{reduce_tuning::paired_reads} * warp::warp_threads;
    if (work > warp_grid && work <= reduce_tuning::warp_finish_max_steps * warp_grid) {
      return static_cast<int>(std::min(warp_grid, cap));
    }
  }
  return static_cast<int>(std::min({work, cap, std::int64_t{reduce_tuning::paired_reads} * t}));
}

// Reduces n >= 1 elements with `grid_size` blocks (from grid()). With grid_size > 1, the
// target is ready (the packed word 0, or a tile state for grid_size descriptors) or, with
// target.after_clear, holds anything: then clear_kernel zeroes it and the kernel is
// launched as its programmatic dependent (dependent_launch.cuh), which overlaps the two
// launches (docs/performance.md, "What each path earns").
template <class Acc, class In, class Out, class Op>
void run(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, int grid_size,
         const finish_target<Acc>& target, cudaStream_t stream) {
  constexpr int t = threads<Acc, Op>();
  if constexpr (strided_ok_v<Op, Acc>) {
    // one_block_kernel reads at most single_block_max_bytes() (its loads are unrolled for
    // that many). grid() gives one block to more only on a device that holds a single
    // block at a time; that grid takes the grid kernel below.
    if (grid_size == 1 && fits_one_block<Acc, In, Op>(n)) {
      one_block_kernel<t, vectors, unroll, Acc, In, Out, Op><<<1, t, 0, stream>>>(in, n, out, init, op);
      TALLY_CUDA_CHECK_LAUNCH("single_pass one-block kernel", function);
      return;
    }
  }
  if (target.after_clear) {
    void* cleared = target.word;
    std::size_t bytes = sizeof(unsigned long long);
    if constexpr (!packed_finish_v<Op, Acc>) {
      cleared = target.state.header;
      bytes = ::tally::detail::single_pass::state_bytes<Acc, finish_spacing>(grid_size);
    }
    launch_after_clear(function, "launch of single_pass kernel", cleared, bytes, dim3(grid_size),
                       dim3(t), 0, stream, kernel<Acc, In, Out, Op>(), in, n, out, init, op, target);
    return;
  }
  kernel<Acc, In, Out, Op>()<<<grid_size, t, 0, stream>>>(in, n, out, init, op, target);
  TALLY_CUDA_CHECK_LAUNCH("single_pass kernel", function);
}

}  // namespace tally::detail::reduction::single_pass
