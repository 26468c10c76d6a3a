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
// The outputs of the two real variants are checked whole against the host, inclusive and
// exclusive.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/tally.cuh"
#include "tally/device/detail/pipelined_scan.cuh"
#include "nowait.cuh"
#include "timing.cuh"

namespace SG = tally::detail::segmented;
namespace P = tally::detail::pipelined;
namespace S = tally::detail::single_pass;
namespace DL = tally::detail::decoupled_lookback;

template <class Protocol, bool Excl, bool LaneRuns, class T, class Op>
void pipelined_scan(const T* in, T* out, long long n, Op op) {
  using program = P::plain_tiles<Excl, T, Op, 256, 9, 2, LaneRuns>;
  constexpr P::pipelined_tuning tune{256, 9, 2};
  tally::options o;
  S::with_call_state<T, P::tuning<T, tune>()>(
      "lane_runs", "lane_runs", n, o, 0,
      [&](std::int64_t tiles, S::tile_state<T> state) {
        const program p{in, out, n, tally::detail::make_seed<T, Excl>(T{}), op};
        P::launch<Protocol, false>("lane_runs", p, tiles, state, S::no_stall{}, o.stream, false);
      },
      true);
}

// E: the element type scanned (T itself, or a 16-byte pair of T); n elements of E.
template <class T, int Cols>
void run(const char* name, long long rows, int reps) {
  using E = std::conditional_t<Cols == 1, T, SG::column_pair<T>>;
  using Op = std::conditional_t<Cols == 1, tally::plus, SG::column_pair_op<tally::plus>>;
  const Op op{};
  const long long values = rows * Cols;
  T *in, *out;
  CK(cudaMalloc(&in, values * sizeof(T)));
  CK(cudaMalloc(&out, values * sizeof(T)));
  std::vector<T> h(values);
  for (long long i = 0; i < values; ++i) h[i] = (T)((int)(i % 7) - 3);
  CK(cudaMemcpy(in, h.data(), values * sizeof(T), cudaMemcpyHostToDevice));
  const auto* ei = reinterpret_cast<const E*>(in);
  auto* eo = reinterpret_cast<E*>(out);
  const std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, values * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
      [&] { pipelined_scan<DL::pipelined_protocol, false, false>(ei, eo, rows, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, false, true>(ei, eo, rows, op); },
      [&] { pipelined_scan<nowait_protocol, false, false>(ei, eo, rows, op); },
      [&] { pipelined_scan<nowait_protocol, false, true>(ei, eo, rows, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, true, false>(ei, eo, rows, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, true, true>(ei, eo, rows, op); }};
  const char* names[] = {"copy", "rows", "lane runs", "nowait rows", "nowait runs", "excl rows", "excl runs"};
  std::string wrong;
  std::vector<T> o(values);
  for (std::size_t f : {1, 2, 5, 6}) {
    const bool exclusive = f >= 5;
    CK(cudaMemset(out, 0x7f, values * sizeof(T)));
    fs[f]();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(o.data(), out, values * sizeof(T), cudaMemcpyDeviceToHost));
    T s[Cols] = {};
    for (long long i = 0; i < values; ++i) {
      const T before = s[i % Cols];
      s[i % Cols] += h[i];
      if (o[i] != (exclusive ? before : s[i % Cols])) {
        wrong += std::string(" WRONG:") + names[f] + "@" + std::to_string(i);
        break;
      }
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-12s %10lld p%d: copy %8.1f us", name, rows, pass, t[0]);
    for (std::size_t f = 1; f < t.size(); ++f) std::printf(" | %s %.4f", names[f], t[f] / t[0]);
    std::printf("%s\n", wrong.empty() ? " (all checked right)" : wrong.c_str());
  }
  std::fflush(stdout);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

// The second set (`./lane_runs REPS threshold`): where 16-byte values should start on the
// pipelined kernel now that it scans them by lane runs (pipelined_scan.cuh's min_bytes: 32
// MiB, set in session 52 when they scanned by rows). int64 pairs from 2^18 to 2^22 rows
// (4-64 MiB; from 2^14 rows, 256 KiB, in the second run, after the library took them from
// 4 MiB; `./lane_runs REPS threshold FROM_ROWS` skips shorter ones): the public scan
// (below the threshold the tiles by ticket) against the pipelined kernel launched
// directly, both checked.
void threshold(int reps, long long from_rows) {
  using T = long long;
  using E = SG::column_pair<T>;
  const SG::column_pair_op<tally::plus> op{};
  for (long long rows : {1ll << 14, 1ll << 16, 1ll << 17, 1ll << 18, 1ll << 19, 1ll << 20, 3ll << 19, 1ll << 21,
                         1ll << 22}) {
    if (rows < from_rows) continue;
    const long long values = rows * 2;
    T *in, *out;
    CK(cudaMalloc(&in, values * sizeof(T)));
    CK(cudaMalloc(&out, values * sizeof(T)));
    std::vector<T> h(values);
    for (long long i = 0; i < values; ++i) h[i] = (T)((int)(i % 7) - 3);
    CK(cudaMemcpy(in, h.data(), values * sizeof(T), cudaMemcpyHostToDevice));
    const auto* ei = reinterpret_cast<const E*>(in);
    auto* eo = reinterpret_cast<E*>(out);
    const std::vector<std::function<void()>> fs = {
        [&] { CK(cudaMemcpyAsync(out, in, values * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
        [&] { tally::inclusive_scan(ei, eo, rows, op); },
        [&] { pipelined_scan<DL::pipelined_protocol, false, true>(ei, eo, rows, op); }};
    const char* names[] = {"copy", "public", "pipelined"};
    std::string wrong;
    std::vector<T> o(values);
    for (std::size_t f : {1, 2}) {
      CK(cudaMemset(out, 0x7f, values * sizeof(T)));
      fs[f]();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(o.data(), out, values * sizeof(T), cudaMemcpyDeviceToHost));
      T s[2] = {};
      for (long long i = 0; i < values; ++i) {
        s[i % 2] += h[i];
        if (o[i] != s[i % 2]) {
          wrong += std::string(" WRONG:") + names[f] + "@" + std::to_string(i);
          break;
        }
      }
    }
    for (int pass = 0; pass < 2; ++pass) {
      const auto t = interleaved_us(fs, reps);
      std::printf("int64 pairs %9lld (%3lld MiB) p%d: copy %8.1f us | public %.3fx | pipelined %.3fx%s\n", rows,
                  values * 8 >> 20, pass, t[0], t[1] / t[0], t[2] / t[0],
                  wrong.empty() ? " (both checked right)" : wrong.c_str());
    }
    std::fflush(stdout);
    CK(cudaFree(in));
    CK(cudaFree(out));
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
