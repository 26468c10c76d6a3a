// tally/device/reduce.cuh -- device-wide reductions: the public API.
//
//   Acc  tally::reduce(in, n, init, op = plus{}, options = {})
//        init op x_0 op ... op x_{n-1}, returned to the host: the kernel writes it into
//        pinned host memory and the call waits for that write, not for the stream (see
//        "reduce's wait" below); n == 0 returns init (converted to Acc) without touching
//        the GPU. On a stream being captured into a graph: std::invalid_argument.
//   void tally::reduce_into(in, n, out, init, op = plus{}, options = {})
//        the same value written to *out (device memory), asynchronously on options.stream;
//        n == 0 writes init. out: a device pointer or output iterator; never null.
//   size_t tally::reduce_storage_bytes<In, Init, Op>(n, options = {})
//        bytes of caller storage (options.storage) that reduce or reduce_into needs.
//   tally::transform_reduce(in, n, init, reduce_op, transform_op, options = {}),
//   tally::transform_reduce_into(in, n, out, init, reduce_op, transform_op, options = {})
//        reduce of transform_op(x_i) through core/transform_iterator.hpp (no storage of
//        the transformed values).
//   tally::argmin(in, n, options = {}), tally::argmax(...)
//        indexed<V, int64>{value, index} of the first minimum (maximum); index -1 for n == 0
//        (core/arg_operators.hpp).
//   tally::max_segment_sum(in, n, options = {})
//        the maximum segment sum (MSSP, core/mssp.hpp): in int64 for integer inputs, in
//        double for floating point; 0 for an empty input or only negative elements.
//
//   in: a device pointer or a random-access iterator usable on the device. n: 64-bit.
//   op: any associative host+device callable, commutative or not, with or without an
//       identity. Acc = decay(op(init, x)) (P2322; core/accumulator.hpp): a reduce of
//       int32 from std::int64_t{0} sums in int64. Acc must be trivially copyable.
//
// How (device/single_pass/reduce.cuh): one launch. Operators tally knows to be
// commutative on arithmetic types (core/commutative.hpp: plus, multiplies, minimum,
// maximum, bit ops) read the input strided, with 16-byte vector loads for pointers to
// arithmetic types (any alignment of the pointer to its element: the unaligned head and
// tail are read one by one); every other operator is reduced in order through shared
// memory (consecutive chunks), which is correct for any associative operator. The last
// block to finish combines the per-block totals in block order: integer sums of at most
// 32 bits through one 64-bit atomic that carries both the count of blocks and the sum,
// everything else through epoch-tagged descriptors in the single-pass scans' tile state
// (no fence, no reset). Inputs up to 32 KiB are reduced by one block.
//
// Determinism: every path combines in an order fixed by n and the device (the only atomic
// that carries values adds integers, exact in any order), so float results are identical
// run to run on the same device; options.deterministic changes nothing here. Results can
// differ between devices with different SM counts, and from the sequential order (within
// the usual floating-point bounds).
//
// Storage: without options.storage nothing is allocated for reduce_into: integer sums take
// their finish word from a ring of words kept per device (allocated and zeroed by the
// first such reduce on the device, a cudaMalloc with the calling thread's capture mode
// relaxed for it, so it may also be inside a stream capture: reduce_common.cuh); other
// reduces use the tile state tally keeps per (device, stream) for the single-pass scans
// (device/single_pass/tile_state.cuh), or, while the stream is being captured, a
// stream-ordered allocation of the call zeroed by a clear kernel (a graph may be replayed
// on any stream). With options.storage.data != nullptr nothing is allocated on the
// device: the finish word or tile state lives in the caller's storage, zeroed on
// options.stream by a clear kernel whose launch overlaps the reduce's
// (dependent_launch.cuh; 8 bytes for the word, the state's size otherwise), so the
// storage may hold anything. This is the form to capture in a CUDA graph (reduce_into;
// reduce waits on the host). Too small storage throws std::invalid_argument naming reduce_storage_bytes.
// reduce (returning a value) has its kernel write the result into a slot of pinned host
// memory that tally keeps per host thread and accumulator type (reduce_common.cuh,
// host_result_slot: a cudaHostAlloc by the thread's first reduce of that type, with or
// without caller storage).
//
// reduce's wait (reduce_common.cuh, wait_for_result): the finishing block writes the value
// and then the call's sequence number; the host returns the value as soon as the number
// is there. When reduce returns, everything queued on options.stream before it has
// finished (the kernel ran after it) and the whole input has been read, but the kernel
// itself may still be exiting and storage the call allocated is freed after it,
// stream-ordered: synchronise the stream where it must be idle (before cudaDeviceReset,
// say). Under the device's default scheduling the thread spins on the number (as
// cudaStreamSynchronize does), under cudaDeviceScheduleYield it yields between reads, and
// under cudaDeviceScheduleBlockingSync it synchronises the stream instead. A fault in the
// kernel, or in work queued before it, is found by a cudaStreamQuery every 50 us of the
// wait and thrown as tally::error.
//
// The course's reductions, for teaching and measurement (each in its own header in
// device/multi_pass/, documented there and in docs/algorithms.md), all asynchronous and
// writing to *out like reduce_into:
//   tally::reduction::tree(in, n, out, init, op, options)      one launch per level, one
//                                                               thread per pair
//   tally::reduction::block(...)                                each launch shrinks by 256
//   tally::reduction::chunked(...)                              Brent: fixed threads, chunks,
//                                                               block reduce, then 1 block;
//                                                               strided for commutative ops,
//                                                               consecutive otherwise
//   tally::reduction::chunked_consecutive(...)                  the in-order cut, any op
//   tally::reduction::atomic(...)                               one atomic per element into
//                                                               *out: plus/min/max/bit ops on
//                                                               4/8-byte integers, plus on
//                                                               float/double; out must be an
//                                                               Acc*; anything else does not
//                                                               compile. Not deterministic:
//                                                               throws std::invalid_argument
//                                                               for float with deterministic.
//   tally::reduction::single_pass(...)                          what reduce_into uses
//   Teaching baselines (multi_pass/naive_reduction.cuh, shared_reduction.cuh):
//   tally::reduction::naive(...)                                one launch per level of a
//                                                               global-memory tree, n threads
//                                                               each (i % 2s == 0 adds i + s)
//   tally::reduction::shared_divergent(...)                     shared-memory tree per block,
//                                                               t % (2s) == 0 (Harris kernel 1)
//   tally::reduction::shared_convergent(...)                    shared-memory tree per block,
//                                                               t < s (Harris kernel 3)
//   tally::reduction::run(algorithm, ...)                       any of them chosen at run time
//                                                               (atomic where unsupported:
//                                                               std::invalid_argument)
//   tally::reduction::storage_bytes<In, Init, Op>(algorithm, n, options)
//
// Errors: n < 0, a null `in` with n > 0, a null `out`, too small storage ->
// std::invalid_argument naming the function and argument; a CUDA failure -> tally::error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/accumulator.hpp"
#include "tally/core/arg_operators.hpp"
#include "tally/core/commutative.hpp"
#include "tally/core/error.hpp"
#include "tally/core/mssp.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/pointer_check.cuh"
#include "tally/device/detail/reduce_common.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/multi_pass/atomic_reduction.cuh"
#include "tally/device/multi_pass/block_reduction.cuh"
#include "tally/device/multi_pass/chunked_reduction.cuh"
#include "tally/device/multi_pass/naive_reduction.cuh"
#include "tally/device/multi_pass/shared_reduction.cuh"
#include "tally/device/multi_pass/tree_reduction.cuh"
#include "tally/device/single_pass/reduce.cuh"

namespace tally {

namespace reduction {

// The reductions of the course notes (Oancea & Henriksen), and tally's single pass.
enum class algorithm {
  tree,                 // one launch per level, one thread per pair
  block,                // each launch reduces blocks of 256 consecutive elements
  chunked,              // Brent: strided chunks (commutative ops) or consecutive, 2 launches
  chunked_consecutive,  // Brent with the in-order cut for every operator, 2 launches
  atomic,               // one hardware atomic per element into one location
  single_pass,          // chunked + last-block finish: one launch (tally::reduce)
  // Teaching baselines (tally::reduce never uses them):
  naive,                // n threads per level of a global-memory tree, one launch per level
  shared_divergent,     // shared-memory tree per block, interleaved t % (2s) == 0 (Harris 1)
  shared_convergent,    // shared-memory tree per block, sequential t < s (Harris 3)
};

inline constexpr algorithm all_algorithms[] = {
    algorithm::tree,   algorithm::block,       algorithm::chunked,
    algorithm::chunked_consecutive,            algorithm::atomic,
    algorithm::single_pass,                    algorithm::naive,
    algorithm::shared_divergent,               algorithm::shared_convergent};

inline const char* algorithm_name(algorithm a) {
  switch (a) {
    case algorithm::tree: return "tree";
    case algorithm::block: return "block";
    case algorithm::chunked: return "chunked";
    case algorithm::chunked_consecutive: return "chunked_consecutive";
    case algorithm::atomic: return "atomic";
    case algorithm::single_pass: return "single_pass";
    case algorithm::naive: return "naive";
    case algorithm::shared_divergent: return "shared_divergent";
    case algorithm::shared_convergent: return "shared_convergent";
  }
  return "?";
}

// Whether algorithm::atomic exists for Op on the accumulator type Acc.
template <class Op, class Acc>
inline constexpr bool supports_atomic_v = detail::reduction::atomic::supported_v<Op, Acc>;

}  // namespace reduction

namespace detail::reduction {

using tally::reduction::algorithm;

// The pieces of temporary storage of one call.
template <class Acc>
struct reduce_pieces {
  Acc* a = nullptr;             // partials (chunked), or the first level buffer
  Acc* b = nullptr;             // the second level buffer (tree, block)
  unsigned long long* word = nullptr;  // single pass, packed finish, caller storage: the word
  unsigned char* state = nullptr;      // single pass, descriptor finish, in this storage
};

// The single pass's finish (single_pass/reduce.cuh): one packed word, or a tile state.
template <class Acc, class Op>
inline constexpr bool packed_finish_v = single_pass::packed_finish_v<Op, Acc>;

// The grid of the algorithms whose grid depends on the device (0: not applicable).
template <algorithm Algo, class Acc, class In, class Op>
int grid_of(const char* function, std::int64_t n) {
  if constexpr (Algo == algorithm::chunked) {
    return chunked::grid<true, Acc, In, Op>(function, n);
  } else if constexpr (Algo == algorithm::chunked_consecutive) {
    return chunked::grid<false, Acc, In, Op>(function, n);
  } else if constexpr (Algo == algorithm::single_pass) {
    // Out = Acc* for the occupancy query whatever the call's Out, so that the storage query
    // (which does not know Out) sees the same grid as the call.
    return single_pass::grid<Acc, In, Acc*, Op>(function, n);
  } else {
    (void)function, (void)n;
    return 0;
  }
}

// The same sequence of take() calls sizes the storage (null base) and hands it out.
// in_storage: the single pass keeps its finish word or tile state in this storage (caller
// storage, or a call-owned allocation while a graph is captured) instead of tally's ring
// or per-stream state.
template <algorithm Algo, class Acc, class Op>
reduce_pieces<Acc> carve(storage_carver& c, std::int64_t n, int grid, bool in_storage) {
  reduce_pieces<Acc> p;
  if constexpr (Algo == algorithm::tree) {
    tree::carve(c, n, p.a, p.b);
  } else if constexpr (Algo == algorithm::naive) {
    naive::carve(c, n, p.a);
  } else if constexpr (Algo == algorithm::shared_divergent ||
                       Algo == algorithm::shared_convergent) {
    shared_tree::carve(c, n, p.a, p.b);
  } else if constexpr (Algo == algorithm::block) {
    block_level::carve(c, n, p.a, p.b);
  } else if constexpr (Algo == algorithm::chunked || Algo == algorithm::chunked_consecutive) {
    p.a = c.take<Acc>(static_cast<std::size_t>(grid));
  } else if constexpr (Algo == algorithm::single_pass) {
    if (grid > 1 && in_storage) {
      if constexpr (packed_finish_v<Acc, Op>) {
        p.word = c.take<unsigned long long>(1);
      } else {
        p.state = c.take<unsigned char>(
            ::tally::detail::single_pass::state_bytes<Acc, single_pass::finish_spacing>(grid));
      }
    }
  }
  return p;
}

template <algorithm Algo, class Acc, class In, class Op>
std::size_t storage_bytes(const char* function, std::int64_t n) {
  if (n == 0) return 0;
  storage_carver sizer;
  (void)carve<Algo, Acc, Op>(sizer, n, grid_of<Algo, Acc, In, Op>(function, n), true);
  return with_alignment_slack(sizer.used());
}

template <class Acc, class Out, class Op>
inline constexpr bool atomic_ok_v =
    tally::reduction::supports_atomic_v<Op, Acc> && std::is_same_v<Out, Acc*>;

// Launches algorithm Algo on n >= 1 elements into *out (all but the single pass, which
// with_storage launches with its finish target).
template <algorithm Algo, class Acc, class In, class Out, class Op>
void launch(const char* function, In in, std::int64_t n, Out out, Acc init, Op op, int grid,
            const reduce_pieces<Acc>& p, cudaStream_t stream) {
  if constexpr (Algo == algorithm::tree) {
    tree::run(function, in, n, out, init, op, p.a, p.b, stream);
  } else if constexpr (Algo == algorithm::naive) {
    naive::run(function, in, n, out, init, op, p.a, stream);
  } else if constexpr (Algo == algorithm::shared_divergent) {
    shared_tree::run<shared_tree::indexing::divergent>(function, in, n, out, init, op, p.a, p.b,
                                                       stream);
  } else if constexpr (Algo == algorithm::shared_convergent) {
    shared_tree::run<shared_tree::indexing::convergent>(function, in, n, out, init, op, p.a, p.b,
                                                        stream);
  } else if constexpr (Algo == algorithm::block) {
    block_level::run(function, in, n, out, init, op, p.a, p.b, stream);
  } else if constexpr (Algo == algorithm::chunked) {
    chunked::run<true>(function, in, n, out, init, op, grid, p.a, stream);
  } else if constexpr (Algo == algorithm::chunked_consecutive) {
    chunked::run<false>(function, in, n, out, init, op, grid, p.a, stream);
  } else {
    static_assert(Algo == algorithm::atomic);
    static_assert(atomic_ok_v<Acc, Out, Op>,
                  "tally::reduction::atomic: needs a hardware atomic for the operator and "
                  "accumulator type, and an output of type Acc*");
    atomic::run(function, in, n, out, init, op, stream);
  }
}

// The single pass: prepares the finish target, then launches. With grid > 1 the target is
//   packed finish:      a word of the caller's storage (it may hold anything: zeroed by
//                       a clear kernel whose launch overlaps the kernel's, run() in
//                       single_pass/reduce.cuh), else a word of tally's ring (zero,
//                       and left zero by the last call on it);
//   descriptor finish:  a tile state in this call's storage (caller storage, or a
//                       call-owned allocation while the stream is captured: a graph may be
//                       replayed on any stream), zeroed by a clear kernel likewise, else
//                       the stream's reusable tile state (tile_state_registry: no clear,
//                       no allocation; the lease's lock is held until the kernel is queued).
template <class Acc, class In, class Out, class Op>
void launch_single_pass(const char* function, In in, std::int64_t n, Out out, Acc init, Op op,
                        int grid, const reduce_pieces<Acc>& p, bool in_storage,
                        cudaStream_t stream) {
  namespace sp = ::tally::detail::single_pass;
  single_pass::finish_target<Acc> target;
  if (grid == 1) {
    single_pass::run(function, in, n, out, init, op, grid, target, stream);
  } else if constexpr (packed_finish_v<Acc, Op>) {
    if (in_storage) {
      target.word = p.word;
      target.after_clear = true;
    } else {
      target.word = finish_word(function);
    }
    single_pass::run(function, in, n, out, init, op, grid, target, stream);
  } else if (in_storage) {
    target.state = single_pass::finish_state<Acc>::at(p.state, grid);
    target.after_clear = true;
    single_pass::run(function, in, n, out, init, op, grid, target, stream);
  } else {
    const auto lease = sp::tile_state_registry::instance().acquire(
        function, stream, grid, sp::state_layout<Acc, single_pass::finish_spacing>,
        [](std::int64_t capacity) {
          return sp::state_bytes<Acc, single_pass::finish_spacing>(capacity);
        });
    target.state = single_pass::finish_state<Acc>::at(lease.data, lease.capacity);
    single_pass::run(function, in, n, out, init, op, grid, target, stream);
  }
}

// Allocates (or checks the caller's) storage and launches. Storage this call allocated is
// given back stream-ordered when it returns: after the kernel, whatever the host does next.
// `known_not_captured`: the caller has already asked whether the stream is being captured
// (the answer was no), so this call does not ask again.
template <algorithm Algo, class Acc, class In, class Out, class Op>
void with_storage(const char* function, const char* query, In in, std::int64_t n, Out out,
                  Acc init, Op op, const options& o, bool known_not_captured = false) {
  const cudaStream_t stream = o.stream;
  const int grid = grid_of<Algo, Acc, In, Op>(function, n);
  bool in_storage = o.storage.data != nullptr;
  if constexpr (Algo == algorithm::single_pass && !packed_finish_v<Acc, Op>) {
    if (!in_storage && grid > 1 && !known_not_captured) {
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      TALLY_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture), function);
      in_storage = capture != cudaStreamCaptureStatusNone;
    }
  }
  storage_carver sizer;
  (void)carve<Algo, Acc, Op>(sizer, n, grid, in_storage);
  scoped_storage storage(function, query, o.storage.data, o.storage.bytes,
                         with_alignment_slack(sizer.used()), stream);
  storage_carver carver(storage.aligned());
  reduce_pieces<Acc> p = carve<Algo, Acc, Op>(carver, n, grid, in_storage);
  if constexpr (Algo == algorithm::single_pass) {
    launch_single_pass(function, in, n, out, init, op, grid, p, in_storage, stream);
  } else {
    launch<Algo>(function, in, n, out, init, op, grid, p, stream);
  }
}

template <algorithm Algo, class Acc, class In, class Out, class Op>
void reduce_into(const char* function, const char* query, In in, std::int64_t n, Out out,
                 Acc init, Op op, const options& o) {
  if (n == 0) {
    write_value_kernel<<<1, 1, 0, o.stream>>>(out, init);
    TALLY_CUDA_CHECK_LAUNCH("write_value_kernel", function);
    return;
  }
  with_storage<Algo>(function, query, in, n, out, init, op, o);
}

template <algorithm Algo, class Acc, class In, class Op>
Acc reduce_value(const char* function, const char* query, In in, std::int64_t n, Acc init, Op op,
                 const options& o) {
  static_assert(std::is_trivially_copyable_v<Acc>, "tally::reduce: Acc must be trivially copyable");
  if (n == 0) return init;
  // A graph cannot hand a value back to the host: refuse before anything is queued, so
  // that the capture goes on undisturbed.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TALLY_CUDA_CHECK(cudaStreamIsCapturing(o.stream, &capture), function);
  if (capture != cudaStreamCaptureStatusNone) {
    throw_invalid(function, "options.stream",
                  "is being captured into a CUDA graph: reduce returns its value to the host, "
                  "which a graph cannot do (capture reduce_into instead)");
  }
  // The kernel writes the result and this call's number into the thread's pinned slot
  // (reduce_common.cuh); the host waits for the number, not for the stream.
  const host_result_writer<Acc> result = host_result_slot<Acc>(function);
  with_storage<Algo>(function, query, in, n, result, init, op, o, /*known_not_captured=*/true);
  return wait_for_result(function, o.stream, result);
}

template <class Out>
void check_out(const char* function, const Out& out) {
  if constexpr (std::is_pointer_v<Out>) {
    if (out == nullptr) throw_invalid(function, "out", "is a null pointer");
    check_device_pointer(function, "out", out, 1);
  }
}

template <algorithm Algo, class In, class Out, class Init, class Op>
void checked_into(const char* function, In in, std::int64_t n, Out out, Init init, Op op,
                  const options& o) {
  check_count(function, n);
  check_device_pointer(function, "in", in, n);
  check_out(function, out);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  if constexpr (Algo == algorithm::atomic) {
    if (o.deterministic && std::is_floating_point_v<acc_t>) {
      throw_invalid(function, "options.deterministic",
                    "cannot be met: atomic floating-point reductions add in arrival order");
    }
  }
  reduce_into<Algo>(function, "reduction::storage_bytes", in, n, out, static_cast<acc_t>(init), op,
                    o);
}

}  // namespace detail::reduction

// ---- the public reduce --------------------------------------------------------------------

template <class In, class Init, class Op = plus>
exclusive_accumulator_t<Op, Init, input_value_t<In>> reduce(In in, std::int64_t n, Init init,
                                                            Op op = {}, const options& o = {}) {
  constexpr const char* function = "reduce";
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  return detail::reduction::reduce_value<reduction::algorithm::single_pass>(
      function, "reduce_storage_bytes", in, n, static_cast<acc_t>(init), op, o);
}

template <class In, class Out, class Init, class Op = plus>
void reduce_into(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  constexpr const char* function = "reduce_into";
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::reduction::check_out(function, out);
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::reduction::reduce_into<reduction::algorithm::single_pass>(
      function, "reduce_storage_bytes", in, n, out, static_cast<acc_t>(init), op, o);
}

// Bytes of caller storage a reduce or reduce_into(In, n, ..., Init, Op, o) call needs
// (0: none; the value is for the current device).
template <class In, class Init, class Op = plus>
std::size_t reduce_storage_bytes(std::int64_t n, const options& o = {}) {
  constexpr const char* function = "reduce_storage_bytes";
  detail::check_count(function, n);
  (void)o;
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  return detail::reduction::storage_bytes<reduction::algorithm::single_pass, acc_t, In, Op>(
      function, n);
}

template <class In, class Init, class ReduceOp, class TransformOp>
auto transform_reduce(In in, std::int64_t n, Init init, ReduceOp reduce_op,
                      TransformOp transform_op, const options& o = {}) {
  detail::check_count("transform_reduce", n);
  detail::check_device_pointer("transform_reduce", "in", in, n);
  return tally::reduce(tally::make_transform_iterator(in, transform_op), n, init, reduce_op, o);
}

template <class In, class Out, class Init, class ReduceOp, class TransformOp>
void transform_reduce_into(In in, std::int64_t n, Out out, Init init, ReduceOp reduce_op,
                           TransformOp transform_op, const options& o = {}) {
  detail::check_count("transform_reduce_into", n);
  detail::check_device_pointer("transform_reduce_into", "in", in, n);
  tally::reduce_into(tally::make_transform_iterator(in, transform_op), n, out, init, reduce_op, o);
}

// The first minimum (maximum) and its index; {V{}, -1} for n == 0.
template <class In>
indexed<std::remove_cvref_t<input_value_t<In>>, std::int64_t> argmin(In in, std::int64_t n,
                                                                     const options& o = {}) {
  using value_t = std::remove_cvref_t<input_value_t<In>>;
  detail::check_count("argmin", n);
  detail::check_device_pointer("argmin", "in", in, n);
  return tally::reduce(indexed_iterator<In>(in), n, indexed<value_t, std::int64_t>{value_t{}, -1},
                arg_min{}, o);
}

template <class In>
indexed<std::remove_cvref_t<input_value_t<In>>, std::int64_t> argmax(In in, std::int64_t n,
                                                                     const options& o = {}) {
  using value_t = std::remove_cvref_t<input_value_t<In>>;
  detail::check_count("argmax", n);
  detail::check_device_pointer("argmax", "in", in, n);
  return tally::reduce(indexed_iterator<In>(in), n, indexed<value_t, std::int64_t>{value_t{}, -1},
                arg_max{}, o);
}

// The sum type max_segment_sum keeps: int64 for integers, double otherwise.
template <class T>
using mssp_sum_t = std::conditional_t<std::is_integral_v<T>, std::int64_t, double>;

template <class In>
mssp_sum_t<std::remove_cvref_t<input_value_t<In>>> max_segment_sum(In in, std::int64_t n,
                                                                   const options& o = {}) {
  using sum_t = mssp_sum_t<std::remove_cvref_t<input_value_t<In>>>;
  detail::check_count("max_segment_sum", n);
  detail::check_device_pointer("max_segment_sum", "in", in, n);
  return tally::reduce(tally::make_transform_iterator(in, mssp_map<sum_t>{}), n,
                       identity<mssp_op, mssp_value<sum_t>>(), mssp_op{}, o)
      .mss;
}

// ---- the course's reductions ----------------------------------------------------------------
namespace reduction {

template <class In, class Out, class Init, class Op = plus>
void tree(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  detail::reduction::checked_into<algorithm::tree>("reduction::tree", in, n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void block(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  detail::reduction::checked_into<algorithm::block>("reduction::block", in, n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void chunked(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  detail::reduction::checked_into<algorithm::chunked>("reduction::chunked", in, n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void chunked_consecutive(In in, std::int64_t n, Out out, Init init, Op op = {},
                         const options& o = {}) {
  detail::reduction::checked_into<algorithm::chunked_consecutive>(
      "reduction::chunked_consecutive", in, n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void atomic(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  detail::reduction::checked_into<algorithm::atomic>("reduction::atomic", in, n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void single_pass(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  detail::reduction::checked_into<algorithm::single_pass>("reduction::single_pass", in, n, out,
                                                          init, op, o);
}

// ---- teaching baselines ----
template <class In, class Out, class Init, class Op = plus>
void naive(In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  detail::reduction::checked_into<algorithm::naive>("reduction::naive", in, n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void shared_divergent(In in, std::int64_t n, Out out, Init init, Op op = {},
                      const options& o = {}) {
  detail::reduction::checked_into<algorithm::shared_divergent>("reduction::shared_divergent", in,
                                                               n, out, init, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void shared_convergent(In in, std::int64_t n, Out out, Init init, Op op = {},
                       const options& o = {}) {
  detail::reduction::checked_into<algorithm::shared_convergent>("reduction::shared_convergent",
                                                                in, n, out, init, op, o);
}

// Kernel launches of the one-launch-per-level algorithms for n >= 1 elements, the finish
// included (the step counts of the material, which the tests check):
//   naive, tree: ceil(log2 n) + 1;   block, shared_divergent, shared_convergent:
//   ceil(log_256 n) + 1;   -1 for the others (their launches do not follow the tree).
constexpr std::int64_t launch_count(algorithm a, std::int64_t n) {
  switch (a) {
    case algorithm::naive:
    case algorithm::tree: return detail::reduction::naive::launches(n);
    case algorithm::block:
    case algorithm::shared_divergent:
    case algorithm::shared_convergent: return detail::reduction::shared_tree::launches(n);
    default: return -1;
  }
}

// Any of the above chosen at run time. algorithm::atomic where it does not exist (see
// supports_atomic_v; out must be an Acc*) throws std::invalid_argument.
template <class In, class Out, class Init, class Op = plus>
void run(algorithm a, In in, std::int64_t n, Out out, Init init, Op op = {}, const options& o = {}) {
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  switch (a) {
    case algorithm::tree: return tree(in, n, out, init, op, o);
    case algorithm::block: return block(in, n, out, init, op, o);
    case algorithm::chunked: return chunked(in, n, out, init, op, o);
    case algorithm::chunked_consecutive: return chunked_consecutive(in, n, out, init, op, o);
    case algorithm::atomic:
      if constexpr (detail::reduction::atomic_ok_v<acc_t, Out, Op>) {
        return atomic(in, n, out, init, op, o);
      } else {
        detail::throw_invalid("reduction::run", "algorithm",
                              "is atomic, which has no hardware atomic for this operator and "
                              "type (or out is not an Acc*)");
      }
    case algorithm::single_pass: return single_pass(in, n, out, init, op, o);
    case algorithm::naive: return naive(in, n, out, init, op, o);
    case algorithm::shared_divergent: return shared_divergent(in, n, out, init, op, o);
    case algorithm::shared_convergent: return shared_convergent(in, n, out, init, op, o);
  }
  detail::throw_invalid("reduction::run", "algorithm", "is not a reduction::algorithm value");
}

// Bytes of caller storage algorithm `a` needs for n elements of In reduced from Init with
// Op (0: none; for the current device).
template <class In, class Init, class Op = plus>
std::size_t storage_bytes(algorithm a, std::int64_t n, const options& o = {}) {
  constexpr const char* function = "reduction::storage_bytes";
  detail::check_count(function, n);
  (void)o;
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  namespace dr = detail::reduction;
  switch (a) {
    case algorithm::tree: return dr::storage_bytes<algorithm::tree, acc_t, In, Op>(function, n);
    case algorithm::block: return dr::storage_bytes<algorithm::block, acc_t, In, Op>(function, n);
    case algorithm::chunked:
      return dr::storage_bytes<algorithm::chunked, acc_t, In, Op>(function, n);
    case algorithm::chunked_consecutive:
      return dr::storage_bytes<algorithm::chunked_consecutive, acc_t, In, Op>(function, n);
    case algorithm::atomic: return 0;
    case algorithm::single_pass:
      return dr::storage_bytes<algorithm::single_pass, acc_t, In, Op>(function, n);
    case algorithm::naive: return dr::storage_bytes<algorithm::naive, acc_t, In, Op>(function, n);
    case algorithm::shared_divergent:
      return dr::storage_bytes<algorithm::shared_divergent, acc_t, In, Op>(function, n);
    case algorithm::shared_convergent:
      return dr::storage_bytes<algorithm::shared_convergent, acc_t, In, Op>(function, n);
  }
  detail::throw_invalid(function, "algorithm", "is not a reduction::algorithm value");
}

}  // namespace reduction
}  // namespace tally
