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
//   Which call takes which plan: detail/segmented_plans.cuh (the one chooser of these
//   forms); which sizes, and why: docs/performance.md, "Plans and thresholds".
//   Launches per call: one for flags, keys, batched and, with the tile kernel, the offsets
//   forms and segmented_reduce (plus the first-call growth of the per-stream state buffer,
//   as for tally::inclusive_scan). Otherwise (the pipelined kernel or the pair scan) the
//   offsets forms take three (a clear and a kernel for the head bitmap, then the scan;
//   on the pipelined kernel each launch overlaps the one before: dependent_launch.cuh)
//   with a stream-ordered n/8-byte allocation, and segmented_reduce four, with a
//   stream-ordered allocation of n accumulators (the bitmap, the seeded scan, then a
//   gather of segment ends).
// options.strategy: automatic or decoupled_lookback (the chained protocol is a textbook
//   form of the plain scan only: tally::textbook); options.block: automatic or warp_scans;
//   options.storage must be empty (these forms do not take caller storage);
//   options.deterministic: floating-point results identical bit for bit from run to run
//   (the look-back combines strictly left to right).
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
#include "tally/device/detail/segmented_plans.cuh"
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

// ---- the engines, as the plans of detail/segmented_plans.cuh run them -----------------------
template <bool Exclusive>
inline constexpr auto scan_mode = Exclusive ? segmented_offsets::mode::exclusive : segmented_offsets::mode::inclusive;

// The tile kernel of segmented/tile_heads.cuh.
template <segmented_offsets::mode Mode, class Acc, class Out, class Source, class Op>
void tile_kernel(const char* function, const Acc* in, Out out, std::int64_t n, Source source,
                 Acc init, Op op, const options& o) {
  segmented_offsets::run<Mode, decoupled_lookback::protocol>(function, in, out, n, source, init, op, o);
}

// The pipelined kernel of large scans (segmented/pipelined.cuh).
template <bool Exclusive, class Acc, class Heads, class Op>
void pipelined_kernel(const char* function, const Acc* in, Acc* out, std::int64_t n, Heads heads,
                      Acc init, Op op, const options& o) {
  segmented_pipelined::scan<decoupled_lookback::protocol, Exclusive>(function, in, out, n, heads, init,
                                                                     op, o);
}

// Lines of a whole number of tiles: the plain single-pass scan over all n values, tiles by
// block where the device holds them all (else tickets), each line's first tile starting
// afresh (single_pass/tile_pipeline.cuh, "Lines"). No heads and no pairs, so a line costs
// about what a plain scan of the same n costs (docs/performance.md, "What each path
// earns").
template <bool Exclusive, class Acc, class Op>
void tile_lines_scan(const char* function, const Acc* in, Acc* out, std::int64_t n, std::int64_t len,
                     Acc init, Op op, const options& o) {
  constexpr single_pass::single_pass_tuning tune = lines_tuning<Acc>();
  const single_pass::tile_lines lines{static_cast<unsigned>(len / tune.tile_items())};
  single_pass::scan<decoupled_lookback::protocol, Exclusive, Acc, tune, true>(
      function, "", in, out, n, make_seed<Acc, Exclusive>(init), op, o, {}, 0, lines);
}

// ---- the flag, key and offsets forms --------------------------------------------------------
template <bool Exclusive, class Acc, class In, class Flags, class Out, class Op>
void flags_scan(const char* function, In in, Flags flags, Out out, std::int64_t n, Acc init, Op op,
                const options& o) {
  const plan p = flags_plan_for<Acc>(in, flags, out, n);
  if constexpr (vector_flags_v<Acc, In, Flags, Out>) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(flags);
    if (p == plan::pipelined) {
      pipelined_kernel<Exclusive>(function, in, out, n, segmented_pipelined::staged_flags{bytes}, init, op, o);
      return;
    }
    if (p == plan::tile_heads) {
      tile_kernel<scan_mode<Exclusive>>(function, in, out, n, segmented_offsets::flags_source{bytes}, init,
                                        op, o);
      return;
    }
  }
  scan<Exclusive, false, Acc>(function, in, out, n, flag_heads<Flags>{flags}, init, op, o);
}

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

template <bool Exclusive, class Acc, class Keys, class In, class Out, class Equal, class Op>
void keys_scan(const char* function, Keys keys, In in, Out out, std::int64_t n, Equal equal, Acc init,
               Op op, const options& o) {
  const plan p = keys_plan_for<Acc>(keys, in, out, n, equal);
  if constexpr (vector_scan_v<Acc, In, Out>) {
    if constexpr (stageable_keys_v<Keys>) {
      if (p == plan::pipelined) {
        using key_t = std::remove_cv_t<std::remove_pointer_t<Keys>>;
        pipelined_kernel<Exclusive>(function, in, out, n, segmented_pipelined::staged_keys<key_t, Equal>{keys, equal},
                                    init, op, o);
        return;
      }
    }
    if (p == plan::tile_heads) {
      using source = segmented_offsets::keys_source<Keys, Equal>;
      tile_kernel<scan_mode<Exclusive>>(function, in, out, n, source{keys, equal, run_ready<4>(keys)}, init,
                                        op, o);
      return;
    }
  }
  scan<Exclusive, false, Acc>(function, in, out, n, key_heads<Keys, Equal>{keys, equal}, init, op, o);
}

template <bool Exclusive, bool Seeded, class Acc, class In, class Out, class Offsets, class Op>
void offsets_scan(const char* function, In in, Out out, std::int64_t n, Offsets offsets,
                  std::int64_t num_segments, Acc init, Op op, const options& o) {
  const plan p = offsets_plan_for<Acc, Seeded>(in, out, n, offsets, num_segments);
  if constexpr (!Seeded && vector_scan_v<Acc, In, Out>) {
    if (p == plan::pipelined) {
      pipelined_kernel<Exclusive>(function, in, out, n,
                                  segmented_pipelined::offsets_bitmap<Offsets>{offsets, num_segments, nullptr},
                                  init, op, o);
      return;
    }
    if (p == plan::tile_heads) {
      tile_kernel<scan_mode<Exclusive>>(function, in, out, n,
                                        segmented_offsets::offsets_source<Offsets>{offsets, num_segments}, init,
                                        op, o);
      return;
    }
  }
  // plan::bitmap_pairs
  scoped_storage bits(function, "", nullptr, 0, bitmap_bytes(n) + storage_alignment, o.stream);
  auto* words = reinterpret_cast<std::uint32_t*>(bits.aligned());
  build_bitmap(function, offsets, num_segments, n, words, o.stream);
  scan<Exclusive, Seeded, Acc>(function, in, out, n, bitmap_heads{words}, init, op, o,
                               offsets_range<Offsets>{offsets, num_segments});
}

// segmented_reduce with n >= 1.
template <class Acc, class In, class Offsets, class Out, class Op>
void reduce(const char* function, In in, std::int64_t n, Offsets offsets, std::int64_t num_segments,
            Out out, Acc seed, Op op, const options& o) {
  const plan p = reduce_plan_for<Acc>(in, n, num_segments);
  if constexpr (segmented_offsets::acc_pointer_v<Acc, In>) {
    if (p == plan::ranges) {
      segmented_reduce::run<decoupled_lookback::protocol>(function, in, out, n, offsets, num_segments,
                                                          seed, op, o);
      return;
    }
    if (p == plan::tile_heads) {
      tile_kernel<segmented_offsets::mode::reduce>(
          function, in, out, n, segmented_offsets::offsets_source<Offsets>{offsets, num_segments},
          seed, op, o);
      return;
    }
  }
  // plan::scan_then_gather
  scoped_storage scratch(function, "", nullptr, 0,
                         static_cast<std::size_t>(n) * sizeof(Acc) + storage_alignment, o.stream);
  auto* scanned = reinterpret_cast<Acc*>(scratch.aligned());
  offsets_scan<false, true, Acc>(function, in, scanned, n, offsets, num_segments, seed, op, o);
  gather_ends(function, scanned, n, offsets, num_segments, out, seed, o.stream);
}

// ---- segments of equal lengths ----------------------------------------------------------------
// The plan of lines_plan_for, on n values in `segments` lines of len (16-byte aligned
// pointers to a 4- or 8-byte accumulator type).
template <bool Exclusive, class Acc, class Op>
void run_lines(plan p, const char* function, const Acc* in, Acc* out, std::int64_t n, std::int64_t len,
               std::int64_t segments, Acc init, Op op, const options& o) {
  switch (p) {
    case plan::whole_lines: whole_lines::scan<Exclusive>(function, in, out, n, len, init, op, o); return;
    case plan::pipelined:
      pipelined_kernel<Exclusive>(function, in, out, n, segmented_pipelined::equal_lengths{len}, init, op, o);
      return;
    case plan::lines_of_tiles: tile_lines_scan<Exclusive>(function, in, out, n, len, init, op, o); return;
    default: {
      using source = segmented_offsets::offsets_source<segmented_offsets::uniform_offsets>;
      tile_kernel<scan_mode<Exclusive>>(function, in, out, n, source{{len}, segments}, init, op, o);
    }
  }
}

// ---- the batched scans ------------------------------------------------------------------------
// Rows of Cols columns as ONE scan of column groups (batched/column_groups.cuh): one slice,
// the plain scan of the groups; several (8-byte groups), segments of len rows.
template <bool Exclusive, int Cols, class Acc, class Op>
void column_groups_scan(const char* function, const Acc* in, Acc* out, const axis_view& v, Acc init, Op op,
                        const options& o) {
  using group_t = column_group<Acc, Cols>;
  const auto* groups_in = reinterpret_cast<const group_t*>(in);
  auto* groups_out = reinterpret_cast<group_t*>(out);
  group_t seed;
  for (int c = 0; c < Cols; ++c) seed.column[c] = init;
  const column_group_op<Op> group_op{op};
  const std::int64_t rows = v.outer * v.len;
  if (v.outer == 1) {
    if constexpr (Exclusive) {
      tally::exclusive_scan(groups_in, groups_out, rows, seed, group_op, o);
    } else {
      tally::inclusive_scan(groups_in, groups_out, rows, group_op, o);
    }
    return;
  }
  if constexpr (sizeof(group_t) == 8) {  // (wider groups of several slices: not chosen)
    run_lines<Exclusive>(lines_plan_for<group_t>(groups_in, groups_out, rows, v.len), function, groups_in,
                         groups_out, rows, v.len, v.outer, seed, group_op, o);
  }
}

// The plan of batched_plan_for.
template <bool Exclusive, class Acc, class In, class Out, class Op>
void batched(const char* function, In in, Out out, const axis_view& v, Acc init, Op op,
             const options& o) {
  const std::int64_t n = v.total();
  check_device_pointer(function, "in", in, n);
  check_device_pointer(function, "out", out, n);
  if (n == 0) return;
  batched_plan p = batched_plan_for<Acc>(in, out, v, o);
  if constexpr (strided::columns_take_v<Acc, In, Out>) {
    if (p.kind == plan::pipelined_columns) {
      if (pipelined_columns::scan_rows<Exclusive, Acc>(function, in, out, v.outer, v.len, v.inner,
                                                       make_seed<Acc, Exclusive>(init), op, o)) {
        return;
      }
      // the driver refused the tensor map of rows of several lines; nothing launched
      p = batched_plan_for<Acc>(in, out, v, o, false);
    }
    if constexpr (!single_pass::exact_values<Acc>::value) {
      if (p.kind == plan::columns_reduce_then_scan) {
        const strided::column_geometry g = strided::make_column_geometry<Acc>(
            v.outer, v.len, v.inner, strided::column_words<Acc>(v.len));
        columns_reduce_then_scan::scan<Exclusive, Acc>(function, in, out, g, make_seed<Acc, Exclusive>(init), op,
                                                       o);
        return;
      }
    }
  }
  if constexpr (column_groups_v<Acc, In, Out>) {
    if (p.kind == plan::column_groups) {
      if (p.cols == 2) {
        column_groups_scan<Exclusive, 2>(function, in, out, v, init, op, o);
      } else if (p.cols == 3) {
        column_groups_scan<Exclusive, 3>(function, in, out, v, init, op, o);
      } else if constexpr (sizeof(Acc) == 4) {
        column_groups_scan<Exclusive, 4>(function, in, out, v, init, op, o);
      }
      return;
    }
  }
  if constexpr (vector_scan_v<Acc, In, Out>) {
    if (p.kind == plan::whole_lines || p.kind == plan::pipelined || p.kind == plan::lines_of_tiles ||
        p.kind == plan::tile_heads) {
      run_lines<Exclusive>(p.kind, function, in, out, n, v.len, v.outer, init, op, o);
      return;
    }
  }
  switch (p.kind) {
    case plan::plain_scan:
      if constexpr (Exclusive) {
        tally::exclusive_scan(in, out, n, init, op, o);
      } else {
        tally::inclusive_scan(in, out, n, op, o);
      }
      return;
    case plan::strided:
      strided::scan<Exclusive, Acc>(function, in, out, v.outer, v.len, v.inner, make_seed<Acc, Exclusive>(init),
                                    op, o);
      return;
    default:  // plan::pairs: along the last axis, heads computed per element
      if (n <= 0xffffffffll) {
        scan<Exclusive, false, Acc>(function, in, out, n,
                                    uniform_heads<std::uint32_t>{static_cast<std::uint32_t>(v.len)}, init, op, o);
      } else {
        scan<Exclusive, false, Acc>(function, in, out, n,
                                    uniform_heads<std::uint64_t>{static_cast<std::uint64_t>(v.len)}, init, op, o);
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
