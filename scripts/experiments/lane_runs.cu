// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o lane_runs scripts/experiments/lane_runs.cu
// run: ./lane_runs [reps] [threshold] (session 55; docs/perf-notes.md, "Lane runs").
//
// The pipelined kernel's step a two ways (pipelined_scan.cuh): by rows (scan_rows, a warp
// scan a row) and by lane runs (scan_lane_runs, each lane its rows consecutive vectors,
// one warp scan a tile). For each type and size, beside a copy of the same bytes, in one
// process and interleaved: the kernel launched directly with the public look-back protocol
// by rows and by lane runs, and the same two without any wait (nowait.cuh: the ceiling).
// The outputs of the two real variants are checked whole against the host (columns_common.cuh:
// inclusive, then exclusive with a seed), before any timing.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/tally.cuh"
#include "tally/device/detail/pipelined_scan.cuh"
#include "columns_common.cuh"
#include "nowait.cuh"
#include "timing.cuh"

namespace SG = tally::detail::segmented;
namespace P = tally::detail::pipelined;
namespace S = tally::detail::single_pass;
namespace DL = tally::detail::decoupled_lookback;

template <class Protocol, bool Excl, bool LaneRuns, class T, class Op>
void pipelined_scan(const T* in, T* out, long long n, const T& init, Op op) {
  using program = P::plain_tiles<Excl, T, Op, 256, 9, 2, LaneRuns>;
  constexpr P::pipelined_tuning tune{256, 9, 2};
  tally::options o;
  S::with_call_state<T, P::tuning<T, tune>()>(
      "lane_runs", "lane_runs", n, o, 0,
      [&](std::int64_t tiles, S::tile_state<T> state) {
        const program p{in, out, n, tally::detail::make_seed<T, Excl>(init), op};
        P::launch<Protocol, false>("lane_runs", p, tiles, state, S::no_stall{}, o.stream, false);
      },
      true);
}

// The elements scanned: T itself (Cols 1), or rows of Cols values of T as one 16-byte
// column group (segmented.cuh), the operator column by column.
template <class T, int Cols>
using element = std::conditional_t<Cols == 1, T, SG::column_group<T, Cols>>;
template <int Cols>
using element_op = std::conditional_t<Cols == 1, tally::plus, SG::column_group_op<tally::plus>>;
template <class T, int Cols>
element<T, Cols> splat(T v) {
  if constexpr (Cols == 1) {
    return v;
  } else {
    element<T, Cols> e;
    for (int c = 0; c < Cols; ++c) e.column[c] = v;
    return e;
  }
}

// One (rows, Cols) array of T (columns_common.cuh's column_case: its input, its oracle
// along axis 0), scanned as `rows` elements.
template <class T, int Cols>
struct grouped_case : column_case<T> {
  using E = element<T, Cols>;
  explicit grouped_case(long long rows) : column_case<T>(1, rows, Cols) {}
  const E* in_elements() const { return reinterpret_cast<const E*>(this->in); }
  E* out_elements() const { return reinterpret_cast<E*>(this->out); }
  void copy() const { CK(cudaMemcpyAsync(this->out, this->in, this->n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); }
};

// the pipelined kernel with the look-back, by rows (variant 0) or lane runs (1)
template <class T, int Cols, bool Excl>
void by_variant(int v, const T* in, T* out, long long rows, T init) {
  const auto* ei = reinterpret_cast<const element<T, Cols>*>(in);
  auto* eo = reinterpret_cast<element<T, Cols>*>(out);
  if (v == 0) {
    pipelined_scan<DL::pipelined_protocol, Excl, false>(ei, eo, rows, splat<T, Cols>(init), element_op<Cols>{});
  } else {
    pipelined_scan<DL::pipelined_protocol, Excl, true>(ei, eo, rows, splat<T, Cols>(init), element_op<Cols>{});
  }
}

template <class T, int Cols>
void run(const char* name, long long rows, int reps) {
  const grouped_case<T, Cols> c(rows);
  c.check_both(name, {0, 1}, [&](auto excl, int v, const T* in, T* out, T init) {
    by_variant<T, Cols, decltype(excl)::value>(v, in, out, rows, init);
  });
  const auto* ei = c.in_elements();
  auto* eo = c.out_elements();
  const element_op<Cols> op{};
  const element<T, Cols> zero = splat<T, Cols>(T{});
  const std::vector<std::function<void()>> fs = {
      [&] { c.copy(); },
      [&] { pipelined_scan<DL::pipelined_protocol, false, false>(ei, eo, rows, zero, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, false, true>(ei, eo, rows, zero, op); },
      [&] { pipelined_scan<nowait_protocol, false, false>(ei, eo, rows, zero, op); },
      [&] { pipelined_scan<nowait_protocol, false, true>(ei, eo, rows, zero, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, true, false>(ei, eo, rows, zero, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, true, true>(ei, eo, rows, zero, op); }};
  const char* names[] = {"copy", "rows", "lane runs", "nowait rows", "nowait runs", "excl rows", "excl runs"};
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-12s %10lld p%d: copy %8.1f us", name, rows, pass, t[0]);
    for (std::size_t f = 1; f < t.size(); ++f) std::printf(" | %s %.4f", names[f], t[f] / t[0]);
    std::printf("\n");
  }
  std::fflush(stdout);
}

// The second set (`./lane_runs REPS threshold [FROM_ROWS]`): where 16-byte values should
// start on the pipelined kernel now that it scans them by lane runs (pipelined_scan.cuh's
// min_bytes: 32 MiB, set in session 52 when they scanned by rows). int64 pairs from 2^18
// to 2^22 rows (4-64 MiB; from 2^14 rows, 256 KiB, in the second run, after the library
// took them from 4 MiB; FROM_ROWS skips shorter ones): the public scan (below the
// threshold the tiles by ticket) against the pipelined kernel launched directly.
void threshold(int reps, long long from_rows) {
  using T = long long;
  using E = element<T, 2>;
  const element_op<2> op{};
  for (long long rows : {1ll << 14, 1ll << 16, 1ll << 17, 1ll << 18, 1ll << 19, 1ll << 20, 3ll << 19, 1ll << 21,
                         1ll << 22}) {
    if (rows < from_rows) continue;
    const grouped_case<T, 2> c(rows);
    c.check_both("pairs", {0, 1}, [&](auto excl, int v, const T* in, T* out, T init) {
      constexpr bool exclusive = decltype(excl)::value;
      const auto* ei = reinterpret_cast<const E*>(in);
      auto* eo = reinterpret_cast<E*>(out);
      if (v == 1) {
        by_variant<T, 2, exclusive>(1, in, out, rows, init);
      } else if constexpr (exclusive) {
        tally::exclusive_scan(ei, eo, rows, splat<T, 2>(init), op);
      } else {
        tally::inclusive_scan(ei, eo, rows, op);
      }
    });
    const E* ei = c.in_elements();
    E* eo = c.out_elements();
    const std::vector<std::function<void()>> fs = {
        [&] { c.copy(); },
        [&] { tally::inclusive_scan(ei, eo, rows, op); },
        [&] { pipelined_scan<DL::pipelined_protocol, false, true>(ei, eo, rows, E{}, op); }};
    for (int pass = 0; pass < 2; ++pass) {
      const auto t = interleaved_us(fs, reps);
      std::printf("int64 pairs %9lld (%3lld MiB) p%d: copy %8.1f us | public %.3fx | pipelined %.3fx\n", rows,
                  c.n * 8 >> 20, pass, t[0], t[1] / t[0], t[2] / t[0]);
    }
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  if (argc > 2 && std::string(argv[2]) == "threshold") {
    threshold(reps, argc > 3 ? std::atoll(argv[3]) : 0);
    return 0;
  }
  // small shapes first: every tile edge of the checked outputs (a partial last tile)
  run<int, 1>("int32", 9 * 256 * 4 * 3 + 5, 3);
  run<long long, 2>("int64 pairs", 9 * 256 * 3 + 7, 3);
  run<int, 1>("int32", 1ll << 28, reps);
  run<float, 1>("float", 1ll << 28, reps);
  run<int, 1>("int32", 1ll << 25, reps);
  run<long long, 1>("int64", 1ll << 27, reps);
  run<double, 1>("double", 1ll << 27, reps);
  run<long long, 2>("int64 pairs", 1ll << 26, reps);
  run<double, 2>("double pairs", 1ll << 26, reps);
  run<long long, 2>("int64 pairs", 1ll << 23, reps);
  return 0;
}
