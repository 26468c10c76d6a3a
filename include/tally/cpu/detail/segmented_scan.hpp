// tally/cpu/detail/segmented_scan.hpp -- the parallel CPU segmented scan: the
// flag-augmented operator (Sengupta et al. 2007, tally/core/segmented.hpp) inside the
// chained tile scan (detail/chained_scan.hpp, after Yan, Long & Zhang 2013).
//
// One algorithm for every segment length: the array is cut into L2-sized tiles, as for an
// ordinary scan, without regard to where segments start. The chained scan runs on
// flagged<Acc> values with segmented_op:
//   - a tile's aggregate is (tile holds a head, reduction from its last head to its end);
//     finding the last head reads the segment description backwards from the tile's end,
//     so a tile full of short segments reduces only its last one;
//   - a tile's prefix (the predecessor's inclusive flagged value) seeds the tile's first
//     run of elements; every head inside the tile restarts from nothing (inclusive) or
//     from init (exclusive).
// Inside a tile, two modes alternate, so that every segment length is fast:
//   run mode    where the next `dense_block` elements hold no head, the stretch up to the
//               next head is one ordinary scan with a carry: the vectorised scan kernel
//               (detail/simd.hpp) for contiguous arithmetic data, a scalar loop otherwise.
//               One huge segment costs what an ordinary scan costs.
//   dense mode  otherwise, `dense_block` elements are scanned by one fused loop that
//               tests each element's head flag (acc = head ? x : acc op x), so segments
//               of length 1 cost one scalar step each, with no per-segment overhead.
// No task is ever created per segment.
//
// Where segments start comes from a "heads" object (the three ways of giving segments,
// plus uniform lengths for batched scans), positions relative to the first element:
//   std::int64_t last_head(b, e)   the largest head position in [b, e), or -1 if none
//   cursor(p)                      a cursor at position p with
//     bool step()                  whether the current position starts a segment; moves on
//     bool quiet(w)                no head in the next w positions (from the current one)
//     std::int64_t run_end(e)      moves to the next head at or after the current
//                                  position (or e) and returns that position
// Position 0 is always a head.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>

#include "tally/core/accumulator.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/segmented.hpp"
#include "tally/cpu/detail/chained_scan.hpp"
#include "tally/cpu/detail/dispatch.hpp"

namespace tally::cpu::detail {

// ---- where segments start ----------------------------------------------------------------

// Searches for heads `starts(i)` (i > 0). The first few positions are tested one by one
// (short segments: the next head is near); after that, blocks of 64 are tested at once
// (`starts.any(i, i + 64)`: branch-free, vectorised, word-at-a-time for byte flags) and
// only a block holding a head is searched element by element. A long segment then costs
// a fraction of its scan.
inline constexpr std::int64_t head_search_block = 64;
inline constexpr std::int64_t head_search_near = 16;

// The first i in [p, e) with starts(i), or e.
template <class Starts>
TALLY_FORCEINLINE std::int64_t find_next_start(std::int64_t p, std::int64_t e, const Starts& starts) {
  for (const std::int64_t near = std::min(e, p + head_search_near); p < near; ++p) {
    if (starts(p)) return p;
  }
  while (e - p >= head_search_block && !starts.any(p, p + head_search_block)) p += head_search_block;
  while (p < e && !starts(p)) ++p;
  return p;
}

// The last i in [b, e) with starts(i), or -1 (b > 0).
template <class Starts>
TALLY_FORCEINLINE std::int64_t find_last_start(std::int64_t b, std::int64_t e, const Starts& starts) {
  for (const std::int64_t near = std::max(b, e - head_search_near); e > near; --e) {
    if (starts(e - 1)) return e - 1;
  }
  while (e - b >= head_search_block && !starts.any(e - head_search_block, e)) e -= head_search_block;
  for (std::int64_t i = e - 1; i >= b; --i) {
    if (starts(i)) return i;
  }
  return -1;
}

// The heads of flags or keys, from a predicate starts(i) for i > 0.
template <class Starts>
struct predicate_heads {
  Starts starts;

  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    const std::int64_t h = find_last_start(std::max<std::int64_t>(b, 1), e, starts);
    return h >= 0 ? h : (b == 0 ? 0 : -1);
  }

  struct cursor_type {
    const Starts& starts;
    std::int64_t i;
    TALLY_FORCEINLINE bool step() {
      const bool h = i == 0 || starts(i);
      ++i;
      return h;
    }
    TALLY_FORCEINLINE bool quiet(std::int64_t w) const { return i > 0 && !starts.any(i, i + w); }
    TALLY_FORCEINLINE std::int64_t run_end(std::int64_t e) {
      i = find_next_start(i, e, starts);
      return i;
    }
  };
  cursor_type cursor(std::int64_t p) const { return cursor_type{starts, p}; }
};

// Head flags: element i > 0 starts a segment when flags[i] converts to true.
template <class FlagIt>
struct flag_starts {
  FlagIt flags;
  TALLY_FORCEINLINE bool operator()(std::int64_t i) const { return static_cast<bool>(flags[i]); }
  // Whether any of [b, e) is a head.
  TALLY_FORCEINLINE bool any(std::int64_t b, std::int64_t e) const {
    using F = std::iter_value_t<FlagIt>;
    if constexpr (std::contiguous_iterator<FlagIt> && sizeof(F) == 1 &&
                  (std::is_integral_v<F> || std::is_same_v<F, bool>)) {
      // Bytes: a non-zero byte is a head (for bool, the object representation of true
      // is non-zero). 8 bytes per test.
      const auto* bytes = reinterpret_cast<const unsigned char*>(raw(flags) + b);
      std::uint64_t acc = 0;
      std::int64_t i = 0;
      for (; i + 8 <= e - b; i += 8) {
        std::uint64_t word;
        std::memcpy(&word, bytes + i, 8);
        acc |= word;
      }
      for (; i < e - b; ++i) acc |= bytes[i];
      return acc != 0;
    } else {
      unsigned found = 0;
      for (std::int64_t i = b; i < e; ++i) found |= static_cast<unsigned>(static_cast<bool>(flags[i]));
      return found != 0;
    }
  }
};
template <class FlagIt>
using flag_heads = predicate_heads<flag_starts<FlagIt>>;
template <class FlagIt>
flag_heads<FlagIt> make_flag_heads(FlagIt flags) {
  return flag_heads<FlagIt>{flag_starts<FlagIt>{flags}};
}

// Keys: element i > 0 starts a segment when !equal(keys[i-1], keys[i]).
template <class KeyIt, class Equal>
struct key_starts {
  KeyIt keys;
  Equal equal;
  TALLY_FORCEINLINE bool operator()(std::int64_t i) const {
    return !static_cast<bool>(equal(keys[i - 1], keys[i]));
  }
  TALLY_FORCEINLINE bool any(std::int64_t b, std::int64_t e) const {
    unsigned found = 0;  // an integer OR reduction vectorises; a bool one may not
    for (std::int64_t i = b; i < e; ++i) {
      found |= static_cast<unsigned>(!static_cast<bool>(equal(keys[i - 1], keys[i])));
    }
    return found != 0;
  }
};
template <class KeyIt, class Equal>
using key_heads = predicate_heads<key_starts<KeyIt, Equal>>;
template <class KeyIt, class Equal>
key_heads<KeyIt, Equal> make_key_heads(KeyIt keys, Equal equal) {
  return key_heads<KeyIt, Equal>{key_starts<KeyIt, Equal>{keys, equal}};
}

// CSR offsets: segment k starts at offsets[k] - offsets[0] (k < num_segments); several
// equal offsets (empty segments) are one head. The offsets have been checked
// non-decreasing, so the starts can be binary-searched.
template <class OffIt>
struct offset_heads {
  OffIt offsets;
  std::int64_t segments;  // the number of starts: offsets[0 .. segments)
  std::int64_t base;      // offsets[0]
  std::int64_t n;         // offsets[segments] - base

  std::int64_t start(std::int64_t k) const { return static_cast<std::int64_t>(offsets[k]) - base; }
  // The first k with start(k) >= p (segments if none).
  std::int64_t first_start_at_or_after(std::int64_t p) const {
    std::int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (start(mid) < p) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    const std::int64_t k = first_start_at_or_after(e) - 1;  // the last start < e
    if (k < 0) return -1;
    const std::int64_t s = start(k);
    return s >= b ? s : -1;
  }
  struct cursor_type {
    const offset_heads& heads;
    std::int64_t k;     // the first start at or after i
    std::int64_t next;  // its position (n if none)
    std::int64_t i;
    TALLY_FORCEINLINE bool step() {
      const bool h = i == next;
      if (h) {
        while (k < heads.segments && heads.start(k) == i) ++k;  // empty segments
        next = k < heads.segments ? heads.start(k) : heads.n;
      }
      ++i;
      return h;
    }
    TALLY_FORCEINLINE bool quiet(std::int64_t w) const { return next >= i + w; }
    TALLY_FORCEINLINE std::int64_t run_end(std::int64_t e) {
      i = std::min(next, e);
      return i;
    }
  };
  cursor_type cursor(std::int64_t p) const {
    const std::int64_t k = first_start_at_or_after(p);
    return cursor_type{*this, k, k < segments ? start(k) : n, p};
  }
};

// Segments of one length (batched scans along the last axis).
struct uniform_heads {
  std::int64_t length;  // > 0

  std::int64_t last_head(std::int64_t b, std::int64_t e) const {
    const std::int64_t h = (e - 1) / length * length;
    return h >= b ? h : -1;
  }
  struct cursor_type {
    std::int64_t length;
    std::int64_t to_head;  // positions to the next head (0: the current one is)
    std::int64_t i;
    TALLY_FORCEINLINE bool step() {
      const bool h = to_head == 0;
      to_head = (h ? length : to_head) - 1;
      ++i;
      return h;
    }
    TALLY_FORCEINLINE bool quiet(std::int64_t w) const { return to_head >= w; }
    TALLY_FORCEINLINE std::int64_t run_end(std::int64_t e) {
      const std::int64_t q = std::min(i + to_head, e);
      to_head -= q - i;
      i = q;
      return q;
    }
  };
  cursor_type cursor(std::int64_t p) const {
    return cursor_type{length, (length - p % length) % length, p};
  }
};

// ---- runs: ordinary scans and reductions with a carry -----------------------------------

// Runs shorter than this use the scalar loop even where a vectorised kernel exists (the
// kernel's dispatch and its head and tail cost more than they save on a short run).
inline constexpr std::int64_t simd_run_min = 32;
// Elements per block of the dense mode (and the head-free stretch that switches to the
// run mode).
inline constexpr std::int64_t dense_block = 32;
// Runs at least this long write with non-temporal stores when the output is large
// (cpu_tuning::stream_min_bytes); shorter ones would mix them with ordinary stores in the
// same cache lines.
inline constexpr std::int64_t simd_stream_run_min = 4096;

// Scans [b, e) of `first` into `d_first`, continuing `carry` (empty: the run starts an
// inclusive segment); leaves the carry of everything up to e-1 in `carry`. `stream`:
// non-temporal stores for long vectorised runs (the caller flushes them).
template <bool Exclusive, class Acc, class InIt, class OutIt, class Op>
TALLY_FORCEINLINE void scan_run(InIt first, OutIt d_first, std::int64_t b, std::int64_t e,
                                std::optional<Acc>& carry, Op& op, bool stream) {
  using T = std::iter_value_t<InIt>;
  if constexpr (vectorisable<InIt, OutIt, Op, Acc>()) {
    if (e - b >= simd_run_min) {
      const T* in = raw(first) + b;
      T* out = raw(d_first) + b;
      const auto count = static_cast<std::size_t>(e - b);
      const Acc c = carry ? *carry : tally::identity<Op, Acc>();
      const bool nt = stream && e - b >= simd_stream_run_min;
      if constexpr (Exclusive) {
        carry = simd_exclusive_scan(simd_op_of<Op>(), in, out, count, c, nt);
      } else {
        carry = simd_inclusive_scan(simd_op_of<Op>(), in, out, count, c, nt);
      }
      return;
    }
  }
  InIt in = first + b;
  OutIt out = d_first + b;
  const std::int64_t count = e - b;
  std::int64_t j = 0;
  if (!carry) {  // inclusive, at a head: the segment starts with its first element
    carry.emplace(static_cast<Acc>(static_cast<T>(in[0])));
    out[0] = *carry;
    j = 1;
  }
  Acc& acc = *carry;
  for (; j < count; ++j) {
    T x = in[j];  // read before the write: in place is allowed
    if constexpr (Exclusive) {
      out[j] = acc;
      acc = op(std::as_const(acc), x);
    } else {
      acc = op(std::as_const(acc), x);
      out[j] = acc;
    }
  }
}

// carry op x[b] op ... op x[e-1] (b < e); an empty carry is no operand.
template <class Acc, class InIt, class Op>
TALLY_FORCEINLINE Acc reduce_run(InIt first, std::int64_t b, std::int64_t e,
                                 const std::optional<Acc>& carry, Op& op) {
  using T = std::iter_value_t<InIt>;
  if constexpr (vectorisable<InIt, T*, Op, Acc>()) {
    if (e - b >= simd_run_min) {
      return simd_reduce(simd_op_of<Op>(), raw(first) + b, static_cast<std::size_t>(e - b),
                         carry ? *carry : tally::identity<Op, Acc>());
    }
  }
  InIt in = first + b;
  std::int64_t j = 0;
  Acc acc = carry ? *carry : static_cast<Acc>(static_cast<T>(in[j++]));
  for (; j < e - b; ++j) acc = op(std::as_const(acc), static_cast<T>(in[j]));
  return acc;
}

// ---- the segmented scan --------------------------------------------------------------------

// Scans the n elements at `first` into `d_first`, segments given by `heads`. `init` is
// the exclusive scan's init (empty for an inclusive scan). `may_help`: whether the input
// survives the writing of the output (false in place; see chained_scan).
template <bool Exclusive, class Acc, class InIt, class OutIt, class Heads, class Op>
void segmented_scan_range(InIt first, std::int64_t n, OutIt d_first, const Heads& heads,
                          const std::optional<Acc>& init, Op op, bool may_help) {
  using T = std::iter_value_t<InIt>;
  if (n == 0) return;

  const bool stream = static_cast<std::size_t>(n) * sizeof(T) >= cpu_tuning::stream_min_bytes;
  // Scans [b, e) seeded with `carry` (what precedes b in b's segment, if anything; only
  // position 0 has nothing before it, and it is a head).
  auto scan_span = [&](std::int64_t b, std::int64_t e, std::optional<Acc> carry) {
    auto cursor = heads.cursor(b);
    std::int64_t i = b;
    if (!carry) {  // position 0: a head with nothing before it
      cursor.step();
      const T x = first[i];
      if constexpr (Exclusive) {
        carry = init;
        d_first[i] = *carry;
        *carry = op(std::as_const(*carry), x);
      } else {
        carry.emplace(static_cast<Acc>(x));
        d_first[i] = *carry;
      }
      ++i;
    }
    while (i < e) {
      if (e - i >= dense_block && cursor.quiet(dense_block)) {
        // Run mode: i continues the current segment up to the next head.
        const std::int64_t q = cursor.run_end(e);
        scan_run<Exclusive, Acc>(first, d_first, i, q, carry, op, stream);
        i = q;
        continue;
      }
      // Dense mode: one fused loop over the next block, testing each head.
      const std::int64_t stop = std::min(e, i + dense_block);
      Acc& acc = *carry;
      for (; i < stop; ++i) {
        const bool head = cursor.step();
        T x = first[i];  // read before the write: in place is allowed
        if constexpr (Exclusive) {
          if (head) acc = *init;
          d_first[i] = acc;
          acc = op(std::as_const(acc), x);
        } else {
          if (head) {
            acc = static_cast<Acc>(x);
          } else {
            acc = op(std::as_const(acc), x);
          }
          d_first[i] = acc;
        }
      }
    }
    // Non-temporal stores are weakly ordered: fence them before the thread reports its
    // work done.
    if constexpr (vectorisable<InIt, OutIt, Op, Acc>()) {
      if (stream) simd_flush_streams();
    }
  };

  if (static_cast<std::size_t>(n) * sizeof(T) < cpu_tuning::parallel_min_bytes) {
    scan_span(0, n, init);
    return;
  }

  using F = flagged<Acc>;
  const std::int64_t tile = cpu_tuning::tile_elements<T>();
  const std::int64_t tiles = (n + tile - 1) / tile;
  // Tile 0 starts with a head, so its prefix is never combined with: empty.
  chained_scan<F>(
      tiles, std::optional<F>{},
      [&](std::int64_t t) -> F {
        const std::int64_t b = t * tile;
        const std::int64_t e = std::min(n, b + tile);
        const std::int64_t h = heads.last_head(b, e);
        if (h >= 0) return F{true, reduce_run<Acc>(first, h, e, init, op)};
        return F{false, reduce_run<Acc>(first, b, e, std::optional<Acc>{}, op)};
      },
      [&](std::int64_t t, const std::optional<F>& prefix) {
        const std::int64_t b = t * tile;
        scan_span(b, std::min(n, b + tile),
                  prefix ? std::optional<Acc>(prefix->value) : std::optional<Acc>{});
      },
      segmented_op<Op>{op}, may_help);
}

}  // namespace tally::cpu::detail
