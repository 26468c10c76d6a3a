// tally/device/detail/reduce_common.cuh -- what the device reductions share.
//
//   reduce_tuning            threads per block and loads in flight, in one place
//   maybe<T>, maybe_op<Op>   "a value or nothing": reduces partial tiles without an
//                            identity (nothing op x = x = x op nothing)
//   valid_block_reduce       block reduce of a tile's first `valid` items, in order
//   reduce_in_order          one block reduces `count` partials in index order
//   write_value_kernel, finish_kernel
//                            the one-thread launches that write op(init, total)
//   finish_word              a zeroed word for the single-pass packed finish (a ring per
//                            device and context)
//   host_result_slot, host_result_writer, wait_for_result
//                            pinned host memory that tally::reduce's kernel writes its
//                            result to, and the host's wait for it
//   storage_carver           hands out aligned pieces of one temporary allocation
#pragma once

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <cuda/atomic>
#include <cuda_runtime.h>

#include "tally/block/block_reduce.cuh"
#include "tally/core/commutative.hpp"
#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/device/detail/context.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/occupancy.cuh"  // current_device, resident_grid
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/detail/tuning.cuh"  // max_grid_blocks (grid_for)

namespace tally::detail::reduction {

// ---- tuning (the values and why: docs/performance.md, "Plans and thresholds") ----
struct reduce_tuning {
  static constexpr int threads = 256;             // every reduction kernel
  // The single pass's grid (single_pass/reduce.cuh, grid()): inputs of at least
  // even_grid_min_steps block steps per block run blocks_per_sm blocks on every SM (the
  // grid-stride shares are then even across SMs); shorter ones at most threads x 2 blocks
  // (the finishing threads read the totals in pairs, and a full grid of blocks that take
  // one or two steps each costs more at the finish than it gains). Each thread of the
  // finishing block reads up to finish_reads totals, all
  // loads issued before any wait, so the grid is at most threads x finish_reads (768:
  // 4 blocks per SM on GPUs of up to 192 SMs).
  static constexpr int blocks_per_sm = 4;
  static constexpr int even_grid_min_steps = 16;
  static constexpr int finish_reads = 3;
  // The finishing thread t reads the totals of blocks paired_reads x t + k for k <
  // paired_reads first (consecutive blocks), then, past paired_reads x threads blocks,
  // k x threads + t for the other slots; shorter inputs take at most paired_reads x threads
  // blocks.
  static constexpr int paired_reads = 2;
  // A descriptor finish of at most paired_reads x 32 blocks runs in one warp
  // (single_pass/reduce.cuh, warp_finish); past that, a block finish that costs more
  // than the extra steps of fewer blocks. So vector inputs of up to this many times
  // paired_reads x 32 block steps take that grid, each block several steps.
  static constexpr int warp_finish_max_steps = 4;
  static constexpr int vectors_per_thread = 4;    // 16-byte loads per thread and step
  // Inputs of at least this many steps per thread issue the next step's loads before
  // they combine this step's (single_pass/reduce.cuh, vector_thread_partial).
  static constexpr int pipelined_min_steps = 8;
  static constexpr int scalar_unroll = 4;         // element loads in flight (iterator inputs)
  // The single-pass reduce uses one block (no partials, no counter) up to this many
  // bytes of input: a few steps of one block cost less than the finish of a grid.
  static constexpr std::int64_t single_block_max_bytes = thresholds.reduce_one_block_max_bytes;
  // ... and up to this many where the grid would finish through descriptors and the input
  // is read with vector loads (single_pass/reduce.cuh, single_block_max_bytes()).
  static constexpr std::int64_t descriptor_single_block_max_bytes =
      thresholds.reduce_descriptor_one_block_max_bytes;
};

// Items per thread of the in-order (consecutive) tiles: 16 KiB tiles (4096 items of 4
// bytes, 2048 of 8 ... one of more than 32 bytes). The tile goes through shared memory
// (tile_io: tile + tile/32 items), which keeps accumulators up to about 128 bytes under
// the 48 KiB of static shared memory.
template <class Acc>
constexpr int consecutive_items() {
  constexpr std::size_t bytes = sizeof(Acc);
  return bytes <= 4 ? 16 : bytes <= 8 ? 8 : bytes <= 16 ? 4 : bytes <= 32 ? 2 : 1;
}

// The strided (commutative) path needs a commutative operator with a known identity
// (threads that get no element start from it).
template <class Op, class Acc>
inline constexpr bool strided_ok_v = is_commutative_v<Op, Acc> && has_identity_v<Op, Acc>;

// ---- a value or nothing -----------------------------------------------------------------
template <class T>
struct maybe {
  T value;
  bool valid;
};

// op extended to maybe<T>: associative whenever op is, with {_, false} as the identity.
template <class Op>
struct maybe_op {
  Op op;
  template <class T>
  TALLY_HOST_DEVICE maybe<T> operator()(const maybe<T>& a, const maybe<T>& b) const {
    if (!a.valid) return b;
    if (!b.valid) return a;
    return maybe<T>{static_cast<T>(op(a.value, b.value)), true};
  }
};

// ---- block reduce of the first `valid` items of a tile, in order --------------------------
// Items in the BLOCKED arrangement (thread t holds tile positions t*Items .. t*Items+Items-1).
// A full tile uses block::block_reduce directly; a partial one marks the places past
// `valid` as nothing (their values, padding, are never combined). valid is the same in
// every thread, so the branch is uniform and the barriers inside are reached by all.
template <class Acc, int Threads, int Items>
class valid_block_reduce {
  using full_t = block::block_reduce<Acc, Threads, Items>;
  using part_t = block::block_reduce<maybe<Acc>, Threads, 1>;

 public:
  struct TempStorage {
    typename full_t::TempStorage full;
    typename part_t::TempStorage part;
  };

  TALLY_DEVICE explicit valid_block_reduce(TempStorage& storage) : s_(storage) {}

  // x_0 op ... op x_{valid-1} in every thread; requires 1 <= valid.
  template <class Op>
  TALLY_DEVICE Acc reduce(const Acc (&items)[Items], int valid, Op op) {
    if (valid >= Threads * Items) return full_t(s_.full).reduce(items, op);
    const int first = static_cast<int>(threadIdx.x) * Items;
    maybe<Acc> mine{items[0], first < valid};
#pragma unroll
    for (int k = 1; k < Items; ++k) {
      if (first + k < valid) mine.value = static_cast<Acc>(op(mine.value, items[k]));
    }
    return part_t(s_.part).reduce(mine, maybe_op<Op>{op}).value;
  }

 private:
  TempStorage& s_;
};

// ---- one block reduces `count` >= 1 partials in index order ------------------------------
// Thread t folds the consecutive partials [t*k, t*k + k) (k = ceil(count / Threads)), read
// with read(i), then the threads' results are block-reduced in thread order.
template <class Acc, int Threads>
struct in_order_storage {
  typename block::block_reduce<maybe<Acc>, Threads, 1>::TempStorage reduce;
};

template <int Threads, class Acc, class Read, class Op>
TALLY_DEVICE Acc reduce_in_order(std::int64_t count, Read read, Op op,
                                 in_order_storage<Acc, Threads>& storage) {
  const std::int64_t per_thread = ceil_div(count, Threads);
  const std::int64_t begin = static_cast<std::int64_t>(threadIdx.x) * per_thread;
  const std::int64_t end = begin + per_thread < count ? begin + per_thread : count;
  maybe<Acc> mine;
  mine.valid = begin < end;
  if (mine.valid) {
    mine.value = read(begin);
    for (std::int64_t i = begin + 1; i < end; ++i) mine.value = static_cast<Acc>(op(mine.value, read(i)));
  } else {
    memset(&mine.value, 0, sizeof(Acc));  // never combined; defined bits for the shuffles
  }
  return block::block_reduce<maybe<Acc>, Threads, 1>(storage.reduce).reduce(mine, maybe_op<Op>{op}).value;
}

// ---- one-thread launches -----------------------------------------------------------------
// *out = value (a reduction of nothing is its init; atomics start from init).
template <class Out, class Acc>
__global__ void write_value_kernel(Out out, Acc value) {
  *out = value;
}

// *out = init op source[0]: the last step of the multi-launch reductions.
template <class Acc, class Source, class Out, class Op>
__global__ void finish_kernel(Source source, Acc init, Op op, Out out) {
  *out = static_cast<Acc>(op(init, static_cast<Acc>(source[0])));
}

// ---- the word of the single-pass packed finish ---------------------------------------------
// Integer sums finish with one 64-bit word that is 0 at launch (single_pass/reduce.cuh);
// the last block to arrive sets it back to 0, so no launch is needed to zero it before the
// next call. Calls without caller storage take their word from a ring of words per device
// and context, allocated and zeroed once (the first such reduce in a context pays for a
// cudaMalloc and a zeroing on a private stream, which it may do inside a graph capture:
// storage.cuh, relaxed_capture_mode). Each call takes the
// next slot: calls in flight at the same time on different streams use different words
// unless more than `ring_slots` calls are in flight at once. (Calls with caller storage keep
// their word there instead.)
// A ring is memory of the context it was allocated in (context.cuh): after cudaDeviceReset
// it is gone, so a call in a context without a ring of its own allocates one, and rings of
// contexts that are gone are forgotten, never freed (their memory went with their
// context, and their addresses may be somebody else's). A ring of a context that is
// still there (several contexts on one device, driver API) stays for the life of the process.
inline constexpr std::size_t finish_ring_slots = std::size_t{1} << 16;

inline unsigned long long* finish_word(const char* function) {
  struct ring {
    context_ref context;
    unsigned long long* words;
    std::uint64_t next;  // the index of the slot the next call takes
  };
  static std::mutex mutex;
  static std::vector<ring> rings[64];
  const int device = current_device(function);
  const unsigned long long context = current_context_id(function);
  const std::lock_guard<std::mutex> lock(mutex);
  std::vector<ring>& mine = rings[device];
  const auto at = std::ranges::find_if(mine, [&](const ring& r) { return r.context.id == context; });
  ring* found = at == mine.end() ? nullptr : &*at;
  if (found == nullptr) {
    std::erase_if(mine, [&](const ring& r) { return !context_alive(r.context, function); });
    const context_ref owner = current_context(function);
    const relaxed_capture_mode relaxed(function);
    void* p = nullptr;
    const std::size_t bytes = finish_ring_slots * sizeof(unsigned long long);
    TALLY_CUDA_CHECK(cudaMalloc(&p, bytes), function);
    cudaStream_t stream = nullptr;
    TALLY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), function);
    const cudaError_t set = cudaMemsetAsync(p, 0, bytes, stream);
    const cudaError_t done = set == cudaSuccess ? cudaStreamSynchronize(stream) : set;
    (void)cudaStreamDestroy(stream);
    if (done != cudaSuccess) (void)cudaFree(p);
    TALLY_CUDA_CHECK(done, function);
    mine.push_back(ring{owner, static_cast<unsigned long long*>(p), 0});
    found = &mine.back();
  }
  return found->words + found->next++ % finish_ring_slots;
}

// ---- the host slot of tally::reduce's result -------------------------------------------------
// tally::reduce returns its value to the host. Its kernel writes the result straight into
// pinned host memory, followed by the call's sequence number, and the host waits for that
// number to appear (wait_for_result): one trip from the GPU to the host, taken as soon as
// the finishing block has written, not after the kernel has ended and the stream has
// reported it: cheaper than a copy back or a stream synchronisation (docs/performance.md,
// "What each path earns").
template <class Acc>
struct host_result {
  unsigned long long sequence;  // the call whose value `value` holds (0: none yet)
  Acc value;
};

// The kernels' output for tally::reduce: `*out = v` stores v, then the call's sequence
// number with a release store at system scope. A host thread that reads the number with an
// acquire load and finds its call's reads the whole value: the release orders the value's
// bytes before the number for every observer, the host included.
template <class Acc>
struct host_result_writer {
  host_result<Acc>* slot;
  unsigned long long sequence;

  struct reference {
    host_result<Acc>* slot;
    unsigned long long sequence;
    TALLY_DEVICE void operator=(const Acc& v) const {
      slot->value = v;
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(slot->sequence)
          .store(sequence, cuda::memory_order_release);
    }
  };
  TALLY_DEVICE reference operator*() const { return reference{slot, sequence}; }
};

// One slot per host thread and accumulator type, with the thread's count of calls on it:
// a reduce waits for its result before it returns, so a thread never has two in flight,
// and threads never share a slot. Each call takes the next sequence number, so a value
// left by an earlier call (of any input or operator type with this Acc) is never taken for
// this one's. Allocated by the thread's first reduce of that type (cudaHostAlloc: portable,
// so a kernel on any device may write it; mapped, and under unified addressing, which
// every device tally runs on has, the host pointer is also the device's) with the calling
// thread's capture mode relaxed for the allocation (as finish_word's); freed when the
// thread exits.
// Pinned memory belongs to the context that allocated it, and cudaDeviceReset frees it
// with that context (context.cuh). So the slot remembers that context: a reduce
// that finds it gone allocates a new slot and forgets the old one; the thread's exit frees
// the slot only while its context still exists (the address of a slot freed by a reset
// may since have been handed to another allocation, which cudaFreeHost would free). A
// thread that moves to another device keeps its slot (portable) while the context that
// allocated it exists.
// Returns the writer of this call: the thread's slot and the call's number (the slot holds
// a smaller one).
template <class Acc>
host_result_writer<Acc> host_result_slot(const char* function) {
  struct slot {
    void* p = nullptr;
    context_ref owner;
    unsigned long long calls = 0;
    ~slot() {
      try {
        if (p != nullptr && context_alive(owner, "reduce")) (void)cudaFreeHost(p);
      } catch (...) {  // (context_alive cannot throw once a slot exists; a destructor must not)
      }
    }
  };
  thread_local slot s;
  if (s.p != nullptr && !context_alive(s.owner, function)) s.p = nullptr;
  if (s.p == nullptr) {
    const context_ref owner = current_context(function);
    const relaxed_capture_mode relaxed(function);
    void* p = nullptr;
    TALLY_CUDA_CHECK(
        cudaHostAlloc(&p, sizeof(host_result<Acc>), cudaHostAllocMapped | cudaHostAllocPortable), function);
    static_cast<host_result<Acc>*>(p)->sequence = 0;  // below every call's number
    s.p = p;
    s.owner = owner;
  }
  return host_result_writer<Acc>{static_cast<host_result<Acc>*>(s.p), ++s.calls};
}

// Waits until the call numbered r.sequence has written its value into r.slot, and returns
// the value. The wait follows the scheduling the program chose for the device
// (cudaSetDeviceFlags): cudaDeviceScheduleBlockingSync synchronises the stream (the thread
// sleeps until the kernel has ended); otherwise the thread spins on the number, as
// cudaStreamSynchronize spins under the default scheduling, yielding the processor between
// reads under cudaDeviceScheduleYield. While it spins it asks the stream every
// `query_interval` whether it failed (a fault in this kernel or in work before it: thrown
// as tally::error) or has finished; a finished stream without the number would be a bug of
// tally's, thrown rather than waited on forever.
template <class Acc>
Acc wait_for_result(const char* function, cudaStream_t stream, const host_result_writer<Acc>& r) {
  const auto arrived = [&] {
    return cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(r.slot->sequence)
               .load(cuda::memory_order_acquire) == r.sequence;
  };
  unsigned int flags = 0;
  TALLY_CUDA_CHECK(cudaGetDeviceFlags(&flags), function);
  const unsigned int schedule = flags & cudaDeviceScheduleMask;
  if (schedule == cudaDeviceScheduleBlockingSync) {
    TALLY_CUDA_CHECK(cudaStreamSynchronize(stream), function);
  } else {
    constexpr auto query_interval = std::chrono::microseconds(50);
    using clock = std::chrono::steady_clock;
    auto next_query = clock::now() + query_interval;
    for (unsigned int reads = 1; !arrived(); ++reads) {
      if (schedule == cudaDeviceScheduleYield) std::this_thread::yield();
      if (reads % 256 != 0 || clock::now() < next_query) continue;
      const cudaError_t state = cudaStreamQuery(stream);
      if (state == cudaSuccess) break;  // the stream is done: the number must be there
      if (state != cudaErrorNotReady) TALLY_CUDA_CHECK(state, function);
      next_query = clock::now() + query_interval;
    }
  }
  if (!arrived()) {
    throw ::tally::error(cudaErrorUnknown, std::string("tally::") + function +
                                               ": the stream finished without the call's result (a bug in tally)");
  }
  struct bytes_t {
    unsigned char b[sizeof(Acc)];
  } host{};
  std::memcpy(host.b, &r.slot->value, sizeof(Acc));  // (Acc need not be default-constructible)
  return std::bit_cast<Acc>(host);
}

// ---- carving one temporary allocation into aligned pieces -------------------------------------
// Used twice with the same sequence of take() calls: once with base == nullptr to size
// the storage, once with the real (aligned) base to hand out the pieces.
class storage_carver {
 public:
  explicit storage_carver(unsigned char* base = nullptr) : base_(base) {}
  template <class T>
  T* take(std::size_t count) {
    if (count == 0) return nullptr;
    T* p = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + used_);
    used_ += round_up_storage(count * sizeof(T));
    return p;
  }
  std::size_t used() const { return used_; }

 private:
  unsigned char* base_;
  std::size_t used_ = 0;
};

// The bytes a caller must give for `used` bytes of pieces: the pieces plus the slack for
// aligning its pointer (as required_storage_bytes does for the scans).
inline std::size_t with_alignment_slack(std::size_t used) {
  return used == 0 ? 0 : used + storage_alignment;
}

}  // namespace tally::detail::reduction
