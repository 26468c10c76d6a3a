// tally/device/detail/segmented_scan.cuh -- segmented scans on the GPU: the flag-augmented
// operator (core/segmented.hpp) run inside the single-pass scan (single_pass_scan.cuh).
//
// One algorithm for every segment length: the decoupled look-back scan of
// (head flag, value) pairs under segmented_op. Each tile is one block whatever the
// segments look like, so one segment of n elements and n segments of one element cost
// the same pass; a tile's descriptor carries (has a head, reduction since its last head)
// and the look-back combines descriptors exactly as for an ordinary scan.
//
// The pairs are never stored. The scan kernel reads its input through `flagged_input`,
// which builds each pair on the fly from the values and a HEAD SOURCE, and writes through
// `flagged_output`, which stores only the value. The head sources:
//   flag_heads     head(i) = flags[i] != 0                 (scan_by_flags)
//   key_heads      head(i) = !equal(keys[i-1], keys[i])    (scan_by_key)
//   uniform_heads  head(i) = i % len == 0                  (batched along the last axis)
//   bitmap_heads   bit i of a bitmap built from CSR offsets by heads_bitmap_kernel below
//                  (segmented_scan, segmented_reduce): one extra pass over the offsets
//                  writing n / 8 bytes, then the scan reads n / 8 bytes of bits
// and head(0) is always true (the first element starts a segment; its flag is not read).
//
// Exclusive scans (every segment starts again at init). With y_i = (h_i, h_i ? init op x_i
// : x_i), the ordinary EXCLUSIVE scan of y under segmented_op gives, at a non-head i in the
// segment starting at s, init op x_s op ... op x_{i-1}: exactly the segmented exclusive
// result. At a head the exclusive scan holds the previous segment's value, which the output
// replaces by init (flagged_output re-evaluates head(i) when it stores: a second read of a
// flag or key the tile has just read, served by L1/L2). The kernel's exclusive path shifts
// values within registers, so in-place scans stay safe (no read of x_{i-1} from memory).
// segmented_reduce uses the same y with an INCLUSIVE scan: the last element of segment k
// then holds init op x_s op ... op x_e, which a gather kernel copies to out[k].
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/device/detail/chained.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/decoupled_lookback.cuh"
#include "tally/device/detail/single_pass_scan.cuh"
#include "tally/device/detail/storage.cuh"

namespace tally::detail::segmented {

// ---- head sources ---------------------------------------------------------------------------
template <class Flags>
struct flag_heads {
  Flags flags;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return i == 0 || static_cast<bool>(flags[i]);
  }
};

template <class Keys, class Equal>
struct key_heads {
  Keys keys;
  Equal equal;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return i == 0 || !static_cast<bool>(equal(keys[i - 1], keys[i]));
  }
};

// Segments of `len` elements. Index is uint32 when n < 2^32 (a 32-bit remainder is a
// few instructions, a 64-bit one a few dozen).
template <class Index>
struct uniform_heads {
  Index len;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return static_cast<Index>(i) % len == 0;
  }
};

struct bitmap_heads {
  const std::uint32_t* words;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return i == 0 || ((__ldg(words + (i >> 5)) >> (i & 31)) & 1u) != 0;
  }
};

// The elements a scan may read and write: all of them, or [offsets[0], offsets[S])
// clamped to [0, n) for the offsets forms (elements outside are neither read nor written).
struct everything {
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t) const { return true; }
};

template <class Offsets>
struct offsets_range {
  Offsets offsets;
  std::int64_t num_segments;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    // Two loads of the same two words by every thread: broadcast from L1.
    return i >= static_cast<std::int64_t>(offsets[0]) &&
           i < static_cast<std::int64_t>(offsets[num_segments]);
  }
};

// ---- the pair iterators -------------------------------------------------------------------
// Seeded: y_i = (h_i, h_i ? init op x_i : x_i) (exclusive scans and segmented_reduce, see
// the top of the file); otherwise y_i = (h_i, x_i).
template <bool Seeded, class Acc, class In, class Heads, class Range, class Op>
struct flagged_input {
  In in;
  Heads heads;
  Range range;
  Acc init;  // read only when Seeded
  Op op;
  TALLY_DEVICE TALLY_FORCEINLINE flagged<Acc> operator[](std::int64_t i) const {
    if constexpr (!std::is_same_v<Range, everything>) {
      // An element outside the range starts a segment of its own whose value is never
      // stored (Acc{}: the offsets forms need a default-constructible accumulator).
      if (!range(i)) return flagged<Acc>{true, Acc{}};
    }
    const bool head = heads(i);
    Acc x = static_cast<Acc>(in[i]);
    if constexpr (Seeded) {
      if (head) x = static_cast<Acc>(op(init, x));
    }
    return flagged<Acc>{head, x};
  }
};

// Stores the value of each pair: the scan's value, or init at a head of an exclusive scan.
template <bool Exclusive, class Acc, class Out, class Heads, class Range>
struct flagged_output {
  Out out;
  Heads heads;
  Range range;
  Acc init;  // read only when Exclusive

  struct proxy {
    Out out;
    Heads heads;
    Range range;
    Acc init;
    std::int64_t i;
    TALLY_DEVICE TALLY_FORCEINLINE void operator=(const flagged<Acc>& v) const {
      if (!range(i)) return;
      if constexpr (Exclusive) {
        out[i] = heads(i) ? init : v.value;
      } else {
        out[i] = v.value;
      }
    }
  };
  TALLY_DEVICE TALLY_FORCEINLINE proxy operator[](std::int64_t i) const {
    return proxy{out, heads, range, init, i};
  }
};

// ---- tuning ---------------------------------------------------------------------------------
// The pair of a 4-byte value is 8 bytes (a 16-byte descriptor word), read with scalar
// loads: 16 rows of 32 lanes per warp (tiles of 4096 elements, as many bytes of values
// as the plain scan's 16 KiB tiles); 8-byte values 8 rows; larger ones the pair's default.
template <class Acc>
constexpr single_pass::single_pass_tuning tuning() {
  if constexpr (sizeof(Acc) <= 4) {
    return {256, 16, 1};
  } else if constexpr (sizeof(Acc) <= 8) {
    return {256, 8, 1};
  } else {
    return single_pass::default_single_pass_tuning<flagged<Acc>>();
  }
}

// ---- the driver -----------------------------------------------------------------------------
// The strategies the segmented forms accept: the single-pass ones (the pairs are scanned
// by the single-pass tile pipeline), with the block algorithm it uses.
inline void check_options(const char* function, const options& o) {
  if (o.strategy != scan_strategy::automatic && o.strategy != scan_strategy::decoupled_lookback &&
      o.strategy != scan_strategy::chained) {
    throw_invalid(function, "options.strategy",
                  "must be automatic, decoupled_lookback or chained for segmented and batched "
                  "scans (they run the flag-augmented operator in the single-pass scan)");
  }
  if (o.block != block_scan::automatic && o.block != block_scan::warp_scans) {
    throw_invalid(function, "options.block",
                  "must be automatic or warp_scans for segmented and batched scans");
  }
  if (o.storage.data != nullptr) {
    throw_invalid(function, "options.storage",
                  "caller storage is not supported by the segmented and batched scans yet "
                  "(they use tally's per-stream state buffers and memory pool)");
  }
}

// Scans y (built from in and heads) over [0, n) into out with segmented_op.
//   Exclusive: the segmented exclusive scan from init; else the inclusive one, seeded by
//   init at every head when Seeded (segmented_reduce's partial results).
template <bool Exclusive, bool Seeded, class Acc, class In, class Out, class Heads,
          class Range = everything, class Op>
void scan(const char* function, In in, Out out, std::int64_t n, Heads heads, Acc init, Op op,
          const options& o, Range range = {}) {
  using pair = flagged<Acc>;
  static_assert(std::is_same_v<Range, everything> || std::is_default_constructible_v<Acc>,
                "the offsets forms need a default-constructible accumulator type");
  const flagged_input<Exclusive || Seeded, Acc, In, Heads, Range, Op> input{in, heads, range,
                                                                           init, op};
  const flagged_output<Exclusive, Acc, Out, Heads, Range> output{out, heads, range, init};
  const seed_value<pair, Exclusive> seed = make_seed<pair, Exclusive>(pair{true, init});
  const segmented_op<Op> pair_op{op};
  constexpr single_pass::single_pass_tuning tune = tuning<Acc>();
  constexpr const char* query = "(none: segmented scans take no caller storage)";
  if (o.strategy == scan_strategy::chained) {
    single_pass::scan<chained::protocol, Exclusive, pair, tune>(function, query, input, output, n,
                                                                seed, pair_op, o);
  } else {
    single_pass::scan<decoupled_lookback::protocol, Exclusive, pair, tune>(
        function, query, input, output, n, seed, pair_op, o);
  }
}

// ---- offsets -> head bitmap ---------------------------------------------------------------
// One block per 8192 elements (256 words of 32 bits, one per thread). Two threads find the
// offsets that fall in the block's range by binary search (offsets[0..S) are the heads;
// offsets[S] is the end, not a head), the block sets their bits in shared memory with
// shared atomics (several offsets may share a word), and each thread writes one word:
// every word is written once, so no memset is needed and no global atomics are used.
// Offsets outside [0, n) are ignored, which keeps an invalid offsets list memory-safe.
inline constexpr int bitmap_threads = 256;
inline constexpr std::int64_t bitmap_block_items = bitmap_threads * 32;

template <class Offsets>
__global__ void __launch_bounds__(bitmap_threads)
    heads_bitmap_kernel(Offsets offsets, std::int64_t num_segments, std::int64_t n,
                        std::uint32_t* words) {
  __shared__ std::uint32_t bits[bitmap_threads];
  __shared__ std::int64_t bounds[2];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * bitmap_block_items;
  bits[threadIdx.x] = 0;
  if (threadIdx.x < 2) {
    // the first k in [0, S) with offsets[k] >= first (thread 0) / >= first + block (thread 1)
    const std::int64_t target = first + (threadIdx.x == 0 ? 0 : bitmap_block_items);
    std::int64_t lo = 0, hi = num_segments;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(offsets[mid]) < target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    bounds[threadIdx.x] = lo;
  }
  __syncthreads();  // the zeroed words and the bounds are visible to every thread
  for (std::int64_t k = bounds[0] + threadIdx.x; k < bounds[1]; k += bitmap_threads) {
    const auto p = static_cast<std::int64_t>(offsets[k]) - first;
    if (p >= 0 && p < bitmap_block_items && first + p < n) {
      atomicOr(&bits[p >> 5], 1u << (p & 31));
    }
  }
  __syncthreads();  // every bit is set before the words are written out
  const std::int64_t w = first / 32 + threadIdx.x;
  if (w * 32 < n) words[w] = bits[threadIdx.x];
}

inline std::size_t bitmap_bytes(std::int64_t n) {
  return static_cast<std::size_t>(ceil_div(n, 32)) * sizeof(std::uint32_t);
}

template <class Offsets>
void build_bitmap(const char* function, Offsets offsets, std::int64_t num_segments, std::int64_t n,
                  std::uint32_t* words, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(ceil_div(n, bitmap_block_items));
  heads_bitmap_kernel<<<grid, bitmap_threads, 0, stream>>>(offsets, num_segments, n, words);
  TALLY_CUDA_CHECK_LAUNCH("heads_bitmap_kernel", function);
}

// ---- segmented_reduce's gather ------------------------------------------------------------
// out[k] = the seeded inclusive scan at the last element of segment k, or init for an
// empty segment. Offsets are clamped to [0, n] so that an invalid list stays memory-safe.
template <class Acc, class Offsets, class Out>
__global__ void gather_segment_ends_kernel(const Acc* scanned, std::int64_t n, Offsets offsets,
                                           std::int64_t num_segments, Out out, Acc init) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= num_segments) return;
  auto clamp = [n](std::int64_t v) { return v < 0 ? std::int64_t{0} : v > n ? n : v; };
  const std::int64_t begin = clamp(static_cast<std::int64_t>(offsets[k]));
  const std::int64_t end = clamp(static_cast<std::int64_t>(offsets[k + 1]));
  out[k] = end > begin ? scanned[end - 1] : init;
}

}  // namespace tally::detail::segmented
