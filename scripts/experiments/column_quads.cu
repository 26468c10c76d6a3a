// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o column_quads scripts/experiments/column_quads.cu
// run: ./column_quads [reps] (session 55; docs/perf-notes.md, "Rows of four 4-byte columns").
//
// Rows of exactly 16 bytes of a 4-byte type ((rows, 4) int32 or float) along axis 0, in
// one slice: the public batched call (1-word swizzled column tiles from 16 MiB, the strided
// kernel below) against the public plain scan of the rows as 16-byte quads (one element a
// row, the operator column by column), as (rows, 2) of 8-byte types already run as 16-byte
// pairs (segmented.cuh, column_groups). Beside a copy of the same bytes, interleaved; both
// outputs checked whole first (columns_common.cuh: inclusive, then exclusive with a seed).
// (Since the library took the quads itself, in session 55, the two columns run the same
// path: the second run of the session says so.)
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tally/tally.cuh"
#include "columns_common.cuh"
#include "timing.cuh"

namespace SG = tally::detail::segmented;

// the quads: four columns of T as one 16-byte element, the operator column by column
template <class T>
using quad = SG::column_group<T, 4>;
using quad_plus = SG::column_group_op<tally::plus>;

template <class T>
void run(const char* name, long long rows, int reps) {
  const column_case<T> c(1, rows, 4);
  const auto* qi = reinterpret_cast<const quad<T>*>(c.in);
  auto* qo = reinterpret_cast<quad<T>*>(c.out);
  // variant 0 the batched call, 1 the public scan of the quads
  c.check_both(name, {0, 1}, [&](auto excl, int v, const T* in, T* out, T init) {
    const auto* i = reinterpret_cast<const quad<T>*>(in);
    auto* o = reinterpret_cast<quad<T>*>(out);
    if constexpr (decltype(excl)::value) {
      if (v == 0) tally::exclusive_scan_batched(in, out, rows, 4, 0, init, tally::plus{});
      else tally::exclusive_scan(i, o, rows, quad<T>{{init, init, init, init}}, quad_plus{});
    } else {
      if (v == 0) tally::inclusive_scan_batched(in, out, rows, 4, 0, tally::plus{});
      else tally::inclusive_scan(i, o, rows, quad_plus{});
    }
  });
  const std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(c.out, c.in, c.n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
      [&] { tally::inclusive_scan_batched(c.in, c.out, rows, 4, 0, tally::plus{}); },
      [&] { tally::inclusive_scan(qi, qo, rows, quad_plus{}); }};
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-6s (%lld, 4) p%d: copy %8.1f us | batched %.3fx | quads %.3fx\n", name, rows, pass, t[0],
                t[1] / t[0], t[2] / t[0]);
  }
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  for (long long rows : {1ll << 10, 1ll << 14, 1ll << 16, 1ll << 18, 1ll << 19, 1ll << 20, 1ll << 21,
                         1ll << 22, 1ll << 23, 1ll << 25}) {
    run<int>("int32", rows, reps);
  }
  for (long long rows : {1ll << 20, 1ll << 23}) run<float>("float", rows, reps);
  return 0;
}
