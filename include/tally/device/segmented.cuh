// tally/device/segmented.cuh -- device-wide segmented and batched scans and the segmented
// reduction: the public API.
//
//   tally::inclusive_scan_by_flags(in, flags, out, n, op = plus{}, options = {})
//   tally::exclusive_scan_by_flags(in, flags, out, n, init, op = plus{}, options = {})
//   tally::inclusive_scan_by_key(keys, in, out, n, op = plus{}, equal = std::equal_to<>{}, options = {})
//   tally::exclusive_scan_by_key(keys, in, out, n, init, op = plus{}, equal = ..., options = {})
//   tally::inclusive_segmented_scan(in, out, n, offsets, num_segments, op = plus{}, options = {})
//   tally::exclusive_segmented_scan(in, out, n, offsets, num_segments, init, op = plus{}, options = {})
//   tally::segmented_reduce(in, n, offsets, num_segments, out, init, op = plus{}, options = {})
//   tally::inclusive_scan_batched(in, out, shape, axis, op = plus{}, options = {})
//   tally::exclusive_scan_batched(in, out, shape, axis, init, op = plus{}, options = {})
//   tally::inclusive_scan_batched(in, out, rows, cols, axis, op = plus{}, options = {})
//   tally::exclusive_scan_batched(in, out, rows, cols, axis, init, op = plus{}, options = {})
//
// Semantics (segments, init, empty segments, keys, axes): tally/core/segmented.hpp, the
// same as the CPU backend's (tally/cpu/segmented.hpp). In short: inclusive out[i] = x[s] op
// ... op x[i], exclusive out[i] = init op x[s] op ... op x[i-1] (init at each segment's
// first element), s the first element of i's segment; flags: i starts a segment when
// flags[i] converts to true (flags[0] is not read); keys: when !equal(keys[i-1], keys[i]);
// offsets: CSR, num_segments + 1 non-decreasing entries, segment k = [offsets[k],
// offsets[k+1]); batched: every 1-d line of a contiguous row-major array along `axis`.
//
// Arguments: device pointers or device-usable random-access iterators (flags, keys and
//   offsets too: `offsets` lives in device memory). The offsets forms also take n, the
//   number of elements of in and out: the segments lie in [0, n), and elements outside
//   [offsets[0], offsets[num_segments]) are never written, and their values never reach
//   a result (the tile kernels read whole tiles of [0, n), those elements included,
//   with 16-byte copies, so `in` must be readable over all of [0, n)). The offsets are not
//   validated on the device (a host-side check would need a synchronisation): decreasing
//   offsets, or offsets beyond n, give unspecified results, but never an access outside
//   [0, n). The offsets forms need a default-constructible accumulator type.
// Accumulators: inclusive in inclusive_accumulator_t<Op, value of In>, exclusive and
//   segmented_reduce in exclusive_accumulator_t<Op, Init, value of In>; any associative op,
//   commutative or not; trivially copyable accumulator types.
// In place: out == in is allowed; out must not overlap flags, keys or offsets.
// Asynchronous on options.stream.
//
// Algorithm (docs/algorithms.md): one pass whatever the segment lengths -- the flag-
//   augmented operator inside the decoupled look-back scan.
//   Flags, keys, offsets: 16-byte aligned pointers to 4- and 8-byte values (one-byte
//     flags for the flag forms) take a tile kernel that stages values and heads in shared
//     memory; each tile finds its heads in the offsets by a search, compares its keys or
//     copies its flags (device/segmented/tile_heads.cuh). Large inputs run the pipelined
//     kernel of the plain scan instead, a block working on the next tile while it waits
//     for a prefix (device/segmented/pipelined.cuh; the offsets first become a head
//     bitmap). Any other input: the pair scan (device/segmented/pairs_scan.cuh), where the
//     offsets forms first build a head bitmap.
//   Batched along the last axis: segmented scans of equal lengths. Lines that fill most of
//     a tile run in tiles of whole lines that never wait for one another
//     (device/batched/whole_lines.cuh); lines of a whole number of tiles the plain scan's
//     kernel, each line's first tile starting afresh (single_pass/tile_pipeline.cuh,
//     "Lines"); others the pipelined or the tile kernel, with computed heads.
//   Batched along another axis: a tiled scan of all columns side by side with a look-back
//     per column (device/batched/strided.cuh); rows of 2-4 columns in one slice as one
//     scan of column groups; lines of at most 32 elements one thread per line; large
//     inputs persistent blocks that scan a tile of rows while looking back for the one
//     before, each tile copied by one tensor copy (device/batched/pipelined_columns.cuh).
//   segmented_reduce of 16-byte aligned 4- and 8-byte values: long ranges a block
//     (device/segmented/ranges_reduce.cuh), else the tile kernel, both one launch writing
//     only the results.
//   Which sizes take which plan: docs/performance.md, "Plans and thresholds".
//   Launches per call: one for flags, keys, batched and, with the tile kernel, the offsets
//   forms and segmented_reduce (plus the first-call growth of the per-stream state buffer,
//   as for tally::inclusive_scan). Otherwise (the pipelined kernel or the pair scan) the
//   offsets forms take three (a clear and a kernel for the head bitmap, then the scan;
//   on the pipelined kernel each launch overlaps the one before: dependent_launch.cuh)
//   with a stream-ordered n/8-byte allocation, and segmented_reduce four, with a
//   stream-ordered allocation of n accumulators (the bitmap, the seeded scan, then a
//   gather of segment ends).
// options.strategy: automatic or decoupled_lookback (or chained, the slow teaching form);
//   options.block: automatic or warp_scans; options.storage must be empty (these forms do
//   not take caller storage); options.deterministic: floating-point results
//   identical bit for bit from run to run (the look-back combines strictly left to right).
// Errors: std::invalid_argument naming the function and the argument for n < 0,
//   num_segments < 0, a null pointer with elements, a bad shape or axis, and the options
//   above; a CUDA failure -> tally::error.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <type_traits>

#include "tally/core/accumulator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/core/shape.hpp"
#include "tally/device/batched/columns_reduce_then_scan.cuh"
#include "tally/device/batched/pipelined_columns.cuh"
#include "tally/device/batched/strided.cuh"
#include "tally/device/batched/whole_lines.cuh"
#include "tally/device/detail/pointer_check.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/scan.cuh"
#include "tally/device/segmented/pairs_scan.cuh"
#include "tally/device/segmented/pipelined.cuh"
#include "tally/device/segmented/ranges_reduce.cuh"
#include "tally/device/segmented/tile_heads.cuh"

namespace tally {

namespace detail::segmented {

inline void check_segments(const char* function, std::int64_t num_segments) {
  if (num_segments < 0) {
    throw_invalid(function, "num_segments", "must be >= 0, got " + std::to_string(num_segments));
  }
}

// The tile kernel of segmented/tile_heads.cuh with the protocol of options.strategy.
template <segmented_offsets::mode Mode, class Acc, class Out, class Source, class Op>
void tile_kernel(const char* function, const Acc* in, Out out, std::int64_t n, Source source,
                 Acc init, Op op, const options& o) {
  if (o.strategy == scan_strategy::chained) {
    segmented_offsets::run<Mode, chained::protocol>(function, in, out, n, source, init, op, o);
  } else {
    segmented_offsets::run<Mode, decoupled_lookback::protocol>(function, in, out, n, source, init,
                                                               op, o);
  }
}

// The pipelined kernel of large scans (segmented/pipelined.cuh) with the protocol of
// options.strategy, where it takes the call (pointers, size, heads); returns whether it
// did.
template <bool Exclusive, class Acc, class Heads, class Op>
bool pipelined_kernel(const char* function, const Acc* in, Acc* out, std::int64_t n, Heads heads,
                      Acc init, Op op, const options& o) {
  if (!segmented_pipelined::takes(in, out, n) || !segmented_pipelined::takes_heads(heads)) return false;
  if (o.strategy == scan_strategy::chained) {
    segmented_pipelined::scan<chained::protocol, Exclusive>(function, in, out, n, heads, init, op, o);
  } else {
    segmented_pipelined::scan<decoupled_lookback::protocol, Exclusive>(function, in, out, n, heads,
                                                                       init, op, o);
  }
  return true;
}

// The flag forms: for 16-byte aligned pointers to a 4- or 8-byte accumulator type and
// 16-byte aligned one-byte flags (bool, int8, uint8), the pipelined kernel from
// segmented_pipelined::min_bytes of values on, else the tile kernel, either copying the
// flags to shared memory beside the values; anything else the pair scan
// (segmented/pairs_scan.cuh).
template <bool Exclusive, class Acc, class In, class Flags, class Out, class Op>
void flags_scan(const char* function, In in, Flags flags, Out out, std::int64_t n, Acc init, Op op,
                const options& o) {
  if constexpr (segmented_offsets::acc_pointer_v<Acc, In> && segmented_offsets::acc_pointer_v<Acc, Out> &&
                segmented_offsets::byte_flags_v<Flags>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out) && single_pass::aligned_16(flags)) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(flags);
      if (pipelined_kernel<Exclusive>(function, in, out, n, segmented_pipelined::staged_flags{bytes},
                                      init, op, o)) {
        return;
      }
      constexpr auto m = Exclusive ? segmented_offsets::mode::exclusive : segmented_offsets::mode::inclusive;
      tile_kernel<m>(function, in, out, n, segmented_offsets::flags_source{bytes}, init, op, o);
      return;
    }
  }
  scan<Exclusive, false, Acc>(function, in, out, n, flag_heads<Flags>{flags}, init, op, o);
}

// Keys the pipelined kernel stages beside the values: a pointer to keys of 1, 2, 4 or 8
// bytes (trivially copyable: they are copied as bytes).
template <class Keys>
inline constexpr bool stageable_keys_v = [] {
  if constexpr (std::is_pointer_v<Keys>) {
    using k = std::remove_cv_t<std::remove_pointer_t<Keys>>;
    return std::is_trivially_copyable_v<k> && sizeof(k) <= 8 && 16 % sizeof(k) == 0;
  } else {
    return false;
  }
}();

// std::equal_to's call operator is a constexpr host function, which device code may call
// only under --expt-relaxed-constexpr: the key forms compare through device_equal_to
// instead, the same comparison (the operands converted to T, or as they are for void).
template <class T>
struct device_equal_to {
  TALLY_HOST_DEVICE constexpr bool operator()(const T& a, const T& b) const { return a == b; }
};
template <>
struct device_equal_to<void> {
  template <class A, class B>
  TALLY_HOST_DEVICE constexpr bool operator()(const A& a, const B& b) const {
    return static_cast<bool>(a == b);
  }
};
template <class Equal>
Equal device_equal(const Equal& equal) {
  return equal;
}
template <class T>
device_equal_to<T> device_equal(const std::equal_to<T>&) {
  return {};
}

// The key forms, for 16-byte aligned pointers to a 4- or 8-byte accumulator type: the
// pipelined kernel from segmented_pipelined::min_bytes of values on for 16-byte aligned
// pointers to keys of 1-8 bytes (staged beside the values); else the tile kernel (keys:
// any iterator; each tile compares its keys with the ones before them while its values
// are copied). Anything else the pair scan.
template <bool Exclusive, class Acc, class Keys, class In, class Out, class Equal, class Op>
void keys_scan(const char* function, Keys keys, In in, Out out, std::int64_t n, Equal equal, Acc init,
               Op op, const options& o) {
  if constexpr (segmented_offsets::acc_pointer_v<Acc, In> && segmented_offsets::acc_pointer_v<Acc, Out>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out)) {
      if constexpr (stageable_keys_v<Keys>) {
        using key_t = std::remove_cv_t<std::remove_pointer_t<Keys>>;
        if (pipelined_kernel<Exclusive>(function, in, out, n,
                                        segmented_pipelined::staged_keys<key_t, Equal>{keys, equal},
                                        init, op, o)) {
          return;
        }
      }
      constexpr auto m = Exclusive ? segmented_offsets::mode::exclusive : segmented_offsets::mode::inclusive;
      using source = segmented_offsets::keys_source<Keys, Equal>;
      tile_kernel<m>(function, in, out, n, source{keys, equal, run_ready<4>(keys)}, init, op, o);
      return;
    }
  }
  scan<Exclusive, false, Acc>(function, in, out, n, key_heads<Keys, Equal>{keys, equal}, init, op, o);
}

// The offsets forms. 16-byte aligned pointers to a 4- or 8-byte accumulator type take the
// pipelined kernel from segmented_pipelined::min_bytes of values on (the head bitmap
// first, then the scan), else the tile kernel, which finds each tile's heads in the
// offsets itself (one launch); anything else the head bitmap, then the scan over [0, n)
// restricted to the segments (segmented/pairs_scan.cuh).
template <bool Exclusive, bool Seeded, class Acc, class In, class Out, class Offsets, class Op>
void offsets_scan(const char* function, In in, Out out, std::int64_t n, Offsets offsets,
                  std::int64_t num_segments, Acc init, Op op, const options& o) {
  if constexpr (!Seeded && segmented_offsets::acc_pointer_v<Acc, In> &&
                segmented_offsets::acc_pointer_v<Acc, Out>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out)) {
      if (pipelined_kernel<Exclusive>(function, in, out, n,
                                      segmented_pipelined::offsets_bitmap<Offsets>{offsets, num_segments, nullptr},
                                      init, op, o)) {
        return;
      }
      constexpr auto m = Exclusive ? segmented_offsets::mode::exclusive : segmented_offsets::mode::inclusive;
      tile_kernel<m>(function, in, out, n,
                     segmented_offsets::offsets_source<Offsets>{offsets, num_segments}, init, op, o);
      return;
    }
  }
  scoped_storage bits(function, "", nullptr, 0, bitmap_bytes(n) + storage_alignment, o.stream);
  auto* words = reinterpret_cast<std::uint32_t*>(bits.aligned());
  build_bitmap(function, offsets, num_segments, n, words, o.stream);
  scan<Exclusive, Seeded, Acc>(function, in, out, n, bitmap_heads{words}, init, op, o,
                               offsets_range<Offsets>{offsets, num_segments});
}

// segmented_reduce with n >= 1, for a 16-byte aligned pointer to a 4- or 8-byte
// accumulator type: one pass that writes only the segments' results, by long ranges
// (segmented/ranges_reduce.cuh) from ranges_min_n values on or where segments average at
// least ranges_min_mean_bytes, else by tiles (segmented/tile_heads.cuh, as fast or faster
// for shorter segments of varying lengths: docs/performance.md, "Plans and thresholds");
// otherwise the seeded inclusive scan into scratch (n accumulators), then a gather of the
// segment ends.
inline constexpr std::int64_t ranges_min_n = thresholds.ranges_min_n;
inline constexpr std::int64_t ranges_min_mean_bytes = thresholds.ranges_min_mean_bytes;
template <class Acc, class In, class Offsets, class Out, class Op>
void reduce(const char* function, In in, std::int64_t n, Offsets offsets, std::int64_t num_segments,
            Out out, Acc seed, Op op, const options& o) {
  if constexpr (segmented_offsets::acc_pointer_v<Acc, In>) {
    if (segmented_reduce::takes<Acc>(in) &&
        (n >= ranges_min_n ||
         n / num_segments * static_cast<std::int64_t>(sizeof(Acc)) >= ranges_min_mean_bytes)) {
      if (o.strategy == scan_strategy::chained) {
        segmented_reduce::run<chained::protocol>(function, in, out, n, offsets, num_segments, seed, op, o);
      } else {
        segmented_reduce::run<decoupled_lookback::protocol>(function, in, out, n, offsets, num_segments,
                                                            seed, op, o);
      }
      return;
    }
    if (single_pass::aligned_16(in)) {
      tile_kernel<segmented_offsets::mode::reduce>(
          function, in, out, n, segmented_offsets::offsets_source<Offsets>{offsets, num_segments},
          seed, op, o);
      return;
    }
  }
  scoped_storage scratch(function, "", nullptr, 0,
                         static_cast<std::size_t>(n) * sizeof(Acc) + storage_alignment, o.stream);
  auto* scanned = reinterpret_cast<Acc*>(scratch.aligned());
  offsets_scan<false, true, Acc>(function, in, scanned, n, offsets, num_segments, seed, op, o);
  gather_ends(function, scanned, n, offsets, num_segments, out, seed, o.stream);
}

// Lines of a whole number of tiles (the batched scans along the last axis, look-back
// strategy): the plain single-pass scan over all n values, tiles by block where the
// device holds them all (else tickets), each line's first tile starting afresh
// (single_pass/tile_pipeline.cuh, "Lines"). No heads and no pairs, so a line costs about
// what a plain scan of the same n costs (docs/performance.md, "What each path earns").
// The tiles: the plain scan's for 4-byte values (8192), and 2048 for 8-byte ones (the
// plain scan's 3072 divides no power of two).
template <class Acc>
constexpr single_pass::single_pass_tuning lines_tuning() {
  return sizeof(Acc) == 4 ? single_pass::default_single_pass_tuning<Acc>()
                          : single_pass::single_pass_tuning{256, 4, 2};
}
template <class Acc>
bool whole_tile_lines(std::int64_t len, const options& o) {
  return o.strategy != scan_strategy::chained && len % lines_tuning<Acc>().tile_items() == 0;
}
template <bool Exclusive, class Acc, class Op>
void tile_lines_scan(const char* function, const Acc* in, Acc* out, std::int64_t n, std::int64_t len,
                     Acc init, Op op, const options& o) {
  constexpr single_pass::single_pass_tuning tune = lines_tuning<Acc>();
  const single_pass::tile_lines lines{static_cast<unsigned>(len / tune.tile_items())};
  single_pass::scan<decoupled_lookback::protocol, Exclusive, Acc, tune, true>(
      function, "", in, out, n, make_seed<Acc, Exclusive>(init), op, o, {}, 0, lines);
}

// Segments of len elements (the batched scans along the last axis), 16-byte aligned
// pointers to a 4- or 8-byte accumulator type: lines that fill tiles well in tiles of
// whole lines, lines that divide a 16-byte word a word per thread (batched/whole_lines.cuh:
// no look-back; most lengths up to 2048 values); others the
// pipelined kernel from segmented_pipelined::min_bytes of values on (len < 2^31); below
// that, lines of a whole number of tiles the plain scan's kernel (tile_lines_scan above;
// not for the chained strategy), others the tile kernel. The pipelined and tile kernels
// compute the heads (offsets j * len) instead of reading any.
template <bool Exclusive, class Acc, class Op>
void equal_lengths_scan(const char* function, const Acc* in, Acc* out, std::int64_t n, std::int64_t len,
                        std::int64_t segments, Acc init, Op op, const options& o) {
  if (whole_lines::lines_in_words<Acc>(len) || whole_lines::rows_for<Acc>(len) > 0) {
    whole_lines::scan<Exclusive>(function, in, out, n, len, init, op, o);
    return;
  }
  if (pipelined_kernel<Exclusive>(function, in, out, n, segmented_pipelined::equal_lengths{len}, init,
                                  op, o)) {
    return;
  }
  if (whole_tile_lines<Acc>(len, o)) {
    tile_lines_scan<Exclusive>(function, in, out, n, len, init, op, o);
    return;
  }
  constexpr auto m = Exclusive ? segmented_offsets::mode::exclusive : segmented_offsets::mode::inclusive;
  using source = segmented_offsets::offsets_source<segmented_offsets::uniform_offsets>;
  tile_kernel<m>(function, in, out, n, source{{len}, segments}, init, op, o);
}

// Two columns of a 4- or 8-byte type, or four of a 4-byte type (inner == 2, or 4 for
// 4-byte types): the row is ONE 8- or 16-byte element, a column group, and the
// operator applies column by column, so every column of a slice is scanned by ONE scan over
// its rows. One slice: the single-pass scan of the groups; several (two 4-byte columns
// only): the tile kernel with segments of len rows. Either runs at the full width of
// 16-byte vectors, where the strided kernel's tiles are 2 or 4 columns wide
// (docs/performance.md, "What each path earns"). With several slices the 16-byte groups
// stay on the column tiles or the strided kernel (the segmented kernels of equal lengths
// take 4- and 8-byte values, not 16-byte groups).
// Three columns of a 4- or 8-byte type in one slice (rows of 12 or 24 bytes: points in
// 3-D) likewise: one scan of 12- or 24-byte groups, which the pipelined kernel's wide
// tiles take for large inputs (single_pass/pipelined.cuh); smaller ones run the tiles by
// ticket. Rows of 5, 6, 7 and 12 columns would gain as plain scans of wide values do, but
// are not taken: each width instantiates the whole plain scan once more for every
// batched call's type.
// A group is aligned to its size where that is a power of two (8 and 16 bytes: the
// vectorised and 16-byte paths take it), otherwise as T (three columns: 12 or 24 bytes).
template <class T, int Cols>
inline constexpr std::size_t column_group_alignment =
    ((Cols * sizeof(T)) & (Cols * sizeof(T) - 1)) == 0 ? Cols * sizeof(T) : alignof(T);
template <class T, int Cols>
struct alignas(column_group_alignment<T, Cols>) column_group {
  T column[Cols];
};
template <class T>
using column_pair = column_group<T, 2>;
template <class Op>
struct column_group_op {
  Op op;
  template <class T, int Cols>
  TALLY_HOST_DEVICE column_group<T, Cols> operator()(const column_group<T, Cols>& a,
                                                     const column_group<T, Cols>& b) const {
    column_group<T, Cols> r;
    for (int c = 0; c < Cols; ++c) r.column[c] = static_cast<T>(op(a.column[c], b.column[c]));
    return r;
  }
};
template <class Op>
using column_pair_op = column_group_op<Op>;

// Runs the scan as column groups of Cols and returns true, or returns false (the pointers
// are not aligned for it, or several slices of 16-byte groups) and does nothing.
template <bool Exclusive, int Cols, class Acc, class Op>
bool column_groups(const char* function, const Acc* in, Acc* out, const axis_view& v, Acc init, Op op,
                   const options& o) {
  using group_t = column_group<Acc, Cols>;
  const auto* groups_in = reinterpret_cast<const group_t*>(in);
  auto* groups_out = reinterpret_cast<group_t*>(out);
  group_t seed;
  for (int c = 0; c < Cols; ++c) seed.column[c] = init;
  const column_group_op<Op> group_op{op};
  const std::int64_t rows = v.outer * v.len;
  if (v.outer == 1) {
    // (a group must be aligned as its type; the single-pass scan handles any other offset)
    if (reinterpret_cast<std::uintptr_t>(in) % alignof(group_t) != 0 ||
        reinterpret_cast<std::uintptr_t>(out) % alignof(group_t) != 0) {
      return false;
    }
    if constexpr (Exclusive) {
      tally::exclusive_scan(groups_in, groups_out, rows, seed, group_op, o);
    } else {
      tally::inclusive_scan(groups_in, groups_out, rows, group_op, o);
    }
    return true;
  }
  if constexpr (sizeof(group_t) != 8) {
    return false;  // (the column tiles or the strided kernel)
  } else {
    if (!single_pass::aligned_16(in) || !single_pass::aligned_16(out)) return false;
    equal_lengths_scan<Exclusive>(function, groups_in, groups_out, rows, v.len, v.outer, seed, group_op, o);
    return true;
  }
}

// Batched scans: along the last axis a segmented scan of equal lengths (a plain scan
// when there is one line), along another axis the strided scan (two 4-byte columns, or
// rows of 2, 3 or 4 columns in one slice: a scan of column groups).
template <bool Exclusive, class Acc, class In, class Out, class Op>
void batched(const char* function, In in, Out out, const axis_view& v, Acc init, Op op,
             const options& o) {
  const std::int64_t n = v.total();
  check_device_pointer(function, "in", in, n);
  check_device_pointer(function, "out", out, n);
  if (n == 0) return;
  if (v.outer == 1 && v.inner == 1) {
    // one line: a plain scan, without head flags
    if constexpr (Exclusive) {
      tally::exclusive_scan(in, out, n, init, op, o);
    } else {
      tally::inclusive_scan(in, out, n, op, o);
    }
  } else if (v.inner > 1) {
    if constexpr ((sizeof(Acc) == 4 || sizeof(Acc) == 8) && segmented_offsets::acc_pointer_v<Acc, In> &&
                  segmented_offsets::acc_pointer_v<Acc, Out>) {
      if (v.inner == 2 && column_groups<Exclusive, 2>(function, in, out, v, init, op, o)) return;
      if (v.inner == 3 && column_groups<Exclusive, 3>(function, in, out, v, init, op, o)) return;
      if constexpr (sizeof(Acc) == 4) {
        if (v.inner == 4 && column_groups<Exclusive, 4>(function, in, out, v, init, op, o)) return;
      }
    }
    // rows of whole 32-byte pieces (whole 128-byte lines, else 64- or 32-byte pieces), or
    // of 16 bytes in slices of whole lines, in chains of more than one tile: the pipelined
    // column tiles (false: the driver refused the tensor map of rows of several lines,
    // nothing launched)
    if (pipelined_columns::takes<Acc>(in, out, v.outer, v.len, v.inner, o)) {
      if constexpr (strided::columns_take_v<Acc, In, Out>) {
        if (pipelined_columns::scan_rows<Exclusive, Acc>(function, in, out, v.outer, v.len, v.inner,
                                                         make_seed<Acc, Exclusive>(init), op, o)) {
          return;
        }
      }
    }
    // deterministic floats in few long chains of column tiles: reduce-then-scan
    if (columns_reduce_then_scan::takes<Acc>(in, out, v.outer, v.len, v.inner, o)) {
      if constexpr (strided::columns_take_v<Acc, In, Out> && !single_pass::exact_values<Acc>::value) {
        const strided::column_geometry g = strided::make_column_geometry<Acc>(
            v.outer, v.len, v.inner, strided::column_words<Acc>(v.len));
        columns_reduce_then_scan::scan<Exclusive, Acc>(function, in, out, g, make_seed<Acc, Exclusive>(init), op, o);
        return;
      }
    }
    strided::scan<Exclusive, Acc>(function, in, out, v.outer, v.len, v.inner,
                                  make_seed<Acc, Exclusive>(init), op, o);
  } else {
    // along the last axis: segments of len elements. 16-byte aligned pointers to a 4- or
    // 8-byte accumulator type: equal_lengths_scan above; anything else the pair scan with
    // heads computed per element.
    if constexpr (segmented_offsets::acc_pointer_v<Acc, In> && segmented_offsets::acc_pointer_v<Acc, Out>) {
      if (single_pass::aligned_16(in) && single_pass::aligned_16(out)) {
        equal_lengths_scan<Exclusive>(function, in, out, n, v.len, v.outer, init, op, o);
        return;
      }
    }
    if (n <= 0xffffffffll) {
      scan<Exclusive, false, Acc>(function, in, out, n,
                                  uniform_heads<std::uint32_t>{static_cast<std::uint32_t>(v.len)},
                                  init, op, o);
    } else {
      scan<Exclusive, false, Acc>(function, in, out, n, uniform_heads<std::uint64_t>{
                                      static_cast<std::uint64_t>(v.len)}, init, op, o);
    }
  }
}

// An accumulator value for the inclusive forms, which have no init: never read (the
// pair iterators read init only for exclusive and seeded scans). Value-initialised when
// possible; otherwise a copy of nothing in particular is avoided by reading none.
template <class Acc>
Acc unused_init() {
  if constexpr (std::is_default_constructible_v<Acc>) {
    return Acc{};
  } else {
    alignas(Acc) unsigned char bytes[sizeof(Acc)] = {};
    return *reinterpret_cast<const Acc*>(bytes);
  }
}

}  // namespace detail::segmented

// ---- head flags -----------------------------------------------------------------------------
template <class In, class Flags, class Out, class Op = plus>
void inclusive_scan_by_flags(In in, Flags flags, Out out, std::int64_t n, Op op = {},
                             const options& o = {}) {
  constexpr const char* function = "inclusive_scan_by_flags";
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "flags", flags, n);
  detail::check_device_pointer(function, "out", out, n);
  detail::segmented::check_options(function, o);
  if (n == 0) return;
  detail::segmented::flags_scan<false, acc_t>(function, in, flags, out, n,
                                              detail::segmented::unused_init<acc_t>(), op, o);
}

template <class In, class Flags, class Out, class Init, class Op = plus>
void exclusive_scan_by_flags(In in, Flags flags, Out out, std::int64_t n, Init init, Op op = {},
                             const options& o = {}) {
  constexpr const char* function = "exclusive_scan_by_flags";
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::check_count(function, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "flags", flags, n);
  detail::check_device_pointer(function, "out", out, n);
  detail::segmented::check_options(function, o);
  if (n == 0) return;
  detail::segmented::flags_scan<true, acc_t>(function, in, flags, out, n, static_cast<acc_t>(init),
                                             op, o);
}

// ---- keys -------------------------------------------------------------------------------------
template <class Keys, class In, class Out, class Op = plus, class Equal = std::equal_to<>>
void inclusive_scan_by_key(Keys keys, In in, Out out, std::int64_t n, Op op = {}, Equal equal = {},
                           const options& o = {}) {
  constexpr const char* function = "inclusive_scan_by_key";
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  detail::check_count(function, n);
  detail::check_device_pointer(function, "keys", keys, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  detail::segmented::check_options(function, o);
  if (n == 0) return;
  detail::segmented::keys_scan<false, acc_t>(function, keys, in, out, n,
                                             detail::segmented::device_equal(equal),
                                             detail::segmented::unused_init<acc_t>(), op, o);
}

template <class Keys, class In, class Out, class Init, class Op = plus,
          class Equal = std::equal_to<>>
void exclusive_scan_by_key(Keys keys, In in, Out out, std::int64_t n, Init init, Op op = {},
                           Equal equal = {}, const options& o = {}) {
  constexpr const char* function = "exclusive_scan_by_key";
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::check_count(function, n);
  detail::check_device_pointer(function, "keys", keys, n);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  detail::segmented::check_options(function, o);
  if (n == 0) return;
  detail::segmented::keys_scan<true, acc_t>(function, keys, in, out, n,
                                            detail::segmented::device_equal(equal),
                                            static_cast<acc_t>(init), op, o);
}

// ---- CSR offsets ------------------------------------------------------------------------------
template <class In, class Out, class Offsets, class Op = plus>
void inclusive_segmented_scan(In in, Out out, std::int64_t n, Offsets offsets,
                              std::int64_t num_segments, Op op = {}, const options& o = {}) {
  constexpr const char* function = "inclusive_segmented_scan";
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  detail::check_count(function, n);
  detail::segmented::check_segments(function, num_segments);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  detail::check_device_pointer(function, "offsets", offsets, num_segments + 1);
  detail::segmented::check_options(function, o);
  if (n == 0 || num_segments == 0) return;
  detail::segmented::offsets_scan<false, false, acc_t>(function, in, out, n, offsets, num_segments,
                                                       detail::segmented::unused_init<acc_t>(),
                                                       op, o);
}

template <class In, class Out, class Offsets, class Init, class Op = plus>
void exclusive_segmented_scan(In in, Out out, std::int64_t n, Offsets offsets,
                              std::int64_t num_segments, Init init, Op op = {},
                              const options& o = {}) {
  constexpr const char* function = "exclusive_segmented_scan";
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::check_count(function, n);
  detail::segmented::check_segments(function, num_segments);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "out", out, n);
  detail::check_device_pointer(function, "offsets", offsets, num_segments + 1);
  detail::segmented::check_options(function, o);
  if (n == 0 || num_segments == 0) return;
  detail::segmented::offsets_scan<true, false, acc_t>(function, in, out, n, offsets, num_segments,
                                                      static_cast<acc_t>(init), op, o);
}

// One result per segment: out[k] = init op x[offsets[k]] op ... op x[offsets[k+1]-1], init for
// an empty segment; out holds num_segments elements.
template <class In, class Offsets, class Out, class Init, class Op = plus>
void segmented_reduce(In in, std::int64_t n, Offsets offsets, std::int64_t num_segments, Out out,
                      Init init, Op op = {}, const options& o = {}) {
  constexpr const char* function = "segmented_reduce";
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  detail::check_count(function, n);
  detail::segmented::check_segments(function, num_segments);
  detail::check_device_pointer(function, "in", in, n);
  detail::check_device_pointer(function, "offsets", offsets, num_segments + 1);
  detail::check_device_pointer(function, "out", out, num_segments);
  detail::segmented::check_options(function, o);
  if (num_segments == 0) return;
  const auto seed = static_cast<acc_t>(init);
  if (n == 0) {
    // every segment is empty: init everywhere (the gather reads no element)
    detail::segmented::gather_ends(function, static_cast<const acc_t*>(nullptr), n, offsets,
                                   num_segments, out, seed, o.stream);
    return;
  }
  detail::segmented::reduce(function, in, n, offsets, num_segments, out, seed, op, o);
}

// ---- batched ------------------------------------------------------------------------------------
template <class In, class Out, class Op = plus>
void inclusive_scan_batched(In in, Out out, std::span<const std::int64_t> shape, int axis,
                            Op op = {}, const options& o = {}) {
  constexpr const char* function = "inclusive_scan_batched";
  using acc_t = inclusive_accumulator_t<Op, input_value_t<In>>;
  const detail::axis_view v = detail::checked_shape(function, shape, axis);
  detail::segmented::check_options(function, o);
  detail::segmented::batched<false, acc_t>(function, in, out, v,
                                           detail::segmented::unused_init<acc_t>(), op, o);
}

template <class In, class Out, class Op = plus>
void inclusive_scan_batched(In in, Out out, std::initializer_list<std::int64_t> shape, int axis,
                            Op op = {}, const options& o = {}) {
  inclusive_scan_batched(in, out, std::span<const std::int64_t>(shape.begin(), shape.size()), axis,
                         op, o);
}

template <class In, class Out, class Init, class Op = plus>
void exclusive_scan_batched(In in, Out out, std::span<const std::int64_t> shape, int axis,
                            Init init, Op op = {}, const options& o = {}) {
  constexpr const char* function = "exclusive_scan_batched";
  using acc_t = exclusive_accumulator_t<Op, Init, input_value_t<In>>;
  const detail::axis_view v = detail::checked_shape(function, shape, axis);
  detail::segmented::check_options(function, o);
  detail::segmented::batched<true, acc_t>(function, in, out, v, static_cast<acc_t>(init), op, o);
}

template <class In, class Out, class Init, class Op = plus>
void exclusive_scan_batched(In in, Out out, std::initializer_list<std::int64_t> shape, int axis,
                            Init init, Op op = {}, const options& o = {}) {
  exclusive_scan_batched(in, out, std::span<const std::int64_t>(shape.begin(), shape.size()), axis,
                         init, op, o);
}

// 2-d: axis 0 scans down each column, axis 1 along each row.
template <class In, class Out, class Op = plus>
void inclusive_scan_batched(In in, Out out, std::int64_t rows, std::int64_t cols, int axis,
                            Op op = {}, const options& o = {}) {
  detail::check_matrix("inclusive_scan_batched", rows, cols, axis);
  const std::int64_t shape[2] = {rows, cols};
  inclusive_scan_batched(in, out, std::span<const std::int64_t>(shape), axis, op, o);
}

template <class In, class Out, class Init, class Op = plus>
void exclusive_scan_batched(In in, Out out, std::int64_t rows, std::int64_t cols, int axis,
                            Init init, Op op = {}, const options& o = {}) {
  detail::check_matrix("exclusive_scan_batched", rows, cols, axis);
  const std::int64_t shape[2] = {rows, cols};
  exclusive_scan_batched(in, out, std::span<const std::int64_t>(shape), axis, init, op, o);
}

}  // namespace tally
