// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o wide_values scripts/experiments/wide_values.cu
// run: ./wide_values [reps] (session 56; docs/perf-notes.md, "Values of 12 to 48 bytes").
//
// Where a plain scan of values wider than 16 bytes spends its time. Such values take the
// ticket kernel with the tile in registers (single_pass_scan.cuh; 256 threads x 2 rows from
// 17 bytes) and, past 16 bytes, the descriptors of three arrays (tile_state.cuh, format 32:
// a poll reads the tag, then the value). Values: rows of C int32 columns as one element
// (C = 3, 6, 12: 12, 24, 48 bytes), the operator column by column. Variants, each beside a
// copy of the same bytes, interleaved: the public scan; single_pass::scan with R rows a
// thread (the look-back as the library has it); the same with a protocol that never waits
// (each tile its own aggregate as its prefix: wrong on purpose, the ceiling of the tiles).
// The look-back variants' outputs are checked whole first (columns_common.cuh).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "tally/tally.cuh"
#include "columns_common.cuh"
#include "timing.cuh"

namespace SP = tally::detail::single_pass;

// rows of C int32 columns as one element (columns_common.cuh)
template <int C>
using row = group<int, C>;

// the ticket kernel's protocol without the wait: publishes the aggregate, takes it as
// the prefix
struct nowait_tiles {
  static constexpr bool has_deterministic_mode = false;
  template <bool Deterministic, class Descriptors, class Acc, class Op>
  __device__ static Acc exclusive_prefix(const Descriptors& d, unsigned epoch, std::int64_t tile,
                                         const Acc& aggregate, Op&) {
    if ((threadIdx.x & 31) == 0) d.store(tile, SP::make_tag(epoch, SP::status_aggregate), aggregate);
    return aggregate;
  }
};
using lookback = tally::detail::decoupled_lookback::protocol;

template <class P, int C, int R>
void tiles(const row<C>* in, row<C>* out, long long rows) {
  SP::scan<P, false, row<C>, SP::single_pass_tuning{256, R, 1}>("wide_values", "", in, out, rows,
                                                                  tally::detail::seed_value<row<C>, false>{},
                                                                  group_plus{}, tally::options{});
}

template <int C, int... Rs>
void run(long long rows, int reps) {
  using G = row<C>;
  const column_case<int> c(1, rows, C);
  const auto* gi = reinterpret_cast<const G*>(c.in);
  auto* go = reinterpret_cast<G*>(c.out);
  std::vector<std::function<void()>> checked = {[&] { tally::inclusive_scan(gi, go, rows, group_plus{}); }};
  (checked.push_back([&] { tiles<lookback, C, Rs>(gi, go, rows); }), ...);
  std::vector<int> variants;
  for (int v = 0; v < static_cast<int>(checked.size()); ++v) variants.push_back(v);
  c.check<false>("int32", variants, [&](int v, const int*, int*, int) { checked[v](); });
  std::printf("ok (%lld, %d)\n", rows, C);
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(c.out, c.in, c.n * sizeof(int), cudaMemcpyDeviceToDevice, 0)); }};
  for (auto& f : checked) fs.push_back(f);
  (fs.push_back([&] { tiles<nowait_tiles, C, Rs>(gi, go, rows); }), ...);
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%2d-byte values, %6.1f MiB p%d: copy %7.1f us | public %.3fx | look-back", C * 4,
                c.n * 4 / 1048576.0, pass, t[0], t[1] / t[0]);
    int k = 2;
    for (int r : {Rs...}) std::printf(" R%d %.3fx", r, t[k++] / t[0]);
    std::printf(" | nowait");
    for (int r : {Rs...}) std::printf(" R%d %.3fx", r, t[k++] / t[0]);
    std::printf("\n");
  }
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  for (long long elements : {1ll << 24, 1ll << 27}) {
    run<3, 2, 4, 8>(elements / 3, reps);
    run<6, 1, 2, 4>(elements / 6, reps);
    run<12, 1, 2, 4>(elements / 12, reps);
  }
  return 0;
}
