// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// --extended-lambda -Iinclude -Iscripts/experiments -I.deps/usr/include -o column_groups
// scripts/experiments/column_groups.cu
// (session 53; docs/perf-notes.md, "Column groups by tensor copies").
// The experiment: batched scans along axis 0 of rows of several 128-byte lines ((2^20, 32)
// int64, (2^20, 64) int32 ...) by columns_kernel (strided_scan.cuh, one block a tile: what
// the public call took before), by the pipelined column tiles copied with one tensor copy
// a tile (pipelined_columns.cuh, called directly), and by the public call, beside a
// device-to-device copy of the same bytes, interleaved (timing.cuh: each sample runs
// every call once, in turn, behind a spin kernel). Every variant's output is checked
// first (integers exactly, floats against a double oracle), on small shapes at the edges
// and on every timed shape.
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

// variant 0: columns_kernel; 1: the pipelined column tiles (tensor copies where the rows
// hold several lines); 2: the public call
template <bool Exclusive, class T>
void run(int variant, const T* in, T* out, std::int64_t outer, std::int64_t len, std::int64_t inner, T init) {
  const tally::options o;
  const auto seed = tally::detail::make_seed<T, Exclusive>(init);
  const std::int64_t shape[3] = {outer, len, inner};
  switch (variant) {
    case 0: st::columns<Exclusive, T>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o); break;
    case 1:
      if (!pc::scan<Exclusive, T>("experiment", in, out, outer, len, inner, seed, tally::plus{}, o)) {
        std::printf("the tensor map was refused\n");
        std::exit(1);
      }
      break;
    default:
      if constexpr (Exclusive) {
        tally::exclusive_scan_batched(in, out, std::span<const std::int64_t>(shape, 3), 1, init, tally::plus{}, o);
      } else {
        tally::inclusive_scan_batched(in, out, std::span<const std::int64_t>(shape, 3), 1, tally::plus{}, o);
      }
      break;
  }
}

// every variant, inclusive and exclusive, on a small shape
template <class T>
void check_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner) {
  const column_case<T> c(outer, len, inner);
  c.check_both(name, {0, 1, 2}, [&](auto exclusive, int v, const T* in, T* out, T init) {
    run<decltype(exclusive)::value, T>(v, in, out, outer, len, inner, init);
  });
}

// checked (inclusive, every variant), then timed: copy, columns_kernel, pipelined, public
template <class T>
void time_case(const char* name, std::int64_t outer, std::int64_t len, std::int64_t inner, int reps) {
  const column_case<T> c(outer, len, inner);
  const std::int64_t n = c.n;
  c.template check<false>(name, {0, 1, 2}, [&](int v, const T* in, T* out, T init) {
    run<false, T>(v, in, out, outer, len, inner, init);
  });
  const auto t = interleaved_us(
      {[&] { CK(cudaMemcpyAsync(c.out, c.in, n * sizeof(T), cudaMemcpyDeviceToDevice)); },
       [&] { run<false, T>(0, c.in, c.out, outer, len, inner, T{}); },
       [&] { run<false, T>(1, c.in, c.out, outer, len, inner, T{}); },
       [&] { run<false, T>(2, c.in, c.out, outer, len, inner, T{}); }},
      reps);
  std::printf("time %-7s (%lld, %lld, %lld) %6.1f MiB, chains %lld: copy %7.2f us | columns %.3fx | pipelined %.3fx | "
              "public %.3fx\n",
              name, (long long)outer, (long long)len, (long long)inner, n * sizeof(T) / 1048576.0,
              (long long)(outer * ((inner + pc::width<T> - 1) / pc::width<T>)), t[0], t[1] / t[0], t[2] / t[0],
              t[3] / t[0]);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  if (argc > 2 && std::strcmp(argv[2], "chains") == 0) {
    // the second set: many chains (where the public call keeps columns_kernel past
    // max_chains), to set max_chains
    const int first = argc > 3 ? std::atoi(argv[3]) : 0;  // the first shape (a rerun's)
    for (int pass = 0; pass < 2; ++pass) {
      int shape = 0;
      const auto time_case = [&]<class T>(const char* name, std::int64_t outer, std::int64_t len,
                                          std::int64_t inner, int r, T) {
        if (shape++ >= first) ::time_case<T>(name, outer, len, inner, r);
      };
      time_case("int32", 1, 16384, 4096, reps, int{});       // 128 chains of 64 tiles
      time_case("int32", 1, 8192, 8192, reps, int{});        // 256 of 32
      time_case("int32", 1, 4096, 16384, reps, int{});       // 512 of 16
      time_case("int32", 1, 2048, 32768, reps, int{});       // 1024 of 8
      time_case("int32", 1, 1024, 65536, reps, int{});       // 2048 of 4
      time_case("int32", 1, 512, 131072, reps, int{});       // 4096 of 2
      time_case("int32", 1, 300, 223744, reps, int{});       // 6992 of 2, the second partial
      time_case("int32", 64, 1024, 1024, reps, int{});       // 2048 of 4, 64 slices
      time_case("float", 1, 16384, 4096, reps, float{});     // 128 of 64
      time_case("int64", 1, 16384, 4096, reps, 0LL); // 256 of 64, 512 MiB
      time_case("double", 1, 8192, 4096, reps, double{});    // 256 of 32
      time_case("int32", 1, 16384, 1024, reps, int{});       // 32 of 64, 64 MiB (taken before)
    }
    return 0;
  }
  // edges: a line shorter than a tile, one tile and a row, a partial last tile, several
  // slices, 2-4 column groups
  check_case<int>("int32", 1, 100, 64);
  check_case<int>("int32", 1, 257, 64);
  check_case<int>("int32", 3, 777, 96);
  check_case<int>("int32", 1, 100003, 128);
  check_case<float>("float", 2, 3000, 64);
  check_case<long long>("int64", 1, 50001, 32);
  check_case<long long>("int64", 5, 1000, 48);
  check_case<double>("double", 1, 60000, 32);
  for (int pass = 0; pass < 2; ++pass) {
    time_case<long long>("int64", 1, 1 << 20, 32, reps);
    time_case<double>("double", 1, 1 << 20, 32, reps);
    time_case<int>("int32", 1, 1 << 20, 64, reps);
    time_case<float>("float", 1, 1 << 20, 64, reps);
    time_case<int>("int32", 1, 1 << 19, 128, reps);
    time_case<int>("int32", 4, 1 << 18, 64, reps);
    time_case<long long>("int64", 1, 1 << 20, 48, reps);
    time_case<int>("int32", 1, 1 << 17, 64, reps);
    time_case<int>("int32", 1, 1 << 16, 64, reps);
    time_case<int>("int32", 1, 1 << 20, 32, reps);          // one group: a bulk copy a tile (control)
    time_case<int>("int32", 1, 16384, 4096, reps);          // 128 chains: columns_kernel publicly
  }
  return 0;
}
