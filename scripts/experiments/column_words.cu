// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// --extended-lambda -Iinclude -Iscripts/experiments -I.deps/usr/include -o column_words
// scripts/experiments/column_words.cu
// (session 53; docs/perf-notes.md, "Column words of 4: two chains where there was one";
// session 54 added `column_words 15 odd`: rows of an odd number of 64-byte pieces, which
// only 4 words cut into whole column groups, and the plain scan of the same bytes beside
// one chain of (2^20, 32) int32; `column_words 15 narrow`: rows of 16 to 96 bytes on
// tiles of 2 column words (1024 rows x 32 bytes) and of 1 (2048 rows x 16 bytes), where
// the public call took strided_kernel; `column_words 15 swizzle`: the tiles of rows of one
// tile row, 64, 32 or 16 bytes, with the stage read as it lands and swizzled).
// The experiment: batched scans along axis 0 by the pipelined column tiles with 8 column
// words (128-byte tile rows, 256 rows: the library's for rows of whole lines) and with 4
// (64-byte tile rows, 512 rows: rows of one line become two column groups, two chains of
// tiles, copied by tensor copies; rows of exactly 64 bytes one group, a bulk copy a tile),
// beside the public call and a device-to-device copy of the same bytes, interleaved
// (timing.cuh). Every variant's output is checked first against a double oracle, on
// small shapes at the edges and on every timed shape.
#include <tally/tally.cuh>
#include "columns_common.cuh"
#include <tally/device/detail/pipelined_columns.cuh>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace st = tally::detail::strided;
namespace pc = tally::detail::pipelined_columns;

// variant 0: the public call; 1: the pipelined tiles with 8 column words (128-byte tile
// rows: the library's); 2: with 4 column words (64-byte tile rows, 512 rows a tile: rows of
// one line become two column groups, two chains, tensor copies)
template <bool Exclusive, class T>
void run(int variant, const T* in, T* out, std::int64_t outer, std::int64_t len, std::int64_t inner, T init) {
  const tally::options o;
  const auto seed = tally::detail::make_seed<T, Exclusive>(init);
  const std::int64_t shape[3] = {outer, len, inner};
  using H = tally::detail::single_pass::no_stall;
  bool ok = true;
  switch (variant) {
    case 0:
      if constexpr (Exclusive) {
        tally::exclusive_scan_batched(in, out, std::span<const std::int64_t>(shape, 3), 1, init, tally::plus{}, o);
      } else {
        tally::inclusive_scan_batched(in, out, std::span<const std::int64_t>(shape, 3), 1, tally::plus{}, o);
      }
      break;
    case 1: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 8>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    case 2: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 4>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    case 3: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 2>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    case 4: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 1>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    case 5: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 4, true>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    case 6: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 2, true>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    default: ok = pc::scan<Exclusive, T, tally::plus, H, 4, 1, true>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
  }
  if (!ok) { std::printf("the tensor map was refused\n"); std::exit(1); }
}

// the variants of a shape: 8 words only where the rows are whole 128-byte lines
template <class T>
std::vector<int> variants_of(std::int64_t inner) {
  return inner % pc::width<T> == 0 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 2};
}

// every variant, inclusive and exclusive, on a small shape
template <class T>
void check_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner) {
  const column_case<T> c(outer, len, inner);
  c.check_both(name, variants_of<T>(inner), [&](auto exclusive, int v, const T* in, T* out, T init) {
    run<decltype(exclusive)::value, T>(v, in, out, outer, len, inner, init);
  });
}

// checked (inclusive, every variant), then timed: copy, public, words 4, words 8 (where
// the rows are whole lines), and with `plain` the plain scan of the same n values
template <class T>
void time_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, int reps,
               bool plain = false) {
  const column_case<T> c(outer, len, inner);
  const std::int64_t n = c.n;
  c.template check<false>(name, variants_of<T>(inner), [&](int v, const T* in, T* out, T init) {
    run<false, T>(v, in, out, outer, len, inner, init);
  });
  const bool words8 = inner % pc::width<T> == 0;
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(c.out, c.in, n * sizeof(T), cudaMemcpyDeviceToDevice)); },
      [&] { run<false, T>(0, c.in, c.out, outer, len, inner, T{}); },
      [&] { run<false, T>(2, c.in, c.out, outer, len, inner, T{}); }};
  if (words8) fs.push_back([&] { run<false, T>(1, c.in, c.out, outer, len, inner, T{}); });
  if (plain) fs.push_back([&] { tally::inclusive_scan(c.in, c.out, n); });
  const auto t = interleaved_us(fs, reps);
  std::printf("time %-7s (%lld, %lld, %lld) %6.1f MiB: copy %7.2f us | public %.3fx | words 4 %.3fx | words 8 %.3fx",
              name, (long long)outer, (long long)len, (long long)inner, n * sizeof(T) / 1048576.0, t[0], t[1] / t[0],
              t[2] / t[0], words8 ? t[3] / t[0] : 0.0);
  if (plain) std::printf(" | plain scan of n %.3fx", t.back() / t[0]);
  std::printf("\n");
}

// Rows narrower than 64 bytes, or of an odd number of 32-byte pieces: 2 column words (32-byte
// tile rows, 1024 rows a tile) where the rows are whole 32-byte pieces, 1 word (2048 rows of
// 16 bytes) always; the public call takes strided_kernel there. Checked: every variant
// that applies, inclusive and exclusive, on small shapes; timed: copy, public, 2 words, 1.
template <class T>
std::vector<int> narrow_variants(std::int64_t inner) {
  std::vector<int> v = {0};
  if (inner % (2 * pc::vec<T>) == 0) v.push_back(3);
  v.push_back(4);
  return v;
}

// Small shapes: every variant of `vs` but the first (the public call, another kernel
// below 16 MiB), inclusive and exclusive.
template <class T>
void check_variants(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, std::vector<int> vs) {
  const column_case<T> c(outer, len, inner);
  vs.erase(vs.begin());
  c.check_both(name, vs, [&](auto exclusive, int v, const T* in, T* out, T init) {
    run<decltype(exclusive)::value, T>(v, in, out, outer, len, inner, init);
  });
}

// Every variant of `vs` checked (inclusive), then timed beside the copy, interleaved; prints
// the shape and the copy's time and returns each variant's time over the copy's.
template <class T>
std::vector<double> time_variants(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner,
                                  int reps, const std::vector<int>& vs) {
  const column_case<T> c(outer, len, inner);
  const std::int64_t n = c.n;
  c.template check<false>(name, vs, [&](int v, const T* in, T* out, T init) {
    run<false, T>(v, in, out, outer, len, inner, init);
  });
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(c.out, c.in, n * sizeof(T), cudaMemcpyDeviceToDevice)); }};
  for (const int v : vs) fs.push_back([&, v] { run<false, T>(v, c.in, c.out, outer, len, inner, T{}); });
  const auto t = interleaved_us(fs, reps);
  std::printf("time %-7s (%lld, %lld, %lld) %6.1f MiB: copy %7.2f us", name, (long long)outer, (long long)len,
              (long long)inner, n * sizeof(T) / 1048576.0, t[0]);
  std::vector<double> ratios;
  for (std::size_t i = 1; i < t.size(); ++i) ratios.push_back(t[i] / t[0]);
  return ratios;
}

template <class T>
void check_narrow(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner) {
  check_variants<T>(name, outer, len, inner, narrow_variants<T>(inner));
}

template <class T>
void time_narrow(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, int reps) {
  const std::vector<int> vs = narrow_variants<T>(inner);
  const auto r = time_variants<T>(name, outer, len, inner, reps, vs);
  std::printf(" | public %.3fx", r[0]);
  for (std::size_t i = 1; i < vs.size(); ++i) std::printf(" | words %d %.3fx", vs[i] == 3 ? 2 : 1, r[i]);
  std::printf("\n");
}

void narrow_rows(int reps) {
  check_narrow<int>("int32", 1, 3000, 8);
  check_narrow<int>("int32", 3, 5000, 4);
  check_narrow<int>("int32", 2, 4000, 24);
  check_narrow<float>("float", 1, 9000, 12);
  check_narrow<long long>("int64", 1, 7000, 4);
  check_narrow<double>("double", 2, 3001, 2);
  check_narrow<long long>("int64", 1, 5000, 6);
  for (int pass = 0; pass < 2; ++pass) {
    time_narrow<int>("int32", 1, 1 << 22, 8, reps);       // 32-byte rows
    time_narrow<float>("float", 1, 1 << 22, 8, reps);
    time_narrow<int>("int32", 1, 1 << 23, 4, reps);       // 16-byte rows
    time_narrow<int>("int32", 1, 1 << 21, 12, reps);      // 48 bytes
    time_narrow<int>("int32", 1, 1 << 20, 24, reps);      // 96 bytes
    time_narrow<long long>("int64", 1, 1 << 22, 4, reps); // 32 bytes
    // (no double timing: the oracle's tolerance for floats is too tight for lines of 2^22
    // doubles in the public call's association, session 54's first run)
    time_narrow<int>("int32", 4, 1 << 20, 8, reps);       // 4 slices
    time_narrow<int>("int32", 1, 1 << 19, 8, reps);       // 16 MiB
    time_narrow<int>("int32", 1, 1 << 18, 8, reps);       // 8 MiB
    time_narrow<long long>("int64", 1, 1 << 18, 12, reps); // 96 bytes, 24 MiB
  }
}

// Rows of one tile row of 64, 32 or 16 bytes: the words that fit, with the stage read
// as it lands (bulk copy) and swizzled (a tensor copy with the 128-byte swizzle).
// variants: 2/5 = 4 words, 3/6 = 2 words, 4/7 = 1 word (plain / swizzled)
template <class T>
std::vector<int> swizzle_variants(std::int64_t inner) {
  if (inner == 4 * pc::vec<T>) return {0, 2, 5};
  if (inner == 2 * pc::vec<T>) return {0, 3, 6};
  return {0, 4, 7};
}

template <class T>
void check_swizzle(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner) {
  check_variants<T>(name, outer, len, inner, swizzle_variants<T>(inner));
}

template <class T>
void time_swizzle(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, int reps) {
  const auto r = time_variants<T>(name, outer, len, inner, reps, swizzle_variants<T>(inner));
  std::printf(" | public %.3fx | plain %.3fx | swizzled %.3fx\n", r[0], r[1], r[2]);
}

void swizzle_rows(int reps) {
  check_swizzle<int>("int32", 1, 5000, 16);
  check_swizzle<int>("int32", 1, 3000, 8);
  check_swizzle<int>("int32", 3, 4096, 8);
  check_swizzle<int>("int32", 1, 9000, 4);
  check_swizzle<long long>("int64", 1, 7000, 4);
  check_swizzle<double>("double", 2, 2048, 2);
  check_swizzle<float>("float", 1, 6000, 16);
  for (int pass = 0; pass < 2; ++pass) {
    time_swizzle<int>("int32", 1, 1 << 21, 16, reps);       // 64-byte rows
    time_swizzle<long long>("int64", 1, 1 << 21, 8, reps);
    time_swizzle<int>("int32", 1, 1 << 22, 8, reps);        // 32-byte rows
    time_swizzle<float>("float", 1, 1 << 22, 8, reps);
    time_swizzle<long long>("int64", 1, 1 << 22, 4, reps);
    time_swizzle<int>("int32", 4, 1 << 20, 8, reps);
    time_swizzle<int>("int32", 1, 1 << 23, 4, reps);        // 16-byte rows
    time_swizzle<float>("float", 1, 1 << 23, 4, reps);
    time_swizzle<int>("int32", 1, 1 << 19, 8, reps);        // 16 MiB
  }
}

// Rows of an odd number of 64-byte pieces (192, 320, ... bytes): the public call takes
// columns_kernel there (a block a tile); 4 column words cut them into whole groups.
void odd_rows(int reps) {
  check_case<int>("int32", 1, 1000, 48);
  check_case<int>("int32", 3, 1777, 80);
  check_case<int>("int32", 1, 3000, 16 * 7);
  check_case<float>("float", 2, 2500, 48);
  check_case<long long>("int64", 1, 5000, 24);
  check_case<double>("double", 2, 3001, 40);
  for (int pass = 0; pass < 2; ++pass) {
    time_case<int>("int32", 1, 1 << 20, 32, reps, true);  // one chain beside the plain scan
    time_case<int>("int32", 1, 1 << 19, 48, reps);        // 192-byte rows: 3 groups
    time_case<float>("float", 1, 1 << 19, 48, reps);
    time_case<int>("int32", 1, 1 << 18, 80, reps);        // 320 bytes: 5 groups
    time_case<int>("int32", 1, 1 << 17, 16 * 7, reps);    // 448 bytes: 7 groups
    time_case<int>("int32", 1, 16384, 4080, reps);        // 255 groups
    time_case<long long>("int64", 1, 1 << 19, 24, reps);  // 192 bytes
    time_case<double>("double", 1, 1 << 19, 24, reps);
    time_case<double>("double", 4, 1 << 16, 40, reps);    // 320 bytes, 4 slices: 20 chains
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  if (argc > 2 && std::strcmp(argv[2], "odd") == 0) {
    odd_rows(reps);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "swizzle") == 0) {
    swizzle_rows(reps);
    return 0;
  }
  if (argc > 2 && std::strcmp(argv[2], "narrow") == 0) {
    narrow_rows(reps);
    return 0;
  }
  check_case<int>("int32", 1, 100, 32);
  check_case<int>("int32", 1, 513, 32);
  check_case<int>("int32", 3, 1777, 32);
  check_case<int>("int32", 1, 100003, 16);
  check_case<float>("float", 2, 3000, 32);
  check_case<long long>("int64", 1, 50001, 16);
  check_case<long long>("int64", 5, 1000, 8);
  check_case<double>("double", 1, 60000, 16);
  for (int pass = 0; pass < 2; ++pass) {
    time_case<int>("int32", 1, 1 << 20, 32, reps);
    time_case<float>("float", 1, 1 << 20, 32, reps);
    time_case<long long>("int64", 1, 1 << 20, 16, reps);
    time_case<double>("double", 1, 1 << 20, 16, reps);
    time_case<int>("int32", 2, 1 << 19, 32, reps);
    time_case<int>("int32", 1, 1 << 22, 32, reps);
    time_case<int>("int32", 1, 1 << 18, 32, reps);
    time_case<int>("int32", 1, 1 << 21, 16, reps);       // 64-byte rows: strided_kernel publicly
    time_case<long long>("int64", 1, 1 << 21, 8, reps);  // the same
  }
  return 0;
}
