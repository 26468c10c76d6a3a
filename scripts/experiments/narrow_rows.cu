// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o narrow_rows scripts/experiments/narrow_rows.cu
// run: ./narrow_rows [reps] (session 56; docs/perf-notes.md, "Rows of 3 to 12 columns");
// with -DTHREE_COLUMNS: rows of three columns of each type alone.
//
// Batched scans along axis 0 of (rows, C) arrays in one slice whose rows are neither 8 nor
// 16 bytes nor whole 32-byte pieces: 3, 5, 6, 7 or 12 int32 or float columns (rows of 12,
// 20, 24, 28, 48 bytes), 3 int64 or double (24 bytes). The public batched call takes the
// general strided kernel for them (segmented.cuh, batched). Against it: the public plain
// scan of the rows as C-column groups (one element a row, the operator column by column),
// as the library already scans rows of 8 and 16 bytes (segmented.cuh, column_groups).
// (8 int32 columns, rows of 32 bytes, which take the 2-word column tiles from 16 MiB,
// for comparison.) Beside a copy of the same bytes, interleaved; both outputs checked
// whole first (columns_common.cuh: inclusive, then exclusive with a seed).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "tally/tally.cuh"
#include "columns_common.cuh"
#include "timing.cuh"

template <class T, int C>
void run(const char* name, long long rows, int reps) {
  using G = group<T, C>;
  const column_case<T> c(1, rows, C);
  c.check_both(name, {0, 1}, [&](auto excl, int v, const T* in, T* out, T init) {
    const auto* i = reinterpret_cast<const G*>(in);
    auto* o = reinterpret_cast<G*>(out);
    G seed;
    for (int k = 0; k < C; ++k) seed.column[k] = init;
    if constexpr (decltype(excl)::value) {
      if (v == 0) tally::exclusive_scan_batched(in, out, rows, C, 0, init, tally::plus{});
      else tally::exclusive_scan(i, o, rows, seed, group_plus{});
    } else {
      if (v == 0) tally::inclusive_scan_batched(in, out, rows, C, 0, tally::plus{});
      else tally::inclusive_scan(i, o, rows, group_plus{});
    }
  });
  const auto* gi = reinterpret_cast<const G*>(c.in);
  auto* go = reinterpret_cast<G*>(c.out);
  const std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(c.out, c.in, c.n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
      [&] { tally::inclusive_scan_batched(c.in, c.out, rows, C, 0, tally::plus{}); },
      [&] { tally::inclusive_scan(gi, go, rows, group_plus{}); }};
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-6s (%lld, %d) %7.1f MiB p%d: copy %8.1f us | batched %.3fx | groups %.3fx\n", name, rows, C,
                c.n * sizeof(T) / 1048576.0, pass, t[0], t[1] / t[0], t[2] / t[0]);
  }
  std::fflush(stdout);
}

// rows for about `elements` values in all
template <class T, int C>
void sizes(const char* name, int reps) {
  for (long long elements : {1ll << 18, 1ll << 21, 1ll << 24, 1ll << 27}) run<T, C>(name, elements / C, reps);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
#ifdef THREE_COLUMNS
  // built with -DTHREE_COLUMNS (session 56, after the library took rows of three columns
  // as groups: the two variants run the same path there): three columns alone
  sizes<int, 3>("int32", reps);
  sizes<float, 3>("float", reps);
  sizes<long long, 3>("int64", reps);
  sizes<double, 3>("double", reps);
#else
  sizes<int, 3>("int32", reps);
  sizes<int, 5>("int32", reps);
  sizes<int, 6>("int32", reps);
  sizes<int, 7>("int32", reps);
  sizes<int, 12>("int32", reps);
  sizes<int, 8>("int32", reps);
  run<float, 3>("float", (1ll << 24) / 3, reps);
  run<float, 3>("float", (1ll << 27) / 3, reps);
  run<long long, 3>("int64", (1ll << 23) / 3, reps);
  run<long long, 3>("int64", (1ll << 26) / 3, reps);
  run<double, 3>("double", (1ll << 26) / 3, reps);
#endif
  return 0;
}
