// tally/device/detail/segmented_plans.cuh -- the plan of every segmented and batched call,
// chosen in one place (the plain scan's plans: detail/dispatch.cuh, which the plain-scan
// plans below -- one line, one slice of column groups -- go through in turn).
//
// Each chooser reads the call's types (compile time), its pointers' alignment, its size and
// shape (run time) and the table of detail/thresholds.cuh (through the engines' `takes`),
// and returns a plan; segmented.cuh runs it. A plan names an engine; the engine's own kernel
// variants (rows per thread, words per column group) are its tunings, chosen inside it.
// Which sizes take which plan, and why: docs/performance.md, "Plans and thresholds".
#pragma once

#include <cstdint>
#include <type_traits>

#include "tally/core/options.hpp"
#include "tally/core/shape.hpp"
#include "tally/device/batched/column_groups.cuh"
#include "tally/device/batched/columns_reduce_then_scan.cuh"
#include "tally/device/batched/pipelined_columns.cuh"
#include "tally/device/batched/strided.cuh"
#include "tally/device/batched/whole_lines.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/segmented/pipelined.cuh"
#include "tally/device/segmented/ranges_reduce.cuh"
#include "tally/device/segmented/tile_heads.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"

namespace tally::detail::segmented {

enum class plan {
  plain_scan,                // one line: tally::inclusive_scan / exclusive_scan
  column_groups,             // rows of 2-4 columns as one value (batched/column_groups.cuh)
  pipelined,                 // segmented/pipelined.cuh: large 16-byte aligned 4-/8-byte values
  tile_heads,                // segmented/tile_heads.cuh: each tile finds its own heads
  lines_of_tiles,            // lines of whole tiles: the plain scan's tile kernel, restarted per line
  whole_lines,               // batched/whole_lines.cuh: whole lines in a tile, no look-back
  pairs,                     // segmented/pairs_scan.cuh: (head, value) pairs, any iterator
  bitmap_pairs,              // the offsets forms on iterators: a head bitmap, then the pairs
  ranges,                    // segmented_reduce: segmented/ranges_reduce.cuh
  scan_then_gather,          // segmented_reduce otherwise: a seeded scan, then the segment ends
  pipelined_columns,         // batched/pipelined_columns.cuh: TMA tiles of columns
  columns_reduce_then_scan,  // batched/columns_reduce_then_scan.cuh: deterministic floats
  strided,                   // batched/strided.cuh: every other non-last axis
};

inline const char* plan_name(plan p) {
  switch (p) {
    case plan::plain_scan: return "plain_scan";
    case plan::column_groups: return "column_groups";
    case plan::pipelined: return "pipelined";
    case plan::tile_heads: return "tile_heads";
    case plan::lines_of_tiles: return "lines_of_tiles";
    case plan::whole_lines: return "whole_lines";
    case plan::pairs: return "pairs";
    case plan::bitmap_pairs: return "bitmap_pairs";
    case plan::ranges: return "ranges";
    case plan::scan_then_gather: return "scan_then_gather";
    case plan::pipelined_columns: return "pipelined_columns";
    case plan::columns_reduce_then_scan: return "columns_reduce_then_scan";
    case plan::strided: return "strided";
  }
  return "?";
}

// ---- what the types allow (compile time) ----------------------------------------------------
// The tile and pipelined kernels take pointers to a 4- or 8-byte accumulator type itself.
template <class Acc, class In, class Out>
inline constexpr bool vector_scan_v =
    segmented_offsets::acc_pointer_v<Acc, In> && segmented_offsets::acc_pointer_v<Acc, Out>;
// ... with one-byte flags (bool, int8, uint8) behind a pointer, for the flag forms.
template <class Acc, class In, class Flags, class Out>
inline constexpr bool vector_flags_v = vector_scan_v<Acc, In, Out> && segmented_offsets::byte_flags_v<Flags>;
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
// Rows of 2 or 3 columns of a 4- or 8-byte type, or 4 of a 4-byte type, as column groups.
template <class Acc, class In, class Out>
inline constexpr bool column_groups_v =
    (sizeof(Acc) == 4 || sizeof(Acc) == 8) && vector_scan_v<Acc, In, Out>;

// ---- the flag, key and offsets forms --------------------------------------------------------
// 16-byte aligned pointers (values, and the flags): the pipelined kernel from
// segmented_pipelined::min_bytes of values on, else the tile kernel, either copying the
// flags to shared memory beside the values; anything else the pair scan.
template <class Acc, class In, class Flags, class Out>
plan flags_plan_for(In in, Flags flags, Out out, std::int64_t n) {
  if constexpr (vector_flags_v<Acc, In, Flags, Out>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out) && single_pass::aligned_16(flags)) {
      const auto* bytes = reinterpret_cast<const unsigned char*>(flags);
      if (segmented_pipelined::takes(in, out, n) &&
          segmented_pipelined::takes_heads(segmented_pipelined::staged_flags{bytes})) {
        return plan::pipelined;
      }
      return plan::tile_heads;
    }
  }
  return plan::pairs;
}

// 16-byte aligned value pointers: the pipelined kernel from segmented_pipelined::min_bytes
// of values on, for 16-byte aligned pointers to keys of 1-8 bytes (staged beside the
// values); else the tile kernel (keys: any iterator; each tile compares its keys with the
// ones before them while its values are copied). Anything else the pair scan.
template <class Acc, class Keys, class In, class Out, class Equal>
plan keys_plan_for(Keys keys, In in, Out out, std::int64_t n, const Equal& equal) {
  if constexpr (vector_scan_v<Acc, In, Out>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out)) {
      if constexpr (stageable_keys_v<Keys>) {
        using key_t = std::remove_cv_t<std::remove_pointer_t<Keys>>;
        if (segmented_pipelined::takes(in, out, n) &&
            segmented_pipelined::takes_heads(segmented_pipelined::staged_keys<key_t, Equal>{keys, equal})) {
          return plan::pipelined;
        }
      }
      return plan::tile_heads;
    }
  }
  return plan::pairs;
}

// 16-byte aligned pointers: the pipelined kernel from segmented_pipelined::min_bytes of
// values on (the head bitmap first, then the scan), else the tile kernel, which finds each
// tile's heads in the offsets itself (one launch); anything else (and the seeded scan of
// segmented_reduce's fallback) the head bitmap, then the pair scan restricted to the
// segments.
template <class Acc, bool Seeded, class In, class Out, class Offsets>
plan offsets_plan_for(In in, Out out, std::int64_t n, Offsets offsets, std::int64_t num_segments) {
  if constexpr (!Seeded && vector_scan_v<Acc, In, Out>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out)) {
      if (segmented_pipelined::takes(in, out, n) &&
          segmented_pipelined::takes_heads(
              segmented_pipelined::offsets_bitmap<Offsets>{offsets, num_segments, nullptr})) {
        return plan::pipelined;
      }
      return plan::tile_heads;
    }
  }
  return plan::bitmap_pairs;
}

// segmented_reduce with n >= 1, for a 16-byte aligned pointer to a 4- or 8-byte
// accumulator type: one pass that writes only the segments' results, by long ranges from
// ranges_min_n values on or where segments average at least ranges_min_mean_bytes, else by
// tiles (as fast or faster for shorter segments of varying lengths); otherwise the seeded
// inclusive scan into scratch (n accumulators), then a gather of the segment ends.
template <class Acc, class In>
plan reduce_plan_for(In in, std::int64_t n, std::int64_t num_segments) {
  if constexpr (segmented_offsets::acc_pointer_v<Acc, In>) {
    if (segmented_reduce::takes<Acc>(in) &&
        (n >= thresholds.ranges_min_n ||
         n / num_segments * static_cast<std::int64_t>(sizeof(Acc)) >= thresholds.ranges_min_mean_bytes)) {
      return plan::ranges;
    }
    if (single_pass::aligned_16(in)) return plan::tile_heads;
  }
  return plan::scan_then_gather;
}

// ---- segments of equal lengths (the batched scans along the last axis) ----------------------
// Lines of a whole number of tiles take the plain single-pass scan's kernel: the tiles of
// the plain scan for 4-byte values (8192), and 2048 for 8-byte ones (the plain scan's 3072
// divides no power of two).
template <class Acc>
constexpr single_pass::single_pass_tuning lines_tuning() {
  return sizeof(Acc) == 4 ? single_pass::default_single_pass_tuning<Acc>()
                          : single_pass::single_pass_tuning{256, 4, 2};
}

// n values in lines of len, 16-byte aligned pointers to a 4- or 8-byte accumulator type
// (the caller checked): lines that fill tiles well in tiles of whole lines, and lines that
// divide a 16-byte word a word per thread (no look-back; most lengths up to 2048 values);
// others the pipelined kernel from segmented_pipelined::min_bytes of values on
// (len < 2^31); below that, lines of a whole number of tiles the plain scan's kernel,
// others the tile kernel. The pipelined and tile kernels compute the heads (offsets
// j * len) instead of reading any.
template <class Acc>
plan lines_plan_for(const Acc* in, const Acc* out, std::int64_t n, std::int64_t len) {
  if (whole_lines::lines_in_words<Acc>(len) || whole_lines::rows_for<Acc>(len) > 0) return plan::whole_lines;
  if (segmented_pipelined::takes(in, out, n) &&
      segmented_pipelined::takes_heads(segmented_pipelined::equal_lengths{len})) {
    return plan::pipelined;
  }
  if (len % lines_tuning<Acc>().tile_items() == 0) return plan::lines_of_tiles;
  return plan::tile_heads;
}

// ---- the batched scans ------------------------------------------------------------------------
// A plan, and for column_groups the columns of a group.
struct batched_plan {
  plan kind;
  int cols = 0;
};

// Whether rows of Cols columns run as column groups: one slice, pointers aligned as the
// group (the single-pass scan handles any other offset); several slices only for 8-byte
// groups, 16-byte aligned (the segmented kernels of equal lengths take 4- and 8-byte
// values, not wider groups: 16-byte groups of several slices stay on the column tiles or
// the strided kernel).
template <class Acc, int Cols>
bool column_groups_take(const Acc* in, const Acc* out, const axis_view& v) {
  using group_t = column_group<Acc, Cols>;
  if (v.outer == 1) {
    return reinterpret_cast<std::uintptr_t>(in) % alignof(group_t) == 0 &&
           reinterpret_cast<std::uintptr_t>(out) % alignof(group_t) == 0;
  }
  return sizeof(group_t) == 8 && single_pass::aligned_16(in) && single_pass::aligned_16(out);
}

// One line: a plain scan (no heads). Along another axis: rows of 2, 3 or 4 columns as
// column groups (four only of a 4-byte type); then rows of whole 32-byte pieces (whole
// 128-byte lines, else 64- or 32-byte pieces), or of 16 bytes in slices of whole lines, in
// chains of more than one tile: the pipelined column tiles (tensor_maps false: the driver
// refused their tensor map, so the next plan); deterministic floats in few long chains of
// column tiles: reduce-then-scan; any other: the strided kernel. Along the last axis:
// lines_plan_for above for 16-byte aligned pointers to a 4- or 8-byte accumulator type,
// anything else the pair scan with heads computed per element.
template <class Acc, class In, class Out>
batched_plan batched_plan_for(In in, Out out, const axis_view& v, const options& o, bool tensor_maps = true) {
  if (v.outer == 1 && v.inner == 1) return {plan::plain_scan};
  if (v.inner > 1) {
    if constexpr (column_groups_v<Acc, In, Out>) {
      if (v.inner == 2 && column_groups_take<Acc, 2>(in, out, v)) return {plan::column_groups, 2};
      if (v.inner == 3 && column_groups_take<Acc, 3>(in, out, v)) return {plan::column_groups, 3};
      if (sizeof(Acc) == 4 && v.inner == 4 && column_groups_take<Acc, 4>(in, out, v)) {
        return {plan::column_groups, 4};
      }
    }
    if constexpr (strided::columns_take_v<Acc, In, Out>) {
      if (tensor_maps && pipelined_columns::takes<Acc>(in, out, v.outer, v.len, v.inner, o)) {
        return {plan::pipelined_columns};
      }
      if constexpr (!single_pass::exact_values<Acc>::value) {
        if (columns_reduce_then_scan::takes<Acc>(in, out, v.outer, v.len, v.inner, o)) {
          return {plan::columns_reduce_then_scan};
        }
      }
    }
    return {plan::strided};
  }
  if constexpr (vector_scan_v<Acc, In, Out>) {
    if (single_pass::aligned_16(in) && single_pass::aligned_16(out)) {
      return {lines_plan_for<Acc>(in, out, v.total(), v.len)};
    }
  }
  return {plan::pairs};
}

}  // namespace tally::detail::segmented
