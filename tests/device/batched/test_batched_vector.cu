// GPU batched scans: the vector paths of 16-byte aligned 4- and 8-byte values.
//
// These calls leave the general kernels for faster ones when the pointers are 16-byte
// aligned (cudaMalloc'd buffers here) and the values are 4 or 8 bytes:
//   - two 4-byte columns (inner == 2) as one scan of 8-byte column pairs: one slice
//     through the single-pass scan, several through the tile kernel of
//     segmented/tile_heads.cuh with segments of len rows; two 8-byte columns in one slice as
//     one scan of 16-byte pairs (from 4 MiB the pipelined kernel), and so four 4-byte
//     columns as 16-byte groups; misaligned by one value: the strided kernel;
//   - rows of >= 128 bytes along a non-last axis through columns_kernel (batched/strided.cuh):
//     chains of tiles with the windowed look-back, partial column groups and chunks, tiles
//     that hold a whole line;
//   - along the last axis, lines that fill 3/4 of a tile in tiles of whole lines
//     (batched/whole_lines.cuh: small tiles of 2048 values, large ones of 8 rows; lengths that
//     are not a multiple of 4, one-element lines, a last tile that ends inside a 16-byte
//     word), lines that divide a 16-byte word (1, 2, 4 values) a word per thread, the
//     tile kernel with computed heads for the others (lines of 5000 and 6000), and lines
//     of a whole number of tiles (multiples of 8192 4-byte or 2048 8-byte values: 2^17,
//     16384, 24576, and the long chains below) the plain scan's kernel, each line's first
//     tile starting afresh;
//   - rows of exactly 128 bytes in at most 64 long lines, from 16 MiB on, through the
//     pipelined column tiles (batched/pipelined_columns.cuh; also called directly, below);
//   - with options.deterministic on floats, from 16 MiB on, few long chains of column
//     tiles through the reduce-then-scan (batched/columns_reduce_then_scan.cuh; also called
//     directly, below);
//   - lines of at most 32 rows along another axis: one thread per line, or four 4-byte
//     lines a thread (short_line_words_kernel) for lines of at most 8 rows from 2^16 such
//     words on (in chunks of 4 rows: 3, 4 and 8 rows);
// and shapes beside them that keep strided_kernel (rows narrower than 128 bytes; chains of
// 8-15 tiles for (20000, 3), 2-4 in each slice of (4, 3000, 5), so that its look-back
// runs, deterministic and not). A non-commutative operator (affine maps x -> a x + b composed in
// order, wrap-around, exact) makes an operand taken in the wrong order, or a prefix taken
// from the wrong tile or column, change the result; plus on int32, float and double
// (small integers: every sum is exact) on chains long enough for the look-back to wait.
// Results are compared exactly with tally::cpu::sequential.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_affine.cuh"
#include "test_common.cuh"

namespace {

using namespace tally_test;
using namespace tally_test::affine;
namespace seq = tally::cpu::sequential;
using i64 = std::int64_t;

using batched_case = std::pair<std::vector<i64>, int>;  // shape, axis

// Every case inclusive and exclusive, with and without options.deterministic, against the
// sequential scan; `out` is poisoned first, so an element never written fails.
template <class T, class Op>
void check_cases(const std::vector<batched_case>& cases, const std::vector<T>& h, const T& init, Op op) {
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  std::vector<T> want(h.size());
  for (const auto& [shape, axis] : cases) {
    const std::span<const i64> s(shape);
    const auto total = static_cast<std::size_t>(element_count(shape));
    ASSERT_LE(total, h.size());
    for (const bool exclusive : {false, true}) {
      for (const bool deterministic : {false, true}) {
        tally::options o;
        o.deterministic = deterministic;
        out.poison();
        if (exclusive) {
          tally::exclusive_scan_batched(static_cast<const T*>(in.data()), out.data(), s, axis, init, op, o);
          seq::exclusive_scan_batched(h.begin(), want.begin(), s, axis, init, op);
        } else {
          tally::inclusive_scan_batched(static_cast<const T*>(in.data()), out.data(), s, axis, op, o);
          seq::inclusive_scan_batched(h.begin(), want.begin(), s, axis, op);
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        const std::vector<T> got = out.download(total);
        for (std::size_t i = 0; i < total; ++i) {
          ASSERT_TRUE(got[i] == want[i])
              << (exclusive ? "exclusive" : "inclusive") << (deterministic ? " deterministic" : "")
              << " batched scan " << shape_string(shape) << " along axis " << axis << ": element " << i
              << " is " << show(got[i]) << ", want " << show(want[i]);
        }
      }
    }
  }
}

// One case per path and edge (see the top); at most 1.28M elements.
const std::vector<batched_case> path_cases = {
    {{5000, 2}, 0},     {{3, 1000, 2}, 1},     {{1 << 12, 32}, 0},  {{3, 1001, 36}, 1},
    {{2, 1000, 40}, 1}, {{7, 333, 96}, 1},     {{1, 40, 1024}, 1},  {{20000, 64}, 0},
    {{3, 100, 7}, 1},   {{2, 5000}, 1},        {{1000, 3}, 1},      {{4, 33, 8}, 1},
    {{2047, 5}, 1},     {{4001, 1}, 1},        {{300, 1000}, 1},    {{5, 4096}, 1},
    {{9, 8192}, 1},     {{3, 6000}, 1},        {{150, 1500}, 1},    {{600, 2047}, 1},
    {{4, 1 << 18}, 0},  {{2, 3, 1 << 17}, 1},  {{3, 65536}, 0},   {{3001, 2}, 1},
    {{1001, 4}, 1},     {{2, 3, 4}, 2},        {{8, 1 << 18}, 0},   {{3, 16384}, 1},
    {{5, 24576}, 1},    {{20000, 3}, 0},       {{4, 3000, 5}, 1}};

template <class T, class Op>
void check_affine(Op op) {
  i64 m = 0;
  for (const auto& c : path_cases) m = std::max(m, element_count(c.first));
  std::mt19937_64 g(4242 + sizeof(T));
  std::vector<T> h(static_cast<std::size_t>(m));
  for (auto& x : h) {
    x.a = static_cast<decltype(x.a)>(g() | 1u);
    x.b = static_cast<decltype(x.b)>(g());
  }
  check_cases(path_cases, h, T{3, 5}, op);
}

TEST(SegmentedBatchedVector, NonCommutative4Byte) { check_affine<affine16>(compose16{}); }
TEST(SegmentedBatchedVector, NonCommutative8Byte) { check_affine<affine32>(compose32{}); }

// Long chains with plus: 2^21 elements (2^18 in quick mode, for compute-sanitizer).
template <class T>
void check_long_chains() {
  const i64 rows = quick() ? 1 << 13 : 1 << 16;
  const std::vector<batched_case> cases = {
      {{rows, 32}, 0}, {{rows * 16, 2}, 0}, {{4, rows * 4, 2}, 1}, {{rows / 32, 1024}, 0}, {{rows, 32}, 1},
      {{2, rows * 16}, 0}, {{rows * 16, 2}, 1}, {{2, rows * 16}, 1}, {{4, rows * 8}, 1}};
  std::mt19937_64 g(99 + sizeof(T));
  std::vector<T> h(static_cast<std::size_t>(rows) * 32);
  for (auto& x : h) x = static_cast<T>(static_cast<int>(g() % 201) - 100);
  check_cases(cases, h, static_cast<T>(7), tally::plus{});
}

// options.deterministic on non-integer floats: the same bits in every run (5; quick mode
// 3), and within (32 + 4 log2 len) ulps of a double oracle's prefix of |x| per line.
// Along axis 0, columns_kernel's deterministic look-back (which folds each window left to
// right): chains of 256 tiles (32 in quick mode) of 32 and of 128 columns. Rows narrower
// than 128 bytes, strided_kernel's windowed look-back: 3 and 16 columns (4-byte values;
// 3 and 8 for 8-byte ones), chains of 97-193 tiles (13-25 in quick mode). Along the last
// axis, lines of whole tiles on the plain scan's kernel (single_pass/tile_pipeline.cuh, "Lines"):
// 2 lines of 2^20 (2^17 in quick mode) and 16 of 2^17 (2^14). Inclusive and exclusive.
template <class T>
void check_deterministic(const std::vector<batched_case>& cases) {
  i64 m = 0;
  for (const auto& c : cases) m = std::max(m, element_count(c.first));
  std::mt19937_64 g(777 + sizeof(T));
  std::vector<T> h(static_cast<std::size_t>(m));
  for (auto& x : h) x = static_cast<T>(std::uniform_real_distribution<double>(-1000.0, 1000.0)(g));
  std::vector<double> wide(h.begin(), h.end()), magnitude(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) magnitude[i] = std::fabs(wide[i]);
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  tally::options o;
  o.deterministic = true;
  const T init = static_cast<T>(0.3);
  const int runs = quick() ? 3 : 5;
  for (const auto& [shape, axis] : cases) {
    const std::span<const i64> s(shape);
    const auto total = static_cast<std::size_t>(element_count(shape));
    const double ulps = 32.0 + 4.0 * std::log2(static_cast<double>(shape[static_cast<std::size_t>(axis)]) + 1.0);
    for (const bool exclusive : {false, true}) {
      SCOPED_TRACE(shape_string(shape) + " along axis " + std::to_string(axis) +
                   (exclusive ? ", exclusive" : ", inclusive"));
      std::vector<double> want(total), scale(total);
      if (exclusive) {
        const double d_init = static_cast<double>(init);
        seq::exclusive_scan_batched(wide.begin(), want.begin(), s, axis, d_init, tally::plus{});
        seq::exclusive_scan_batched(magnitude.begin(), scale.begin(), s, axis, std::fabs(d_init), tally::plus{});
      } else {
        seq::inclusive_scan_batched(wide.begin(), want.begin(), s, axis, tally::plus{});
        seq::inclusive_scan_batched(magnitude.begin(), scale.begin(), s, axis, tally::plus{});
      }
      std::vector<T> first_run;
      for (int run = 0; run < runs; ++run) {
        out.poison();
        if (exclusive) {
          tally::exclusive_scan_batched(static_cast<const T*>(in.data()), out.data(), s, axis, init, tally::plus{}, o);
        } else {
          tally::inclusive_scan_batched(static_cast<const T*>(in.data()), out.data(), s, axis, tally::plus{}, o);
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        auto got = out.download(total);
        if (run == 0) {
          for (std::size_t i = 0; i < total; ++i) {
            const double tol = ulps * std::numeric_limits<T>::epsilon() * scale[i];
            ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), tol)
                << "element " << i << " is " << show(got[i]) << ", expected about " << want[i];
          }
          first_run = std::move(got);
        } else {
          for (std::size_t i = 0; i < total; ++i) {
            ASSERT_EQ(std::memcmp(&got[i], &first_run[i], sizeof(T)), 0)
                << "run " << run << " differs from run 0 at element " << i << ": " << show(got[i]) << " vs "
                << show(first_run[i]);
          }
        }
      }
    }
  }
}

std::vector<batched_case> deterministic_columns() {
  const i64 rows = quick() ? 1 << 13 : 1 << 16;
  std::vector<batched_case> cases = {{{rows, 32}, 0}, {{rows / 4, 128}, 0}};
  // from 16 MiB, one chain: the reduce-then-scan (batched/columns_reduce_then_scan.cuh)
  if (!quick()) cases.push_back({{(i64{1} << 17) + 77, 32}, 0});
  return cases;
}
template <class T>
std::vector<batched_case> deterministic_narrow_rows() {
  const i64 rows = quick() ? 1 << 15 : 1 << 18;
  return {{{rows, 3}, 0}, {{rows / 4, sizeof(T) == 4 ? 16 : 8}, 0}};
}
std::vector<batched_case> deterministic_lines() {
  const i64 len = quick() ? 1 << 17 : 1 << 20;
  return {{{2, len}, 1}, {{16, len / 8}, 1}};
}

TEST(SegmentedBatchedVector, DeterministicFloatColumns) { check_deterministic<float>(deterministic_columns()); }
TEST(SegmentedBatchedVector, DeterministicDoubleColumns) { check_deterministic<double>(deterministic_columns()); }
TEST(SegmentedBatchedVector, DeterministicFloatNarrowRows) { check_deterministic<float>(deterministic_narrow_rows<float>()); }
TEST(SegmentedBatchedVector, DeterministicDoubleNarrowRows) { check_deterministic<double>(deterministic_narrow_rows<double>()); }
TEST(SegmentedBatchedVector, DeterministicFloatLines) { check_deterministic<float>(deterministic_lines()); }
TEST(SegmentedBatchedVector, DeterministicDoubleLines) { check_deterministic<double>(deterministic_lines()); }

// ---- the pipelined column tiles (batched/pipelined_columns.cuh) ----------------------------------------
// The public scans take them only from 16 MiB of data on (rows of whole 32-byte pieces, at
// most 8192 chains): public cases for 4- and 8-byte values, rows of one line and of two,
// of 64, 192 and 320 bytes (4 words), of 32 and 96 bytes (2 words), of 16 bytes (1 word),
// in full mode (with options.deterministic, the 8-byte floats keep columns_kernel), and the
// kernel called directly at every edge: a line shorter than a tile, exactly one, one tile
// and a row, a partial last tile, several lines, more tiles than the device holds blocks at
// once, in place; each in rows of one line (a bulk copy a tile) and of two or three (a
// tensor copy a tile: column groups); plus, float and double (small integers: exact),
// int64, and the non-commutative affine maps; and a stall test.
namespace pc = tally::detail::pipelined_columns;

// (Words: the tile's column words, 8 (128-byte tile rows), 4 (64-byte ones), 2 (32-byte
// ones) or 1; a row is `groups` tile rows wide; Swizzle: the stage copied swizzled, one
// group only)
template <bool Exclusive, class T, class Op, class Hook = tally::detail::single_pass::no_stall, int Words = pc::words,
          bool Swizzle = false>
void pipelined_columns_scan(const T* in, T* out, i64 outer, i64 len, const T& init, Op op, Hook hook = {},
                            i64 groups = 1) {
  ASSERT_TRUE((pc::scan<Exclusive, T, Op, Hook, pc::lookback_reads, Words, Swizzle>(
      "pipelined columns test", in, out, outer, len, groups * Words * pc::vec<T>,
      tally::detail::make_seed<T, Exclusive>(init), op, tally::options{}, hook)))
      << "the tensor map of rows of " << groups << " column groups was refused";
}

// tiles of the largest case: more than an sm_90 GPU (132 SMs) holds blocks at once (3 per
// SM)
i64 many_tiles() { return quick() ? 420 : 1400; }

// (rows of `groups` lines: inner = groups x W; the shapes' sizes shrink with groups, so
// that each fits the input of pipelined_columns_input)
// (Swizzle: several slices only where they are whole 128-byte lines, as swizzles() asks:
// (3, 2 rows + 8) instead of (3, 777) and (5, 3 rows - 1))
template <int Words = pc::words, bool Swizzle = false, class T, class Op>
void check_pipelined_columns(const std::vector<T>& h, const T& init, Op op, i64 groups = 1) {
  using no_stall = tally::detail::single_pass::no_stall;
  const i64 W = groups * Words * pc::vec<T>;  // the row: `groups` column groups
  const i64 rows = pc::rows_of<Words>;
  const i64 longest = many_tiles() / groups * rows - 13;
  const std::vector<std::pair<i64, i64>> shapes =  // (outer, len)
      Swizzle ? std::vector<std::pair<i64, i64>>{{1, 100}, {1, rows}, {1, rows + 1}, {1, 1000}, {3, 2 * rows + 8},
                                                 {2, 16 * rows}, {1, longest}}
              : std::vector<std::pair<i64, i64>>{{1, 100}, {1, rows}, {1, rows + 1}, {1, 1000}, {3, 777},
                                                 {2, 16 * rows}, {5, 3 * rows - 1}, {1, longest}};
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  std::vector<T> want(h.size());
  for (const auto& [outer, len] : shapes) {
    const std::vector<i64> shape = {outer, len, W};
    const auto total = static_cast<std::size_t>(outer * len * W);
    ASSERT_LE(total, h.size());
    for (const bool exclusive : {false, true}) {
      out.poison();
      if (exclusive) {
        pipelined_columns_scan<true, T, Op, no_stall, Words, Swizzle>(in.data(), out.data(), outer, len, init, op, {},
                                                                      groups);
        seq::exclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1, init, op);
      } else {
        pipelined_columns_scan<false, T, Op, no_stall, Words, Swizzle>(in.data(), out.data(), outer, len, init, op,
                                                                       {}, groups);
        seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1, op);
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const std::vector<T> got = out.download(total + 1);
      for (std::size_t i = 0; i < total; ++i) {
        ASSERT_TRUE(got[i] == want[i]) << (exclusive ? "exclusive" : "inclusive") << " (" << outer << ", "
                                       << len << ", " << W << ") along axis 1: element " << i << " is "
                                       << show(got[i]) << ", want " << show(want[i]);
      }
      ASSERT_TRUE(device_buffer<T>::is_poison(got[total])) << "written past the end";
    }
  }
  // in place, the largest shape
  const std::vector<i64> shape = {1, longest, W};
  device_buffer<T> work(h);
  pipelined_columns_scan<true, T, Op, no_stall, Words, Swizzle>(work.data(), work.data(), 1, longest, init, op, {},
                                                                groups);
  seq::exclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1, init, op);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<T> got = work.download(static_cast<std::size_t>(longest * W));
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(got[i] == want[i]) << "in place: element " << i;
  }
}

template <class T>
std::vector<T> pipelined_columns_input(std::uint64_t salt) {
  const auto size = static_cast<std::size_t>(many_tiles() * pc::tile_rows * pc::width<T> + 1);
  std::mt19937_64 g(salt + sizeof(T));
  std::vector<T> h(size);
  for (auto& x : h) {
    if constexpr (std::is_arithmetic_v<T>) {
      x = static_cast<T>(static_cast<int>(g() % 201) - 100);
    } else {
      x.a = static_cast<decltype(x.a)>(g() | 1u);
      x.b = static_cast<decltype(x.b)>(g());
    }
  }
  return h;
}

TEST(SegmentedBatchedVector, PipelinedColumns) {
  check_pipelined_columns(pipelined_columns_input<std::int32_t>(11), std::int32_t{7}, tally::plus{});
  check_pipelined_columns(pipelined_columns_input<float>(12), 7.0f, tally::plus{});
  check_pipelined_columns(pipelined_columns_input<std::int64_t>(13), std::int64_t{-3}, tally::plus{});
  check_pipelined_columns(pipelined_columns_input<double>(14), 0.5, tally::plus{});
  check_pipelined_columns(pipelined_columns_input<affine16>(15), affine16{3, 5}, compose16{});
  check_pipelined_columns(pipelined_columns_input<affine32>(16), affine32{3, 5}, compose32{});
}

// Rows of two and three 128-byte lines: each tile a box of the tensor map (column groups,
// each a chain of its own beside the outer slices).
TEST(SegmentedBatchedVector, PipelinedColumnGroups) {
  check_pipelined_columns(pipelined_columns_input<std::int32_t>(41), std::int32_t{7}, tally::plus{}, 2);
  check_pipelined_columns(pipelined_columns_input<float>(42), 7.0f, tally::plus{}, 3);
  check_pipelined_columns(pipelined_columns_input<std::int64_t>(43), std::int64_t{-3}, tally::plus{}, 2);
  check_pipelined_columns(pipelined_columns_input<double>(44), 0.5, tally::plus{}, 3);
  check_pipelined_columns(pipelined_columns_input<affine16>(45), affine16{3, 5}, compose16{}, 2);
  check_pipelined_columns(pipelined_columns_input<affine32>(46), affine32{3, 5}, compose32{}, 3);
}

// Tiles of 4 column words (64-byte tile rows, 512 rows): rows of exactly 64 bytes (one
// group, a bulk copy a tile), of two groups (two tensor copies of 256 rows a tile), and of
// an odd number of groups (rows of 192 and 320 bytes: what the public call takes 4 words
// for, besides 64 bytes).
TEST(SegmentedBatchedVector, PipelinedColumnsFourWords) {
  check_pipelined_columns<4>(pipelined_columns_input<std::int32_t>(51), std::int32_t{7}, tally::plus{});
  check_pipelined_columns<4>(pipelined_columns_input<double>(52), 0.5, tally::plus{});
  check_pipelined_columns<4>(pipelined_columns_input<affine16>(53), affine16{3, 5}, compose16{});
  check_pipelined_columns<4>(pipelined_columns_input<float>(54), 7.0f, tally::plus{}, 2);
  check_pipelined_columns<4>(pipelined_columns_input<affine32>(55), affine32{3, 5}, compose32{}, 2);
  check_pipelined_columns<4>(pipelined_columns_input<std::int32_t>(56), std::int32_t{7}, tally::plus{}, 3);
  check_pipelined_columns<4>(pipelined_columns_input<std::int64_t>(57), std::int64_t{-3}, tally::plus{}, 5);
  check_pipelined_columns<4>(pipelined_columns_input<affine16>(58), affine16{3, 5}, compose16{}, 3);
}

// Tiles of 2 column words (32-byte tile rows, 1024 rows): rows of exactly 32 bytes (one
// group, a bulk copy a tile) and of three groups (96 bytes: four tensor copies of 256 rows
// a tile), what the public call takes them for.
TEST(SegmentedBatchedVector, PipelinedColumnsTwoWords) {
  check_pipelined_columns<2>(pipelined_columns_input<std::int32_t>(61), std::int32_t{7}, tally::plus{});
  check_pipelined_columns<2>(pipelined_columns_input<double>(62), 0.5, tally::plus{});
  check_pipelined_columns<2>(pipelined_columns_input<affine16>(63), affine16{3, 5}, compose16{});
  check_pipelined_columns<2>(pipelined_columns_input<float>(64), 7.0f, tally::plus{}, 3);
  check_pipelined_columns<2>(pipelined_columns_input<std::int64_t>(65), std::int64_t{-3}, tally::plus{}, 3);
  check_pipelined_columns<2>(pipelined_columns_input<affine32>(66), affine32{3, 5}, compose32{}, 3);
}

// The swizzled stage (rows of one tile row of 64, 32 or 16 bytes, slices of whole lines):
// 4, 2 and 1 words, each with a 4- and an 8-byte type, and the non-commutative maps.
TEST(SegmentedBatchedVector, PipelinedColumnsSwizzled) {
  check_pipelined_columns<4, true>(pipelined_columns_input<std::int32_t>(71), std::int32_t{7}, tally::plus{});
  check_pipelined_columns<4, true>(pipelined_columns_input<double>(72), 0.5, tally::plus{});
  check_pipelined_columns<2, true>(pipelined_columns_input<float>(73), 7.0f, tally::plus{});
  check_pipelined_columns<2, true>(pipelined_columns_input<std::int64_t>(74), std::int64_t{-3}, tally::plus{});
  check_pipelined_columns<2, true>(pipelined_columns_input<affine16>(75), affine16{3, 5}, compose16{});
  check_pipelined_columns<1, true>(pipelined_columns_input<std::int32_t>(76), std::int32_t{7}, tally::plus{});
  check_pipelined_columns<1, true>(pipelined_columns_input<double>(77), 0.5, tally::plus{});
  check_pipelined_columns<1, true>(pipelined_columns_input<affine32>(78), affine32{3, 5}, compose32{});
}

// The stall test for this kernel: the producer calls the hook right after drawing a
// tile's ticket, before the tile's copy starts; the tiles below a delayed one must wait
// for it (one chain: every tile looks back through the ones above it; rows of two lines:
// two chains, tickets alternating between them).
TEST(SegmentedBatchedVector, PipelinedColumnsStallTest) {
  using T = std::int32_t;
  const i64 tiles = many_tiles();
  const std::vector<T> h = pipelined_columns_input<T>(21);
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  for (const i64 groups : {1, 2}) {
    const i64 W = groups * pc::width<T>;
    const i64 len = tiles / groups * pc::tile_rows - 5;
    const std::vector<i64> shape = {len, W};
    std::vector<T> want(static_cast<std::size_t>(len * W));
    seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 0, tally::plus{});
    for (const stall& s : stall_cases(tiles, 7u)) {
      SCOPED_TRACE(describe(s) + ", rows of " + std::to_string(groups) + " lines");
      out.poison();
      pipelined_columns_scan<false>(in.data(), out.data(), 1, len, T{0}, tally::plus{}, s, groups);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const std::vector<T> got = out.download(want.size());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

// Through the public scans (16 MiB and more; not in quick mode, which keeps the sizes
// small for compute-sanitizer: the kernel tests above cover it there).
TEST(SegmentedBatchedVector, PipelinedColumnsPublic) {
  if (quick()) GTEST_SKIP() << "16 MiB and more";
  const i64 rows = (i64{1} << 17) + 77;
  std::mt19937_64 g(31);
  std::vector<std::int32_t> hi(static_cast<std::size_t>(rows * 32));
  for (auto& x : hi) x = static_cast<std::int32_t>(static_cast<int>(g() % 201) - 100);
  // rows of one line, then of two (column groups: (rows / 2, 64) int32 and (rows, 32)
  // double), then of 64 bytes (tiles of 4 column words: (2 rows, 16) int32, (2 rows, 8)
  // double), then of 192 and 320 bytes (4 column words, 3 and 5 groups: (2 rows / 3, 48)
  // int32, (rows, 24) double, (2, rows / 4, 40) double), then of 32 and 96 bytes (2 column
  // words, 1 and 3 groups: (4 rows, 8) and (4 rows / 3, 24) int32, (4 rows, 4) double;
  // swizzled but for the 3 groups and (2, 2 rows, 8), whose slices are not whole lines),
  // then of 16 bytes (1 word, swizzled: (8 rows, 4) int32; (2, 4 rows - 4, 2) double)
  check_cases<std::int32_t>({{{rows, 32}, 0},
                             {{2, rows / 2, 32}, 1},
                             {{rows / 2, 64}, 0},
                             {{2 * rows, 16}, 0},
                             {{2 * rows / 3, 48}, 0},
                             {{4 * rows, 8}, 0},
                             {{4 * rows / 3, 24}, 0},
                             {{2, 2 * rows, 8}, 1},
                             {{2, 2 * rows - 2, 8}, 1},
                             {{8 * rows, 4}, 0}},
                            hi, 7, tally::plus{});
  std::vector<double> hd(static_cast<std::size_t>(rows * 32));
  for (auto& x : hd) x = static_cast<double>(static_cast<int>(g() % 201) - 100);
  check_cases<double>({{{rows, 16}, 0},
                       {{3, rows / 3, 16}, 1},
                       {{rows, 32}, 0},
                       {{2 * rows, 8}, 0},
                       {{rows, 24}, 0},
                       {{2, rows / 4, 40}, 1},
                       {{4 * rows, 4}, 0},
                       {{2, 4 * rows - 4, 2}, 1}},
                      hd, 0.5, tally::plus{});
}

// ---- the deterministic reduce-then-scan (batched/columns_reduce_then_scan.cuh) ------------------------
// The public scans take it only with options.deterministic, from 16 MiB of data on (one
// public case each above, DeterministicFloatColumns and PipelinedColumnsPublic's double
// rows, in full mode), so here its scan is called directly at every edge: 2 row chunks
// (one tile in the last group), 9 (one full group of 8 and the last chunk after it), 10
// and 27 (a partial last group), a partial last chunk, several chains, a partial column
// group (36 4-byte or 20 8-byte columns: tiles of 32 or 16), in place; exact values
// (small integers in float and double, the non-commutative affine maps) against the
// sequential scan, and non-integer floats for the same bits run to run.
namespace rts = tally::detail::columns_reduce_then_scan;

template <bool Exclusive, class T, class Op>
void reduce_then_scan(const T* in, T* out, const std::vector<i64>& shape, const T& init, Op op) {
  namespace st = tally::detail::strided;
  const st::column_geometry g = st::make_column_geometry<T>(shape[0], shape[1], shape[2], st::column_words<T>(shape[1]));
  ASSERT_GE(g.chunks, 2);
  rts::scan<Exclusive, T>("reduce-then-scan test", in, out, g, tally::detail::make_seed<T, Exclusive>(init), op,
                          tally::options{});
}

template <class T>
std::vector<std::vector<i64>> reduce_then_scan_shapes() {
  constexpr i64 rows = 256;  // a tile's rows (8 column words of 16 bytes)
  const i64 inner = sizeof(T) == 4 ? 32 : 16, ragged = sizeof(T) == 4 ? 36 : 20;
  return {{1, rows + 1, inner},  {1, 9 * rows, inner}, {1, 10 * rows, inner}, {1, 27 * rows - 5, inner},
          {3, 10 * rows + 7, inner}, {2, 9 * rows + 1, ragged}, {1, (quick() ? 40 : 200) * rows + 3, inner}};
}

template <class T, class Op>
void check_reduce_then_scan(const T& init, Op op) {
  const auto shapes = reduce_then_scan_shapes<T>();
  i64 m = 0;
  for (const auto& s : shapes) m = std::max(m, s[0] * s[1] * s[2]);
  std::mt19937_64 g(41 + sizeof(T));
  std::vector<T> h(static_cast<std::size_t>(m) + 1);
  for (auto& x : h) {
    if constexpr (std::is_arithmetic_v<T>) {
      x = static_cast<T>(static_cast<int>(g() % 201) - 100);
    } else {
      x.a = static_cast<decltype(x.a)>(g() | 1u);
      x.b = static_cast<decltype(x.b)>(g());
    }
  }
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  std::vector<T> want(h.size());
  for (const auto& shape : shapes) {
    const auto total = static_cast<std::size_t>(shape[0] * shape[1] * shape[2]);
    const std::span<const i64> s(shape);
    for (const bool exclusive : {false, true}) {
      SCOPED_TRACE(shape_string(shape) + (exclusive ? ", exclusive" : ", inclusive"));
      out.poison();
      if (exclusive) {
        reduce_then_scan<true>(in.data(), out.data(), shape, init, op);
        seq::exclusive_scan_batched(h.begin(), want.begin(), s, 1, init, op);
      } else {
        reduce_then_scan<false>(in.data(), out.data(), shape, init, op);
        seq::inclusive_scan_batched(h.begin(), want.begin(), s, 1, op);
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const std::vector<T> got = out.download(total + 1);
      for (std::size_t i = 0; i < total; ++i) {
        ASSERT_TRUE(got[i] == want[i]) << "element " << i << " is " << show(got[i]) << ", want " << show(want[i]);
      }
      ASSERT_TRUE(device_buffer<T>::is_poison(got[total])) << "written past the end";
    }
  }
  // in place, the largest shape
  const std::vector<i64>& shape = shapes.back();
  const auto total = static_cast<std::size_t>(shape[0] * shape[1] * shape[2]);
  device_buffer<T> work(h);
  reduce_then_scan<true>(work.data(), work.data(), shape, init, op);
  seq::exclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1, init, op);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const std::vector<T> got = work.download(total);
  for (std::size_t i = 0; i < total; ++i) ASSERT_TRUE(got[i] == want[i]) << "in place: element " << i;
}

// Non-integer values: the same bits in every run (3), and within (32 + 4 log2 len) ulps of
// a double oracle's prefix of |x|.
template <class T>
void check_reduce_then_scan_bits() {
  const auto shapes = reduce_then_scan_shapes<T>();
  const std::vector<i64>& shape = shapes.back();
  const auto total = static_cast<std::size_t>(shape[0] * shape[1] * shape[2]);
  std::mt19937_64 g(43 + sizeof(T));
  std::vector<T> h(total);
  for (auto& x : h) x = static_cast<T>(std::uniform_real_distribution<double>(-1000.0, 1000.0)(g));
  std::vector<double> wide(h.begin(), h.end()), magnitude(total), want(total), scale(total);
  for (std::size_t i = 0; i < total; ++i) magnitude[i] = std::fabs(wide[i]);
  const std::span<const i64> s(shape);
  seq::inclusive_scan_batched(wide.begin(), want.begin(), s, 1, tally::plus{});
  seq::inclusive_scan_batched(magnitude.begin(), scale.begin(), s, 1, tally::plus{});
  const double ulps = 32.0 + 4.0 * std::log2(static_cast<double>(shape[1]) + 1.0);
  const device_buffer<T> in(h);
  device_buffer<T> out(total);
  std::vector<T> first_run;
  for (int run = 0; run < 3; ++run) {
    out.poison();
    reduce_then_scan<false>(in.data(), out.data(), shape, T{}, tally::plus{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto got = out.download(total);
    if (run == 0) {
      for (std::size_t i = 0; i < total; ++i) {
        ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), ulps * std::numeric_limits<T>::epsilon() * scale[i])
            << "element " << i << " is " << show(got[i]) << ", expected about " << want[i];
      }
      first_run = std::move(got);
    } else {
      ASSERT_EQ(std::memcmp(got.data(), first_run.data(), total * sizeof(T)), 0) << "run " << run << " differs";
    }
  }
}

TEST(SegmentedBatchedVector, ReduceThenScanColumns) {
  check_reduce_then_scan(7.0f, tally::plus{});
  check_reduce_then_scan(0.5, tally::plus{});
  check_reduce_then_scan(affine16{3, 5}, compose16{});
  check_reduce_then_scan(affine32{3, 5}, compose32{});
}
TEST(SegmentedBatchedVector, ReduceThenScanColumnsSameBits) {
  check_reduce_then_scan_bits<float>();
  check_reduce_then_scan_bits<double>();
}

// Rows of 16 bytes along axis 0, two 8-byte columns or four 4-byte ones, and rows of three
// columns (12 or 24 bytes): one slice is one scan of column groups (the tiles by ticket
// below 4 MiB; in full mode, from 4 MiB, the pipelined kernel, which scans 16-byte groups
// by lane runs and 12- and 24-byte ones in wide tiles: the sanitizer runs those through
// test_single_pass.cu's PipelinedTiles and PipelinedWideTiles), several slices keep the
// column tiles or the strided kernel; int64, double, int32 and float (small integers:
// exact) and the affine maps of the column's size (non-commutative), inclusive and
// exclusive, with and without options.deterministic; then pointers one value off 16 bytes
// (16-byte rows: the strided kernel; three columns: still the groups, whose alignment is
// the column's), whole, nothing written outside.
template <int Cols, class T, class Op>
void check_column_groups(const std::vector<T>& h, const T& init, Op op) {
  static_assert(Cols * sizeof(T) == 16 || Cols == 3, "rows of 16 bytes, or of three columns");
  const i64 big = quick() ? (i64{1} << 15) + 5 : (i64{1} << 21) + 5;  // 32 MiB + 80 bytes in full mode
  check_cases<T>({{{big, Cols}, 0}, {{1000, Cols}, 0}, {{1, Cols}, 0}, {{3, 1000, Cols}, 1}, {{2, big / 4, Cols}, 1}},
                 h, init, op);
  const i64 rows = 4099;
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  std::vector<T> want(static_cast<std::size_t>(Cols * rows));
  const std::vector<T> slice(h.begin() + 1, h.begin() + 1 + Cols * rows);
  seq::inclusive_scan_batched(slice.begin(), want.begin(), std::vector<i64>{rows, Cols}, 0, op);
  out.poison();
  tally::inclusive_scan_batched(static_cast<const T*>(in.data()) + 1, out.data() + 1, rows, Cols, 0, op);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = out.download(static_cast<std::size_t>(Cols * rows + 2));
  ASSERT_TRUE(device_buffer<T>::is_poison(got[0]));
  ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(Cols * rows + 1)]));
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_TRUE(got[i + 1] == want[i]) << "misaligned, element " << i << " is " << show(got[i + 1]) << ", want "
                                       << show(want[i]);
  }
}

// The values for check_column_groups: enough for its largest case.
template <int Cols>
std::size_t column_group_values() {
  return (quick() ? (std::size_t{1} << 15) + 8 : (std::size_t{1} << 21) + 8) * Cols;
}

template <class T, int cols = static_cast<int>(16 / sizeof(T))>
void check_column_groups_plus() {
  std::mt19937_64 g(515 + sizeof(T) + cols);
  std::vector<T> h(column_group_values<cols>());
  for (auto& x : h) x = static_cast<T>(static_cast<int>(g() % 201) - 100);
  check_column_groups<cols>(h, static_cast<T>(7), tally::plus{});
}

// affine16 or affine32: a odd (the maps stay invertible), b anything
template <class A, class Compose, int cols = static_cast<int>(16 / sizeof(A))>
void check_column_groups_affine() {
  using word = decltype(A{}.a);
  std::mt19937_64 g(516 + sizeof(A) + cols);
  std::vector<A> h(column_group_values<cols>());
  for (auto& x : h) {
    x.a = static_cast<word>(g() | 1u);
    x.b = static_cast<word>(g());
  }
  check_column_groups<cols>(h, A{3, 5}, Compose{});
}

TEST(SegmentedBatchedVector, EightByteColumnPairsInt64) { check_column_groups_plus<std::int64_t>(); }
TEST(SegmentedBatchedVector, EightByteColumnPairsDouble) { check_column_groups_plus<double>(); }
TEST(SegmentedBatchedVector, EightByteColumnPairsNonCommutative) { check_column_groups_affine<affine32, compose32>(); }
TEST(SegmentedBatchedVector, FourColumnGroupsInt32) { check_column_groups_plus<std::int32_t>(); }
TEST(SegmentedBatchedVector, FourColumnGroupsFloat) { check_column_groups_plus<float>(); }
TEST(SegmentedBatchedVector, FourColumnGroupsNonCommutative) { check_column_groups_affine<affine16, compose16>(); }
TEST(SegmentedBatchedVector, ThreeColumnGroupsInt32) { check_column_groups_plus<std::int32_t, 3>(); }
TEST(SegmentedBatchedVector, ThreeColumnGroupsFloat) { check_column_groups_plus<float, 3>(); }
TEST(SegmentedBatchedVector, ThreeColumnGroupsInt64) { check_column_groups_plus<std::int64_t, 3>(); }
TEST(SegmentedBatchedVector, ThreeColumnGroupsDouble) { check_column_groups_plus<double, 3>(); }
TEST(SegmentedBatchedVector, ThreeColumnGroupsNonCommutative) {
  check_column_groups_affine<affine16, compose16, 3>();  // 12-byte groups
  check_column_groups_affine<affine32, compose32, 3>();  // 24-byte groups
}
// the same bits in every run, on non-integer values, one slice (the groups' deterministic
// look-back: the pipelined kernel's from 4 MiB in full mode)
TEST(SegmentedBatchedVector, DeterministicDoubleColumnPairs) {
  check_deterministic<double>({{{quick() ? (i64{1} << 15) + 77 : (i64{1} << 21) + 77, 2}, 0}});
}
TEST(SegmentedBatchedVector, DeterministicFloatFourColumnGroups) {
  check_deterministic<float>({{{quick() ? (i64{1} << 15) + 77 : (i64{1} << 21) + 77, 4}, 0}});
}
TEST(SegmentedBatchedVector, DeterministicThreeColumnGroups) {
  check_deterministic<float>({{{quick() ? (i64{1} << 15) + 77 : (i64{1} << 21) + 77, 3}, 0}});
  check_deterministic<double>({{{quick() ? (i64{1} << 15) + 77 : (i64{1} << 21) + 77, 3}, 0}});
}

TEST(SegmentedBatchedVector, LongChainsInt32) { check_long_chains<std::int32_t>(); }
TEST(SegmentedBatchedVector, LongChainsFloat) { check_long_chains<float>(); }
TEST(SegmentedBatchedVector, LongChainsDouble) { check_long_chains<double>(); }

}  // namespace
