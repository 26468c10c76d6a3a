// tally/device/segmented/pairs_scan.cuh -- segmented scans on the GPU: the flag-augmented
// operator (core/segmented.hpp) run inside the single-pass scan (single_pass/tile_pipeline.cuh).
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
//                  (segmented_scan, segmented_reduce): a clear of n / 8 bytes and one
//                  pass over the offsets, then the scan reads n / 8 bytes of bits
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

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/single_pass/chained.cuh"
#include "tally/device/single_pass/decoupled_lookback.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::segmented {

// ---- runs of Vec consecutive elements ----------------------------------------------------
// The vectorised tile layout (single_pass/tile_pipeline.cuh) hands each lane Vec consecutive
// elements at an index that is a multiple of Vec. A run of 2, 4, 8 or 16 bytes is read
// or written as one access when the pointer allows it (run_aligned, checked on the host);
// any other run element by element.
template <std::size_t Bytes>
struct run_word {};
template <>
struct run_word<2> { using type = std::uint16_t; };
template <>
struct run_word<4> { using type = std::uint32_t; };
template <>
struct run_word<8> { using type = uint2; };
template <>
struct run_word<16> { using type = uint4; };

template <int Vec, class T>
inline constexpr bool one_access_run_v = requires { typename run_word<Vec * sizeof(T)>::type; };

template <int Vec, class T>
bool run_aligned(const T* p) {
  if constexpr (one_access_run_v<Vec, T>) {
    return reinterpret_cast<std::uintptr_t>(p) % (Vec * sizeof(T)) == 0;
  } else {
    return true;
  }
}

template <int Vec, class T>
TALLY_DEVICE TALLY_FORCEINLINE void load_run(const T* p, std::int64_t i, T (&x)[Vec]) {
  if constexpr (one_access_run_v<Vec, T>) {
    using word = typename run_word<Vec * sizeof(T)>::type;
    const word w = *reinterpret_cast<const word*>(p + i);
    std::memcpy(&x[0], &w, sizeof w);
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) x[k] = p[i + k];
  }
}

template <int Vec, class T>
TALLY_DEVICE TALLY_FORCEINLINE void store_run(T* p, std::int64_t i, const T (&x)[Vec]) {
  if constexpr (one_access_run_v<Vec, T>) {
    using word = typename run_word<Vec * sizeof(T)>::type;
    word w;
    std::memcpy(&w, &x[0], sizeof w);
    *reinterpret_cast<word*>(p + i) = w;
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) p[i + k] = x[k];
  }
}

// Reads x[k] = it[i + k]: one access for a pointer, element by element for an iterator.
template <int Vec, class T, class It>
TALLY_DEVICE TALLY_FORCEINLINE void read_run(const It& it, std::int64_t i, T (&x)[Vec]) {
  if constexpr (std::is_pointer_v<It>) {
    load_run<Vec>(static_cast<const T*>(it), i, x);
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) x[k] = it[i + k];
  }
}

template <int Vec, class It>
bool run_ready(const It& it) {
  if constexpr (std::is_pointer_v<It>) {
    return run_aligned<Vec>(static_cast<const std::remove_cv_t<std::remove_pointer_t<It>>*>(it));
  } else {
    return true;
  }
}

template <class It>
using element_t = std::remove_cv_t<std::remove_reference_t<decltype(*std::declval<It>())>>;

// ---- head sources ---------------------------------------------------------------------------
// Each gives head(i) for one element and, for the vectorised layout, heads<Vec>(i, h) for
// the run [i, i + Vec) (i a multiple of Vec), which reads the run's flags, keys or bitmap
// word with one access; vector_ready<Vec>() says on the host whether it may.
template <class Flags>
struct flag_heads {
  Flags flags;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return i == 0 || static_cast<bool>(flags[i]);
  }
  template <int Vec>
  TALLY_DEVICE TALLY_FORCEINLINE void heads(std::int64_t i, bool (&h)[Vec]) const {
    element_t<Flags> f[Vec];
    read_run<Vec>(flags, i, f);
#pragma unroll
    for (int k = 0; k < Vec; ++k) h[k] = static_cast<bool>(f[k]);
    h[0] = h[0] || i == 0;
  }
  template <int Vec>
  bool vector_ready() const {
    return run_ready<Vec>(flags);
  }
};

template <class Keys, class Equal>
struct key_heads {
  Keys keys;
  Equal equal;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return i == 0 || !static_cast<bool>(equal(keys[i - 1], keys[i]));
  }
  template <int Vec>
  TALLY_DEVICE TALLY_FORCEINLINE void heads(std::int64_t i, bool (&h)[Vec]) const {
    element_t<Keys> k[Vec];
    read_run<Vec>(keys, i, k);
    // the key before the run: the previous lane's last key, read again (an L1 hit)
    h[0] = i == 0 || !static_cast<bool>(equal(keys[i - 1], k[0]));
#pragma unroll
    for (int j = 1; j < Vec; ++j) h[j] = !static_cast<bool>(equal(k[j - 1], k[j]));
  }
  template <int Vec>
  bool vector_ready() const {
    return run_ready<Vec>(keys);
  }
};

// Segments of `len` elements. Index is uint32 when n < 2^32 (a 32-bit remainder is a
// few instructions, a 64-bit one a few dozen); a run takes one remainder.
template <class Index>
struct uniform_heads {
  Index len;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return static_cast<Index>(i) % len == 0;
  }
  template <int Vec>
  TALLY_DEVICE TALLY_FORCEINLINE void heads(std::int64_t i, bool (&h)[Vec]) const {
    Index m = static_cast<Index>(i) % len;  // position of i in its segment
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      h[k] = m == 0;
      m = m + 1 == len ? 0 : m + 1;
    }
  }
  template <int Vec>
  bool vector_ready() const {
    return true;
  }
};

struct bitmap_heads {
  const std::uint32_t* words;
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return i == 0 || ((__ldg(words + (i >> 5)) >> (i & 31)) & 1u) != 0;
  }
  template <int Vec>
  TALLY_DEVICE TALLY_FORCEINLINE void heads(std::int64_t i, bool (&h)[Vec]) const {
    static_assert(32 % Vec == 0, "a run lies within one bitmap word");
    const std::uint32_t bits = __ldg(words + (i >> 5)) >> (i & 31);
#pragma unroll
    for (int k = 0; k < Vec; ++k) h[k] = ((bits >> k) & 1u) != 0;
    h[0] = h[0] || i == 0;
  }
  template <int Vec>
  bool vector_ready() const {
    return true;
  }
};

// The elements a scan may read and write: all of them, or [offsets[0], offsets[S])
// clamped to [0, n) for the offsets forms (elements outside are neither read nor written).
// covers(i, Vec): the whole run [i, i + Vec) is inside.
struct everything {
  TALLY_DEVICE TALLY_FORCEINLINE bool operator()(std::int64_t) const { return true; }
  TALLY_DEVICE TALLY_FORCEINLINE bool covers(std::int64_t, int) const { return true; }
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
  TALLY_DEVICE TALLY_FORCEINLINE bool covers(std::int64_t i, int count) const {
    return i >= static_cast<std::int64_t>(offsets[0]) &&
           i + count <= static_cast<std::int64_t>(offsets[num_segments]);
  }
};

// ---- the pair iterators -------------------------------------------------------------------
// Seeded: y_i = (h_i, h_i ? init op x_i : x_i) (exclusive scans and segmented_reduce, see
// the top of the file); otherwise y_i = (h_i, x_i).
// Both are vector iterators (single_pass/tile_pipeline.cuh) of Vec items when the values are a
// pointer to Acc and Vec values make 16 bytes: a run's pairs come from one 16-byte load
// of values and the head source's run (4 bytes of uint8 flags for 4-byte values).
template <class Acc, class It, int Vec>
inline constexpr bool vector_values_v = [] {
  if constexpr (std::is_pointer_v<It>) {
    return Vec > 1 && Vec * sizeof(Acc) == 16 &&
           std::is_same_v<std::remove_cv_t<std::remove_pointer_t<It>>, Acc>;
  } else {
    return false;
  }
}();

template <bool Seeded, class Acc, class In, class Heads, class Range, class Op, int Vec>
struct flagged_input {
  static constexpr int vector_items = vector_values_v<Acc, In, Vec> ? Vec : 0;
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
  template <int V>
  TALLY_DEVICE TALLY_FORCEINLINE void load(std::int64_t i, flagged<Acc> (&y)[V]) const {
    if (!range.covers(i, V)) {  // a run at an end of the offsets' range
#pragma unroll
      for (int k = 0; k < V; ++k) y[k] = (*this)[i + k];
      return;
    }
    Acc x[V];
    load_run<V>(static_cast<const Acc*>(in), i, x);
    bool h[V];
    heads.template heads<V>(i, h);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if constexpr (Seeded) {
        if (h[k]) x[k] = static_cast<Acc>(op(init, x[k]));
      }
      y[k] = flagged<Acc>{h[k], x[k]};
    }
  }
  bool vector_ready() const {
    if constexpr (vector_items > 0) {
      return run_aligned<Vec>(static_cast<const Acc*>(in)) && heads.template vector_ready<Vec>();
    } else {
      return false;
    }
  }
};

// Stores the value of each pair: the scan's value, or init at a head of an exclusive scan.
template <bool Exclusive, class Acc, class Out, class Heads, class Range, int Vec>
struct flagged_output {
  static constexpr int vector_items = vector_values_v<Acc, Out, Vec> ? Vec : 0;
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
  template <int V>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const flagged<Acc> (&y)[V]) const {
    if (!range.covers(i, V)) {
#pragma unroll
      for (int k = 0; k < V; ++k) (*this)[i + k] = y[k];
      return;
    }
    Acc x[V];
#pragma unroll
    for (int k = 0; k < V; ++k) x[k] = y[k].value;
    if constexpr (Exclusive) {
      bool h[V];
      heads.template heads<V>(i, h);  // the run's heads again (L1 or L2)
#pragma unroll
      for (int k = 0; k < V; ++k) x[k] = h[k] ? init : x[k];
    }
    store_run<V>(static_cast<Acc*>(out), i, x);
  }
  bool vector_ready() const {
    if constexpr (vector_items > 0) {
      return run_aligned<Vec>(static_cast<const Acc*>(out)) &&
             (!Exclusive || heads.template vector_ready<Vec>());
    } else {
      return false;
    }
  }
};

// Pairs of exact values are exact: one kernel for options.deterministic too.
}  // namespace tally::detail::segmented

namespace tally::detail::single_pass {
template <class T>
struct exact_values<flagged<T>> : exact_values<T> {};
}  // namespace tally::detail::single_pass

namespace tally::detail::segmented {

// ---- tuning ---------------------------------------------------------------------------------
// 4- and 8-byte values: the vectorised layout (16 bytes of values per lane and row, see
// the pair iterators above), 128 threads x 8 rows: tiles of 4096 4-byte or 2048 8-byte
// values (16 KiB of values; the pairs in registers take twice that). What matters is the
// bytes in flight per SM, and registers limit the blocks (docs/performance.md, "Plans and
// thresholds").
// Without the vector accesses (iterators, unaligned pointers) the same tile is read in
// the scalar layout of 32 or 16 rows. Other sizes: the scalar layout, 16 rows of 256
// threads up to 4 bytes, else the pair's default.
template <class Acc>
constexpr single_pass::single_pass_tuning tuning() {
  if constexpr (sizeof(Acc) == 4 || sizeof(Acc) == 8) {
    return {128, 8, static_cast<int>(16 / sizeof(Acc))};
  } else if constexpr (sizeof(Acc) < 4) {
    return {256, 16, 1};
  } else {
    return single_pass::default_single_pass_tuning<flagged<Acc>>();
  }
}

// ---- the driver -----------------------------------------------------------------------------
// The strategies the segmented forms accept: the production look-back (every segmented
// kernel runs it), with the block algorithm it uses. The chained protocol is a textbook
// form of the plain scan only (tally::textbook::inclusive_scan).
inline void check_options(const char* function, const options& o) {
  if (o.strategy != scan_strategy::automatic && o.strategy != scan_strategy::decoupled_lookback) {
    throw_invalid(function, "options.strategy",
                  "must be automatic or decoupled_lookback for segmented and batched scans "
                  "(the chained and multi-pass strategies are textbook forms of the plain scan: "
                  "tally::textbook::inclusive_scan)");
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
  constexpr single_pass::single_pass_tuning tune = tuning<Acc>();
  const flagged_input<Exclusive || Seeded, Acc, In, Heads, Range, Op, tune.vec> input{
      in, heads, range, init, op};
  const flagged_output<Exclusive, Acc, Out, Heads, Range, tune.vec> output{out, heads, range,
                                                                          init};
  const seed_value<pair, Exclusive> seed = make_seed<pair, Exclusive>(pair{true, init});
  const segmented_op<Op> pair_op{op};
  constexpr const char* query = "(none: segmented scans take no caller storage)";
  single_pass::scan<decoupled_lookback::protocol, Exclusive, pair, tune>(function, query, input, output,
                                                                         n, seed, pair_op, o);
}

// ---- offsets -> head bitmap ---------------------------------------------------------------
// Bit offsets[k] is set for every k < S (offsets[S] is the end, not a head), in a bitmap
// that a clear kernel has zeroed first. How a thread takes the offsets, by the segments'
// mean length n / S:
//   - shorter than 8: a run of 32 consecutive offsets; it ORs the bits that fall in one
//     32-bit word together and sets them with one global atomicOr per word (sorted
//     offsets: one per word the run touches; about one atomic a run). Where the offsets
//     are a 16-byte aligned pointer to 4-byte integers, a warp's 32 runs (4 KiB) are
//     loaded together, 512 consecutive bytes an instruction, into shared memory, and each
//     lane reads its run back from there ("staged"): a lane loading its own run with
//     16-byte loads would put the 32 lanes of each load 128 bytes apart. A staged warp
//     then gathers its words in its stage and sets them together (set_span_bits);
//   - 8 to 31: runs of 4 (a run's offsets fall in different words anyway, and shorter
//     runs keep enough threads busy);
//   - 32 and longer ("strided"): lane l of a warp takes offsets base + l + 32 i, so that a
//     warp's loads and its atomics each cover 32 consecutive offsets: 32 different words,
//     next to each other (a run of 4 a thread would spread each atomic instruction of a
//     warp over 32 runs, 4 words apart or more).
// What each choice earns: docs/performance.md, "What each path earns".
// Offsets outside [0, n) are ignored, which keeps an invalid offsets list memory-safe;
// unsorted offsets still give the right bits (a word met twice is OR-ed twice,
// harmlessly).
//
// The kernel is the clear's programmatic dependent (dependent_launch.cuh): it lets the
// kernel after it launch at once, loads its offsets while the clear may still run, and
// waits for the clear before its first atomic. Every thread waits, one with no offsets
// too, so that the grid ends only after the clear has completed (a scan launched behind
// it as its own dependent waits for this grid only).
inline constexpr int bitmap_threads = 256;

// The bits of a run of offsets p[0 .. valid), one call of flush(word, bits) for each word
// the run meets (sorted offsets: each word once), with the bits of that word OR-ed. Offsets
// outside [0, n) are skipped. Positions are 32-bit where the offsets are 4-byte (fewer
// instructions than 64-bit ones; this loop is most of the kernel's work at short segments).
template <int Run, class Offset, class Flush>
TALLY_DEVICE TALLY_FORCEINLINE void gather_run_bits(const Offset (&p)[Run], int valid, std::int64_t n,
                                                    Flush flush) {
  using position = std::conditional_t<sizeof(Offset) <= 4, std::uint32_t, std::uint64_t>;
  constexpr position none = ~position{0};  // no word yet (no word of a valid offset is this)
  position word = none;
  std::uint32_t bits = 0;
#pragma unroll
  for (int i = 0; i < Run; ++i) {
    if (i < valid) {
      // one unsigned comparison: a negative offset converts to at least 2^63, which no n
      // reaches
      const auto v = static_cast<std::int64_t>(p[i]);
      if (static_cast<std::uint64_t>(v) < static_cast<std::uint64_t>(n)) {
        const auto at = static_cast<position>(v);
        const position w = at >> 5;
        if (w != word) {
          if (word != none) flush(static_cast<std::int64_t>(word), bits);
          word = w;
          bits = 0;
        }
        bits |= 1u << (at & 31);
      }
    }
  }
  if (word != none) flush(static_cast<std::int64_t>(word), bits);
}

// A staged warp's heads (heads_bitmap_kernel below), gathered in shared memory and set
// with coalesced atomics. Each lane holds a run of 32 offsets in p; the warp's 1024
// offsets, when sorted, fall in the words [base, base + span) (from lane 0's first offset
// to lane 31's last). The warp's stage (4 KiB, free once every lane has read its run
// back) holds up to 1024 of those words: the lanes OR their bits into it with shared
// atomics, then lane l sets words base + l, base + l + 32, ... with global atomicOr, so
// that one instruction covers 32 neighbouring words (were each lane to set its own run's
// words, a warp's atomic instruction would reach 32 words L apart for segments of L).
// Bits of words outside the window (a span of more than 1024 words, or unsorted or
// out-of-range offsets) are set in global memory directly, so any list still gives the
// right bits. The two end words may be shared with the neighbouring warps' spans, so every
// word is OR-ed, not stored.
template <class Offset>
TALLY_DEVICE void set_span_bits(int4* stage, const Offset (&p)[32], std::int64_t n,
                                std::uint32_t* words) {
  constexpr int capacity = 32 * 32;  // words in the stage (4 KiB)
  const int lane = static_cast<int>(threadIdx.x % 32);
  const auto lo = static_cast<std::int64_t>(__shfl_sync(warp::full_mask, p[0], 0));
  const auto hi = static_cast<std::int64_t>(__shfl_sync(warp::full_mask, p[31], 31));
  std::int64_t base = 0;
  int span = 0;  // words in shared memory (0: every bit straight to global memory)
  if (lo >= 0 && lo <= hi && hi < n) {
    base = lo >> 5;
    const std::int64_t s = (hi >> 5) - base + 1;
    span = s < capacity ? static_cast<int>(s) : capacity;
  }
  auto* shared_words = reinterpret_cast<std::uint32_t*>(stage);
  __syncwarp();  // every lane has read its run from the stage before it is cleared
  for (int i = lane; i < (span + 3) / 4; i += 32) stage[i] = int4{0, 0, 0, 0};
  __syncwarp();  // cleared before any lane sets bits in it
  const auto flush = [&](std::int64_t w, std::uint32_t bits) {
    const std::int64_t at = w - base;
    if (at >= 0 && at < span) {
      atomicOr(shared_words + at, bits);
    } else {
      atomicOr(words + w, bits);
    }
  };
  gather_run_bits<32>(p, 32, n, flush);
  __syncwarp();  // every lane's bits are in the stage before the words are written
  for (int i = lane; i < span; i += 32) {
    const std::uint32_t v = shared_words[i];
    if (v != 0) atomicOr(words + base + i, v);
  }
  // (the next group's stores to the stage come after the kernel's __syncwarp before them)
}

template <int Run, bool Strided, class Offsets>
__global__ void __launch_bounds__(bitmap_threads)
    heads_bitmap_kernel(Offsets offsets, std::int64_t num_segments, std::int64_t n,
                        std::uint32_t* words) {
  allow_dependent_launch();
  constexpr int bitmap_run = Run;  // offsets a thread
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * bitmap_threads * bitmap_run;
  bool vectors = false;  // the runs load as 16-byte vectors
  if constexpr (std::is_pointer_v<Offsets> && !Strided) {
    using offset = std::remove_cv_t<std::remove_pointer_t<Offsets>>;
    vectors = sizeof(offset) == 4 && std::is_integral_v<offset> &&
              reinterpret_cast<std::uintptr_t>(offsets) % 16 == 0;
  }
  const auto thread = static_cast<std::int64_t>(blockIdx.x) * bitmap_threads + threadIdx.x;
  // the index of the i-th offset of the thread's run at `first` (strided: `first` is the
  // lane's first offset of its warp's 32 x Run)
  const auto index = [&](std::int64_t first, int i) {
    if constexpr (Strided) {
      return first + i * 32;  // (first: the warp's base + the lane)
    } else {
      return first + i;
    }
  };
  const std::int64_t start = Strided ? (thread / 32) * 32 * bitmap_run + thread % 32 : thread * bitmap_run;
  // Before this thread's first atomic into the bitmap: the clear has completed (it waits
  // once; later calls return at once).
  bool cleared = false;
  const auto wait_for_clear = [&] {
    if (!cleared) {
      wait_for_prerequisite_grid();
      cleared = true;
    }
  };
  // the run in the offsets' own type (32 4-byte offsets in 32 registers, not 64: 64-bit
  // copies would cost registers, and so blocks an SM)
  using offset = std::remove_cv_t<typename std::iterator_traits<Offsets>::value_type>;
  // Staged runs (runs of 32 from a pointer to 4-byte offsets): each warp's 4 KiB, as 32
  // rows (runs) of 8 16-byte columns. Column c of row r is kept at column c ^ (r % 8), so
  // that both the stores (8 lanes a row) and the reads (one row a lane, 8 lanes at 8
  // different columns) touch all 32 banks 4 times: no bank conflicts.
  constexpr bool staged = Run == 32 && !Strided && std::is_pointer_v<Offsets> && sizeof(offset) == 4 &&
                          std::is_integral_v<offset>;
  for (std::int64_t first = start; first < num_segments; first += stride) {
    offset p[bitmap_run];
    bool loaded = false;  // by 16-byte vectors (a whole run)
    if constexpr (staged) {
      constexpr int columns = bitmap_run / 4;  // 16-byte loads a run
      __shared__ int4 stage[bitmap_threads / 32][32 * columns];
      const int lane = static_cast<int>(threadIdx.x % 32);
      // the warp's runs start at warp_first (the same for its 32 lanes, so the branch is
      // the whole warp's: every lane is in this iteration when all 32 runs are whole)
      const std::int64_t warp_first = first - static_cast<std::int64_t>(lane) * bitmap_run;
      if (vectors && warp_first + 32 * bitmap_run <= num_segments) {
        int4* rows = stage[threadIdx.x / 32];
        const auto* g = reinterpret_cast<const int4*>(offsets + warp_first);
        int4 x[columns];
#pragma unroll
        for (int q = 0; q < columns; ++q) x[q] = g[32 * q + lane];  // all loads first: in flight together
        __syncwarp();  // the lanes' reads of the previous runs are done before they are overwritten
#pragma unroll
        for (int q = 0; q < columns; ++q) {
          const int k = 32 * q + lane;  // the warp's k-th vector: row k / columns, column k % columns
          const int r = k / columns;
          rows[r * columns + ((k % columns) ^ (r % 8))] = x[q];
        }
        __syncwarp();  // every lane's stores are visible to the lane that reads the row
#pragma unroll
        for (int q = 0; q < columns; ++q) {
          const int4 v = rows[lane * columns + (q ^ (lane % 8))];
          p[4 * q] = static_cast<offset>(v.x);
          p[4 * q + 1] = static_cast<offset>(v.y);
          p[4 * q + 2] = static_cast<offset>(v.z);
          p[4 * q + 3] = static_cast<offset>(v.w);
        }
        wait_for_clear();
        set_span_bits(rows, p, n, words);
        continue;
      }
    }
    if constexpr (std::is_pointer_v<Offsets> && !Strided && sizeof(offset) == 4) {
      if (!loaded && vectors && first + bitmap_run <= num_segments) {
        const auto* v = reinterpret_cast<const int4*>(offsets + first);
#pragma unroll
        for (int q = 0; q < bitmap_run / 4; ++q) {
          const int4 x = v[q];
          p[4 * q] = static_cast<offset>(x.x);
          p[4 * q + 1] = static_cast<offset>(x.y);
          p[4 * q + 2] = static_cast<offset>(x.z);
          p[4 * q + 3] = static_cast<offset>(x.w);
        }
        loaded = true;
      }
    }
    // how many of the run's offsets are in the list: its first `valid` (a count: a flag
    // for each offset would take registers)
    const std::int64_t left = Strided ? (num_segments - first + 31) / 32 : num_segments - first;
    const int valid = left < bitmap_run ? static_cast<int>(left) : bitmap_run;
    if (!loaded) {
#pragma unroll
      for (int i = 0; i < bitmap_run; ++i) {
        if (i < valid) p[i] = offsets[index(first, i)];
      }
    }
    wait_for_clear();
    gather_run_bits<bitmap_run>(p, valid, n, [&](std::int64_t w, std::uint32_t b) {
      atomicOr(words + w, b);
    });
  }
  wait_for_clear();  // a thread with no offsets too: the grid ends after the clear
}

// The bitmap's bytes: ceil(n / 32) words, rounded up to 8 bytes (the clear's words).
inline std::size_t bitmap_bytes(std::int64_t n) {
  return static_cast<std::size_t>(ceil_div(n, 64)) * 8;
}

// Clears the bitmap at `words` (bitmap_bytes(n), 8-byte aligned) and sets the heads of the
// offsets: two kernels, the second the first's programmatic dependent, and a kernel
// launched behind them may be the second's (it waits before it reads the bitmap).
template <class Offsets>
void build_bitmap(const char* function, Offsets offsets, std::int64_t num_segments, std::int64_t n,
                  std::uint32_t* words, cudaStream_t stream) {
  launch_clear(function, words, bitmap_bytes(n), stream);
  if (num_segments == 0) return;
  // enough blocks to fill the GPU; each thread strides over runs of the offsets
  const auto launch = [&](auto run, auto strided) {
    constexpr int r = decltype(run)::value;
    constexpr bool s = decltype(strided)::value;
    const std::int64_t blocks =
        std::min<std::int64_t>(ceil_div(num_segments, std::int64_t{bitmap_threads} * r), 4096);
    launch_dependent(function, "heads_bitmap_kernel", dim3(static_cast<unsigned>(blocks)),
                     dim3(bitmap_threads), 0, stream, heads_bitmap_kernel<r, s, Offsets>, offsets,
                     num_segments, n, words);
  };
  if (num_segments > n / 8) {
    launch(std::integral_constant<int, 32>{}, std::false_type{});
  } else if (num_segments > n / 32) {
    launch(std::integral_constant<int, 4>{}, std::false_type{});
  } else {
    launch(std::integral_constant<int, 4>{}, std::true_type{});
  }
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

// One thread per segment; num_segments >= 1.
template <class Acc, class Offsets, class Out>
void gather_ends(const char* function, const Acc* scanned, std::int64_t n, Offsets offsets,
                 std::int64_t num_segments, Out out, Acc init, cudaStream_t stream) {
  constexpr int threads = 256;
  const std::int64_t blocks = ceil_div(num_segments, threads);
  if (blocks > 0x7fffffff) throw_invalid(function, "num_segments", "is too large");
  gather_segment_ends_kernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      scanned, n, offsets, num_segments, out, init);
  TALLY_CUDA_CHECK_LAUNCH("gather_segment_ends_kernel", function);
}

}  // namespace tally::detail::segmented
